package mutate

import (
	"strings"
	"testing"
)

func TestLex(t *testing.T) {
	in := `{"k" :"v\"x",  "n":-1.5,[tru]` + `"open`
	var got []string
	lex([]byte(in), func(tk token) bool {
		s := in[tk.start:tk.end]
		if tk.key {
			s += "(key)"
		}
		got = append(got, s)
		return true
	})
	want := []string{`{`, `"k"(key)`, `:`, `"v\"x"`, `,`, `"n"(key)`, `:`, `-1.5`, `,`, `[`, `tru`, `]`, `"open`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("tokens %q\nwant   %q", got, want)
	}
}

func TestStringInterior(t *testing.T) {
	// Every insertion point lies inside the string and outside an escape or
	// a multibyte character.
	f := []byte(`["a\u00e9\n` + "\u00e9" + `z"]`)
	allowed := map[int]bool{2: true, 3: true, 9: true, 11: true, 13: true, 14: true}
	tk := token{kind: tokString, start: 1, end: len(f) - 1, closed: true}
	for seed := range uint64(200) {
		if at := stringInterior(NewRand(seed), f, tk); !allowed[at] {
			t.Fatalf("insertion at %d in %q", at, f)
		}
	}
}
