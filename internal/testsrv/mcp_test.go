package testsrv

import (
	"fmt"
	"maps"
	"testing"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
)

// step sends one message (none when send is "") and checks the messages the
// server sends next: each want maps a dotted path to its value as
// fmt.Sprint prints it ("<nil>" for absent).
type step struct {
	send string
	want []map[string]string
}

// runScript plays steps on p, then closes the client's side and checks the
// server sends nothing more and ends the connection.
func runScript(t *testing.T, p *peer, steps []step) {
	t.Helper()
	for i, st := range steps {
		if st.send != "" {
			p.send(st.send)
		}
		for _, want := range st.want {
			m := p.next()
			for path, v := range want {
				if got := fmt.Sprint(get(m, path)); got != v {
					t.Errorf("step %d (%.60s): %s = %s, want %s (message %v)", i, st.send, path, got, v, m)
				}
			}
		}
	}
	p.closeAndEnd()
}

func want(kv ...string) []map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return []map[string]string{m}
}

const legacyInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

func legacyReq(id, method, params string) string {
	if params == "" {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"}`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params + `}}`
}

// TestMCPStream plays MCP sessions on stdio and TCP and checks every reply
// and the counters.
func TestMCPStream(t *testing.T) {
	modernTools := []step{
		{modernReq("1", "server/discover", ""), want("id", "1", "result.supportedVersions", "[2026-07-28]", "result.resultType", "complete",
			"result.capabilities.tools", "map[]", "result.cacheScope", "public")},
		{modernReq("2", "tools/list", ""), want("result.tools.0.name", "echo", "result.tools.1.name", "add", "result.resultType", "complete")},
		{modernReq(`"a"`, "tools/call", `"name":"add","arguments":{"a":2,"b":40}`), want("id", "a", "result.content.0.text", "42", "result.content.0.type", "text", "result.resultType", "complete")},
		{modernReq("3", "tools/call", `"name":"add","arguments":{"a":0.5,"b":1e300}`), want("result.content.0.text", "1e+300")},
		{modernReq("4", "tools/call", `"name":"echo","arguments":{ "x" : [1, 2] }`), want("result.content.0.text", `{"x":[1,2]}`)},
		{modernReq("5", "tools/call", `"name":"nope"`), want("error.code", "-32602")},
		{modernReq("6", "tools/call", `"name":"add","arguments":{"a":"2","b":1}`), want("result.isError", "true", "result.resultType", "complete")},
		{modernReq("7", "ping", ""), want("result.resultType", "complete")},
		{modernReq("8", "foo/bar", ""), want("error.code", "-32601", "error.data", "foo/bar")},
		{legacyReq("9", "tools/list", ""), want("id", "9", "error.code", "-32602")},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, want("error.code", "-32602")},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			want("error.code", "-32022", "error.data.requested", "2099-01-01", "error.data.supported", "[2026-07-28]")},
		{legacyInit("2025-11-25"), want("error.code", "-32601")},
		{`[` + modernReq("12", "ping", "") + `]`, want("id", "<nil>", "error.code", "-32600")},
		{`{"jsonrpc":"2.0","id":13,"method":`, want("id", "<nil>", "error.code", "-32700")},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, want("id", "<nil>", "error.code", "-32600")},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, want("error.code", "-32600")},
	}
	legacyFlow := []step{
		{legacyReq("1", "tools/list", ""), want("id", "1", "error.code", "-32600")},
		{legacyReq("2", "ping", ""), want("id", "2", "result", "map[]")},
		{modernReq("3", "server/discover", ""), want("error.code", "-32601")},
		{legacyInit("2025-06-18"), want("result.protocolVersion", "2025-06-18", "result.capabilities.tools", "map[]", "result.serverInfo.name", "rpcload-testsrv")},
		{legacyInit("2025-06-18"), want("error.code", "-32600")},
		{legacyInitialized, nil},
		{legacyReq("4", "tools/list", ""), want("result.tools.2.name", "sleep", "result.resultType", "<nil>")},
		{legacyReq("5", "tools/call", `"name":"add","arguments":{"a":2,"b":3}`), want("result.content.0.text", "5", "result.resultType", "<nil>")},
		{legacyReq("6", "tools/call", `"name":"sleep","arguments":{"ms":1}`), want("id", "6", "result.content.0.text", "slept 1 ms")},
		{legacyReq("7", "tools/call", `"name":"sleep","arguments":{"ms":-1}`), want("result.isError", "true")},
	}
	for _, tc := range []struct {
		name  string
		era   MCPEra
		steps []step
		check func(MCPStats) string
	}{
		{"modern", MCPModern, modernTools, func(st MCPStats) string {
			want := map[string]uint64{"server/discover": 1, "tools/list": 4, "tools/call": 5, "ping": 1, "other": 1, "initialize": 1}
			if !maps.Equal(st.Requests, want) || st.ModernConns != 1 || st.Errors[-32022] != 1 || st.Errors[-32700] != 1 || st.LegacyConns != 0 {
				return fmt.Sprintf("%+v", st)
			}
			return ""
		}},
		{"legacy", MCPLegacy, legacyFlow, func(st MCPStats) string {
			if st.Handshakes != 1 || st.LegacyConns != 1 || st.Notifications["notifications/initialized"] != 1 || st.Requests["tools/call"] != 3 || st.Errors[-32600] != 2 {
				return fmt.Sprintf("%+v", st)
			}
			return ""
		}},
		{"dual settles modern", MCPDual, append(modernTools[:1:1],
			step{legacyInit("2025-11-25"), want("error.code", "-32601")},
			step{modernReq("2", "tools/call", `"name":"echo"`), want("result.content.0.text", "{}")}), func(st MCPStats) string {
			if st.ModernConns != 1 || st.Handshakes != 0 {
				return fmt.Sprintf("%+v", st)
			}
			return ""
		}},
		{"dual settles legacy", MCPDual, []step{
			{legacyReq("0", "ping", ""), want("result", "map[]")},
			{legacyInit("2030-01-01"), want("result.protocolVersion", MCPVersionLegacy)},
			{modernReq("2", "server/discover", ""), want("error.code", "-32601")},
			{legacyReq("3", "tools/list", ""), want("result.tools.0.name", "echo")},
		}, func(st MCPStats) string {
			if st.LegacyConns != 1 || st.ModernConns != 0 {
				return fmt.Sprintf("%+v", st)
			}
			return ""
		}},
		{"dual without _meta", MCPDual, []step{{legacyReq("1", "tools/list", ""), want("error.code", "-32602")}}, nil},
	} {
		for _, transport := range []string{"stdio", "tcp"} {
			t.Run(tc.name+"/"+transport, func(t *testing.T) {
				s := newProtoServer(t, Config{Profile: ProfileMCP, MCPEra: tc.era})
				var p *peer
				if transport == "stdio" {
					var served <-chan error
					p, served = stdioPeer(t, s, FramingNewline)
					defer func() {
						if err := <-served; err != nil {
							t.Errorf("ServeStdio: %v", err)
						}
					}()
				} else {
					a, err := s.Listen(ctxT(t), Addrs{TCP: "127.0.0.1:0"})
					if err != nil {
						t.Fatal(err)
					}
					p = tcpPeer(t, a.TCP, FramingNewline)
				}
				runScript(t, p, tc.steps)
				if tc.check != nil {
					if msg := tc.check(s.MCPStats()); msg != "" {
						t.Errorf("stats: %s", msg)
					}
				}
			})
		}
	}
}

// TestMCPDetectStream: the client's own era detection (internal/profile)
// reads each server era as intended from the reply to its probe.
func TestMCPDetectStream(t *testing.T) {
	for _, tc := range []struct {
		era  MCPEra
		want profile.Era
	}{{MCPDual, profile.EraModern}, {MCPModern, profile.EraModern}, {MCPLegacy, profile.EraLegacy}} {
		t.Run(string(tc.era), func(t *testing.T) {
			s := newProtoServer(t, Config{Profile: ProfileMCP, MCPEra: tc.era})
			p, _ := stdioPeer(t, s, FramingNewline)
			prof, err := profile.New(profile.MCP, profile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			probe, _ := prof.Probe()
			p.send(string(probe.Append(nil, 1, wire.IDInt)))
			frame := []byte(p.nextRaw())
			var m wire.Message
			wire.Scan(frame, &m)
			got, err := probe.Accept(&m, profile.EraAuto)
			if err != nil || got != tc.want {
				t.Fatalf("era %v, %v; want %v (reply %s)", got, err, tc.want, frame)
			}
			if got.Legacy() {
				// The client's own handshake is accepted, and its era kept.
				hs := prof.Handshake(got)
				p.send(string(hs[0].Append(nil, 2, wire.IDInt)))
				frame = []byte(p.nextRaw())
				wire.Scan(frame, &m)
				if e, err := hs[0].Accept(&m, got); err != nil || e != profile.EraLegacy {
					t.Errorf("initialize: era %v, %v (reply %s)", e, err, frame)
				}
				p.send(string(hs[1].Append(nil, 3, wire.IDInt)))
			}
			// A call with the client's own params is answered.
			params, err := prof.Params(got, "tools/call", []byte(`{"name":"add","arguments":{"a":1,"b":2}}`))
			if err != nil {
				t.Fatal(err)
			}
			p.send(string(wire.AppendRequest(nil, 4, wire.IDInt, []byte(`"tools/call"`), params)))
			if m := p.next(); fmt.Sprint(get(m, "result.content.0.text")) != "3" {
				t.Errorf("tools/call: %v", m)
			}
			p.closeAndEnd()
		})
	}
}
