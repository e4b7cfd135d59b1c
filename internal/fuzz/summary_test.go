package fuzz

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestOneLine: a note is folded to one line and cut without splitting a
// character (the fuzzer's own copy cut bytes, so a summary could print
// invalid UTF-8 from a server's reply).
func TestOneLine(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\n\tb  c", 10, "a b c"},
		{strings.Repeat("é", 5), 3, "é…"},
		{"x\x01y", 10, "x·y"},
		{"short", 10, "short"},
	} {
		got := oneLine(tt.in, tt.n)
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("oneLine(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
