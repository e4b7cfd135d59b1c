package canonjson

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func paths(t *testing.T, texts ...string) []Path {
	t.Helper()
	ps, err := ParsePaths(texts)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name   string
		a, b   string
		ignore []string
		want   []string
	}{
		{"equal scalars", `1`, `1`, nil, nil},
		{"key order", `{"a":1,"b":[1,2],"c":{"x":null,"y":true}}`, `{"c":{"y":true,"x":null},"b":[1,2],"a":1}`, nil, nil},
		{"spacing", "{ \"a\" :\n[ 1 , 2 ] }", `{"a":[1,2]}`, nil, nil},
		{"1.0 is 1", `1.0`, `1`, nil, nil},
		{"exponent forms", `[100, 0.5, -2, 0]`, `[1e2, 5E-1, -2.000e0, -0.0e7]`, nil, nil},
		{"fraction with exponent", `0.1e1`, `10e-1`, nil, nil},
		{"negative zero", `-0`, `0`, nil, nil},
		{"big integers exactly", `[12345678901234567890123, 9007199254740993]`, `[12345678901234567890123, 9007199254740993]`, nil, nil},
		{"big integers that float64 confuses", `9007199254740993`, `9007199254740992`, nil, []string{"$"}},
		{"huge integers differ in the last digit", `123456789012345678901234567890`, `123456789012345678901234567891`, nil, []string{"$"}},
		{"sign", `[1]`, `[-1]`, nil, []string{"$[0]"}},
		{"huge exponents", `1e99999999999999999999`, `10e99999999999999999998`, nil, nil},
		{"huge exponents differ", `1e99999999999999999999`, `1e99999999999999999998`, nil, []string{"$"}},
		{"unicode escape", `"\u00e9t\u00E9"`, `"été"`, nil, nil},
		{"escaped solidus and surrogate pair", `"a\/b \ud83d\ude00"`, `"a/b 😀"`, nil, nil},
		{"escaped member names", `{"\u0069d":1}`, `{"id":1}`, nil, nil},
		{"number is not string", `{"a":1}`, `{"a":"1"}`, nil, []string{"$.a"}},
		{"null is not missing", `{"a":null}`, `{}`, nil, []string{"$.a"}},
		{"false is not null", `[false]`, `[null]`, nil, []string{"$[0]"}},
		{"object is not array", `{"a":{}}`, `{"a":[]}`, nil, []string{"$.a"}},
		{"missing on either side", `{"a":1,"c":3}`, `{"b":2,"c":3}`, nil, []string{"$.a", "$.b"}},
		{"nested arrays", `[[1,[2,3]],[4]]`, `[[1,[2,4]],[4,5]]`, nil, []string{"$[0][1][1]", "$[1][1]"}},
		{"array order matters", `[1,2]`, `[2,1]`, nil, []string{"$[0]", "$[1]"}},
		{"longer array", `{"a":[1]}`, `{"a":[1,2,3]}`, nil, []string{"$.a[1]", "$.a[2]"}},
		{"members in name order", `{"z":1,"a":1,"m":1}`, `{"z":2,"a":2,"m":2}`, nil, []string{"$.a", "$.m", "$.z"}},
		{"odd member names bracketed", `{"a b":1,"0":1,"é":1,"x\"y":1}`, `{"a b":2,"0":2,"é":2,"x\"y":2}`, nil,
			[]string{`$["0"]`, `$["a b"]`, `$["x\"y"]`, `$["é"]`}},
		{"duplicate member: the last counts", `{"a":1,"a":2}`, `{"a":2}`, nil, nil},
		{"ignore a member", `{"result":{"timestamp":1,"v":2}}`, `{"result":{"timestamp":9,"v":2}}`, []string{"$.result.timestamp"}, nil},
		{"ignore a missing member", `{"result":{"v":2}}`, `{"result":{"timestamp":9,"v":2}}`, []string{"$.result.timestamp"}, nil},
		{"ignore keeps other differences", `{"result":{"timestamp":1,"v":2}}`, `{"result":{"timestamp":9,"v":3}}`, []string{"$.result.timestamp"}, []string{"$.result.v"}},
		{"ignore below a path", `{"error":{"code":1,"message":"x"}}`, `{"error":{"code":1,"message":"y"}}`, []string{"$.error.message"}, nil},
		{"ignore a subtree", `{"result":{"a":[1,2]}}`, `{"result":{"a":[3]}}`, []string{"$.result"}, nil},
		{"ignore everything", `{"a":1}`, `[2]`, []string{"$"}, nil},
		{"wildcard elements", `{"result":{"items":[{"id":1,"v":1},{"id":2,"v":1}]}}`, `{"result":{"items":[{"id":7,"v":1},{"id":8,"v":2}]}}`,
			[]string{"$.result.items[*].id"}, []string{"$.result.items[1].v"}},
		{"wildcard members", `{"a":{"x":{"t":1},"y":{"t":2}}}`, `{"a":{"x":{"t":3},"y":{"t":4}}}`, []string{"$.a.*.t"}, nil},
		{"index", `[1,2,3]`, `[9,2,9]`, []string{"$[0]"}, []string{"$[2]"}},
		{"bracketed name", `{"a b":1}`, `{"a b":2}`, []string{`$['a b']`}, nil},
		{"descendants", `{"nonce":1,"a":{"nonce":2,"b":[{"nonce":3}]}}`, `{"nonce":4,"a":{"nonce":5,"b":[{"nonce":6}]}}`, []string{"$..nonce"}, nil},
		{"descendant then child", `{"a":{"b":{"c":1,"d":1}}}`, `{"a":{"b":{"c":2,"d":2}}}`, []string{"$..b.c"}, []string{"$.a.b.d"}},
		{"member path does not match an index", `{"a":[1]}`, `{"a":[2]}`, []string{`$.a["0"]`}, []string{"$.a[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ignore := paths(t, tt.ignore...)
			got, err := Diff([]byte(tt.a), []byte(tt.b), ignore)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Diff = %q, want %q", got, tt.want)
			}
			back, err := Diff([]byte(tt.b), []byte(tt.a), ignore)
			if err != nil || !slices.Equal(back, got) {
				t.Errorf("Diff reversed = %q, %v; want the same paths %q", back, err, got)
			}
		})
	}
}

func TestDiffNotJSON(t *testing.T) {
	tests := []struct {
		name, a, b, want string
	}{
		{"first empty", ``, `1`, "first value: not JSON: no value"},
		{"second truncated", `1`, `{"a":`, "second value: not JSON"},
		{"trailing data", `1 2`, `1`, "first value: not JSON: data after the value"},
		{"trailing garbage", `{}`, `{}x`, "second value: not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Diff([]byte(tt.a), []byte(tt.b), nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParsePathErrors(t *testing.T) {
	tests := []struct {
		path, want string
	}{
		{"", "column 1: a path starts with $"},
		{"result.x", "column 1: a path starts with $"},
		{"$.", "column 3: expected a member name or * after '.'"},
		{"$.a..", "column 6: expected a member name or *"},
		{"$.1a", "column 3: expected a member name or * after '.', found '1'"},
		{"$.a b", "column 4: expected '.' or '[', found ' '"},
		{"$[", "column 3: expected *, an index or a quoted name"},
		{"$[1", "column 4: expected ']'"},
		{"$[01]", "column 3: an index has no leading zeros"},
		{"$[-1]", "column 3: negative indexes are not supported"},
		{"$[?(@.a)]", "column 3: expected *, an index or a quoted name after '[', found '?'"},
		{`$["a`, "column 3: unterminated quoted name"},
		{`$["a\x"]`, "column 3: invalid quoted name"},
		{"$[1:2]", "column 4: expected ']'"},
		{"$[99999999999999999999]", "column 3: index too large"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			_, err := ParsePath(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParsePathForms(t *testing.T) {
	// Each row: a path, and the concrete places it must and must not match.
	tests := []struct {
		path       string
		match, not []string // places as formatPath writes them
	}{
		{"$", []string{"$"}, []string{"$.a"}},
		{"$.a", []string{"$.a"}, []string{"$", "$.b", "$[0]", "$.a.b"}},
		{`$["a"]`, []string{"$.a"}, []string{"$.b"}},
		{`$['it\'s']`, []string{`$["it's"]`}, nil},
		{`$['say "hi"']`, []string{`$["say \"hi\""]`}, nil},
		{`$["\u00e9"]`, []string{`$["é"]`}, nil},
		{"$.é", []string{`$["é"]`}, nil},
		{"$[*]", []string{"$[0]", "$.a"}, []string{"$", "$[0][1]"}},
		{"$.*", []string{"$[3]", "$.b"}, nil},
		{"$..x", []string{"$.x", "$.a.x", "$[1].b.x"}, []string{"$.x.y", "$"}},
		{"$..[0]", []string{"$[0]", "$.a[0]"}, []string{"$[1]"}},
		{"$..*", []string{"$.a", "$[0].b"}, []string{"$"}},
		{"$.a[2].b_1", []string{"$.a[2].b_1"}, []string{"$.a[1].b_1"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p, err := ParsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if p.String() != tt.path {
				t.Errorf("String() = %q, want %q", p.String(), tt.path)
			}
			for _, place := range tt.match {
				if !p.matches(placeSegments(t, place)) {
					t.Errorf("%s does not match %s", tt.path, place)
				}
			}
			for _, place := range tt.not {
				if p.matches(placeSegments(t, place)) {
					t.Errorf("%s matches %s", tt.path, place)
				}
			}
		})
	}
}

// placeSegments reads a concrete place back into segments (through the
// parser: a place is a path without wildcards or descendants).
func placeSegments(t *testing.T, place string) []segment {
	t.Helper()
	p, err := ParsePath(place)
	if err != nil {
		t.Fatal(err)
	}
	var segs []segment
	for _, st := range p.steps {
		if st.kind == stepAny || st.descendant {
			t.Fatalf("%s is not a concrete place", place)
		}
		segs = append(segs, segment{name: st.name, index: st.index, isIndex: st.kind == stepIndex})
	}
	if got := formatPath(segs); got != place {
		t.Fatalf("place %s formats back as %s", place, got)
	}
	return segs
}

func FuzzDiff(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[1,2]}`), []byte(`{"b":[1,2,3],"a":1.0}`))
	f.Add([]byte(`"\u00e9"`), []byte(`"é"`))
	f.Add([]byte(`1e5`), []byte(`100000`))
	f.Add([]byte(`[{"x":null}]`), []byte(`[{"x":false,"y":{}}]`))
	f.Add([]byte(`{"a b":{"\"":[]}}`), []byte(`{"a b":{"\"":[0]}}`))
	f.Add([]byte(`-0.0e-0`), []byte(`0`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		d, err := Diff(a, b, nil)
		if validA, validB := json.Valid(a), json.Valid(b); (err == nil) != (validA && validB) {
			t.Fatalf("Diff error %v, but json.Valid says %v and %v", err, validA, validB)
		}
		if err != nil {
			return
		}
		for _, v := range [][]byte{a, b} {
			if self, err := Diff(v, v, nil); err != nil || len(self) != 0 {
				t.Fatalf("Diff(v, v) = %q, %v for %q", self, err, v)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, v); err != nil {
				t.Fatal(err)
			}
			if re, err := Diff(v, compact.Bytes(), nil); err != nil || len(re) != 0 {
				t.Fatalf("a compacted value differs from itself at %q (%v)", re, err)
			}
		}
		back, err := Diff(b, a, nil)
		if err != nil || !slices.Equal(d, back) {
			t.Fatalf("Diff(a, b) = %q but Diff(b, a) = %q (%v)", d, back, err)
		}
		// Every reported path reads back, and ignoring them all leaves no
		// difference.
		ignore, err := ParsePaths(d)
		if err != nil {
			t.Fatalf("a reported path does not parse: %v", err)
		}
		if rest, err := Diff(a, b, ignore); err != nil || len(rest) != 0 {
			t.Fatalf("ignoring %q still leaves %q (%v)", d, rest, err)
		}
	})
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"$", "$.a", "$.result.items[*].id", "$..nonce", `$['a\'b']["c\n"]`, "$[10].*", "$..[*]", "$.é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			if !strings.Contains(err.Error(), "column ") {
				t.Fatalf("error without a column: %v", err)
			}
			return
		}
		if p.String() != s {
			t.Fatalf("String() = %q, want %q", p.String(), s)
		}
		// A path of concrete steps matches the place it names, and that
		// place formats to a path naming the same place.
		var segs []segment
		for _, st := range p.steps {
			if st.kind == stepAny || st.descendant {
				return
			}
			segs = append(segs, segment{name: st.name, index: st.index, isIndex: st.kind == stepIndex})
		}
		if !p.matches(segs) {
			t.Fatalf("%q does not match its own place", s)
		}
		q, err := ParsePath(formatPath(segs))
		if err != nil || !q.matches(segs) {
			t.Fatalf("%q formats to %q, which does not name the same place (%v)", s, formatPath(segs), err)
		}
	})
}
