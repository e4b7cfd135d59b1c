package profile

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/rpcload/rpcload/internal/check"
)

func TestFuzzRulesPerProfile(t *testing.T) {
	tests := []struct {
		name                Name
		noBatches, checks   bool
		lifecycle, endsOnly []string // methods (decoded) that start or end a session; that end one
		ordinary            []string
	}{
		{name: JSONRPC, ordinary: []string{"initialize", "shutdown", "exit"}},
		{name: Eth, ordinary: []string{"initialize", "shutdown"}},
		{name: MCP, noBatches: true, checks: true, lifecycle: []string{"initialize", "notifications/initialized"},
			ordinary: []string{"shutdown", "exit", "tools/call", "server/discover"}},
		{name: LSP, noBatches: true, checks: true, lifecycle: []string{"initialize", "initialized", "shutdown", "exit"},
			endsOnly: []string{"shutdown", "exit"}, ordinary: []string{"textDocument/hover"}},
	}
	for _, tc := range tests {
		r := NewFuzzRules(mustNew(t, tc.name, Options{}), nil)
		if r.NoBatches() != tc.noBatches || r.Checks() != tc.checks || r.Ends() != (len(tc.endsOnly) > 0) {
			t.Errorf("%s: NoBatches %v, Checks %v, Ends %v", tc.name, r.NoBatches(), r.Checks(), r.Ends())
		}
		ends := map[string]bool{}
		for _, m := range tc.endsOnly {
			ends[m] = true
		}
		for _, m := range tc.lifecycle {
			// Escaped, the name is the same method to a server.
			for _, raw := range []string{`"` + m + `"`, fmt.Sprintf(`"\u%04x%s"`, m[0], m[1:])} {
				if !r.Lifecycle([]byte(raw)) || r.EndsSession([]byte(raw)) != ends[m] {
					t.Errorf("%s: Lifecycle(%s) %v, EndsSession %v", tc.name, raw, r.Lifecycle([]byte(raw)), r.EndsSession([]byte(raw)))
				}
				// The methods that start a session are the handshake's.
				if r.Handshake([]byte(raw)) == ends[m] {
					t.Errorf("%s: Handshake(%s) %v", tc.name, raw, r.Handshake([]byte(raw)))
				}
			}
		}
		for _, m := range tc.ordinary {
			if raw := []byte(`"` + m + `"`); r.Lifecycle(raw) || r.EndsSession(raw) || r.Handshake(raw) {
				t.Errorf("%s: %s is a lifecycle method", tc.name, m)
			}
		}
		if r.Lifecycle(nil) || r.Lifecycle([]byte(`5`)) {
			t.Errorf("%s: a method that is no string is a lifecycle method", tc.name)
		}
	}
	var none *FuzzRules // plain JSON-RPC
	if none.NoBatches() || none.Checks() || none.Ends() || none.Lifecycle([]byte(`"initialize"`)) || none.Handshake([]byte(`"initialize"`)) || none.HTTPRefusals() || none.Cancels([][]byte{[]byte(cancelOf(`1`))}) != nil {
		t.Error("a nil *FuzzRules is not plain JSON-RPC")
	}
	if s, note := none.Exchange([][]byte{[]byte(`{}`)}, nil, 0, nil); s != 0 || note != "" {
		t.Error("a nil *FuzzRules judges an exchange")
	}
}

func cancelOf(params string) string {
	return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":` + params + `}`
}

// TestFuzzRulesCancels pins which requests a cancellation lets go
// unanswered. Before the rules had one home, internal/fuzz matched the
// member name "requestId" as written (an escaped name cancelled nothing)
// and rpcfuzz decoded params with encoding/json (a name differing in case
// cancelled, and of a repeated name only the last counted); both let a
// cancellation anywhere in the input, even before its request, excuse it.
func TestFuzzRulesCancels(t *testing.T) {
	req := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{}}` }
	tests := []struct {
		name   string
		frames []string
		want   []bool // per frame: its request is cancelled
	}{
		{"cancelled after", []string{req(`5`), cancelOf(`{"requestId":5}`)}, []bool{true, false}},
		{"string id", []string{req(`"a"`), cancelOf(`{"requestId":"a","reason":"x"}`)}, []bool{true, false}},
		{"spaced", []string{req(`7`), cancelOf(` { "reason" : "x" , "requestId" : 7 } `)}, []bool{true, false}},
		{"other id", []string{req(`5`), cancelOf(`{"requestId":6}`)}, []bool{false, false}},
		{"cancelled before", []string{cancelOf(`{"requestId":5}`), req(`5`)}, []bool{false, false}},
		{"reused id", []string{req(`5`), cancelOf(`{"requestId":5}`), req(`5`)}, []bool{true, false, false}},
		{"escaped name", []string{req(`5`), cancelOf(`{"request\u0049d":5}`)}, []bool{true, false}},
		{"escaped method", []string{req(`5`), `{"jsonrpc":"2.0","method":"notifications\/cancelled","params":{"requestId":5}}`}, []bool{true, false}},
		{"name in another case", []string{req(`5`), cancelOf(`{"RequestId":5}`)}, []bool{false, false}},
		{"repeated name, first", []string{req(`5`), cancelOf(`{"requestId":5,"requestId":6}`)}, []bool{true, false}},
		{"repeated name, last", []string{req(`6`), cancelOf(`{"requestId":5,"requestId":6}`)}, []bool{true, false}},
		{"nested", []string{req(`5`), cancelOf(`{"x":{"requestId":5}}`)}, []bool{false, false}},
		{"params array", []string{req(`5`), cancelOf(`[5]`)}, []bool{false, false}},
		{"a request, not a notification", []string{req(`5`), `{"jsonrpc":"2.0","id":9,"method":"notifications/cancelled","params":{"requestId":5}}`}, []bool{false, false}},
		{"LSP's method", []string{req(`5`), `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":5}}`}, []bool{false, false}},
		{"notification", []string{`{"jsonrpc":"2.0","method":"x"}`, cancelOf(`{"requestId":5}`)}, []bool{false, false}},
	}
	r := NewFuzzRules(mustNew(t, MCP, Options{}), nil)
	lsp := NewFuzzRules(mustNew(t, LSP, Options{}), nil)
	for _, tc := range tests {
		frames := make([][]byte, len(tc.frames))
		for i, f := range tc.frames {
			frames[i] = []byte(f)
		}
		cs := r.Cancels(frames)
		for i := range frames {
			m := scan(tc.frames[i])
			if got := Cancelled(cs, i, m.ID); got != tc.want[i] {
				t.Errorf("%s: frame %d cancelled %v; want %v (cancels %+v)", tc.name, i, got, tc.want[i], cs)
			}
		}
		if cs := lsp.Cancels(frames); cs != nil {
			t.Errorf("%s: LSP cancels %+v: its cancelled requests are owed a reply", tc.name, cs)
		}
	}
}

func TestFuzzRulesExchange(t *testing.T) {
	era := EraModern
	r := NewFuzzRules(mustNew(t, MCP, Options{}), func() Era { return era })
	// No protocolVersion a server could support: a result is wrong.
	bad := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v1"}}}`
	result := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	wrong := check.Set(0).Add(check.WrongErrorCode)
	tests := []struct {
		name   string
		era    Era
		frames []string
		reply  []byte
		want   check.Set
	}{
		{"modern", EraModern, []string{bad}, result, wrong},
		{"silence", EraModern, []string{bad}, nil, 0},
		{"legacy: not judged", EraLegacy, []string{bad}, result, 0},
		{"two messages: not judged", EraModern, []string{bad, bad}, result, 0},
	}
	for _, tc := range tests {
		era = tc.era
		frames := make([][]byte, len(tc.frames))
		for i, f := range tc.frames {
			frames[i] = []byte(f)
		}
		if got, note := r.Exchange(frames, nil, 0, tc.reply); got != tc.want {
			t.Errorf("%s: %v (%s); want %v", tc.name, got, note, tc.want)
		}
	}
	h := http.Header{"Mcp-Protocol-Version": {"v1"}, "Mcp-Method": {"tools/list"}}
	if got, _ := r.Exchange([][]byte{[]byte(bad)}, h, 200, result); got != wrong {
		t.Errorf("over HTTP with status 200: %v", got)
	}
	if got, _ := NewFuzzRules(mustNew(t, LSP, Options{}), nil).Exchange([][]byte{[]byte(bad)}, nil, 0, result); got != 0 {
		t.Errorf("LSP has no exchange rules: %v", got)
	}
}

func TestFuzzRulesAllocs(t *testing.T) {
	r := NewFuzzRules(mustNew(t, MCP, Options{}), nil)
	frames := [][]byte{[]byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}`), []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":5}}`)}
	method := []byte(`"initialize"`)
	a := testing.AllocsPerRun(100, func() {
		if r.Cancels(frames) != nil || !r.Lifecycle(method) {
			t.Fatal("wrong answer")
		}
	})
	if a != 0 {
		t.Errorf("Cancels and Lifecycle allocate %v times without a cancellation", a)
	}
}
