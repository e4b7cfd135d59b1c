package oracle

import (
	"github.com/rpcload/rpcload/internal/check"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestShort: an id cut for a note is cut on a character's boundary, and a
// cut inside a string closes it, so that the note's quotes pair up.
func TestShort(t *testing.T) {
	long := strings.Repeat("x", 50)
	for _, tc := range []struct{ raw, want string }{
		{`12`, `12`},
		{`"` + long + `"`, `"` + long[:39] + `..."`},
		{`{"jsonrpc":"2.0","id":2.5,"method":"echo","params":[]}`, `{"jsonrpc":"2.0","id":2.5,"method":"echo..."`},
		{`{"jsonrpc":"2.0","id":2.5,"method":12345678,"params":[]}`, `{"jsonrpc":"2.0","id":2.5,"method":12345...`},
		// A cut after a backslash: the backslash goes too.
		{`"` + strings.Repeat("a", 38) + `\"bcdef"`, `"` + strings.Repeat("a", 38) + `..."`},
		// An escaped quote does not end the string.
		{`"\"` + strings.Repeat("a", 40) + `"`, `"\"` + strings.Repeat("a", 37) + `..."`},
		// A cut inside a character backs up to its start.
		{`"` + strings.Repeat("a", 38) + `éé"`, `"` + strings.Repeat("a", 38) + `..."`},
	} {
		got := short([]byte(tc.raw))
		if got != tc.want {
			t.Errorf("short(%s) = %s, want %s", tc.raw, got, tc.want)
		}
		if !utf8.ValidString(got) || strings.Count(strings.ReplaceAll(got, `\"`, ""), `"`)%2 != 0 {
			t.Errorf("short(%s) = %s: not valid UTF-8 with paired quotes", tc.raw, got)
		}
	}
}

// TestBatchBlameByPosition: of two batch elements each owed an error with
// id null, answered in the batch's order with errors that do not tell
// whose they are, the one the reply array's order gives is blamed, not
// the one a category order would (jrpc2 answers {"jsonrpc":0,"id":null}
// -32700 and refuses the empty-method notification with -32600, in that
// order; the -32600 was given to the first, and the -32700 blamed on the
// notification). Out of order, the reply that fits still goes where it
// fits.
func TestBatchBlameByPosition(t *testing.T) {
	in := `[{"jsonrpc":0,"id":null},{"jsonrpc":"2.0","method":"","params":null}]`
	e := func(code string) string {
		return `{"jsonrpc":"2.0","id":null,"error":{"code":` + code + `,"message":"m"}}`
	}
	for _, tc := range []struct {
		reply, note string
	}{
		{"[" + e("-32700") + "," + e("-32600") + "]", "element 0 (id null): an invalid request answered with error -32700"},
		{"[" + e("-32600") + "," + e("-32700") + "]", "element 1: "},
	} {
		rules, note := JudgeFuzzReply([]byte(in), Batch, []byte(tc.reply), true)
		if rules == 0 || !strings.HasPrefix(note, tc.note) {
			t.Errorf("reply %s: %v %q, want a note starting %q", tc.reply, rules, note, tc.note)
		}
	}
}

// TestParseErrorBlamedOnInvalidRequest: a -32700 with id null that
// answers no element correctly is the wrong code of the element the
// server could not read, not of a call it read. jrpc2 took the call with
// id null for a notification and answered only the invalid request, with
// -32700; the note named the call, a key no baseline held (CI, stop 26).
func TestParseErrorBlamedOnInvalidRequest(t *testing.T) {
	const parseError = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"invalid method name"}}`
	for _, tc := range []struct {
		input, note string
	}{
		{`[{"jsonrpc":"2.0","method":"heartbeat","id":null},{"jsonrpc":"2.0","id":null,"method":9007199254740993}]`,
			"element 1 (id null): an invalid request answered with error -32700; want error -32600"},
		{`[{"jsonrpc":"2.0","id":null,"method":9007199254740993},{"jsonrpc":"2.0","method":"heartbeat","id":null}]`,
			"element 0 (id null): an invalid request answered with error -32700; want error -32600"},
	} {
		rules, note := JudgeFuzzReply([]byte(tc.input), Batch, []byte("["+parseError+"]"), true)
		if !rules.Has(check.WrongErrorCode) || !strings.HasPrefix(note, tc.note) {
			t.Errorf("%s: %s %q, want wrong_error_code with a note starting %q", tc.input, names(rules), note, tc.note)
		}
	}
}
