package cli

import (
	"slices"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{"server --port 8080", []string{"server", "--port", "8080"}, false},
		{"  a\t b\n", []string{"a", "b"}, false},
		{`a 'b c' "d e"`, []string{"a", "b c", "d e"}, false},
		{`a'b'"c"d`, []string{"abcd"}, false},
		{`'' x`, []string{"", "x"}, false},
		{`"a \"q\" \\ \$HOME \n"`, []string{`a "q" \ $HOME \n`}, false},
		{`a\ b \'c`, []string{"a b", "'c"}, false},
		{`$HOME *.go`, []string{"$HOME", "*.go"}, false},
		{"", nil, true},
		{"   ", nil, true},
		{"'open", nil, true},
		{`"open`, nil, true},
		{`end\`, nil, true},
	} {
		got, err := SplitCommand(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}
