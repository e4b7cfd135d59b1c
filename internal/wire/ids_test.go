package wire

import "testing"

func TestNumberKey(t *testing.T) {
	groups := [][]string{
		{"1", "1.0", "1e0", "10e-1", "0.1e1", "1.000E+0", "100e-2"},
		{"0", "-0", "0.0", "-0e5", "0e-99999999999999999999"},
		{"100", "1e2", "1E+2", "0.001e5"},
		{"-12.5", "-125e-1", "-0.125e2"},
		{"123456789012345678901234567890", "1.23456789012345678901234567890e29"},
		{"1.5"}, {"15"}, {"-1.5"}, {"1e400"}, {"1e401"},
	}
	keys := map[string]int{}
	for g, group := range groups {
		for _, n := range group {
			k := string(AppendNumberKey(nil, []byte(n)))
			if other, ok := keys[k]; ok && other != g {
				t.Errorf("%s has key %q like group %d; want group %d", n, k, other, g)
			}
			keys[k] = g
			if first := string(AppendNumberKey(nil, []byte(group[0]))); k != first {
				t.Errorf("key(%s) = %q; key(%s) = %q; want equal", n, k, group[0], first)
			}
		}
	}
}

func TestCompareIDs(t *testing.T) {
	tests := []struct {
		req, rep string
		loose    bool
		want     IDMatch
	}{
		{`7`, `7`, false, IDEqual},
		{`7`, `7.0`, false, IDEqual},
		{`"7"`, `"7"`, false, IDEqual},
		{`"\u0037"`, `"7"`, false, IDEqual},
		{`"a\/b"`, `"a/b"`, false, IDEqual},
		{`7`, `"7"`, false, IDTypeChanged},
		{`"7"`, `7`, false, IDTypeChanged},
		{`"7.0"`, `7`, false, IDTypeChanged},
		{`7`, `8`, false, IDDifferent},
		{`"7"`, `"07"`, false, IDDifferent},
		{`"x"`, `7`, false, IDDifferent},
		{`9007199254740993`, `9007199254740992`, false, IDDifferent},
		{`9007199254740993`, `9007199254740992`, true, IDEqual},
		{`0.1`, `0.1000000000000000055511151231257827`, true, IDEqual},
		{`1e400`, `1e401`, true, IDDifferent},
	}
	for _, tc := range tests {
		if got := CompareIDs([]byte(tc.req), []byte(tc.rep), tc.loose); got != tc.want {
			t.Errorf("CompareIDs(%s, %s, %v) = %d; want %d", tc.req, tc.rep, tc.loose, got, tc.want)
		}
	}
}

func TestEchoesID(t *testing.T) {
	tests := []struct {
		req, reply string
		want       bool
	}{
		{`7`, `7`, true},
		{`7`, `7.0`, true},
		{`1E2`, `100`, true},
		{`7`, `"7"`, false},
		{`"a"`, `"a"`, true},
		{`"a"`, `"\u0061"`, true},
		{`"a"`, `"b"`, false},
		{`9007199254740993`, `9007199254740992`, true},
		{`9007199254740991`, `9007199254740990`, false},
		{`1212345678901234567890`, `1.2123456789012346e+21`, true},
		{`23372036854775808`, `2.337203685477581e+16`, true},
		{`9223372036854775808`, `-9223372036854775808`, false},
		{`1.5`, `1`, false},
		{"\"\x80\"", "\"\uFFFD\"", true},
		{"\"\x80\"", `"\ufffd"`, true},
		{"\"a\xf0\x90\x80b\"", `"a\ufffdb"`, true},
		{"\"a\xf0\x90\x80b\"", `"a\ufffd\ufffd\ufffdb"`, true},
		{"\"a\xf0\x90\x80b\"", `"ab"`, false},
		{`"\udc00"`, "\"\uFFFD\"", true},
		{`"\ud800x"`, `"\ufffdx"`, true},
		{`"\ud800x"`, `"\ufffdy"`, false},
		{"\"\uFFFD\uFFFD\"", "\"\uFFFD\"", false},
		{`9372036854775807`, `9372036854775808`, true},
		{"\"\xbf\"", "\"\uFFFD\"", true},
	}
	for _, tc := range tests {
		if got := EchoesID([]byte(tc.req), []byte(tc.reply)); got != tc.want {
			t.Errorf("EchoesID(%q, %q) = %v; want %v", tc.req, tc.reply, got, tc.want)
		}
	}
	a := testing.AllocsPerRun(100, func() {
		EchoesID([]byte("\"a\xf0\x90\x80b\""), []byte(`"a\ufffdb"`))
		EchoesID([]byte(`1212345678901234567890`), []byte(`1.2123456789012346e+21`))
	})
	if a != 0 {
		t.Errorf("EchoesID allocates %v times per run", a)
	}
}

func TestSafeInteger(t *testing.T) {
	for raw, want := range map[string]bool{
		"0": true, "-1": true, "9007199254740992": true, "-9007199254740992": true,
		"9007199254740993": false, "18446744073709551616": false, "1.0": false, "1e2": false,
	} {
		if got := SafeInteger([]byte(raw)); got != want {
			t.Errorf("SafeInteger(%s) = %v; want %v", raw, got, want)
		}
	}
}

func TestHasLoneSurrogate(t *testing.T) {
	for s, want := range map[string]bool{
		`"\ud800"`: true, `"\udc00"`: true, `"\ud800x"`: true, `"\ud800\u0041"`: true, `"\ud800\ud800"`: true,
		`"\ud83d\ude00"`: false, `"\u00e9"`: false, `"\\ud800"`: false, `"plain"`: false, `"\ud83d\ude00\ud800"`: true,
	} {
		if got := HasLoneSurrogate([]byte(s)); got != want {
			t.Errorf("HasLoneSurrogate(%s) = %v; want %v", s, got, want)
		}
	}
}
