package fuzz

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/mutate"
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

// TestCaseSize: an input's size is what is written: its raw stream when it
// breaks the framing on purpose (the frames it was made from are not sent
// as well), else its messages.
func TestCaseSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    mutate.Case
		want int
	}{
		{"frames", mutate.Case{Frames: [][]byte{[]byte(`{}`), []byte(`[1]`)}}, 5},
		{"wire", mutate.Case{Frames: [][]byte{bytes.Repeat([]byte("x"), 65537)}, Wire: []byte("Content-Length: 1\r\n\r\n{")}, 22},
		{"empty wire", mutate.Case{Frames: [][]byte{[]byte(`{}`)}, Wire: []byte{}}, 0},
	} {
		if got := caseSize(tc.c); got != tc.want {
			t.Errorf("%s: caseSize = %d, want %d", tc.name, got, tc.want)
		}
	}
}
