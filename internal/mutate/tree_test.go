package mutate

import (
	"strings"
	"testing"
)

func TestParseTree(t *testing.T) {
	tests := []struct {
		in, want string // want "" = does not parse
	}{
		{` {"a" : 1 , "b":[ true,null ] } `, `{"a":1,"b":[true,null]}`},
		{`{"id":1,"id":2}`, `{"id":1,"id":2}`},
		{`[1e400,-0,NaN,01,0x10]`, `[1e400,-0,NaN,01,0x10]`},
		{"\"\xff\\ud800\x01\"", "\"\xff\\ud800\x01\""},
		{`"a\"b"`, `"a\"b"`},
		{`[]`, `[]`},
		{`{}`, `{}`},
		{`[1,]`, ""},
		{`{"a":1,}`, ""},
		{`[1 /* c */]`, ""},
		{`"abc`, ""},
		{`"abc\"`, ""},
		{`{"a"}`, ""},
		{`{1:2}`, ""},
		{`[1]x`, ""},
		{``, ""},
		{`,`, ""},
		{strings.Repeat("[", maxTreeDepth) + strings.Repeat("]", maxTreeDepth), strings.Repeat("[", maxTreeDepth) + strings.Repeat("]", maxTreeDepth)},
		{strings.Repeat("[", maxTreeDepth+1) + strings.Repeat("]", maxTreeDepth+1), ""},
	}
	for _, tc := range tests {
		n, ok := parseTree([]byte(tc.in))
		if tc.want == "" {
			if ok {
				t.Errorf("%.40q parsed", tc.in)
			}
			continue
		}
		if !ok {
			t.Errorf("%.40q did not parse", tc.in)
			continue
		}
		if got := string(appendNode(nil, n)); got != tc.want {
			t.Errorf("%.40q -> %.40q, want %.40q", tc.in, got, tc.want)
		}
	}
}

func TestParseShallow(t *testing.T) {
	tests := []struct {
		in, want string // want "" = does not parse
		rawAt    string // a member or element kept as raw text
	}{
		{`{"id":1,"params":[ 1 , {"a":[2]} ]}`, `{"id":1,"params":[ 1 , {"a":[2]} ]}`, "params"},
		{`[ {"id":1,"params":{ "b":"]" }}, [ 1 ] ]`, `[{"id":1,"params":{ "b":"]" }},[ 1 ]]`, ""},
		{`{"params":[1,,2]}`, `{"params":[1,,2]}`, "params"}, // tolerant below the root
		{`{"params":[1,2}}`, `{"params":[1,2}}`, "params"},   // brackets balance, kinds are not checked
		{`{"params":[1,2`, "", ""},
		{`{"params":["]`, "", ""},
		{`{"params":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`, `{"params":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`, "params"},
	}
	for _, tc := range tests {
		n, ok := parseShallow([]byte(tc.in))
		if tc.want == "" {
			if ok {
				t.Errorf("%.40q parsed", tc.in)
			}
			continue
		}
		if !ok {
			t.Errorf("%.40q did not parse", tc.in)
			continue
		}
		if got := string(appendNode(nil, n)); got != tc.want {
			t.Errorf("%.40q -> %.40q, want %.40q", tc.in, got, tc.want)
		}
		if tc.rawAt != "" {
			if v := n.get(tc.rawAt); v == nil || v.kind != nodeScalar {
				t.Errorf("%.40q: %s parsed, want raw text", tc.in, tc.rawAt)
			}
		}
	}
	// open expands one level of raw text in place, openAll all of it; a
	// broken one stays raw.
	n, _ := parseShallow([]byte(`{"a":[1,{"b":[2]}],"c":[1,,2],"d":{"e":{"f":1}}}`))
	a := n.get("a")
	if !a.open() || a.kind != nodeArray || len(a.elems) != 2 || a.elems[1].kind != nodeScalar {
		t.Errorf("open: %+v", a)
	}
	if !a.openAll() || a.elems[1].kind != nodeObject || a.elems[1].get("b").kind != nodeArray {
		t.Errorf("openAll: %+v", a)
	}
	if c := n.get("c"); c.open() || c.kind != nodeScalar {
		t.Errorf("open of a broken container: %+v", c)
	}
	if d := n.get("d"); !d.open() || !d.openAll() || d.get("e").kind != nodeObject {
		t.Errorf("openAll after open: %+v", d)
	}
	if got := string(appendNode(nil, n)); got != `{"a":[1,{"b":[2]}],"c":[1,,2],"d":{"e":{"f":1}}}` {
		t.Errorf("after opening: %s", got)
	}
}

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
