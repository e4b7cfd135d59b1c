package wire

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// v2 is the version member, so cases only spell what they test.
const v2 = `"jsonrpc":"2.0",`

type scanCase struct {
	name  string
	frame string
	kind  Kind
	probs Problem
	check func(t *testing.T, m *Message)
}

var scanCases = []scanCase{
	// Ground truth frames from protocols.md section 1.
	{"truncated", `{"jsonrpc":"2.0","id":6,"method":`, KindInvalid, ProblemInvalidJSON, nil},
	{"teleport", `{"jsonrpc":"2.0","id":5,"method":"teleport"}`, KindRequest, 0, func(t *testing.T, m *Message) {
		if string(m.ID) != "5" || m.IDKind != IDNumber || string(m.Method) != `"teleport"` || m.Params != nil {
			t.Errorf("got %+v", m)
		}
	}},
	{"convert", `{"jsonrpc":"2.0","id":4,"method":"convert","params":{"value":5}}`, KindRequest, 0, func(t *testing.T, m *Message) {
		if string(m.Params) != `{"value":5}` || string(m.ID) != "4" {
			t.Errorf("got %+v", m)
		}
	}},
	{"get_time", `{"jsonrpc":"2.0","method":"get_time"}`, KindNotification, 0, func(t *testing.T, m *Message) {
		if m.ID != nil || m.IDKind != IDAbsent {
			t.Errorf("got %+v", m)
		}
	}},
	{"empty batch", `[]`, KindBatch, 0, nil},
	{"no jsonrpc", `{"id":1,"method":"x"}`, KindRequest, ProblemBadVersion, nil},

	// Kinds.
	{"result", ` {"jsonrpc":"2.0","id":7,"result":12.7} ` + "\n", KindResult, 0, func(t *testing.T, m *Message) {
		if string(m.Result) != "12.7" || string(m.ID) != "7" {
			t.Errorf("got %+v", m)
		}
	}},
	{"result null", `{"jsonrpc":"2.0","id":"a","result":null}`, KindResult, 0, func(t *testing.T, m *Message) {
		if string(m.Result) != "null" || string(m.ID) != `"a"` || m.IDKind != IDString {
			t.Errorf("got %+v", m)
		}
	}},
	{"error", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":[1,{"x":2}]}}`, KindError, 0, func(t *testing.T, m *Message) {
		if m.Code != -32700 || !m.HasCode || string(m.ErrMsg) != `"Parse error"` || string(m.ErrData) != `[1,{"x":2}]` ||
			m.IDKind != IDNull || string(m.ID) != "null" || !strings.HasPrefix(string(m.Error), `{"code"`) {
			t.Errorf("got %+v", m)
		}
	}},
	{"batch", ` [ {"a":1} , {} ] `, KindBatch, 0, func(t *testing.T, m *Message) {
		if m.BatchLen != 2 {
			t.Errorf("BatchLen = %d", m.BatchLen)
		}
	}},
	{"batch scalars", `[1,2]`, KindBatch, ProblemNotObject, func(t *testing.T, m *Message) {
		if m.BatchLen != 2 {
			t.Errorf("BatchLen = %d", m.BatchLen)
		}
	}},
	{"nested batch", `[[{}]]`, KindBatch, ProblemNotObject, nil},
	{"whitespace everywhere", "\t{ \"jsonrpc\" :\r\"2.0\" ,\n\"id\" : 1 , \"result\" : [ ] }\n", KindResult, 0, nil},

	// Invalid JSON.
	{"empty", ``, KindInvalid, ProblemInvalidJSON, nil},
	{"spaces", "  \n", KindInvalid, ProblemInvalidJSON, nil},
	{"open", `{`, KindInvalid, ProblemInvalidJSON, nil},
	{"leading zero", `01`, KindInvalid, ProblemInvalidJSON, nil},
	{"two values", `{} {}`, KindInvalid, ProblemInvalidJSON, nil},
	{"trailing garbage", `{"jsonrpc":"2.0","id":1,"result":1}x`, KindInvalid, ProblemInvalidJSON, nil},
	{"trailing comma array", `[1,]`, KindInvalid, ProblemInvalidJSON, nil},
	{"trailing comma object", `{"a":1,}`, KindInvalid, ProblemInvalidJSON, nil},
	{"control char", "\"\x01\"", KindInvalid, ProblemInvalidJSON, nil},
	{"bad escape", `"\q"`, KindInvalid, ProblemInvalidJSON, nil},
	{"single quote escape", `"\'"`, KindInvalid, ProblemInvalidJSON, nil},
	{"short unicode", `"\u12"`, KindInvalid, ProblemInvalidJSON, nil},
	{"bad literal", `tru`, KindInvalid, ProblemInvalidJSON, nil},
	{"literal suffix", `nullx`, KindInvalid, ProblemInvalidJSON, nil},
	{"minus", `-`, KindInvalid, ProblemInvalidJSON, nil},
	{"dot", `1.`, KindInvalid, ProblemInvalidJSON, nil},
	{"exp", `1e+`, KindInvalid, ProblemInvalidJSON, nil},
	{"plus", `+1`, KindInvalid, ProblemInvalidJSON, nil},
	{"bom", "\xef\xbb\xbf{}", KindInvalid, ProblemInvalidJSON, nil},
	{"vertical tab", "\v{}", KindInvalid, ProblemInvalidJSON, nil},
	{"nbsp", "{}\u00a0", KindInvalid, ProblemInvalidJSON, nil},
	{"bad utf8 outside string", "{\xff}", KindInvalid, ProblemInvalidJSON, nil},
	{"missing colon", `{"a" 1}`, KindInvalid, ProblemInvalidJSON, nil},
	{"unquoted key", `{a:1}`, KindInvalid, ProblemInvalidJSON, nil},
	{"error object broken", `{"jsonrpc":"2.0","id":1,"error":{"code":1,}}`, KindInvalid, ProblemInvalidJSON, nil},
	{"id broken", `{"id":tru}`, KindInvalid, ProblemInvalidJSON, nil},

	// Not an object.
	{"number", ` 1 `, KindInvalid, ProblemNotObject, nil},
	{"string", `"x"`, KindInvalid, ProblemNotObject, nil},
	{"null", `null`, KindInvalid, ProblemNotObject, nil},
	{"false", `false`, KindInvalid, ProblemNotObject, nil},
	{"negative exp", `-0.5E-3`, KindInvalid, ProblemNotObject, nil},

	// Duplicates.
	{"dup id", `{` + v2 + `"id":1,"id":2,"result":1}`, KindResult, ProblemDuplicateKey, nil},
	{"dup escaped id", `{` + v2 + `"id":1,"\u0069d":2,"result":1}`, KindResult, ProblemDuplicateKey, nil},
	{"dup method", `{` + v2 + `"id":1,"method":"a","method":"b"}`, KindRequest, ProblemDuplicateKey, nil},
	{"dup jsonrpc", `{` + v2 + `"jsonrpc":"2.0","id":1,"result":1}`, KindResult, ProblemDuplicateKey, nil},
	{"dup error member", `{` + v2 + `"id":1,"error":{"code":1,"code":2,"message":"m"}}`, KindError, ProblemDuplicateKey, nil},
	{"dup error escaped", `{` + v2 + `"id":1,"error":{"code":1,"message":"m","\u006dessage":"n"}}`, KindError, ProblemDuplicateKey, nil},
	{"dup error extra", `{` + v2 + `"id":1,"error":{"code":1,"message":"m","x":1,"x":2}}`, KindError, ProblemDuplicateKey | ProblemBadErrorObject, nil},
	{"dup extra", `{` + v2 + `"id":1,"result":1,"x":1,"x":2}`, KindResult, ProblemDuplicateKey | ProblemExtraMember, nil},
	{"dup extra escaped", `{` + v2 + `"id":1,"result":1,"x\n":1,"\u0078\u000a":2}`, KindResult, ProblemDuplicateKey | ProblemExtraMember, nil},
	{"dup bad utf8 names", "{" + v2 + "\"id\":1,\"result\":1,\"\xff\":1,\"\xfe\":2}", KindResult, ProblemDuplicateKey | ProblemExtraMember | ProblemInvalidUTF8, nil},
	{"dup lone surrogates", `{` + v2 + `"id":1,"result":1,"\ud800":1,"\udc00":2}`, KindResult, ProblemDuplicateKey | ProblemExtraMember, nil},
	{"dup surrogate pair", `{` + v2 + `"id":1,"result":1,"\ud83d\ude00":1,"😀":2}`, KindResult, ProblemDuplicateKey | ProblemExtraMember, nil},
	{"not dup pair vs lone", `{` + v2 + `"id":1,"result":1,"\ud83d\ude00":1,"\ud83d":2}`, KindResult, ProblemExtraMember, nil},
	{"not dup prefix", `{` + v2 + `"id":1,"result":1,"ab":1,"a":2,"\u0061":3}`, KindResult, ProblemDuplicateKey | ProblemExtraMember, nil},
	{"not dup case", `{` + v2 + `"id":1,"ID":2,"result":1}`, KindResult, ProblemExtraMember, nil},
	{"last wins", `{` + v2 + `"id":1,"id":"x","result":1}`, KindResult, ProblemDuplicateKey, func(t *testing.T, m *Message) {
		if string(m.ID) != `"x"` || m.IDKind != IDString {
			t.Errorf("got %+v", m)
		}
	}},

	// Version.
	{"version missing", `{"id":1,"result":1}`, KindResult, ProblemBadVersion, nil},
	{"version 1.0", `{"jsonrpc":"1.0","id":1,"result":1}`, KindResult, ProblemBadVersion, nil},
	{"version number", `{"jsonrpc":2.0,"id":1,"result":1}`, KindResult, ProblemBadVersion, nil},
	{"version space", `{"jsonrpc":"2.0 ","id":1,"result":1}`, KindResult, ProblemBadVersion, nil},
	{"version escaped", `{"jsonrpc":"\u0032.0","id":1,"result":1}`, KindResult, 0, nil},
	{"version escaped wrong", `{"jsonrpc":"\u0032.1","id":1,"result":1}`, KindResult, ProblemBadVersion, nil},
	{"escaped prefix of id", `{` + v2 + `"id":1,"\u0069dd":2,"result":1}`, KindResult, ProblemExtraMember, nil},
	{"escaped name prefix of id", `{` + v2 + `"\u0069":1,"result":1}`, KindResult, ProblemExtraMember | ProblemMissingID, nil},
	{"error escaped prefix", `{` + v2 + `"id":1,"error":{"\u0063odes":1,"code":1,"message":"m"}}`, KindError, ProblemBadErrorObject, nil},
	{"version escaped longer", `{"jsonrpc":"\u0032.00","id":1,"result":1}`, KindResult, ProblemBadVersion, nil},
	{"escaped names", `{"\u006asonrpc":"2.0","i\u0064":1,"\u0072esult":1}`, KindResult, 0, nil},

	// Shape problems.
	{"both", `{` + v2 + `"id":1,"result":1,"error":{"code":1,"message":"m"}}`, KindResult, ProblemBothResultAndError, nil},
	{"neither", `{` + v2 + `"id":1}`, KindInvalid, ProblemNoResultOrError, nil},
	{"empty object", `{}`, KindInvalid, ProblemNoResultOrError | ProblemBadVersion, nil},
	{"params only", `{` + v2 + `"id":1,"params":[]}`, KindInvalid, ProblemNoResultOrError, nil},
	{"missing id result", `{` + v2 + `"result":1}`, KindResult, ProblemMissingID, nil},
	{"missing id error", `{` + v2 + `"error":{"code":1,"message":"m"}}`, KindError, ProblemMissingID, nil},
	{"id true", `{` + v2 + `"id":true,"result":1}`, KindResult, ProblemBadID, func(t *testing.T, m *Message) {
		if m.IDKind != IDOther || string(m.ID) != "true" {
			t.Errorf("got %+v", m)
		}
	}},
	{"id object", `{` + v2 + `"id":{"a":[1]},"method":"m"}`, KindRequest, ProblemBadID, nil},
	{"id array", `{` + v2 + `"id":[],"result":1}`, KindResult, ProblemBadID, nil},
	{"id fraction", `{` + v2 + `"id":1.5,"result":1}`, KindResult, ProblemFractionalID, nil},
	{"id exponent", `{` + v2 + `"id":1e2,"result":1}`, KindResult, ProblemFractionalID, nil},
	{"id minus zero", `{` + v2 + `"id":-0,"result":1}`, KindResult, 0, nil},
	{"id huge", `{` + v2 + `"id":123456789012345678901234567890,"result":1}`, KindResult, 0, nil},
	{"method number", `{` + v2 + `"id":1,"method":5}`, KindRequest, ProblemBadMethod, func(t *testing.T, m *Message) {
		if m.Method != nil {
			t.Errorf("Method = %q", m.Method)
		}
	}},
	{"method null notification", `{` + v2 + `"method":null}`, KindNotification, ProblemBadMethod, nil},
	{"method escaped", `{` + v2 + `"method":"a\"b"}`, KindNotification, 0, func(t *testing.T, m *Message) {
		if string(m.Method) != `"a\"b"` {
			t.Errorf("Method = %q", m.Method)
		}
	}},
	{"params scalar", `{` + v2 + `"id":1,"method":"m","params":1}`, KindRequest, ProblemBadParams, nil},
	{"params null", `{` + v2 + `"id":1,"method":"m","params":null}`, KindRequest, ProblemBadParams, nil},
	{"params string", `{` + v2 + `"method":"m","params":"x"}`, KindNotification, ProblemBadParams, nil},
	{"error string", `{` + v2 + `"id":1,"error":"boom"}`, KindError, ProblemBadErrorObject, nil},
	{"error empty", `{` + v2 + `"id":1,"error":{}}`, KindError, ProblemBadErrorObject, nil},
	{"error no message", `{` + v2 + `"id":1,"error":{"code":1}}`, KindError, ProblemBadErrorObject, nil},
	{"error no code", `{` + v2 + `"id":1,"error":{"message":"m"}}`, KindError, ProblemBadErrorObject, nil},
	{"error code fraction", `{` + v2 + `"id":1,"error":{"code":1.0,"message":"m"}}`, KindError, ProblemBadErrorObject, func(t *testing.T, m *Message) {
		if m.HasCode {
			t.Errorf("HasCode with fractional code")
		}
	}},
	{"error code string", `{` + v2 + `"id":1,"error":{"code":"1","message":"m"}}`, KindError, ProblemBadErrorObject, nil},
	{"error message number", `{` + v2 + `"id":1,"error":{"code":1,"message":2}}`, KindError, ProblemBadErrorObject, nil},
	{"error extra", `{` + v2 + `"id":1,"error":{"code":1,"message":"m","Data":1}}`, KindError, ProblemBadErrorObject, nil},
	{"error code min", `{` + v2 + `"id":1,"error":{"code":-9223372036854775808,"message":"m"}}`, KindError, 0, func(t *testing.T, m *Message) {
		if !m.HasCode || m.Code != -9223372036854775808 {
			t.Errorf("got %+v", m)
		}
	}},
	{"error code too big", `{` + v2 + `"id":1,"error":{"code":9223372036854775808,"message":"m"}}`, KindError, 0, func(t *testing.T, m *Message) {
		if m.HasCode || m.Code != 0 {
			t.Errorf("got %+v", m)
		}
	}},
	{"error deep data", `{` + v2 + `"id":1,"error":{"data":{"a":[[{}]]},"message":"m","code":-32000}}`, KindError, 0, func(t *testing.T, m *Message) {
		if m.Code != -32000 || string(m.ErrData) != `{"a":[[{}]]}` {
			t.Errorf("got %+v", m)
		}
	}},
	{"extra member", `{` + v2 + `"id":1,"result":1,"foo":{}}`, KindResult, ProblemExtraMember, nil},
	{"mixed request", `{` + v2 + `"id":1,"method":"m","result":1}`, KindRequest, ProblemMixedMembers, nil},
	{"mixed notification", `{` + v2 + `"method":"m","error":{"code":1,"message":"m"}}`, KindNotification, ProblemMixedMembers, nil},
	{"mixed response", `{` + v2 + `"id":1,"result":1,"params":[]}`, KindResult, ProblemMixedMembers, nil},
	{"bad utf8 id", "{" + v2 + "\"id\":\"\xff\",\"result\":1}", KindResult, ProblemInvalidUTF8, nil},
	{"bad utf8 nested", "{" + v2 + "\"id\":1,\"result\":{\"a\":[\"\xc0\x80\"]}}", KindResult, ProblemInvalidUTF8, nil},
	{"bad utf8 surrogate bytes", "\"\xed\xa0\x80\"", KindInvalid, ProblemNotObject | ProblemInvalidUTF8, nil},
	{"bad utf8 truncated", "[\"\xe2\x82\"]", KindBatch, ProblemNotObject | ProblemInvalidUTF8, nil},
	{"good utf8", `{` + v2 + `"id":"é😀","result":"\ud800"}`, KindResult, 0, nil},
}

func TestScan(t *testing.T) {
	for _, tc := range scanCases {
		t.Run(tc.name, func(t *testing.T) {
			var m Message
			Scan([]byte(tc.frame), &m)
			if m.Kind != tc.kind || m.Problems != tc.probs {
				t.Fatalf("Scan(%q) = %v %q, want %v %q", tc.frame, m.Kind, m.Problems, tc.kind, tc.probs)
			}
			if invalid, want := m.Problems.Has(ProblemInvalidJSON), !json.Valid([]byte(tc.frame)); invalid != want {
				t.Errorf("invalid_json = %v, json.Valid says %v", invalid, !want)
			}
			if tc.check != nil {
				tc.check(t, &m)
			}
		})
	}
}

func TestScanDuplicateErrorLastWins(t *testing.T) {
	var m Message
	Scan([]byte(`{"jsonrpc":"2.0","error":{"code":1,"message":"a","data":1},"id":1,"error":{"code":2,"message":"b"}}`), &m)
	if m.Code != 2 || string(m.ErrMsg) != `"b"` || m.ErrData != nil || string(m.Error) != `{"code":2,"message":"b"}` {
		t.Errorf("got %+v", m)
	}
	if m.Problems != ProblemDuplicateKey {
		t.Errorf("problems %q", m.Problems)
	}
}

func TestScanResets(t *testing.T) {
	var m Message
	Scan([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":2}}`), &m)
	Scan([]byte(`{"jsonrpc":"2.0","id":1,"result":1`), &m)
	if !reflect.DeepEqual(m, Message{Kind: KindInvalid, Problems: ProblemInvalidJSON}) {
		t.Errorf("invalid frame left fields: %+v", m)
	}
}

func nest(n int, open, close, mid string) string {
	return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
}

func TestScanDepth(t *testing.T) {
	cases := []struct {
		name  string
		frame string
		valid bool
	}{
		{"arrays at limit", nest(DefaultMaxDepth, "[", "]", ""), true},
		{"arrays over limit", nest(DefaultMaxDepth+1, "[", "]", ""), false},
		{"objects at limit", `{"a":` + nest(DefaultMaxDepth-1, `{"a":`, "}", "0") + "}", true},
		{"objects over limit", `{"a":` + nest(DefaultMaxDepth, `{"a":`, "}", "0") + "}", false},
		{"result at limit", `{"jsonrpc":"2.0","id":1,"result":` + nest(DefaultMaxDepth-1, "[", "]", "") + "}", true},
		{"result over limit", `{"jsonrpc":"2.0","id":1,"result":` + nest(DefaultMaxDepth, "[", "]", "") + "}", false},
		{"error data at limit", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":` + nest(DefaultMaxDepth-2, "[", "]", "") + "}}", true},
		{"error data over limit", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":` + nest(DefaultMaxDepth-1, "[", "]", "") + "}}", false},
		{"mixed at 65", nest(65, `[{"a":`, "}]", "1"), true},
		{"million open", strings.Repeat("[", 1_000_000), false},
		{"million", nest(1_000_000, "[", "]", ""), false},
		{"batch of deep", "[" + nest(DefaultMaxDepth-1, "[", "]", "") + "," + nest(70, "{\"a\":", "}", "1") + "]", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var m Message
			Scan([]byte(tc.frame), &m)
			if got := !m.Problems.Has(ProblemInvalidJSON); got != tc.valid {
				t.Errorf("valid = %v, want %v", got, tc.valid)
			}
			if tc.valid != json.Valid([]byte(tc.frame)) {
				t.Errorf("case disagrees with json.Valid")
			}
		})
	}
}

func TestScanExtraNameWindow(t *testing.T) {
	// A repeat of one of the first maxExtraNames unrecognised names is found
	// however many other names follow.
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"result":1`)
	for i := range 3 * maxExtraNames {
		b.WriteString(`,"x` + strconv.Itoa(i) + `":1`)
	}
	b.WriteString(`,"x0":2}`)
	var m Message
	Scan([]byte(b.String()), &m)
	if m.Problems != ProblemExtraMember|ProblemDuplicateKey {
		t.Errorf("problems %q", m.Problems)
	}
}

func TestNextElement(t *testing.T) {
	cases := []struct {
		frame string
		want  []string
	}{
		{`[]`, nil},
		{` [ ] `, nil},
		{`[1]`, []string{"1"}},
		{` [ {"a":[1,2]} ,"x", null ,[[]]] `, []string{`{"a":[1,2]}`, `"x"`, "null", "[[]]"}},
		{`{}`, nil},
		{`[1,]`, []string{"1"}},
		{`[1 2]`, []string{"1"}},
		{``, nil},
		{`[`, nil},
	}
	for _, tc := range cases {
		var got []string
		off := 0
		for {
			elem, next, ok := NextElement([]byte(tc.frame), off)
			if !ok {
				break
			}
			got = append(got, string(elem))
			off = next
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("NextElement(%q) = %q, want %q", tc.frame, got, tc.want)
		}
	}
	for _, off := range []int{-1, 100} {
		if _, _, ok := NextElement([]byte(`[1]`), off); ok {
			t.Errorf("offset %d accepted", off)
		}
	}
}

func TestScanAllocs(t *testing.T) {
	frames := [][]byte{
		[]byte(nest(DefaultMaxDepth, "[", "]", "")),
		[]byte(strings.Repeat("[", 1_000_000)),
	}
	for _, tc := range scanCases {
		frames = append(frames, []byte(tc.frame))
	}
	var m Message
	for _, f := range frames {
		if n := testing.AllocsPerRun(20, func() { Scan(f, &m) }); n != 0 {
			t.Errorf("Scan(%.40q) allocates %v times", f, n)
		}
	}
	batch := []byte(`[{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":2,"result":[{}]}]`)
	if n := testing.AllocsPerRun(100, func() {
		for off := 0; ; {
			elem, next, ok := NextElement(batch, off)
			if !ok {
				break
			}
			Scan(elem, &m)
			off = next
		}
	}); n != 0 {
		t.Errorf("NextElement allocates %v times", n)
	}
}
