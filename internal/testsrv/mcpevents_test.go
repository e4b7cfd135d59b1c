package testsrv

import (
	"fmt"
	"testing"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
)

// TestMCPCancel: notifications/cancelled stops a running sleep, which is
// then never answered; cancelling something not running is only counted; a
// sleep still running when the client half-closes is delivered first.
func TestMCPCancel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		era   MCPEra
		setup []step
		req   func(id, method, params string) string
	}{
		{"legacy", MCPLegacy, []step{{legacyInit(MCPVersionLegacy), want("id", "1")}, {legacyInitialized, nil}}, legacyReq},
		{"modern", MCPModern, nil, modernReq},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newProtoServer(t, Config{Profile: ProfileMCP, MCPEra: tc.era})
			p, _ := stdioPeer(t, s, FramingNewline)
			steps := append(tc.setup,
				step{tc.req("7", "tools/call", `"name":"sleep","arguments":{"ms":600000}`), nil},
				step{tc.req("8", "tools/call", `"name":"sleep","arguments":{"ms":600000}`), nil},
				step{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"timeout"}}`, nil},
				step{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`, nil},
				step{tc.req("8", "ping", ""), want("id", "8", "error.code", "-32600")}, // 8 is still in flight
				step{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`, nil},
				step{tc.req("9", "tools/call", `"name":"sleep","arguments":{"ms":20}`), nil},
			)
			for _, st := range steps {
				if st.send != "" {
					p.send(st.send)
				}
				for _, w := range st.want {
					m := p.next()
					for path, v := range w {
						if got := fmt.Sprint(get(m, path)); got != v {
							t.Errorf("%s = %s, want %s (%v)", path, got, v, m)
						}
					}
				}
			}
			// Half-close: the running sleep 9 is still answered, 7 and 8 never.
			_ = p.closeW()
			if m := p.next(); fmt.Sprintf("%v %v", get(m, "id"), get(m, "result.content.0.text")) != "9 slept 20 ms" {
				t.Errorf("after half-close: %v", m)
			}
			p.expectEnd()
			st := s.MCPStats()
			if st.Cancelled != 3 || st.CancelledInFlight != 2 || st.Notifications["notifications/cancelled"] != 3 || st.Requests["tools/call"] != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestMCPServerMessages: with ServerMessages a legacy session gets a ping
// request and a log notification after notifications/initialized, a modern
// one only the notification, before its first tools/call reply. The
// client's answers (made by internal/profile, as the engine makes them)
// are counted, and a reply to an id the server never used is counted apart.
func TestMCPServerMessages(t *testing.T) {
	prof, err := profile.New(profile.MCP, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	answer := func(t *testing.T, p *peer, raw string) {
		var m wire.Message
		wire.Scan([]byte(raw), &m)
		if out := prof.AnswerServerRequest(nil, &m); len(out) > 0 {
			p.send(string(out))
		}
	}
	t.Run("legacy", func(t *testing.T) {
		s := newProtoServer(t, Config{Profile: ProfileMCP, ServerMessages: true})
		p, _ := stdioPeer(t, s, FramingContentLength) // the mode works with either framing
		p.send(legacyInit("2025-03-26"))
		if m := p.next(); fmt.Sprint(get(m, "result.protocolVersion")) != "2025-03-26" {
			t.Fatalf("initialize: %v", m)
		}
		p.send(legacyInitialized)
		ping := p.nextRaw()
		if ping != `{"jsonrpc":"2.0","id":1,"method":"ping"}` {
			t.Errorf("server request %s", ping)
		}
		if m := p.next(); fmt.Sprintf("%v %v", get(m, "method"), get(m, "params.level")) != "notifications/message info" || get(m, "id") != nil {
			t.Errorf("server notification %v", m)
		}
		answer(t, p, ping)
		p.send(`{"jsonrpc":"2.0","id":42,"result":{}}`)
		p.send(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"again"}}`) // answered already: unknown now
		p.send(legacyInitialized)                                                    // no second round
		p.send(legacyReq("5", "ping", ""))
		if m := p.next(); fmt.Sprint(get(m, "id")) != "5" {
			t.Errorf("ping reply %v", m)
		}
		p.closeAndEnd()
		st := s.MCPStats()
		if st.ServerRequests != 1 || st.ServerNotifications != 1 || st.ServerRequestAnswers != 1 || st.ServerRequestErrors != 0 || st.UnknownReplies != 2 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("modern", func(t *testing.T) {
		s := newProtoServer(t, Config{Profile: ProfileMCP, MCPEra: MCPModern, ServerMessages: true})
		p, _ := stdioPeer(t, s, FramingNewline)
		p.send(modernReq("1", "tools/list", ""))
		if m := p.next(); get(m, "id") != 1.0 {
			t.Errorf("tools/list: %v", m)
		}
		for i := range 2 {
			p.send(modernReq("2", "tools/call", `"name":"echo"`))
			m := p.next()
			if i == 0 {
				if get(m, "method") != "notifications/message" {
					t.Errorf("first tools/call: %v before the reply", m)
				}
				m = p.next()
			}
			if get(m, "id") != 2.0 {
				t.Errorf("tools/call %d: %v", i, m)
			}
		}
		p.closeAndEnd()
		if st := s.MCPStats(); st.ServerRequests != 0 || st.ServerNotifications != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}
