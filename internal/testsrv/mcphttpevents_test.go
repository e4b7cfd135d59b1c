package testsrv

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
)

// openStream POSTs body and returns the streamed response's events, read as
// they come. The response is closed when the test ends.
func openStream(t *testing.T, ctx context.Context, url string, h hdr, body string) (*http.Response, sseReader) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return resp, sseReader{bufio.NewReader(resp.Body)}
}

// events reads every event of a stream until it ends.
func events(r sseReader) []string {
	var out []string
	for {
		d, ok := r.next()
		if !ok {
			return out
		}
		out = append(out, d)
	}
}

// legacySession initializes a legacy session and returns its headers.
func legacySession(t *testing.T, url string) hdr {
	t.Helper()
	base := hdr{"Accept": acceptBoth, "Content-Type": "application/json"}
	resp, body := mcpPost(t, ctxT(t), http.MethodPost, url, base, legacyInit(MCPVersionLegacy))
	if resp.StatusCode != 200 {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	return base.with("Mcp-Session-Id", resp.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version", MCPVersionLegacy)
}

// TestMCPHTTPServerMessages: in a legacy session with ServerMessages, the
// first tools/call stream carries a ping request before the response; the
// client's answer, POSTed in the session, is counted.
func TestMCPHTTPServerMessages(t *testing.T) {
	s, url := mcpHTTP(t, Config{ServerMessages: true})
	h := legacySession(t, url)
	call := legacyReq("2", "tools/call", `"name":"echo","arguments":{"k":1}`)
	_, r := openStream(t, ctxT(t), url, h, call)
	got := events(r)
	want := []string{"", string(mcpLogNote), `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"k\":1}"}]}}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events %q\nwant   %q", got, want)
	}
	for _, reply := range []string{`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":77,"result":{}}`} {
		if resp, body := mcpPost(t, ctxT(t), http.MethodPost, url, h, reply); resp.StatusCode != 202 || body != "" {
			t.Errorf("reply POST: %d %q", resp.StatusCode, body)
		}
	}
	_, r = openStream(t, ctxT(t), url, h, call)
	if got := events(r); len(got) != 3 { // keep-alive, log, response: the ping went out once
		t.Errorf("second stream %q", got)
	}
	st := s.MCPStats()
	if st.ServerRequests != 1 || st.ServerRequestAnswers != 1 || st.UnknownReplies != 1 || st.ServerNotifications != 2 {
		t.Errorf("stats %+v", st)
	}
}

// TestMCPHTTPCancel: notifications/cancelled in the session ends a running
// sleep's stream without a response; a client closing the stream of a
// modern sleep is counted as Aborted.
func TestMCPHTTPCancel(t *testing.T) {
	t.Run("notifications/cancelled", func(t *testing.T) {
		s, url := mcpHTTP(t, Config{})
		h := legacySession(t, url)
		_, r := openStream(t, ctxT(t), url, h, legacyReq(`"s1"`, "tools/call", `"name":"sleep","arguments":{"ms":600000}`))
		for range 2 { // keep-alive and log: the request is running
			if _, ok := r.next(); !ok {
				t.Fatal("stream ended early")
			}
		}
		resp, _ := mcpPost(t, ctxT(t), http.MethodPost, url, h, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1"}}`)
		if resp.StatusCode != 202 {
			t.Errorf("cancel POST: %d", resp.StatusCode)
		}
		if rest := events(r); len(rest) != 0 {
			t.Errorf("after cancel: %q", rest)
		}
		if st := s.MCPStats(); st.Cancelled != 1 || st.CancelledInFlight != 1 || st.Requests["tools/call"] != 0 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("stream closed", func(t *testing.T) {
		s, url := mcpHTTP(t, Config{MCPEra: MCPModern})
		ctx, cancel := context.WithCancel(ctxT(t))
		defer cancel()
		resp, r := openStream(t, ctx, url, modernHdr("tools/call", "sleep"), modernReq("1", "tools/call", `"name":"sleep","arguments":{"ms":600000}`))
		for range 2 {
			if _, ok := r.next(); !ok {
				t.Fatal("stream ended early")
			}
		}
		cancel()
		_ = resp.Body.Close()
		if err := s.WaitMCP(ctxT(t), func(st MCPStats) bool { return st.Aborted == 1 }); err != nil {
			t.Fatalf("%v: %+v", err, s.MCPStats())
		}
		if st := s.MCPStats(); st.Requests["tools/call"] != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}
