package jsontree

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// tolerant is how the mutator parses; strict how the minimizer does.
var (
	tolerant = Options{MaxDepth: 256}
	shallow  = Options{MaxDepth: 256, Shallow: true}
	strict   = Options{Strict: true}
)

func TestParseStrict(t *testing.T) {
	for _, tc := range []struct {
		in, out string // out "" means the parse fails
	}{
		{`{"a":1}`, `{"a":1}`},
		{` { "a" : [ 1 , 2 ] , "b" : { } } `, `{"a":[1,2],"b":{}}`},
		{`{"a":1,"a":2}`, `{"a":1,"a":2}`}, // duplicates are kept: they may be the bug
		{`[]`, `[]`},
		{`[[[[]]]]`, `[[[[]]]]`},
		{`"\ud800"`, `"\ud800"`},
		{"\"\xff\"", "\"\xff\""}, // bytes that are not UTF-8 are taken as written
		{`-0.5e+10`, `-0.5e+10`},
		{`true`, `true`},
		{`null`, `null`},
		{`[1,]`, ""},
		{`{"a"}`, ""},
		{`{"a":1`, ""},
		{`01`, ""},
		{`NaN`, ""},
		{`[1] [2]`, ""},
		{`"a` + "\n" + `"`, ""}, // a raw control character in a string
		{`"\x"`, ""},
		{`"\u12"`, ""},
		{``, ""},
		{`{"a":1}}`, ""},
		{`]`, ""},
		{`[truex]`, ""},
		{`[1"a"]`, ""},
	} {
		root, ok := Parse([]byte(tc.in), strict)
		if tc.out == "" {
			if ok {
				t.Errorf("Parse(%q) succeeded: %s", tc.in, Append(nil, root))
			}
			continue
		}
		if !ok {
			t.Errorf("Parse(%q) failed", tc.in)
			continue
		}
		if got := string(Append(nil, root)); got != tc.out {
			t.Errorf("Parse(%q) = %s, want %s", tc.in, got, tc.out)
		}
	}
}

func TestParseTolerant(t *testing.T) {
	deepest := strings.Repeat("[", tolerant.MaxDepth) + strings.Repeat("]", tolerant.MaxDepth)
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
		{deepest, deepest},
		{"[" + deepest + "]", ""},
		{`{"a":` + deepest + `}`, ""},
	}
	for _, tc := range tests {
		n, ok := Parse([]byte(tc.in), tolerant)
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
		if got := string(Append(nil, n)); got != tc.want {
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
		n, ok := Parse([]byte(tc.in), shallow)
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
		if got := string(Append(nil, n)); got != tc.want {
			t.Errorf("%.40q -> %.40q, want %.40q", tc.in, got, tc.want)
		}
		if tc.rawAt != "" {
			if v := n.Get(tc.rawAt); v == nil || v.Kind != Scalar {
				t.Errorf("%.40q: %s parsed, want raw text", tc.in, tc.rawAt)
			}
		}
	}
	// Expand parses one level of raw text in place when shallow, all of it
	// otherwise; a broken one stays raw.
	n, _ := Parse([]byte(`{"a":[1,{"b":[2]}],"c":[1,,2],"d":{"e":{"f":1}}}`), shallow)
	a := n.Get("a")
	if !a.Expand(shallow) || a.Kind != Array || len(a.Elems) != 2 || a.Elems[1].Kind != Scalar {
		t.Errorf("open: %+v", a)
	}
	if !a.Expand(tolerant) || a.Elems[1].Kind != Object || a.Elems[1].Get("b").Kind != Array {
		t.Errorf("openAll: %+v", a)
	}
	if c := n.Get("c"); c.Expand(shallow) || c.Kind != Scalar {
		t.Errorf("open of a broken container: %+v", c)
	}
	if d := n.Get("d"); !d.Expand(shallow) || !d.Expand(tolerant) || d.Get("e").Kind != Object {
		t.Errorf("openAll after open: %+v", d)
	}
	if got := string(Append(nil, n)); got != `{"a":[1,{"b":[2]}],"c":[1,,2],"d":{"e":{"f":1}}}` {
		t.Errorf("after opening: %s", got)
	}
}

// maxDepth is the nesting of a tree's deepest container, the root's being 1.
func maxDepth(root *Node) int {
	deepest := 0
	Walk(root, func(n *Node, depth int) bool {
		if n.Kind == Object || n.Kind == Array {
			deepest = max(deepest, depth+1)
		}
		return true
	})
	return deepest
}

// TestDeep: parsing, printing, walking and copying a ladder far deeper than
// any stack would hold recursion.
func TestDeep(t *testing.T) {
	const depth = 200_000
	for _, in := range []string{
		strings.Repeat("[", depth) + strings.Repeat("]", depth),
		strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1),
	} {
		root, ok := Parse([]byte(in), strict)
		if !ok {
			t.Fatalf("a deep ladder %.10q did not parse", in)
		}
		if got := Append(nil, root); string(got) != in {
			t.Errorf("a deep ladder %.10q did not come back the same", in)
		}
		if d := maxDepth(root); d != depth {
			t.Errorf("depth %d, want %d", d, depth)
		}
		c := Copy(root)
		if got := Append(nil, c); string(got) != in {
			t.Errorf("the copy of a deep ladder %.10q is not the same", in)
		}
		if _, ok := Parse([]byte(in), tolerant); ok {
			t.Errorf("a ladder deeper than MaxDepth parsed")
		}
	}
}

func TestCopy(t *testing.T) {
	root, _ := Parse([]byte(`{"a":[1,{"b":"x"}],"c":{}}`), strict)
	c := Copy(root)
	c.Get("a").Elems[1].Set("b", &Node{Kind: Scalar, Raw: []byte("2")})
	c.Get("a").Elems = c.Get("a").Elems[:1]
	c.Remove("c")
	if got := string(Append(nil, root)); got != `{"a":[1,{"b":"x"}],"c":{}}` {
		t.Errorf("changing a copy changed the original: %s", got)
	}
	if got := string(Append(nil, c)); got != `{"a":[1]}` {
		t.Errorf("copy after changes: %s", got)
	}
}

func TestMembers(t *testing.T) {
	root, _ := Parse([]byte(`{"id":1,"\u0069d":2,"id":3}`), strict)
	if got := string(root.Get("id").Raw); got != "1" {
		t.Errorf("Get: %s", got)
	}
	root.Set("id", &Node{Kind: Scalar, Raw: []byte("4")})
	root.Set("method", &Node{Kind: String, Raw: []byte(`"m"`)})
	if got := string(Append(nil, root)); got != `{"id":4,"\u0069d":2,"id":3,"method":"m"}` {
		t.Errorf("Set: %s", got)
	}
	if !root.Remove("id") || root.Remove("id") {
		t.Error("Remove reports wrongly")
	}
	if got := string(Append(nil, root)); got != `{"\u0069d":2,"method":"m"}` { // an escaped spelling is another key
		t.Errorf("Remove: %s", got)
	}
}

func TestWalkSkips(t *testing.T) {
	root, _ := Parse([]byte(`[{"a":[1,2]},[3],4]`), strict)
	var seen []string
	Walk(root, func(n *Node, depth int) bool {
		seen = append(seen, string(Append(nil, n)))
		return n.Kind != Object // the object's members are skipped
	})
	want := []string{`[{"a":[1,2]},[3],4]`, `{"a":[1,2]}`, `[3]`, `3`, `4`}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("walk %q, want %q", seen, want)
	}
}

// FuzzParse: whatever parses, in any mode, comes back as the compact form
// of itself, which parses to the same; valid JSON always parses (tolerantly
// within MaxDepth), and its compact form is what encoding/json.Compact makes
// of it; what parses strictly or fully parses shallowly too, and compact
// JSON comes back from a shallow parse unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,{"b":null}]}`, `[1,2`, `"\ud800"`, ` [ ] `, `{"a":1,"a":2}`, `1e400`,
		`{"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42},"id":3}`,
		`{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]`,
		`[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method"]`,
		"[\"\xff\\ud800\", NaN, {\"a\":1,\"a\":2}]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		var compact []byte
		if valid {
			var want bytes.Buffer
			if err := json.Compact(&want, data); err != nil {
				t.Fatal(err)
			}
			compact = want.Bytes()
		}
		strictRoot, strictOK := Parse(data, strict)
		if valid && !strictOK {
			t.Fatalf("valid JSON %q did not parse strictly", data)
		}
		deep := strictOK && maxDepth(strictRoot) > tolerant.MaxDepth
		_, fullOK := Parse(data, tolerant)
		if valid && !deep && !fullOK {
			t.Fatalf("valid JSON %q did not parse tolerantly", data)
		}
		_, shallowOK := Parse(data, shallow)
		if fullOK && !shallowOK {
			t.Fatalf("%q parses but not shallowly", data)
		}
		for _, mode := range []Options{strict, tolerant, shallow} {
			root, ok := Parse(data, mode)
			if !ok {
				continue
			}
			out := Append(nil, root)
			again, ok := Parse(out, mode)
			if !ok || !bytes.Equal(Append(nil, again), out) {
				t.Fatalf("%+v: %q -> %q does not parse back the same", mode, data, out)
			}
			if valid && (mode != shallow || bytes.Equal(compact, data)) && !bytes.Equal(out, compact) {
				t.Fatalf("%+v: %q -> %q, json.Compact says %q", mode, data, out, compact)
			}
			if !bytes.Equal(Append(nil, Copy(root)), out) {
				t.Fatalf("%+v: the copy of %q differs", mode, data)
			}
		}
	})
}
