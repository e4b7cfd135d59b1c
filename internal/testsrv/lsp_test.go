package testsrv

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
)

const lspDocText = "package a\nfunc Alpha() {}\nfunc (r *T) Beta(x int) {}\n// func no\nfunc  \nfunc gamma_1()\nx := Beta\n"

func lspReq(id, method, params string) string {
	if params == "" {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"}`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`
}

func lspNote(method, params string) string {
	return `{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `}`
}

func docParams(uri, extra string) string {
	return `{"textDocument":{"uri":"` + uri + `"}` + extra + `}`
}

// lspPeer connects a peer to an LSP server over the given transport.
func lspPeer(t *testing.T, s *Server, transport string) *peer {
	t.Helper()
	if transport == "stdio" {
		p, _ := stdioPeer(t, s, FramingContentLength)
		return p
	}
	a, err := s.Listen(ctxT(t), Addrs{TCPLSP: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	return tcpPeer(t, a.TCPLSP, FramingContentLength)
}

// TestLSPSession plays a whole LSP session with rpcload's own handshake and
// answers (internal/profile), over stdio and TCP, and checks every reply,
// the server's own requests, and the counters.
func TestLSPSession(t *testing.T) {
	prof, err := profile.New(profile.LSP, profile.Options{Workspace: "/tmp/ws"})
	if err != nil {
		t.Fatal(err)
	}
	hs := prof.Handshake(profile.EraNone)
	uri := "file:///a.go"
	for _, transport := range []string{"stdio", "tcp+lsp"} {
		t.Run(transport, func(t *testing.T) {
			s := newProtoServer(t, Config{Profile: ProfileLSP})
			p := lspPeer(t, s, transport)
			steps := []step{
				{lspReq("1", "textDocument/hover", docParams(uri, `,"position":{"line":1,"character":6}`)), want("id", "1", "error.code", "-32002")},
				{lspNote("textDocument/didOpen", `{"textDocument":{"uri":"`+uri+`","languageId":"go","version":1,"text":"func Early()"}}`), nil},
				{lspReq("2", "initialize", `{"rootUri":null,"capabilities":{}}`), want("error.code", "-32602")},
				{string(hs[0].Append(nil, 3, wire.IDInt)), want("id", "3", "result.capabilities.hoverProvider", "true",
					"result.capabilities.textDocumentSync", "1", "result.capabilities.documentSymbolProvider", "true", "result.serverInfo.name", "rpcload-testsrv")},
				{string(hs[0].Append(nil, 4, wire.IDInt)), want("error.code", "-32600")},
			}
			runSteps(t, p, steps)
			// initialized: the server's requests, then its log message.
			p.send(string(hs[1].Append(nil, 0, wire.IDInt)))
			var got []string
			for range 3 {
				raw := p.nextRaw()
				var m wire.Message
				wire.Scan([]byte(raw), &m)
				got = append(got, string(m.ID)+" "+string(m.Method))
				if out := prof.AnswerServerRequest(nil, &m); len(out) > 0 {
					p.send(string(out))
				}
			}
			if w := []string{`1 "workspace/configuration"`, `2 "window/workDoneProgress/create"`, ` "window/logMessage"`}; strings.Join(got, ",") != strings.Join(w, ",") {
				t.Errorf("server messages %q, want %q", got, w)
			}
			p.send(`{"jsonrpc":"2.0","id":9,"result":null}`) // answers nothing the server asked
			runSteps(t, p, []step{
				{lspNote("textDocument/didOpen", `{"textDocument":{"uri":"`+uri+`","languageId":"go","version":1,"text":`+string(wire.AppendString(nil, lspDocText))+`}}`), nil},
				{lspReq("10", "textDocument/documentSymbol", docParams(uri, "")), want("result.0.name", "Alpha", "result.1.name", "Beta", "result.2.name", "gamma_1",
					"result.3", "<nil>", "result.1.kind", "12", "result.1.selectionRange.start.character", "12", "result.1.range.end.character", "26")},
				{lspReq("11", "textDocument/hover", docParams(uri, `,"position":{"line":1,"character":6}`)), want("result.contents", "Alpha (line 1 of file:///a.go)")},
				{lspReq("12", "textDocument/definition", docParams(uri, `,"position":{"line":6,"character":6}`)), want("result.uri", uri, "result.range.start.line", "2", "result.range.start.character", "12")},
				{lspReq("13", "textDocument/documentSymbol", docParams("file:///other.go", "")), want("error.code", "-32602")},
				{lspNote("textDocument/didChange", `{"textDocument":{"uri":"`+uri+`","version":2},"contentChanges":[{"text":"func Z()"}]}`), nil},
				{lspReq("14", "textDocument/documentSymbol", docParams(uri, "")), want("result.0.name", "Z", "result.1", "<nil>")},
				{lspNote("textDocument/didClose", docParams(uri, "")), nil},
				{lspReq("15", "textDocument/documentSymbol", docParams(uri, "")), want("error.code", "-32602")},
				{lspReq("20", "sleep", `{"ms":600000}`), nil},
				{lspReq("20", "sleep", `{"ms":1}`), want("id", "20", "error.code", "-32600")}, // 20 is in flight
				{string(prof.Cancel(nil, []byte("20"))), want("id", "20", "error.code", "-32800")},
				{string(prof.Cancel(nil, []byte("21"))), nil},
				{lspReq("22", "sleep", `[1]`), want("id", "22", "result", "true")},
				{lspReq("23", "workspace/symbol", `{"query":""}`), want("error.code", "-32601")},
				{lspReq("24", "shutdown", ""), want("id", "24", "result", "<nil>")},
				{lspReq("25", "textDocument/hover", docParams(uri, `,"position":{"line":0,"character":0}`)), want("error.code", "-32600")},
				{lspReq("26", "exit", ""), want("error.code", "-32600")}, // exit is a notification
				{`{"jsonrpc":"2.0","method":"exit"}`, nil},
			})
			p.expectEnd() // exit ends the connection; the client did not close
			st := s.LSPStats()
			answers := map[string]uint64{lspConfiguration: 1, lspProgress: 1}
			if st.ServerRequests != 2 || st.ServerNotifications != 1 || !maps.Equal(st.ServerRequestAnswers, answers) || st.UnknownReplies != 1 ||
				st.CancelRequests != 2 || st.CancelledInFlight != 1 || st.Shutdowns != 1 || st.Exits != 1 || st.ExitsWithoutShutdown != 0 ||
				st.Errors[-32002] != 1 || st.Errors[-32800] != 1 || st.Requests["sleep"] != 3 || st.Notifications["textDocument/didOpen"] != 2 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// runSteps plays steps like runScript, without ending the connection.
func runSteps(t *testing.T, p *peer, steps []step) {
	t.Helper()
	for i, st := range steps {
		if st.send != "" {
			p.send(st.send)
		}
		for _, w := range st.want {
			m := p.next()
			for path, v := range w {
				if got := fmt.Sprint(get(m, path)); got != v {
					t.Errorf("step %d (%.50s): %s = %s, want %s (%v)", i, st.send, path, got, v, m)
				}
			}
		}
	}
}

// TestLSPLifecycle: what the server sends after initialized depends on the
// client's declared capabilities; exit without shutdown is counted as LSP's
// abnormal exit; a client closing its side also ends the session.
func TestLSPLifecycle(t *testing.T) {
	initialize := lspReq("1", "initialize", `{"processId":42,"rootUri":"file:///w","capabilities":%s}`)
	for _, tc := range []struct {
		name     string
		caps     string
		shutdown bool
		exit     bool
		requests uint64 // server requests after initialized
		bad      uint64 // ExitsWithoutShutdown
	}{
		{"no capabilities, exit without shutdown", `{}`, false, true, 0, 1},
		{"configuration only, clean exit", `{"workspace":{"configuration":true}}`, true, true, 1, 0},
		{"progress only, client closes", `{"window":{"workDoneProgress":true}}`, false, false, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newProtoServer(t, Config{Profile: ProfileLSP})
			p := lspPeer(t, s, "stdio")
			p.send(fmt.Sprintf(initialize, tc.caps))
			if m := p.next(); get(m, "result.capabilities") == nil {
				t.Fatalf("initialize: %v", m)
			}
			p.send(lspNote("initialized", "{}"))
			for range tc.requests {
				if m := p.next(); get(m, "method") == "window/logMessage" {
					t.Errorf("log message before the expected server request")
				}
			}
			if m := p.next(); get(m, "method") != "window/logMessage" {
				t.Errorf("got %v, want window/logMessage", m)
			}
			if tc.shutdown {
				p.send(lspReq("2", "shutdown", ""))
				if raw := p.nextRaw(); raw != `{"jsonrpc":"2.0","id":2,"result":null}` {
					t.Errorf("shutdown reply %s", raw)
				}
			}
			if tc.exit {
				p.send(`{"jsonrpc":"2.0","method":"exit"}`)
				p.expectEnd()
			} else {
				p.closeAndEnd()
			}
			st := s.LSPStats()
			if st.ServerRequests != tc.requests || st.ExitsWithoutShutdown != tc.bad || (st.Exits == 1) != tc.exit {
				t.Errorf("stats %+v", st)
			}
		})
	}
}
