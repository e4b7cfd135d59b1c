package profile

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/wire"
)

func TestLSPHandshake(t *testing.T) {
	p := mustNew(t, LSP, Options{Workspace: "/tmp/my ws/", ProcessID: 4242, ClientName: "rl", ClientVersion: "2"})
	for _, era := range allEras { // eras mean nothing to LSP
		steps := p.Handshake(era)
		if len(steps) != 2 || steps[0].Method != "initialize" || steps[0].Notification || steps[0].Accept == nil ||
			steps[1].Method != "initialized" || !steps[1].Notification {
			t.Fatalf("Handshake = %+v", steps)
		}
		if got := string(steps[1].Append(nil, 0, wire.IDInt)); got != `{"jsonrpc":"2.0","method":"initialized","params":{}}` {
			t.Errorf("initialized = %s", got)
		}
	}
	init := decode(t, p.Handshake(EraNone)[0].Append(nil, 1, wire.IDInt))
	want := map[string]any{
		"processId":  4242.0,
		"clientInfo": map[string]any{"name": "rl", "version": "2"},
		"rootUri":    "file:///tmp/my%20ws",
		"capabilities": map[string]any{
			"workspace": map[string]any{"configuration": true, "workspaceFolders": true},
			"window":    map[string]any{"workDoneProgress": true},
		},
		"workspaceFolders": []any{map[string]any{"uri": "file:///tmp/my%20ws", "name": "my ws"}},
	}
	if got := init["params"]; !reflect.DeepEqual(got, want) {
		t.Errorf("initialize params\n got %v\nwant %v", got, want)
	}
	if init["method"] != "initialize" || init["id"] != 1.0 || init["jsonrpc"] != "2.0" {
		t.Errorf("initialize envelope: %v", init)
	}

	// No workspace, no parent process: nulls, which LSP allows for both.
	bare := decode(t, mustNew(t, LSP, Options{}).Handshake(EraNone)[0].Append(nil, 1, wire.IDQuoted))
	params := bare["params"].(map[string]any)
	for _, k := range []string{"processId", "rootUri", "workspaceFolders"} {
		if v, ok := params[k]; !ok || v != nil {
			t.Errorf("%s = %v, present %v; want null", k, v, ok)
		}
	}
	if ci := params["clientInfo"]; !reflect.DeepEqual(ci, map[string]any{"name": "rpcload", "version": "dev"}) {
		t.Errorf("default clientInfo = %v", ci)
	}
	if bare["id"] != "1" {
		t.Errorf("quoted id: %v", bare["id"])
	}
}

func TestLSPOptions(t *testing.T) {
	if _, err := New(LSP, Options{Workspace: "relative/dir"}); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("relative workspace: %v", err)
	}
	if p, err := New(LSP, Options{ProcessID: -1}); err != nil || !strings.Contains(string(p.Handshake(EraNone)[0].Params), `"processId":null`) {
		t.Errorf("negative pid: %v", err)
	}
	for in, want := range map[string]string{
		"/":               "file:///",
		"/a/b/../c/":      "file:///a/c",
		"/a b/ü#?%":       "file:///a%20b/%C3%BC%23%3F%25",
		"/home/user/go.d": "file:///home/user/go.d",
	} {
		if got := FileURI(in); got != want {
			t.Errorf("FileURI(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestLSPAccept(t *testing.T) {
	p := mustNew(t, LSP, Options{})
	accept := p.Handshake(EraNone)[0].Accept
	tests := []struct {
		reply string
		err   string
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"hoverProvider":true},"serverInfo":{"name":"gopls"}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "no capabilities"},
		{`{"jsonrpc":"2.0","id":1,"result":{"capabilities":true}}`, "no capabilities"},
		{`{"jsonrpc":"2.0","id":1,"result":null}`, "no capabilities"},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"not yet"}}`, "initialize failed: error -32002: not yet"},
		{`{"jsonrpc":"2.0","method":"window/logMessage","params":{}}`, "not a response"},
	}
	for _, tc := range tests {
		era, err := accept(scan(tc.reply), EraNone)
		if era != EraNone || (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Accept(%s) = %s, %v; want error %q", tc.reply, era, err, tc.err)
		}
	}
}

func TestLSPShutdown(t *testing.T) {
	steps := mustNew(t, LSP, Options{}).Shutdown()
	if len(steps) != 2 {
		t.Fatalf("Shutdown = %+v", steps)
	}
	if got := string(steps[0].Append(nil, 9, wire.IDInt)); got != `{"jsonrpc":"2.0","id":9,"method":"shutdown"}` || steps[0].Notification {
		t.Errorf("shutdown = %s", got)
	}
	if got := string(steps[1].Append(nil, 10, wire.IDInt)); got != `{"jsonrpc":"2.0","method":"exit"}` || !steps[1].Notification {
		t.Errorf("exit = %s", got)
	}
	if _, err := steps[0].Accept(scan(`{"jsonrpc":"2.0","id":9,"result":null}`), EraNone); err != nil {
		t.Errorf("shutdown null result: %v", err)
	}
	if _, err := steps[0].Accept(scan(`{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"x"}}`), EraNone); err == nil {
		t.Error("shutdown error reply accepted")
	}
}

func TestLSPCancel(t *testing.T) {
	p := mustNew(t, LSP, Options{})
	for _, id := range []string{`7`, `"7"`} {
		want := string(wire.AppendNotification(nil, []byte(`"$/cancelRequest"`), []byte(`{"id":`+id+`}`)))
		if got := string(p.Cancel(nil, []byte(id))); got != want {
			t.Errorf("Cancel(%s) = %s; want %s", id, got, want)
		}
	}
	if got := p.Cancel([]byte("x"), nil); string(got) != "x" {
		t.Errorf("Cancel(no id) = %s", got)
	}
}

func TestLSPAnswerServerRequest(t *testing.T) {
	p := mustNew(t, LSP, Options{Workspace: "/w"})
	bare := mustNew(t, LSP, Options{})
	result := func(id, r string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":` + r + `}` }
	errReply := func(id string, code int, msg string) string {
		return string(wire.AppendError(nil, []byte(id), int64(code), msg, nil))
	}
	req := func(id, method, params string) string {
		s := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
		if params != "" {
			s += `,"params":` + params
		}
		return s + `}`
	}
	tests := []struct {
		p         Profile
		msg, want string
	}{
		{p, req("1", "workspace/configuration", `{"items":[{"section":"gopls"},{"scopeUri":"file:///w","section":"go"}]}`), result("1", "[null,null]")},
		{p, req(`"c"`, "workspace/configuration", `{"items":[]}`), result(`"c"`, "[]")},
		{p, req("2", "workspace/configuration", `{"items":[{}]}`), result("2", "[null]")},
		{p, req("3", "workspace/configuration", `{}`), errReply("3", -32602, configNoItem)},
		{p, req("3", "workspace/configuration", `{"items":{}}`), errReply("3", -32602, configNoItem)},
		{p, req("3", "workspace/configuration", ``), errReply("3", -32602, configNoItem)},
		{p, `{"jsonrpc":"2.0","id":4,"method":"workspace\/configuration","params":{"items":[1,2,3]}}`, result("4", "[null,null,null]")},
		{p, req("5", "window/workDoneProgress/create", `{"token":"t"}`), result("5", "null")},
		{p, req("6", "client/registerCapability", `{"registrations":[]}`), result("6", "null")},
		{p, req("7", "client/unregisterCapability", `{"unregisterations":[]}`), result("7", "null")},
		{p, req("8", "window/showMessageRequest", `{"type":1,"message":"m"}`), result("8", "null")},
		{p, req("9", "workspace/semanticTokens/refresh", ``), result("9", "null")},
		{p, req("10", "workspace/diagnostic/refresh", ``), result("10", "null")},
		{p, req("11", "workspace/workspaceFolders", ``), result("11", `[{"uri":"file:///w","name":"w"}]`)},
		{bare, req("11", "workspace/workspaceFolders", ``), result("11", `null`)},
		{p, req("12", "workspace/applyEdit", `{"edit":{}}`), result("12", `{"applied":false,"failureReason":"rpcload does not apply edits"}`)},
		{p, req("13", "window/showDocument", `{"uri":"x"}`), result("13", `{"success":false}`)},
		{p, req("14", "textDocument/hover", `{}`), errReply("14", -32601, "method not found")},
		{p, req("15", "workspace/refresh", ``), errReply("15", -32601, "method not found")},
		{p, req("16", "", ``), errReply("16", -32601, "method not found")},
		{p, `{"jsonrpc":"2.0","id":[1],"method":"workspace/configuration"}`, errReply("null", -32600, "invalid request: bad id")},
		{p, `{"jsonrpc":"2.0","id":17,"method":null}`, errReply("17", -32600, "invalid request: method is not a string")},
		{p, `{"jsonrpc":"2.0","method":"window/logMessage","params":{"type":3,"message":"m"}}`, ``},
		{p, `{"jsonrpc":"2.0","id":1,"result":null}`, ``},
	}
	for _, tc := range tests {
		got := tc.p.AnswerServerRequest([]byte("pre:"), scan(tc.msg))
		if string(got) != "pre:"+tc.want {
			t.Errorf("AnswerServerRequest(%s)\n got %s\nwant pre:%s", tc.msg, got, tc.want)
		}
	}
}
