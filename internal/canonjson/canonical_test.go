package canonjson

import "testing"

func TestAppend(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"b":[1,2],"a":"x"}`, `{"a":"x","b":[1,2]}`},
		{` { "a" : 1 , "a" : 2 } `, `{"a":2}`},
		{`[1, 1.0, 10e-1, 0.1e1, 100, 1e2]`, `[1,1,1,1,100,100]`},
		{`[9007199254740993, -9007199254740993, 123456789012345678901]`, `[9007199254740993,-9007199254740993,123456789012345678901]`},
		{`[1.5, 0.001, 0.0000001, 1e22, -0, 2.50]`, `[1.5,0.001,1e-7,1e22,0,2.5]`},
		{`["\u00e9", "a\"b", null, true]`, `["é","a\"b",null,true]`},
		{`1e99999999999999999999`, `1e99999999999999999999`},
	} {
		got, err := Append(nil, []byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("Append(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{``, `{`, `1 2`, `[1,]`} {
		if _, err := Append(nil, []byte(bad)); err == nil {
			t.Errorf("Append(%q): no error", bad)
		}
	}
}

// TestAppendAgreesWithDiff: values Diff finds equal have one canonical
// text, values it tells apart have two.
func TestAppendAgreesWithDiff(t *testing.T) {
	pairs := [][2]string{
		{`[9007199254740993]`, `[9007199254740992]`},
		{`[9007199254740993]`, `[9007199254740993.0]`},
		{`{"a":1,"b":2}`, `{"b":2,"a":1.00}`},
		{`0.1`, `0.10000000000000001`},
		{`"\u00e9"`, `"é"`},
	}
	for _, p := range pairs {
		paths, err := Diff([]byte(p[0]), []byte(p[1]), nil)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := Append(nil, []byte(p[0]))
		b, _ := Append(nil, []byte(p[1]))
		if (len(paths) == 0) != (string(a) == string(b)) {
			t.Errorf("%s vs %s: Diff %v, canonical %s and %s", p[0], p[1], paths, a, b)
		}
	}
}
