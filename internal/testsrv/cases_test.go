package testsrv

import (
	"testing"
	"time"
)

// testNow is the fixed clock of the exact-output cases: get_time is "14:05"
// and eth_blockNumber stays at its start value 0x1.
var testNow = time.Date(2026, 7, 28, 14, 5, 30, 0, time.UTC)

func fixedClock() time.Time { return testNow }

// newTestServer returns a server with the fixed clock and cfg's other fields.
func newTestServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = fixedClock
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// frameCase is one input frame and the exact reply ("" = no reply at all).
type frameCase struct {
	name, in, want string
}

// Reply builders keep the table readable.
func res(id, result string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}`
}

func errr(id string, code, msg, data string) string {
	s := `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":` + code + `,"message":"` + msg + `"`
	if data != "" {
		s += `,"data":` + data
	}
	return s + `}}`
}

func req(id, method, params string) string {
	s := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		s += `,"params":` + params
	}
	return s + `}`
}

func bad(id, data string) string     { return errr(id, "-32600", "Invalid Request", data) }
func badp(id, data string) string    { return errr(id, "-32602", "Invalid params", data) }
func unknown(id, name string) string { return errr(id, "-32601", "Method not found", `"`+name+`"`) }

var parseErr = errr("null", "-32700", "Parse error", "")

// groundTruth is the table of protocols.md §1, verbatim.
var groundTruth = []frameCase{
	{"truncated", `{"jsonrpc":"2.0","id":6,"method":`, parseErr},
	{"teleport", `{"jsonrpc":"2.0","id":5,"method":"teleport"}`, unknown("5", "teleport")},
	{"convert missing arg", `{"jsonrpc":"2.0","id":4,"method":"convert","params":{"value":5}}`, badp("4", `"missing param: factor"`)},
	{"notification", `{"jsonrpc":"2.0","method":"get_time"}`, ""},
	{"empty batch", `[]`, bad("null", `"empty batch"`)},
	{"no jsonrpc", `{"id":1,"method":"x"}`, bad("1", `"bad_version"`)},
}

// methodCases cover every method's success and -32602 paths.
var methodCases = []frameCase{
	{"get_time", req("1", "get_time", ""), res("1", `"14:05"`)},
	{"get_time empty params", req("1", "get_time", "[]"), res("1", `"14:05"`)},
	{"get_time with params", req("1", "get_time", "[1]"), badp("1", `"get_time takes no params"`)},
	{"echo object", req(`"e"`, "echo", `{"a":[1,{"b":null}],"c":"\u00e9"}`), res(`"e"`, `{"a":[1,{"b":null}],"c":"\u00e9"}`)},
	{"echo array", req("2", "echo", `[1, 2 ,3]`), res("2", `[1, 2 ,3]`)},
	{"echo none", req("3", "echo", ""), res("3", "null")},
	{"add positional", req("1", "add", "[1,2]"), res("1", "3")},
	{"add named", req("1", "add", `{"b":2,"a":1.5}`), res("1", "3.5")},
	{"add negative", req("1", "add", "[-7,2]"), res("1", "-5")},
	{"add int overflow to float", req("1", "add", "[9223372036854775807,1]"), res("1", "9223372036854776000")},
	{"add missing", req("1", "add", "[1]"), badp("1", `"missing param: b"`)},
	{"add no params", req("1", "add", ""), badp("1", `"missing param: a"`)},
	{"add too many", req("1", "add", "[1,2,3]"), badp("1", `"too many params for add"`)},
	{"add unknown name", req("1", "add", `{"a":1,"b":2,"c\"d":3}`), badp("1", `"unknown param: c\"d"`)},
	{"add duplicate name", req("1", "add", `{"a":1,"a":2}`), badp("1", `"duplicate param: a"`)},
	{"add string", req("1", "add", `["1",2]`), badp("1", `"a must be a finite number"`)},
	{"add inf", req("1", "add", `[1e308,1e308]`), badp("1", `"result is out of range"`)},
	{"add huge literal", req("1", "add", `[1e400,1]`), badp("1", `"a must be a finite number"`)},
	{"convert", req("7", "convert", `{"value":5,"factor":2.54}`), res("7", "12.7")},
	{"convert positional ints", req("7", "convert", `[6,7]`), res("7", "42")},
	{"convert bad factor", req("7", "convert", `{"value":5,"factor":null}`), badp("7", `"factor must be a finite number"`)},
	{"lookup_weather", req("1", "lookup_weather", `{"city":"Oslo"}`), res("1", `{"city":"Oslo","temp_c":11}`)},
	{"lookup_weather positional", req("1", "lookup_weather", `["K\u00f8ln"]`), res("1", `{"city":"K\u00f8ln","temp_c":11}`)},
	{"lookup_weather not string", req("1", "lookup_weather", `{"city":5}`), badp("1", `"city must be a string"`)},
	{"sleep named", req("1", "sleep", `{"ms":0}`), res("1", "true")},
	{"sleep positional", req("1", "sleep", `[1]`), res("1", "true")},
	{"sleep negative", req("1", "sleep", `[-1]`), badp("1", `"ms must be a number between 0 and 600000"`)},
	{"sleep too long", req("1", "sleep", `{"ms":600001}`), badp("1", `"ms must be a number between 0 and 600000"`)},
	{"spin", req("1", "spin", `{"us":1}`), res("1", "true")},
	{"spin positional", req("1", "spin", `[0]`), res("1", "true")},
	{"spin too long", req("1", "spin", `[2e6]`), badp("1", `"us must be a number between 0 and 1000000"`)},
	{"eth_blockNumber", req("1", "eth_blockNumber", ""), res("1", `"0x1"`)},
	{"eth_blockNumber params", req("1", "eth_blockNumber", `["latest"]`), badp("1", `"eth_blockNumber takes no params"`)},
	{"eth_chainId", req("1", "eth_chainId", "[]"), res("1", `"0x539"`)},
	{"eth_chainId params", req("1", "eth_chainId", `{"x":1}`), badp("1", `"eth_chainId takes no params"`)},
}

// protocolCases cover invalid requests, ids, names and batches.
var protocolCases = []frameCase{
	{"rpc.other", req("1", "rpc.other", ""), unknown("1", "rpc.other")},
	{"empty method", req("1", "", ""), unknown("1", "")},
	{"escaped method name", `{"jsonrpc":"2.0","id":1,"method":"get\u005ftime"}`, res("1", `"14:05"`)},
	{"string id", req(`"abc"`, "eth_chainId", ""), res(`"abc"`, `"0x539"`)},
	{"numeric string id", req(`"7"`, "eth_chainId", ""), res(`"7"`, `"0x539"`)},
	{"null id", req("null", "eth_chainId", ""), res("null", `"0x539"`)},
	{"fractional id", req("1.5", "eth_chainId", ""), res("1.5", `"0x539"`)},
	{"big id", req("123456789012345678901234567890", "eth_chainId", ""), res("123456789012345678901234567890", `"0x539"`)},
	{"bool id", req("true", "eth_chainId", ""), bad("null", `"bad_id"`)},
	{"scalar params", req("1", "echo", "5"), bad("1", `"bad_params"`)},
	{"string params", req("1", "add", `"1,2"`), bad("1", `"bad_params"`)},
	{"method not string", `{"jsonrpc":"2.0","method":1,"params":"bar"}`, bad("null", `"bad_method|bad_params"`)},
	{"version 1.0", `{"jsonrpc":"1.0","id":3,"method":"get_time"}`, bad("3", `"bad_version"`)},
	{"invalid notification", `{"method":"get_time"}`, bad("null", `"bad_version"`)},
	{"duplicate key", `{"jsonrpc":"2.0","id":1,"method":"get_time","method":"echo"}`, bad("1", `"duplicate_key"`)},
	{"extra member ignored", `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","x":1}`, res("1", `"0x539"`)},
	{"response sent", `{"jsonrpc":"2.0","id":1,"result":1}`, bad("1", `"a response is not a request"`)},
	{"no method", `{"jsonrpc":"2.0","id":2}`, bad("2", `"no_result_or_error"`)},
	{"scalar frame", `5`, bad("null", `"not_object"`)},
	{"not an object", `{"foo":"boo"}`, bad("null", `"bad_version|no_result_or_error|extra_member"`)},
	{"not json", `hello`, parseErr},
	{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"get_time"} x`, parseErr},
	{"invalid utf8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"\xff\"]}", parseErr},
	{"whitespace around", "  " + req("1", "eth_chainId", "") + "\t", res("1", `"0x539"`)},
	{"notification unknown method", `{"jsonrpc":"2.0","method":"teleport"}`, ""},
	{"notification bad params", `{"jsonrpc":"2.0","method":"add","params":[1]}`, ""},
	{"batch mixed",
		`[` + req("1", "add", "[1,2]") + `,{"jsonrpc":"2.0","method":"get_time"},{"foo":1},` + req(`"x"`, "teleport", "") + `]`,
		`[` + res("1", "3") + `,` + bad("null", `"bad_version|no_result_or_error|extra_member"`) + `,` + unknown(`"x"`, "teleport") + `]`},
	{"batch all notifications", `[{"jsonrpc":"2.0","method":"get_time"},{"jsonrpc":"2.0","method":"echo","params":[1]}]`, ""},
	{"batch of scalars", `[1,2]`, `[` + bad("null", `"not_object"`) + `,` + bad("null", `"not_object"`) + `]`},
	{"batch duplicate ids", `[` + req("1", "eth_chainId", "") + `,` + req("1", "echo", "[2]") + `]`, `[` + res("1", `"0x539"`) + `,` + res("1", "[2]") + `]`},
	{"nested batch", `[[]]`, `[` + bad("null", `"nested batch"`) + `]`},
	{"batch with slow method", `[` + req("1", "convert", "[2,3]") + `,` + req("2", "get_time", "") + `]`, `[` + res("1", "6") + `,` + res("2", `"14:05"`) + `]`},
	{"invalid batch json", `[` + req("1", "get_time", ""), parseErr},
}

// allCases is every exact-output case.
func allCases() []frameCase {
	var all []frameCase
	all = append(all, groundTruth...)
	all = append(all, methodCases...)
	return append(all, protocolCases...)
}

func TestHandleFrame(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, tc := range allCases() {
		t.Run(tc.name, func(t *testing.T) {
			out, reply := s.HandleFrame([]byte("prefix:"), []byte(tc.in))
			if got := string(out); got[:7] != "prefix:" {
				t.Fatalf("dst prefix lost: %q", got)
			}
			if reply != (tc.want != "") {
				t.Fatalf("reply = %v, want %v (out %s)", reply, tc.want != "", out)
			}
			if got := string(out[7:]); got != tc.want {
				t.Errorf("in:   %s\ngot:  %s\nwant: %s", tc.in, got, tc.want)
			}
		})
	}
	if got, want := s.Requests(), uint64(len(allCases())); got != want {
		t.Errorf("Requests() = %d, want %d", got, want)
	}
}

func TestBlockNumberAndTimeFollowClock(t *testing.T) {
	now := testNow
	s := newTestServer(t, Config{Now: func() time.Time { return now }})
	now = now.Add(90 * time.Second) // 14:07:00
	for _, tc := range []frameCase{
		{"block", req("1", "eth_blockNumber", ""), res("1", `"0x5b"`)}, // 1 + 90
		{"time", req("1", "get_time", ""), res("1", `"14:07"`)},
	} {
		if out, _ := s.HandleFrame(nil, []byte(tc.in)); string(out) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, out, tc.want)
		}
	}
}
