package oracle

import (
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
