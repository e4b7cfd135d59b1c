package wire

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestSkipValue(t *testing.T) {
	tests := []struct {
		in   string
		at   int
		want int
	}{
		{`"abc",1`, 0, 5},
		{`"a\"b"x`, 0, 6},
		{`"a\\"x`, 0, 5},
		{`"unterminated`, 0, 13},
		{`{"a":[1,{"b":"}"}]} ,`, 0, 19},
		{`[1,2,[3]]]`, 0, 9},
		{`123 ,`, 0, 3},
		{`-1.5e3}`, 0, 6},
		{`true]`, 0, 4},
		{`null`, 0, 4},
		{`,`, 0, 0},
		{`[`, 0, 1},
		{``, 0, 0},
		{`x`, 5, 5},
		{`{"a":1}`, 5, 6},
		{`"` + string(bytes.Repeat([]byte("x"), 40)) + `\"` + `"`, 0, 44},
	}
	for _, tt := range tests {
		if got := SkipValue([]byte(tt.in), tt.at); got != tt.want {
			t.Errorf("SkipValue(%q, %d) = %d, want %d", tt.in, tt.at, got, tt.want)
		}
	}
}

func TestSkipSpaceTrimSpace(t *testing.T) {
	if got := SkipSpace([]byte(" \t\r\n x"), 0); got != 5 {
		t.Errorf("SkipSpace = %d, want 5", got)
	}
	if got := SkipSpace([]byte("  "), 0); got != 2 {
		t.Errorf("SkipSpace of blanks = %d, want 2", got)
	}
	if got := string(TrimSpace([]byte("\n {} \r\n"))); got != "{}" {
		t.Errorf("TrimSpace = %q", got)
	}
	if got := string(TrimSpace([]byte(" \f "))); got != "\f" {
		t.Errorf("TrimSpace kept %q, want the form feed (not JSON whitespace)", got)
	}
}

func TestMembers(t *testing.T) {
	tests := []struct {
		in        string
		names     []string
		values    []string
		malformed bool
	}{
		{`{}`, nil, nil, false},
		{` { "a" : 1 , "a":[2, {"x":3}], "b\u0041":"}" } `, []string{`"a"`, `"a"`, `"b\u0041"`}, []string{`1`, `[2, {"x":3}]`, `"}"`}, false},
		{`{"a":1`, []string{`"a"`}, []string{`1`}, true},
		{`{"a" 1}`, nil, nil, true},
		{`{"a":}`, nil, nil, true},
		{`{1:2}`, nil, nil, true},
	}
	for _, tt := range tests {
		it, ok := ObjectMembers([]byte(tt.in))
		if !ok {
			t.Fatalf("ObjectMembers(%q) not an object", tt.in)
		}
		var names, values []string
		for n, v, ok := it.Next(); ok; n, v, ok = it.Next() {
			names, values = append(names, string(n)), append(values, string(v))
		}
		if !equalStrings(names, tt.names) || !equalStrings(values, tt.values) || it.Malformed() != tt.malformed {
			t.Errorf("Members(%q) = %q %q malformed %v, want %q %q %v", tt.in, names, values, it.Malformed(), tt.names, tt.values, tt.malformed)
		}
	}
	for _, notObject := range []string{``, `[]`, ` "x"`} {
		if _, ok := ObjectMembers([]byte(notObject)); ok {
			t.Errorf("ObjectMembers(%q) accepted a non-object", notObject)
		}
	}
	var zero Members
	if _, _, ok := zero.Next(); ok {
		t.Error("the zero Members yielded a member")
	}
}

func TestMembersEnd(t *testing.T) {
	obj := []byte(`{"a": [1, 2] ,"b":"x"}`)
	it, _ := ObjectMembers(obj)
	for _, v, ok := it.Next(); ok; _, v, ok = it.Next() {
		if start := it.End() - len(v); string(obj[start:it.End()]) != string(v) {
			t.Errorf("End() = %d for value %q: obj there is %q", it.End(), v, obj[start:it.End()])
		}
	}
	if it.End() != len(obj) {
		t.Errorf("End() after the walk = %d, want %d", it.End(), len(obj))
	}
}

func TestElements(t *testing.T) {
	tests := []struct {
		in        string
		elems     []string
		malformed bool
	}{
		{`[]`, nil, false},
		{` [ 1 , "a]" ,{"b":[2]}, [] ] `, []string{`1`, `"a]"`, `{"b":[2]}`, `[]`}, false},
		{`[1,`, []string{`1`}, true},
		{`[1`, []string{`1`}, true},
		{`[,]`, nil, true},
		{`[:]`, nil, true},
		{` [ ] `, nil, false},
		{` [ 1 , "a,]" , {"x":[1,2]} ,[[]], null ] `, []string{`1`, `"a,]"`, `{"x":[1,2]}`, `[[]]`, `null`}, false},
		{`[1 2]`, []string{`1`}, true},
		{`[,1]`, nil, true},
		{`[1,]`, []string{`1`}, true},
	}
	for _, tt := range tests {
		it, ok := ArrayElements([]byte(tt.in))
		if !ok {
			t.Fatalf("ArrayElements(%q) not an array", tt.in)
		}
		var elems []string
		for e, ok := it.Next(); ok; e, ok = it.Next() {
			elems = append(elems, string(e))
		}
		if !equalStrings(elems, tt.elems) || it.Malformed() != tt.malformed {
			t.Errorf("Elements(%q) = %q malformed %v, want %q %v", tt.in, elems, it.Malformed(), tt.elems, tt.malformed)
		}
	}
	for _, notArray := range []string{``, `{}`, ` "["`} {
		if _, ok := ArrayElements([]byte(notArray)); ok {
			t.Errorf("ArrayElements(%q) accepted a non-array", notArray)
		}
	}
	var zero Elements
	if _, ok := zero.Next(); ok {
		t.Error("the zero Elements yielded an element")
	}
}

func TestMember(t *testing.T) {
	obj := []byte(`{"jsonrpc":"2.0","id":7,"id":8}`)
	if v, ok := Member(obj, `"id"`); !ok || string(v) != "7" {
		t.Errorf(`Member("id") = %q %v, want the first, 7`, v, ok)
	}
	if _, ok := Member(obj, `"method"`); ok {
		t.Error("Member found an absent name")
	}
	if _, ok := Member([]byte(`[1]`), `"id"`); ok {
		t.Error("Member found a name in an array")
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzRaw checks the raw primitives against encoding/json: on valid JSON
// SkipValue ends exactly where the value does, and Members and Elements see
// every member and element encoding/json sees, with the same raw values, in
// order; on any bytes everything stays in bounds.
func FuzzRaw(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null,"x\"y"],"c":{"d":-1e5}}`, `[1,"2",{}]`, `"\\"`, `{"a"`, `{"a":1,"a":2}`, ` 12 `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, d []byte) {
		for i := 0; i <= len(d); i++ {
			if e := SkipValue(d, i); e < i || e > len(d) {
				t.Fatalf("SkipValue(%q, %d) = %d: out of bounds", d, i, e)
			}
		}
		if it, ok := ObjectMembers(d); ok {
			for n, v, ok := it.Next(); ok; n, v, ok = it.Next() {
				if len(n) < 1 || n[0] != '"' || len(v) == 0 {
					t.Fatalf("Members(%q) gave name %q value %q", d, n, v)
				}
			}
		}
		var elems [][]byte
		els, isArray := ArrayElements(d)
		if isArray {
			for e, ok := els.Next(); ok; e, ok = els.Next() {
				if len(e) == 0 || len(elems) > len(d) {
					t.Fatalf("Elements(%q) gave element %q after %d", d, e, len(elems))
				}
				elems = append(elems, e)
			}
		}
		if !json.Valid(d) {
			return
		}
		if isArray {
			var want []json.RawMessage
			if err := json.Unmarshal(d, &want); err != nil || len(want) != len(elems) {
				t.Fatalf("Elements(%q) saw %d elements, encoding/json %d (%v)", d, len(elems), len(want), err)
			}
			for k := range want {
				if !bytes.Equal(want[k], elems[k]) {
					t.Fatalf("Elements(%q) element %d = %s, encoding/json %s", d, k, elems[k], want[k])
				}
			}
		}
		start := SkipSpace(d, 0)
		if end := SkipValue(d, start); len(TrimSpace(d[end:])) != 0 {
			t.Fatalf("SkipValue(%q) stopped at %d, before the end of the value", d, end)
		}
		it, ok := ObjectMembers(d)
		if !ok {
			return
		}
		var names, values [][]byte
		for n, v, ok := it.Next(); ok; n, v, ok = it.Next() {
			if !bytes.Equal(d[it.End()-len(v):it.End()], v) {
				t.Fatalf("Members(%q): End %d does not follow value %q", d, it.End(), v)
			}
			names, values = append(names, n), append(values, v)
		}
		if it.Malformed() {
			t.Fatalf("Members(%q) called a valid object malformed", d)
		}
		dec := json.NewDecoder(bytes.NewReader(d))
		dec.Token() // {
		k := 0
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			var want string
			if err := json.Unmarshal(names[k], &want); err != nil || want != tok.(string) {
				t.Fatalf("Members(%q) name %d = %s, encoding/json read %q", d, k, names[k], tok)
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(raw, values[k]) {
				t.Fatalf("Members(%q) value %d = %s, encoding/json %s", d, k, values[k], raw)
			}
			k++
		}
		if k != len(names) {
			t.Fatalf("Members(%q) saw %d members, encoding/json %d", d, len(names), k)
		}
	})
}

func TestStringEnd(t *testing.T) {
	for _, tc := range []struct {
		in     string
		end    int
		closed bool // StringEnd's answer
		valid  bool // ValidStringEnd's, whose end is then the same
	}{
		{`"ab",1`, 4, true, true},
		{`"a\"b"`, 6, true, true},
		{`"a\\"b"`, 5, true, true},
		{"\"\xff\\ud800\"", 9, true, true},
		{`"abc`, 4, false, false},
		{`"abc\"`, 6, false, false},
		{`"\x"`, 4, true, false},
		{`"\u12"`, 6, true, false},
		{"\"a\nb\"", 5, true, false}, // a raw control byte
	} {
		end, closed := StringEnd([]byte(tc.in), 0)
		if end != tc.end || closed != tc.closed {
			t.Errorf("StringEnd(%q) = %d, %v; want %d, %v", tc.in, end, closed, tc.end, tc.closed)
		}
		vend, ok := ValidStringEnd([]byte(tc.in), 0)
		if ok != tc.valid || ok && vend != tc.end {
			t.Errorf("ValidStringEnd(%q) = %d, %v; want %v", tc.in, vend, ok, tc.valid)
		}
	}
}
