package fuzz

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestParseTree(t *testing.T) {
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
	} {
		root, ok := parseTree([]byte(tc.in))
		if tc.out == "" {
			if ok {
				t.Errorf("parseTree(%q) succeeded: %s", tc.in, appendTree(nil, root))
			}
			continue
		}
		if !ok {
			t.Errorf("parseTree(%q) failed", tc.in)
			continue
		}
		if got := string(appendTree(nil, root)); got != tc.out {
			t.Errorf("parseTree(%q) = %s, want %s", tc.in, got, tc.out)
		}
	}
}

func TestParseTreeDeep(t *testing.T) {
	const depth = 200_000
	in := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	root, ok := parseTree([]byte(in))
	if !ok {
		t.Fatal("a deep ladder did not parse")
	}
	if got := appendTree(nil, root); string(got) != in {
		t.Error("a deep ladder did not come back the same")
	}
	if h := heights(root)[root]; h != depth-1 {
		t.Errorf("height %d, want %d", h, depth-1)
	}
}

// FuzzParseTree: whatever parses comes back as the compact form of itself,
// which parses to the same; valid JSON always parses, and its compact form
// is what encoding/json.Compact makes of it.
func FuzzParseTree(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":null}]}`, `[1,2`, `"\ud800"`, ` [ ] `, `{"a":1,"a":2}`, `1e400`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root, ok := parseTree(data)
		valid := json.Valid(data)
		if valid && !ok {
			t.Fatalf("valid JSON %q did not parse", data)
		}
		if !ok {
			return
		}
		out := appendTree(nil, root)
		again, ok := parseTree(out)
		if !ok || !bytes.Equal(appendTree(nil, again), out) {
			t.Fatalf("%q -> %q does not parse back the same", data, out)
		}
		if valid {
			var want bytes.Buffer
			if err := json.Compact(&want, data); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, want.Bytes()) {
				t.Fatalf("%q -> %q, json.Compact says %q", data, out, want.Bytes())
			}
		}
	})
}

func TestReplyShape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "none"},
		{"  \n", "none"},
		{`{"jsonrpc":"2.0","id":1,"result":{"a":[1]}}`, `{id:num,jsonrpc:str,result:obj}`},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x","data":"y"}}`, `{error:{code,data,message},id:null,jsonrpc:str}`},
		{`{"id":"7","result":true,"jsonrpc":"2.0"}`, `{id:str,jsonrpc:str,result:bool}`},
		{`[{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":2,"result":2}]`, `[{id:num,jsonrpc:str,result:num}]`},
		{`[1,"a",null,[]]`, `[arr,null,num,str]`},
		{`[1,"a",null,[],{}]`, `[arr,null,num,str,…]`}, // four distinct element shapes at most
		{`{"a":1,"a":"x"}`, `{a:num,a:str}`},
		{`{"a,b":1}`, `{a?b:num}`},
		{`not json`, "not_json"},
		{`{"a":1`, "not_json"},
		{`"str"`, "str"},
		{`[]`, `[]`},
	} {
		if got := replyShape([]byte(tc.in)); got != tc.want {
			t.Errorf("replyShape(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// The shape of a huge array looks at a bounded number of elements.
	big := "[" + strings.Repeat(`{"a":1},[2],`, 10_000) + "3]"
	if got := replyShape([]byte(big)); got != `[arr,{a:num},…]` {
		t.Errorf("shape of a big array: %s", got)
	}
}

// FuzzReplyShape: any reply gets a short shape; valid JSON never reads as
// not_json, and the shape does not depend on the values.
func FuzzReplyShape(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"result":[1,{"a":2}]}`, `[1,"a",[],{}]`, `{"error":{"code":1}}`, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		shape := replyShape(data)
		if len(shape) > maxShape+len("…") || shape == "" {
			t.Fatalf("shape %q of %q", shape, data)
		}
		if json.Valid(data) && len(bytes.TrimSpace(data)) > 0 && shape == "not_json" {
			t.Fatalf("valid JSON %q read as not_json", data)
		}
		root, ok := parseTree(data)
		if !ok || !json.Valid(data) {
			return
		}
		// Replace every number by 0 and every string by "": same shape.
		walkTree(root, func(n *node, _ int) bool {
			switch n.kind {
			case kindNumber:
				n.raw = []byte("0")
			case kindString:
				n.raw = []byte(`""`)
			}
			return true
		})
		if other := replyShape(appendTree(nil, root)); other != shape {
			t.Fatalf("%q: shape %q, with other values %q", data, shape, other)
		}
	})
}
