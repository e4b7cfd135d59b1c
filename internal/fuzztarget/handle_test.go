package fuzztarget

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// outcome is what one frame gets: a reply (nil for none), a crash, a hang.
type outcome struct {
	reply string // "" for no reply
	crash Bug    // 0: no crash
	hang  bool
}

func (o outcome) String() string {
	switch {
	case o.crash != 0:
		return "crash " + o.crash.String()
	case o.hang:
		return "hang"
	case o.reply == "":
		return "no reply"
	}
	return o.reply
}

// run answers frame on a server with bugs, catching planted crashes.
func run(t *testing.T, bugs Bug, frame string) (o outcome) {
	t.Helper()
	defer func() {
		if v := recover(); v != nil {
			c, ok := v.(Crash)
			if !ok {
				t.Fatalf("panic that is no planted crash: %v", v)
			}
			if msg := fmt.Sprint(v); msg != "fuzztarget: planted bug "+c.Bug.String() {
				t.Errorf("panic message %q does not name the bug", msg)
			}
			o.crash = c.Bug
		}
	}()
	reply, hang := New(bugs).answer([]byte(frame))
	return outcome{reply: string(reply), hang: hang}
}

func ok(id, result string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}` }

func fail(id string, code int, msg, data string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q,"data":%s}}`, id, code, msg, data)
}

func parseErr(data string) string        { return fail("null", -32700, "Parse error", `"`+data+`"`) }
func invalid(id, data string) string     { return fail(id, -32600, "Invalid Request", `"`+data+`"`) }
func badParams(id, data string) string   { return fail(id, -32602, "Invalid params", data) }
func noMethod(id, rawName string) string { return fail(id, -32601, "Method not found", rawName) }

func req(id, method, params string) string {
	s := `{"jsonrpc":"2.0","id":` + id + `,"method":` + method
	if params != "" {
		s += `,"params":` + params
	}
	return s + "}"
}

func nest(n int, inner string) string { return strings.Repeat("[", n) + inner + strings.Repeat("]", n) }

const addUsage = `"add takes [a, b] or {\"a\": a, \"b\": b}"`

// TestSpecAnswers: inputs that trigger no bug get the JSON-RPC 2.0 answer,
// byte for byte, whether the bugs are planted or not.
func TestSpecAnswers(t *testing.T) {
	note := `{"jsonrpc":"2.0","method":"echo","params":[1]}`
	// The planted bugs these inputs trigger: left out of "all bugs".
	fires := map[string]Bug{"too deep": DeepNesting, "deepest allowed": DeepNesting, "duplicate id": DuplicateKey}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"echo array", req("1", `"echo"`, `[1,"a"]`), ok("1", `[1,"a"]`)},
		{"echo object as sent", req(`"x"`, `"echo"`, `{"k": [true, null] }`), ok(`"x"`, `{"k": [true, null] }`)},
		{"echo without params", req("2", `"echo"`, ""), ok("2", "null")},
		{"escaped method name", req("3", `"\u0065cho"`, "[]"), ok("3", "[]")},
		{"escaped version", `{"jsonrpc":"2\u002e0","id":1,"method":"echo"}`, ok("1", "null")},
		{"null id", req("null", `"echo"`, "[]"), ok("null", "[]")},
		{"fractional id echoed", req("1.5", `"echo"`, "[]"), ok("1.5", "[]")},
		{"id 1e400 echoed", req("1e400", `"echo"`, "[]"), ok("1e400", "[]")},
		{"id -0 with a method", req("-0", `"echo"`, "[]"), ok("-0", "[]")},
		{"id 2^63-1", req("9223372036854775807", `"echo"`, "[]"), ok("9223372036854775807", "[]")},
		{"id -2^63", req("-9223372036854775808", `"echo"`, "[]"), ok("-9223372036854775808", "[]")},
		{"id of 20 digits", req("1.2345678901234567890", `"echo"`, "[]"), ok("1.2345678901234567890", "[]")},
		{"surrounding space and extra members", " \t" + `{"jsonrpc":"2.0","x":{},"id":1,"method":"echo"}` + "\r\n", ok("1", "null")},
		{"surrogate pair", req("1", `"echo"`, `["\ud83d\ude00"]`), ok("1", `["\ud83d\ude00"]`)},
		{"names differing in case", req("1", `"echo"`, `{"a":1,"A":2}`), ok("1", `{"a":1,"A":2}`)},
		{"depth 64", req("1", `"echo"`, nest(63, "")), ok("1", nest(63, ""))},
		{"add array", req("1", `"add"`, "[1,2]"), ok("1", "3")},
		{"add object", req("1", `"add"`, `{"b":2.5,"a":1}`), ok("1", "3.5")},
		{"add past int64", req("1", `"add"`, "[9223372036854775807,1]"), ok("1", "9223372036854776000")}, // float64, printed as encoding/json does
		{"add small floats", req("1", `"add"`, "[1e-7,0]"), ok("1", "1e-7")},
		{"add overflow", req("1", `"add"`, "[1e308,1e308]"), badParams("1", `"the sum is out of range"`)},
		{"add one param", req("1", `"add"`, "[1]"), badParams("1", addUsage)},
		{"add string", req("1", `"add"`, `["1",2]`), badParams("1", `"a and b must be numbers"`)},
		{"add unknown name", req("1", `"add"`, `{"a":1,"c":2}`), badParams("1", addUsage)},
		{"add no params", req("1", `"add"`, ""), badParams("1", addUsage)},
		{"unknown method", req("5", `"teleport"`, ""), noMethod("5", `"teleport"`)},
		{"rpc. method", req("5", `"rpc.describe"`, ""), noMethod("5", `"rpc.describe"`)},
		{"empty method", req("0", `""`, "[]"), noMethod("0", `""`)},
		{"notification", note, ""},
		{"notification of an unknown method", `{"jsonrpc":"2.0","method":"teleport"}`, ""},
		{"notification with bad add params", `{"jsonrpc":"2.0","method":"add","params":[]}`, ""},
		{"truncated", `{"jsonrpc":"2.0","id":6,"method":`, parseErr("unexpected end of input at offset 33")},
		{"empty frame", "", parseErr("unexpected end of input at offset 0")},
		{"trailing comma", `[1,]`, parseErr(`invalid character ']' at offset 3`)},
		{"trailing data", `{} {}`, parseErr("data after the JSON value at offset 3")},
		{"BOM", "\ufeff{}", parseErr("invalid character byte 0xef at offset 0")},
		{"invalid UTF-8", "{\"a\":\"\xff\"}", parseErr("invalid UTF-8 in a string at offset 6")},
		{"control character", "[\"\t\"]", parseErr(`control character byte 0x09 in a string at offset 2`)},
		{"bad escape", `["\x"]`, parseErr(`invalid escape 'x' at offset 2`)},
		{"bad unicode escape", `["\u12"]`, parseErr(`invalid \\u escape at offset 2`)},
		{"leading zero", `[01]`, parseErr(`expected ',' or ']', found '1' at offset 2`)},
		{"NaN", `[NaN]`, parseErr(`invalid character 'N' at offset 1`)},
		{"bad literal", `[nul]`, parseErr(`invalid literal at offset 1`)},
		{"bare minus", `[-]`, parseErr(`a number needs digits at offset 2`)},
		{"too deep", nest(10001, ""), parseErr("nesting deeper than 10000 at offset 10000")},
		{"deepest allowed", req("1", `"echo"`, nest(9999, "")), ok("1", nest(9999, ""))},
		{"no jsonrpc", `{"id":1,"method":"x"}`, invalid("1", `jsonrpc must be \"2.0\"`)},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":"a","method":"echo"}`, invalid(`"a"`, `jsonrpc must be \"2.0\"`)},
		{"bool id", req("true", `"echo"`, ""), invalid("null", "id must be a string, a number or null")},
		{"object id", req("{}", `"echo"`, ""), invalid("null", "id must be a string, a number or null")},
		{"number method", req(`"a"`, "1", ""), invalid(`"a"`, "method must be a string")},
		{"scalar params", req("4", `"echo"`, "3"), invalid("4", "params must be an array or an object")},
		{"null params", req("4", `"echo"`, "null"), invalid("4", "params must be an array or an object")},
		{"invalid notification", `{"jsonrpc":"2.0","method":"echo","params":1}`, invalid("null", "params must be an array or an object")},
		{"no method", `{"jsonrpc":"2.0","id":7}`, invalid("7", "no method")},
		{"a response", `{"jsonrpc":"2.0","id":7,"result":1}`, invalid("7", "a response is not a request")},
		{"method and result", `{"jsonrpc":"2.0","id":7,"method":"echo","error":{}}`, invalid("7", "a request cannot carry result or error")},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"echo"}`, invalid("2", `duplicate member \"id\"`)},
		{"top-level number", `1`, invalid("null", "a request must be an object")},
		{"top-level null", `null`, invalid("null", "a request must be an object")},
		{"empty batch", `[]`, invalid("null", "empty batch")},
		{"batch of scalars", `[1,2]`, "[" + invalid("null", "a request must be an object") + "," + invalid("null", "a request must be an object") + "]"},
		{"nested batch", `[[]]`, "[" + invalid("null", "nested batch") + "]"},
		{"batch of notifications", "[" + note + "," + note + "]", ""},
		{"mixed batch", "[" + req("1", `"echo"`, "[1]") + "," + note + ", " + req(`"b"`, `"nope"`, "") + "]",
			"[" + ok("1", "[1]") + "," + noMethod(`"b"`, `"nope"`) + "]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, bugs := range []Bug{0, AllBugs &^ fires[tc.name]} {
				if got := run(t, bugs, tc.in); got != (outcome{reply: tc.want}) {
					t.Errorf("bugs %q:\n got %v\nwant %v", bugs, got, outcome{reply: tc.want})
				}
			}
		})
	}
}

// TestTriggers: each trigger with its bug planted crashes (or hangs) naming
// that bug, and gets the correct answer when every other bug is planted.
func TestTriggers(t *testing.T) {
	batch := func(n int, elem string) string { return "[" + strings.Repeat(elem+",", n-1) + elem + "]" }
	echo1 := req("1", `"echo"`, "")
	note := `{"jsonrpc":"2.0","method":"echo"}`
	deep := nest(64, "")
	for _, tc := range []struct {
		name, in string
		bug      Bug
		want     string // the answer without the bug
	}{
		{"TriggerFrame deep_nesting", string(TriggerFrame(DeepNesting)), DeepNesting, ok("1", deep)},
		{"deep params", req("1", `"echo"`, `{"a":`+nest(200, "1")+`}`), DeepNesting, ok("1", `{"a":`+nest(200, "1")+`}`)},
		{"deep id", req(deep, `"echo"`, ""), DeepNesting, invalid("null", "id must be a string, a number or null")},
		{"deep in a batch element", "[" + req("1", `"echo"`, nest(63, "")) + "]", DeepNesting, "[" + ok("1", nest(63, "")) + "]"},
		{"deep and truncated", req("1", `"echo"`, strings.Repeat("[", 70)), DeepNesting, parseErr("invalid character '}' at offset 119")},
		{"deep objects", strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65), DeepNesting, invalid("null", "no method")},

		{"TriggerFrame huge_id", string(TriggerFrame(HugeID)), HugeID, ok("9223372036854775808", "[1]")},
		{"id 2^64", req("18446744073709551616", `"echo"`, ""), HugeID, ok("18446744073709551616", "null")},
		{"id below -2^63", req("-9223372036854775809", `"echo"`, ""), HugeID, ok("-9223372036854775809", "null")},
		{"id of 21 digits with a fraction", req("1.23456789012345678901", `"echo"`, ""), HugeID, ok("1.23456789012345678901", "null")},
		{"id of 21 digits with an exponent", req("123456789012345678901e-5", `"echo"`, ""), HugeID, ok("123456789012345678901e-5", "null")},
		{"huge id on an invalid request", `{"id":99999999999999999999,"method":"echo"}`, HugeID, invalid("99999999999999999999", `jsonrpc must be \"2.0\"`)},
		{"huge id in a batch", "[" + echo1 + "," + req("12345678901234567890123", `"echo"`, "") + "]", HugeID, "[" + ok("1", "null") + "," + ok("12345678901234567890123", "null") + "]"},

		{"TriggerFrame duplicate_key", string(TriggerFrame(DuplicateKey)), DuplicateKey, invalid("1", `duplicate member \"method\"`)},
		{"duplicate in params", req("1", `"echo"`, `[{"a":1,"a":2}]`), DuplicateKey, ok("1", `[{"a":1,"a":2}]`)},
		{"duplicate by escape", req("1", `"echo"`, `{"a":1,"\u0061":2}`), DuplicateKey, ok("1", `{"a":1,"\u0061":2}`)},
		{"duplicate then truncated", `{"jsonrpc":"2.0","jsonrpc":`, DuplicateKey, parseErr("unexpected end of input at offset 27")},
		{"duplicate in a wide object", req("1", `"echo"`, wideObject(40, "k3")), DuplicateKey, ok("1", wideObject(40, "k3"))},

		{"TriggerFrame lone_surrogate", string(TriggerFrame(LoneSurrogate)), LoneSurrogate, ok("1", `["\ud800"]`)},
		{"lone low surrogate", req("1", `"echo"`, `["a\uDC00b"]`), LoneSurrogate, ok("1", `["a\uDC00b"]`)},
		{"high then not low", req("1", `"echo"`, `["\uD800\u0041"]`), LoneSurrogate, ok("1", `["\uD800\u0041"]`)},
		{"two highs", req("1", `"echo"`, `["\ud800\ud800\udc00"]`), LoneSurrogate, ok("1", `["\ud800\ud800\udc00"]`)},
		{"in a member name", req("1", `"echo"`, `{"\ud800":1}`), LoneSurrogate, ok("1", `{"\ud800":1}`)},
		{"in the method", req("1", `"\udbff"`, ""), LoneSurrogate, noMethod("1", `"\udbff"`)},
		{"lone and truncated", `["\ud800`, LoneSurrogate, parseErr("unterminated string at offset 8")},

		{"TriggerFrame big_batch", string(TriggerFrame(BigBatch)), BigBatch, "[" + strings.Repeat(ok("1", "null")+",", 1000) + ok("1", "null") + "]"},
		{"1001 notifications", batch(1001, note), BigBatch, ""},
		{"1001 numbers, truncated", "[" + strings.Repeat("1,", 1001), BigBatch, parseErr("unexpected end of input at offset 2003")},

		{"TriggerFrame hang", string(TriggerFrame(Hang)), Hang, noMethod("-0", `""`)},
		{"hang in a batch", "[" + echo1 + "," + req("-0", `""`, "") + "]", Hang, "[" + ok("1", "null") + "," + noMethod("-0", `""`) + "]"},
		{"hang on an invalid request", `{"id":-0,"method":""}`, Hang, invalid("-0", `jsonrpc must be \"2.0\"`)},

		{"TriggerFrame null_batch", string(TriggerFrame(NullBatch)), NullBatch, "[" + invalid("null", "a request must be an object") + "]"},
		{"null after a call", "[" + echo1 + ", null ]", NullBatch, "[" + ok("1", "null") + "," + invalid("null", "a request must be an object") + "]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := outcome{crash: tc.bug}
			if tc.bug == Hang {
				want = outcome{hang: true}
			}
			for _, bugs := range []Bug{tc.bug, AllBugs} {
				if got := run(t, bugs, tc.in); got != want {
					t.Errorf("planted %q: got %v, want %v", bugs, got, want)
				}
			}
			for _, bugs := range []Bug{0, AllBugs &^ tc.bug} {
				if got := run(t, bugs, tc.in); got != (outcome{reply: tc.want}) {
					t.Errorf("planted %q:\n got %.300v\nwant %.300v", bugs, got, outcome{reply: tc.want})
				}
			}
		})
	}
}

// TestNearMisses: inputs one step short of a trigger get their answer with
// every bug planted.
func TestNearMisses(t *testing.T) {
	note := `{"jsonrpc":"2.0","method":"echo"}`
	for _, tc := range []struct{ name, in, want string }{
		{"batch of 1000", "[" + strings.Repeat(note+",", 999) + note + "]", ""},
		{"array of 1001 inside a request", req("1", `"echo"`, "["+strings.Repeat("0,", 1000)+"0]"), ok("1", "["+strings.Repeat("0,", 1000)+"0]")},
		{"id 0 with an empty method", req("0", `""`, ""), noMethod("0", `""`)},
		{"string id -0 with an empty method", req(`"-0"`, `""`, ""), noMethod(`"-0"`, `""`)},
		{"huge number in params", req("1", `"echo"`, "[18446744073709551616]"), ok("1", "[18446744073709551616]")},
		{"exponent digits do not count", req("1e0000000000000000000000", `"echo"`, ""), ok("1e0000000000000000000000", "null")},
		{"huge string id", req(`"18446744073709551616"`, `"echo"`, ""), ok(`"18446744073709551616"`, "null")},
		{"null inside a batch element", "[" + req("1", `"echo"`, "[null]") + "]", "[" + ok("1", "[null]") + "]"},
		{"null alone", "null", invalid("null", "a request must be an object")},
		{"escaped backslash before u", req("1", `"echo"`, `["\\ud800"]`), ok("1", `["\\ud800"]`)},
	} {
		if got := run(t, AllBugs, tc.in); got != (outcome{reply: tc.want}) {
			t.Errorf("%s:\n got %.300v\nwant %.300v", tc.name, got, outcome{reply: tc.want})
		}
	}
}

// wideObject is an object of n members k0..k(n-1) and one more named dup.
func wideObject(n int, dup string) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i := range n {
		fmt.Fprintf(&sb, `"k%d":%d,`, i, i)
	}
	sb.WriteString(`"` + dup + `":0}`)
	return sb.String()
}

// TestHandle: Handle returns the reply, lets a planted crash panic through,
// and holds a planted hang until its context ends.
func TestHandle(t *testing.T) {
	ctx := context.Background()
	s := New(AllBugs)
	if got := string(s.Handle(ctx, []byte(req("1", `"add"`, "[2,3]")))); got != ok("1", "5") {
		t.Errorf("Handle = %s", got)
	}
	if got := s.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"echo"}`)); got != nil {
		t.Errorf("Handle of a notification = %q, want nil", got)
	}
	func() {
		defer func() {
			if v := recover(); v != (Crash{HugeID}) {
				t.Errorf("recovered %v, want the huge_id crash", v)
			}
		}()
		s.Handle(ctx, TriggerFrame(HugeID))
		t.Error("Handle returned from a planted crash")
	}()
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan []byte)
	go func() { done <- s.Handle(hctx, TriggerFrame(Hang)) }()
	select {
	case r := <-done:
		t.Fatalf("Handle returned %q before its context ended", r)
	default:
	}
	cancel()
	if r := <-done; r != nil {
		t.Errorf("hung Handle returned %q, want nil", r)
	}
	if s.Frames() != 4 || s.Bugs() != AllBugs {
		t.Errorf("Frames() = %d, Bugs() = %v", s.Frames(), s.Bugs())
	}
}

// TestTriggerFrame: each single bug has a frame that triggers it alone.
func TestTriggerFrame(t *testing.T) {
	for _, b := range append(Bugs(), HandlerBugs()...) {
		want := outcome{crash: b}
		if b == Hang {
			want = outcome{hang: true}
		}
		if got := run(t, AllBugs, string(TriggerFrame(b))); got != want {
			t.Errorf("TriggerFrame(%v) with all bugs: %v", b, got)
		}
		if got := run(t, AllBugs&^b, string(TriggerFrame(b))); got.crash != 0 || got.hang || got.reply == "" {
			t.Errorf("TriggerFrame(%v) without it: %v", b, got)
		}
	}
	if TriggerFrame(Hang|HugeID) != nil || TriggerFrame(0) != nil {
		t.Error("TriggerFrame of a set is not nil")
	}
}

// BenchmarkHandle is the in-process cost of one small call, the unit of the
// native harness's execs/s.
func BenchmarkHandle(b *testing.B) {
	s := New(AllBugs)
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1,"a",{"b":null}]}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if s.Handle(ctx, frame) == nil {
			b.Fatal("no reply")
		}
	}
}
