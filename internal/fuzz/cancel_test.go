package fuzz

import (
	"testing"

	"github.com/rpcload/rpcload/internal/check"

	"github.com/rpcload/rpcload/internal/profile"
)

// TestInspectCancels: under MCP, a request cancelled later in the input
// needs no reply. The cancellation is read as a server reads it: its
// requestId member matched by the decoded name (this package once matched
// the name as written, so an escaped one cancelled nothing), and only a
// cancellation after the request counts.
func TestInspectCancels(t *testing.T) {
	p, err := profile.New(profile.MCP, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pr := profile.NewFuzzRules(p, nil)
	req5 := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}`
	cancelOf := func(params string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":` + params + `}`
	}
	for _, tc := range []struct {
		name   string
		frames []string
		req    int  // the frame of the request
		needs  bool // it needs a reply
	}{
		{"cancelled", []string{req5, cancelOf(`{"requestId":5}`)}, 0, false},
		{"escaped name", []string{req5, cancelOf(`{"request\u0049d":5}`)}, 0, false},
		{"another id", []string{req5, cancelOf(`{"requestId":6}`)}, 0, true},
		{"cancelled before it was sent", []string{cancelOf(`{"requestId":5}`), req5}, 1, true},
		{"the same request twice, cancelled", []string{req5, req5, cancelOf(`{"requestId":5}`)}, 1, false},
	} {
		infos, _ := inspect(frames(tc.frames...), pr)
		if got := infos[tc.req].needs; got != tc.needs {
			t.Errorf("%s: needs %v; want %v", tc.name, got, tc.needs)
		}
		if infos, _ := inspect(frames(tc.frames...), nil); !infos[tc.req].needs {
			t.Errorf("%s: plain JSON-RPC: a cancelled request needs no reply", tc.name)
		}
	}
}

// TestStreamableHTTPRefusal: under MCP over HTTP, a notification refused
// with an HTTP error status and an error body without an id is a refusal
// Streamable HTTP allows, not a reply to the notification; the same
// answer under plain JSON-RPC is one, and a 200 with that body is one
// under MCP too.
func TestStreamableHTTPRefusal(t *testing.T) {
	p, err := profile.New(profile.MCP, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mcp := profile.NewFuzzRules(p, nil)
	notif := frames(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	body := []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	for _, tc := range []struct {
		name   string
		pr     *profileRules
		status int
		want   bool // reply_to_notification
	}{
		{"mcp, 400", mcp, 400, false},
		{"mcp, 200", mcp, 200, true},
		{"plain JSON-RPC, 400", nil, 400, true},
	} {
		o := outcome{perFrame: true, sent: 1, httpStatus: []int{tc.status}, frameReplies: [][][]byte{{body}}}
		infos, _ := inspect(notif, tc.pr)
		v := judgeOutcome(notif, infos, &o, tc.pr)
		if got := v.rules.Has(check.ReplyToNotification); got != tc.want {
			t.Errorf("%s: %v (%s); want reply_to_notification %v", tc.name, v.rules, v.note, tc.want)
		}
	}
}
