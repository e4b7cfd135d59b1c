package testsrv

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
)

// mcpHTTP starts s on a loopback HTTP port and returns the /mcp URL.
func mcpHTTP(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	cfg.Profile = ProfileMCP
	s := newProtoServer(t, cfg)
	a, err := s.Listen(ctxT(t), Addrs{HTTP: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	return s, "http://" + a.HTTP + MCPPath
}

// hdr is a header set; "" values are left out.
type hdr map[string]string

const acceptBoth = "application/json, text/event-stream"

// modernHdr returns the headers of a modern POST.
func modernHdr(method, name string) hdr {
	return hdr{"Accept": acceptBoth, "Content-Type": "application/json", "MCP-Protocol-Version": MCPVersionModern, "Mcp-Method": method, "Mcp-Name": name}
}

// with returns a copy of h with kv set.
func (h hdr) with(kv ...string) hdr {
	out := hdr{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// mcpPost sends one request and returns the response with its whole body.
func mcpPost(t *testing.T, ctx context.Context, method, url string, h hdr, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// errCode returns the error code of a JSON body, or 0.
func errCode(body string) int {
	var m map[string]any
	_ = json.Unmarshal([]byte(body), &m)
	return code(m)
}

// TestMCPHTTPModern: the checks a modern Streamable HTTP server makes, one
// POST each, with the status, content type and error code each gets.
func TestMCPHTTPModern(t *testing.T) {
	s, url := mcpHTTP(t, Config{MCPEra: MCPModern})
	discover := modernReq("1", "server/discover", "")
	add := modernReq("2", "tools/call", `"name":"add","arguments":{"a":1,"b":2}`)
	badVersion := strings.ReplaceAll(modernReq("3", "tools/list", ""), MCPVersionModern, "2099-01-01")
	for _, tc := range []struct {
		name   string
		method string
		h      hdr
		body   string
		status int
		ctype  string
		code   int    // JSON-RPC error code of the body, 0 for none
		exact  string // the whole body, when set
	}{
		{"GET", http.MethodGet, modernHdr("server/discover", ""), "", 405, "text/plain; charset=utf-8", 0, ""},
		{"Accept json only", "", modernHdr("server/discover", "").with("Accept", "application/json"), discover, 406, "text/plain; charset=utf-8", 0, ""},
		{"Content-Type text", "", modernHdr("server/discover", "").with("Content-Type", "text/plain"), discover, 415, "text/plain; charset=utf-8", 0, ""},
		{"batch", "", modernHdr("ping", ""), "[" + discover + "]", 400, "application/json", -32600, ""},
		{"not JSON", "", modernHdr("ping", ""), "{", 400, "application/json", -32700, ""},
		{"notification", "", modernHdr("notifications/cancelled", ""), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, 202, "", 0, ""},
		{"discover", "", modernHdr("server/discover", ""), discover, 200, "application/json", 0, ""},
		{"header version differs", "", modernHdr("server/discover", "").with("MCP-Protocol-Version", MCPVersionLegacy), discover, 400, "application/json", -32020, ""},
		{"header version missing", "", modernHdr("server/discover", "").with("MCP-Protocol-Version", ""), discover, 400, "application/json", -32020, ""},
		{"Mcp-Method differs", "", modernHdr("tools/list", ""), discover, 400, "application/json", -32020, ""},
		{"Mcp-Name differs", "", modernHdr("tools/call", "echo"), add, 400, "application/json", -32020, ""},
		{"Mcp-Name missing", "", modernHdr("tools/call", ""), add, 400, "application/json", -32020, ""},
		{"unsupported version", "", modernHdr("tools/list", "").with("MCP-Protocol-Version", "2099-01-01"), badVersion, 400, "application/json", -32022, ""},
		{"missing _meta", "", modernHdr("tools/list", ""), legacyReq("4", "tools/list", ""), 400, "application/json", -32602, ""},
		{"unknown method", "", modernHdr("foo/bar", ""), modernReq("5", "foo/bar", ""), 404, "application/json", -32601, ""},
		{"initialize", "", modernHdr("initialize", ""), legacyInit(MCPVersionLegacy), 404, "application/json", -32601, ""},
		{"unknown tool", "", modernHdr("tools/call", "nope"), modernReq("6", "tools/call", `"name":"nope"`), 200, "text/event-stream", 0, ""},
		{"tools/call streams", "", modernHdr("tools/call", "=?base64?YWRk?="), add, 200, "text/event-stream", 0,
			": keep-alive\n\nevent: message\ndata: " + string(mcpLogNote) + "\n\nevent: message\ndata: " +
				`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"3"}],"resultType":"complete"}}` + "\n\n"},
		{"tools/list json", "", modernHdr("tools/list", ""), modernReq("7", "tools/list", ""), 200, "application/json", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			resp, body := mcpPost(t, ctxT(t), method, url, tc.h, tc.body)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.ctype {
				t.Errorf("status %d %q, want %d %q; body %q", resp.StatusCode, resp.Header.Get("Content-Type"), tc.status, tc.ctype, body)
			}
			if tc.ctype == "application/json" && errCode(body) != tc.code {
				t.Errorf("body %s, want error code %d", body, tc.code)
			}
			if tc.status == 202 && body != "" {
				t.Errorf("202 with body %q", body)
			}
			if tc.exact != "" && body != tc.exact {
				t.Errorf("body %q\nwant %q", body, tc.exact)
			}
			if tc.name == "unknown tool" && !strings.Contains(body, `"code":-32602`) {
				t.Errorf("body %q", body)
			}
		})
	}
	st := s.MCPStats()
	if st.HeaderMismatches != 5 || st.Sessions != 0 || st.Requests["tools/call"] != 4 || st.Cancelled != 1 || st.Errors[-32020] != 5 {
		t.Errorf("stats %+v", st)
	}
}

// TestMCPHTTPResponseModes: json and sse override auto for every method.
func TestMCPHTTPResponseModes(t *testing.T) {
	for _, tc := range []struct {
		mode       MCPResponse
		method     string
		wantStream bool
	}{
		{MCPResponseJSON, "tools/call", false}, {MCPResponseSSE, "ping", true}, {MCPResponseAuto, "ping", false}, {MCPResponseAuto, "tools/call", true},
	} {
		t.Run(string(tc.mode)+"/"+tc.method, func(t *testing.T) {
			_, url := mcpHTTP(t, Config{MCPResponse: tc.mode})
			name, params := "", ""
			if tc.method == "tools/call" {
				name, params = "echo", `"name":"echo"`
			}
			resp, body := mcpPost(t, ctxT(t), http.MethodPost, url, modernHdr(tc.method, name), modernReq("1", tc.method, params))
			stream := resp.Header.Get("Content-Type") == "text/event-stream"
			if resp.StatusCode != 200 || stream != tc.wantStream || !strings.HasSuffix(body, `"resultType":"complete"}}`+map[bool]string{true: "\n\n"}[stream]) {
				t.Errorf("%d %q: %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
		})
	}
}

// TestMCPHTTPLegacy: initialize hands out a session id that later POSTs must
// carry, with a matching MCP-Protocol-Version when they send one.
func TestMCPHTTPLegacy(t *testing.T) {
	s, url := mcpHTTP(t, Config{})
	ctx := ctxT(t)
	base := hdr{"Accept": acceptBoth, "Content-Type": "application/json"}
	resp, body := mcpPost(t, ctx, http.MethodPost, url, base, legacyInit(MCPVersionLegacy))
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || !regexp.MustCompile(`^[\x21-\x7e]{32}$`).MatchString(sid) || !strings.Contains(body, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %d, session %q, body %s", resp.StatusCode, sid, body)
	}
	resp2, _ := mcpPost(t, ctx, http.MethodPost, url, base, legacyInit(MCPVersionLegacy))
	if sid2 := resp2.Header.Get("Mcp-Session-Id"); sid2 == sid || sid2 == "" {
		t.Errorf("second session id %q (first %q)", sid2, sid)
	}
	list := legacyReq("2", "tools/list", "")
	for _, tc := range []struct {
		name   string
		h      hdr
		body   string
		status int
		want   string // in the body
	}{
		{"no session", base, list, 400, `"code":-32600`},
		{"unknown session", base.with("Mcp-Session-Id", "nope"), list, 404, `"code":-32600`},
		{"other version", base.with("Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18"), list, 400, `"code":-32600`},
		{"initialized", base.with("Mcp-Session-Id", sid), legacyInitialized, 202, ""},
		{"tools/list", base.with("Mcp-Session-Id", sid, "MCP-Protocol-Version", MCPVersionLegacy), list, 200, `"name":"sleep"`},
		{"no version header", base.with("Mcp-Session-Id", sid), legacyReq("3", "ping", ""), 200, `"result":{}`},
		{"discover", base.with("Mcp-Session-Id", sid), modernReq("4", "server/discover", ""), 200, `"code":-32601`},
		{"initialize again", base.with("Mcp-Session-Id", sid), legacyInit(MCPVersionLegacy), 200, `Mcp-Session-Id:[`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := mcpPost(t, ctx, http.MethodPost, url, tc.h, tc.body)
			got := body
			if tc.name == "initialize again" {
				got = fmt.Sprint(resp.Header) // a new session: initialize never needs one
			}
			if resp.StatusCode != tc.status || !strings.Contains(got, tc.want) {
				t.Errorf("%d %q, want %d with %q", resp.StatusCode, got, tc.status, tc.want)
			}
		})
	}
	st := s.MCPStats()
	if st.Sessions != 3 || st.Handshakes != 3 || st.Notifications["notifications/initialized"] != 1 || st.Requests["tools/list"] != 4 {
		t.Errorf("stats %+v", st)
	}
}

// TestMCPDetectHTTP: the client's HTTP era detection (internal/profile),
// given the reply to its probe POSTed with its own headers, finds each
// server's era.
func TestMCPDetectHTTP(t *testing.T) {
	prof, err := profile.New(profile.MCP, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	probe, _ := prof.Probe()
	h := hdr{"Accept": acceptBoth, "Content-Type": "application/json"}
	for _, ph := range prof.Headers(profile.EraModern, probe.Method, probe.Params) {
		h[ph.Name] = ph.Value
	}
	for _, tc := range []struct {
		era  MCPEra
		want profile.Era
	}{{MCPDual, profile.EraModern}, {MCPModern, profile.EraModern}, {MCPLegacy, profile.EraLegacy}} {
		t.Run(string(tc.era), func(t *testing.T) {
			_, url := mcpHTTP(t, Config{MCPEra: tc.era})
			resp, body := mcpPost(t, ctxT(t), http.MethodPost, url, h, string(probe.Append(nil, 1, wire.IDInt)))
			if got, ok := profile.DetectFromHTTP(resp.StatusCode, []byte(body)); !ok || got != tc.want {
				t.Errorf("%d %s: era %v %v, want %v", resp.StatusCode, body, got, ok, tc.want)
			}
		})
	}
}

// sseReader reads the events of a streamed response one at a time.
type sseReader struct{ br *bufio.Reader }

// next returns the next event's data ("" for a comment block), or ok=false
// at the end of the stream.
func (r sseReader) next() (data string, ok bool) {
	var lines []string
	for {
		line, err := r.br.ReadString('\n')
		if err != nil {
			return "", false
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			for _, l := range lines {
				if d, found := strings.CutPrefix(l, "data: "); found {
					data = d
				}
			}
			return data, true
		}
		lines = append(lines, line)
	}
}
