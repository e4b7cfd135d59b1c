package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestParseCounterID(t *testing.T) {
	cases := []struct {
		raw string
		n   uint64
		f   IDFormat
		ok  bool
	}{
		{"0", 0, IDInt, true},
		{"7", 7, IDInt, true},
		{`"7"`, 7, IDQuoted, true},
		{`"0"`, 0, IDQuoted, true},
		{"9999999999999999999", 9999999999999999999, IDInt, true}, // 19 digits cannot overflow
		{"18446744073709551615", 1<<64 - 1, IDInt, true},
		{`"18446744073709551615"`, 1<<64 - 1, IDQuoted, true},
		{"18446744073709551616", 0, IDInt, false},
		{"99999999999999999999", 0, IDInt, false},
		{"184467440737095516150", 0, IDInt, false},
		{"00", 0, IDInt, false},
		{"07", 0, IDInt, false},
		{`"07"`, 0, IDInt, false},
		{"-0", 0, IDInt, false},
		{"-1", 0, IDInt, false},
		{"+1", 0, IDInt, false},
		{"1e2", 0, IDInt, false},
		{"1.0", 0, IDInt, false},
		{`"\u0037"`, 0, IDInt, false},
		{`""`, 0, IDInt, false},
		{`"`, 0, IDInt, false},
		{``, 0, IDInt, false},
		{` 7`, 0, IDInt, false},
		{`7 `, 0, IDInt, false},
		{`"7`, 0, IDInt, false},
		{`7"`, 0, IDInt, false},
		{`null`, 0, IDInt, false},
		{`"1"2"`, 0, IDInt, false},
	}
	for _, tc := range cases {
		n, f, ok := ParseCounterID([]byte(tc.raw))
		if n != tc.n || f != tc.f || ok != tc.ok {
			t.Errorf("ParseCounterID(%q) = %d, %d, %v; want %d, %d, %v", tc.raw, n, f, ok, tc.n, tc.f, tc.ok)
		}
	}
}

func TestAppendID(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		f    IDFormat
		want string
	}{
		{0, IDInt, "0"},
		{42, IDQuoted, `"42"`},
		{1<<64 - 1, IDInt, "18446744073709551615"},
		{5, IDFormat(9), "5"},
	} {
		if got := string(AppendID(nil, tc.n, tc.f)); got != tc.want {
			t.Errorf("AppendID(%d, %d) = %s, want %s", tc.n, tc.f, got, tc.want)
		}
	}
}

// stdString is encoding/json's encoding of s without HTML escaping, which
// AppendString promises to reproduce byte for byte.
func stdString(t testing.TB, s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// replaced is what encoding/json decodes an encoding of s to: every invalid
// UTF-8 byte becomes U+FFFD.
func replaced(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

var stringCases = []string{
	"", "plain", `quote " and \ backslash`, "<html>&amp;", "tab\tnl\ncr\rbs\bff\f",
	"\x00\x01\x1f\x7f", "é😀\u2028\u2029", "bad \xff utf8 \xc0\x80 \xed\xa0\x80", "\xe2\x82",
	"/slash/", strings.Repeat("long ", 100),
}

func TestAppendString(t *testing.T) {
	for _, s := range stringCases {
		got := AppendString([]byte("x"), s)
		if !bytes.HasPrefix(got, []byte("x")) {
			t.Fatalf("dst prefix lost")
		}
		got = got[1:]
		if want := stdString(t, s); string(got) != want {
			t.Errorf("AppendString(%q) = %s, encoding/json says %s", s, got, want)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil || back != replaced(s) {
			t.Errorf("decode(%s) = %q, %v", got, back, err)
		}
		if u, ok := Unquote(nil, got); !ok || string(u) != replaced(s) {
			t.Errorf("Unquote(%s) = %q, %v", got, u, ok)
		}
	}
}

func TestUnquote(t *testing.T) {
	cases := []struct {
		raw, want string
		ok        bool
	}{
		{`""`, "", true},
		{`"abc"`, "abc", true},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", true},
		{`"\u0041\u00e9\u20AC"`, "Aé€", true},
		{`"\ud83d\ude00"`, "😀", true},
		{`"\ud83d"`, "\ufffd", true},
		{`"\ude00\ud83d"`, "\ufffd\ufffd", true},
		{`"\ud83d\u0041"`, "\ufffdA", true},
		{`"\ud83dx"`, "\ufffdx", true},
		{"\"\xff\"", "\ufffd", true},
		{`"\'"`, "", false},
		{`"\x"`, "", false},
		{`"\u12"`, "", false},
		{`"abc`, "", false},
		{`abc"`, "", false},
		{`"a"b"`, "", false},
		{"\"a\x01\"", "", false},
		{`"`, "", false},
		{``, "", false},
		{`7`, "", false},
	}
	for _, tc := range cases {
		got, ok := Unquote([]byte("pre"), []byte(tc.raw))
		if !tc.ok {
			if ok || string(got) != "pre" {
				t.Errorf("Unquote(%q) = %q, %v; want failure with dst unchanged", tc.raw, got, ok)
			}
			continue
		}
		if !ok || string(got) != "pre"+tc.want {
			t.Errorf("Unquote(%q) = %q, %v; want %q", tc.raw, got, ok, tc.want)
		}
		var std string
		if err := json.Unmarshal([]byte(tc.raw), &std); err != nil || std != tc.want {
			t.Errorf("encoding/json disagrees on %q: %q, %v", tc.raw, std, err)
		}
	}
}

// decodeEnvelope decodes an encoder's output with encoding/json, keeping
// numbers exact, and checks Scan finds nothing wrong with it.
func decodeEnvelope(t *testing.T, frame []byte, kind Kind) map[string]any {
	t.Helper()
	var m Message
	Scan(frame, &m)
	if m.Kind != kind || m.Problems != 0 {
		t.Errorf("Scan(%s) = %v %q", frame, m.Kind, m.Problems)
	}
	dec := json.NewDecoder(bytes.NewReader(frame))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", frame, err)
	}
	return v
}

func TestEncodersRoundTrip(t *testing.T) {
	method := AppendString(nil, "eth_getBalance\n")
	params := []byte(`["0xabc",{"a":[1,2.5]}]`)
	cases := []struct {
		name  string
		frame []byte
		kind  Kind
		want  map[string]any
	}{
		{"request int", AppendRequest(nil, 7, IDInt, method, params), KindRequest, map[string]any{
			"jsonrpc": "2.0", "id": json.Number("7"), "method": "eth_getBalance\n",
			"params": []any{"0xabc", map[string]any{"a": []any{json.Number("1"), json.Number("2.5")}}}}},
		{"request quoted no params", AppendRequest(nil, 1<<64-1, IDQuoted, method, nil), KindRequest, map[string]any{
			"jsonrpc": "2.0", "id": "18446744073709551615", "method": "eth_getBalance\n"}},
		{"request empty params", AppendRequest(nil, 0, IDInt, method, []byte{}), KindRequest, map[string]any{
			"jsonrpc": "2.0", "id": json.Number("0"), "method": "eth_getBalance\n"}},
		{"notification", AppendNotification(nil, method, []byte(`{}`)), KindNotification, map[string]any{
			"jsonrpc": "2.0", "method": "eth_getBalance\n", "params": map[string]any{}}},
		{"result", AppendResult(nil, []byte(`"x"`), []byte(`{"ok":true}`)), KindResult, map[string]any{
			"jsonrpc": "2.0", "id": "x", "result": map[string]any{"ok": true}}},
		{"result nils", AppendResult(nil, nil, nil), KindResult, map[string]any{
			"jsonrpc": "2.0", "id": nil, "result": nil}},
		{"error", AppendError(nil, []byte("3"), CodeMethodNotFound, "no \"such\" method", []byte(`[1]`)), KindError, map[string]any{
			"jsonrpc": "2.0", "id": json.Number("3"), "error": map[string]any{
				"code": json.Number("-32601"), "message": "no \"such\" method", "data": []any{json.Number("1")}}}},
		{"error no data", AppendError(nil, nil, -1<<63, "\xff", nil), KindError, map[string]any{
			"jsonrpc": "2.0", "id": nil, "error": map[string]any{
				"code": json.Number("-9223372036854775808"), "message": "\ufffd"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := decodeEnvelope(t, tc.frame, tc.kind); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s decodes to %#v, want %#v", tc.frame, got, tc.want)
			}
		})
	}
}

func TestAppendRequestAllocs(t *testing.T) {
	method := AppendString(nil, "eth_blockNumber")
	params := []byte(`[]`)
	buf := make([]byte, 0, 256)
	n := testing.AllocsPerRun(100, func() {
		buf = AppendRequest(buf[:0], 1<<40, IDQuoted, method, params)
	})
	if n != 0 {
		t.Errorf("AppendRequest allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendError(buf[:0], []byte("1"), -32000, "boom", nil)
		_, _, _ = ParseCounterID([]byte(`"12345"`))
		buf, _ = Unquote(buf[:0], []byte(`"a\u00e9"`))
	}); n != 0 {
		t.Errorf("encoders allocate %v times", n)
	}
}

var snake = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

func TestStrings(t *testing.T) {
	kinds := map[Kind]string{KindInvalid: "invalid", KindRequest: "request", KindNotification: "notification",
		KindResult: "result", KindError: "error", KindBatch: "batch", 9: "kind(9)"}
	for k, want := range kinds {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d) = %q, want %q", k, got, want)
		}
	}
	probs := map[Problem]string{
		0:                                       "",
		ProblemInvalidJSON:                      "invalid_json",
		ProblemDuplicateKey | ProblemBadVersion: "duplicate_key|bad_version",
		ProblemInvalidUTF8 | 1<<20 | 1<<31:      "invalid_utf8|0x80100000",
		1 << 20:                                 "0x100000",
	}
	for p, want := range probs {
		if got := p.String(); got != want {
			t.Errorf("Problem(%#x) = %q, want %q", uint32(p), got, want)
		}
		if got := string(p.Append([]byte("x:"))); got != "x:"+want {
			t.Errorf("Problem(%#x).Append(x:) = %q, want %q", uint32(p), got, "x:"+want)
		}
		buf := make([]byte, 0, 128)
		if n := testing.AllocsPerRun(10, func() { buf = p.Append(buf[:0]) }); n != 0 {
			t.Errorf("Problem(%#x).Append into room allocates %v times", uint32(p), n)
		}
	}
	// Every defined bit has a distinct snake_case name.
	seen := map[string]bool{}
	for p := ProblemInvalidJSON; p <= ProblemInvalidUTF8; p <<= 1 {
		s := p.String()
		if seen[s] || !snake.MatchString(s) {
			t.Errorf("bad name %q for %#x", s, uint32(p))
		}
		seen[s] = true
	}
	if !(ProblemBadID | ProblemBadMethod).Has(ProblemBadID) || ProblemBadID.Has(ProblemBadID|ProblemBadMethod) {
		t.Error("Has is wrong")
	}
}
