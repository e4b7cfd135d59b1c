package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/check"

	"github.com/rpcload/rpcload/corpus"
	"github.com/rpcload/rpcload/internal/fuzztarget"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/wire"
)

var classifyTests = []struct {
	frame string
	want  RequestClass
}{
	// protocols.md, "What a correct server answers".
	{`{"jsonrpc":"2.0","id":6,"method":`, ParseError},
	{`{"jsonrpc":"2.0","id":5,"method":"teleport"}`, Call},
	{`{"jsonrpc":"2.0","id":4,"method":"convert","params":{"value":5}}`, Call},
	{`{"jsonrpc":"2.0","method":"get_time"}`, Notification},
	{`[]`, EmptyBatch},
	{`{"id":1,"method":"x"}`, InvalidRequest},

	{``, ParseError},
	{`   `, ParseError},
	{`{"jsonrpc":"2.0","id":1,"method":"x"} x`, ParseError},
	{`{"jsonrpc":"2.0","id":1,"method":"x",}`, ParseError},
	{"\uFEFF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}", ParseError},
	{`{"jsonrpc":"2.0","id":NaN,"method":"x"}`, ParseError},
	{`[1,2`, ParseError},
	{` [ ] `, EmptyBatch},
	{`[1,2]`, Batch},
	{`[{"jsonrpc":"2.0","method":"n"}]`, Batch},
	{`[[]]`, Batch},
	{`42`, InvalidRequest},
	{`"call"`, InvalidRequest},
	{`null`, InvalidRequest},
	{`{}`, InvalidRequest},
	{`{"foo":"boo"}`, InvalidRequest},
	{`{"jsonrpc":"2.0","method":1,"params":"bar"}`, InvalidRequest},
	{`{"jsonrpc":"1.0","id":1,"method":"x"}`, InvalidRequest},
	{`{"jsonrpc":"2.0","id":true,"method":"x"}`, InvalidRequest},
	{`{"jsonrpc":"2.0","id":{},"method":"x"}`, InvalidRequest},
	{`{"jsonrpc":"2.0","id":1}`, InvalidRequest},
	{`{"jsonrpc":"2.0","id":1,"result":1}`, InvalidRequest},
	{`{"jsonrpc":"2.0","id":1,"method":"x","params":5}`, InvalidParams},
	{`{"jsonrpc":"2.0","id":1,"method":"x","params":"a"}`, InvalidParams},
	{`{"jsonrpc":"2.0","id":1,"method":"x","params":null}`, InvalidParams},
	{`{"jsonrpc":"2.0","method":"x","params":true}`, InvalidParams},
	{`{"jsonrpc":"2.0","id":1,"method":"x","params":[]}`, Call},
	{`{"jsonrpc":"2.0","id":"a","method":"x","params":{}}`, Call},
	{`{"jsonrpc":"2.0","id":null,"method":"x"}`, Call},
	{`{"jsonrpc":"2.0","id":1.5,"method":"x"}`, Call},
	{`{"jsonrpc":"2.0","id":-7,"method":""}`, Call},
	{`{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}`, Call},
	{`{"jsonrpc":"2.0","id":1,"method":"x","extra":1}`, Call},
	{` {"method" : "x" ,"\u006aSONRPC":"2.0", "jsonrpc":"2.0"} `, Notification},
	{`{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}`, Call},
	{`{"jsonrpc":"2.0","method":"x","id":1,"id":true}`, InvalidRequest},
}

func TestClassifyRequest(t *testing.T) {
	for _, tc := range classifyTests {
		if got := ClassifyRequest([]byte(tc.frame)); got != tc.want {
			t.Errorf("ClassifyRequest(%s) = %s; want %s", tc.frame, got, tc.want)
		}
	}
}

func TestRequestClassString(t *testing.T) {
	seen := map[string]bool{}
	for c := RequestClass(0); c < NumRequestClasses; c++ {
		name := c.String()
		if name == "" || strings.HasPrefix(name, "class(") || seen[name] {
			t.Errorf("class %d has name %q", c, name)
		}
		seen[name] = true
	}
	if got := NumRequestClasses.String(); got != "class(7)" {
		t.Errorf("NumRequestClasses.String() = %q", got)
	}
}

const (
	call1   = `{"jsonrpc":"2.0","id":1,"method":"x"}`
	res1    = `{"jsonrpc":"2.0","id":1,"result":"ok"}`
	noReply = "\x00none" // stands for gotReply == false
)

func errReply(id string, code int) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":` + strconv.Itoa(code) + `,"message":"m"}}`
}

func result(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":"ok"}` }

func nest(depth int) string {
	return `{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
}

type judgeTestCase struct {
	name         string
	input, reply string
	want         check.Set
}

var judgeTests = []judgeTestCase{
	// protocols.md ground truth, each with its correct answer and the wrong ones.
	{"parse error: correct", `{"jsonrpc":"2.0","id":6,"method":`, errReply("null", -32700), 0},
	{"parse error: -32600", `{"jsonrpc":"2.0","id":6,"method":`, errReply("null", -32600), set(check.WrongErrorCode)},
	{"parse error: salvaged id", `{"jsonrpc":"2.0","id":6,"method":`, errReply("6", -32700), set(check.WrongErrorCode)},
	{"parse error: result", `{"jsonrpc":"2.0","id":6,"method":`, result("null"), set(check.WrongErrorCode)},
	{"parse error: silence", `{"jsonrpc":"2.0","id":6,"method":`, noReply, set(check.WrongErrorCode)},
	{"parse error: bad envelope too", `{"jsonrpc":"2.0","id":6,"method":`, `{"id":null,"error":{"code":-32700,"message":"m"}}`, set(check.BadJSONRPCVersion)},
	{"parse error: array", `[1,`, `[` + errReply("null", -32700) + `]`, set(check.InvalidEnvelope)},
	{"unknown method: correct", `{"jsonrpc":"2.0","id":5,"method":"teleport"}`, errReply("5", -32601), 0},
	{"unknown method: id as string", `{"jsonrpc":"2.0","id":5,"method":"teleport"}`, errReply(`"5"`, -32601), set(check.IDTypeChanged)},
	{"unknown method: id null", `{"jsonrpc":"2.0","id":5,"method":"teleport"}`, errReply("null", -32601), set(check.UnexpectedNullID)},
	{"unknown method: other id", `{"jsonrpc":"2.0","id":5,"method":"teleport"}`, errReply("6", -32601), set(check.UnknownID)},
	{"unknown method: silence", `{"jsonrpc":"2.0","id":5,"method":"teleport"}`, noReply, set(check.Hang)},
	{"unknown method: parse error", `{"jsonrpc":"2.0","id":5,"method":"teleport"}`, errReply("null", -32700), set(check.WrongErrorCode, check.UnexpectedNullID)},
	{"missing arg: correct", `{"jsonrpc":"2.0","id":4,"method":"convert","params":{"value":5}}`, errReply("4", -32602), 0},
	{"missing arg: result", `{"jsonrpc":"2.0","id":4,"method":"convert","params":{"value":5}}`, result("4"), 0},
	{"notification: correct", `{"jsonrpc":"2.0","method":"get_time"}`, noReply, 0},
	{"notification: answered", `{"jsonrpc":"2.0","method":"get_time"}`, result("null"), set(check.ReplyToNotification)},
	{"notification: error", `{"jsonrpc":"2.0","method":"get_time"}`, errReply("null", -32601), set(check.ReplyToNotification)},
	{"notification: garbage", `{"jsonrpc":"2.0","method":"get_time"}`, `oops`, set(check.ReplyToNotification, check.InvalidJSON)},
	{"notification: empty body", `{"jsonrpc":"2.0","method":"get_time"}`, " \r\n", 0},
	{"empty batch: correct", `[]`, errReply("null", -32600), 0},
	{"empty batch: []", `[]`, `[]`, set(check.EmptyBatchReplyWrong)},
	{"empty batch: array", `[]`, `[` + errReply("null", -32600) + `]`, set(check.EmptyBatchReplyWrong)},
	{"empty batch: silence", `[]`, noReply, set(check.EmptyBatchReplyWrong)},
	{"empty batch: other code", `[]`, errReply("null", -32700), set(check.EmptyBatchReplyWrong)},
	{"empty batch: id 0", `[]`, errReply("0", -32600), set(check.EmptyBatchReplyWrong)},
	{"empty batch: not JSON", `[]`, `{`, set(check.InvalidJSON)},
	{"no jsonrpc: correct", `{"id":1,"method":"x"}`, errReply("1", -32600), 0},
	{"no jsonrpc: id null", `{"id":1,"method":"x"}`, errReply("null", -32600), 0},
	{"no jsonrpc: result", `{"id":1,"method":"x"}`, res1, set(check.WrongErrorCode)},
	// Not so for a broken envelope: the server took for a Request object
	// what is none (docs/oracle.md says why).
	{"no jsonrpc: -32601", `{"id":1,"method":"x"}`, errReply("1", -32601), set(check.WrongErrorCode)},
	{"jsonrpc 1.0: -32601", `{"jsonrpc":"1.0","id":1,"method":"x"}`, errReply("1", -32601), set(check.WrongErrorCode)},
	{"no method: -32601", `{"jsonrpc":"2.0","id":0}`, errReply("0", -32601), set(check.WrongErrorCode)},
	{"bool id: -32601 echoed", `{"jsonrpc":"2.0","id":true,"method":"e"}`, errReply("true", -32601), set(check.WrongErrorCode, check.InvalidEnvelope)},
	{"no jsonrpc, scalar params: -32601", `{"id":1,"method":"x","params":5}`, errReply("1", -32601), set(check.WrongErrorCode)},
	{"no jsonrpc: other id", `{"id":1,"method":"x"}`, errReply("2", -32600), set(check.UnknownID)},
	{"no jsonrpc: silence", `{"id":1,"method":"x"}`, noReply, set(check.Hang)},

	// Invalid requests without a readable id.
	{"method a number: correct", `{"jsonrpc":"2.0","method":1,"params":"bar"}`, errReply("null", -32600), 0},
	{"method a number: silence", `{"jsonrpc":"2.0","method":1,"params":"bar"}`, noReply, set(check.WrongErrorCode)},
	{"method a number: an id", `{"jsonrpc":"2.0","method":1,"params":"bar"}`, errReply("1", -32600), set(check.WrongErrorCode)},
	{"bool id: correct", `{"jsonrpc":"2.0","id":true,"method":"x"}`, errReply("null", -32600), 0},
	{"bool id: echoed", `{"jsonrpc":"2.0","id":true,"method":"x"}`, errReply("true", -32600), set(check.InvalidEnvelope)},
	{"scalar: correct", `42`, errReply("null", -32600), 0},
	{"scalar: parse error", `42`, errReply("null", -32700), set(check.WrongErrorCode)},
	{"foo boo", `{"foo":"boo"}`, errReply("null", -32600), 0},

	// Scalar params.
	{"scalar params: -32602", `{"jsonrpc":"2.0","id":3,"method":"x","params":5}`, errReply("3", -32602), 0},
	{"scalar params: -32600", `{"jsonrpc":"2.0","id":3,"method":"x","params":5}`, errReply("3", -32600), 0},
	{"scalar params: -32600 null", `{"jsonrpc":"2.0","id":3,"method":"x","params":5}`, errReply("null", -32600), 0},
	{"scalar params: -32602 null", `{"jsonrpc":"2.0","id":3,"method":"x","params":5}`, errReply("null", -32602), set(check.UnexpectedNullID)},
	// The spec orders neither the method nor the params check: an unknown
	// method is truthfully -32601 whatever its params (geth, mcp-go, go-sdk).
	{"scalar params: -32601", `{"jsonrpc":"2.0","id":3,"method":"x","params":5}`, errReply("3", -32601), 0},
	{"scalar params: geth's -32601", `{"jsonrpc":"2.0","id":0,"method":"e","params":""}`, `{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"the method e does not exist/is not available"}}`, 0},
	{"scalar params, id null: -32601 null", `{"jsonrpc":"2.0","id":null,"method":"e","params":true}`, errReply("null", -32601), 0},
	{"scalar params: -32601 null", `{"jsonrpc":"2.0","id":3,"method":"x","params":5}`, errReply("null", -32601), set(check.UnexpectedNullID)},
	{"scalar params: -32700", `{"jsonrpc":"2.0","id":3,"method":"x","params":5}`, errReply("3", -32700), set(check.WrongErrorCode)},
	{"scalar params: -32603", `{"jsonrpc":"2.0","id":3,"method":"x","params":5}`, errReply("3", -32603), set(check.WrongErrorCode)},
	{"scalar params: result", `{"jsonrpc":"2.0","id":3,"method":"x","params":5}`, result("3"), set(check.WrongErrorCode)},
	{"scalar params: silence", `{"jsonrpc":"2.0","id":3,"method":"x","params":5}`, noReply, set(check.Hang)},
	{"scalar params, no id: silence", `{"jsonrpc":"2.0","method":"x","params":"s"}`, noReply, 0},
	{"scalar params, no id: error", `{"jsonrpc":"2.0","method":"x","params":"s"}`, errReply("null", -32602), 0},
	{"null params: result", `{"jsonrpc":"2.0","id":3,"method":"x","params":null}`, result("3"), 0},
	// A result shows null read as absent: what is wrong is the id.
	{"null params: other id", `{"jsonrpc":"2.0","id":3,"method":"x","params":null}`, result("4"), set(check.UnknownID)},
	{"null params: go-sdk's wrapped id", `{"jsonrpc":"2.0","id":23456789012345678901,"method":"tools/list","params":null}`, result("-9223372036854775808"), set(check.UnknownID)},
	{"null params, no id: result", `{"jsonrpc":"2.0","method":"x","params":null}`, result("null"), set(check.ReplyToNotification)},
	{"null params: parse error", `{"jsonrpc":"2.0","id":3,"method":"x","params":null}`, errReply("3", -32700), set(check.WrongErrorCode)},
	{"null params, no id: silence", `{"jsonrpc":"2.0","method":"x","params":null}`, noReply, 0},

	// Replies checked like rpcload's.
	{"call: correct", call1, res1, 0},
	{"call: both", call1, `{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}`, set(check.BothResultAndError)},
	{"call: neither", call1, `{"jsonrpc":"2.0","id":1}`, set(check.NoResultOrError)},
	{"call: version", call1, `{"jsonrpc":"1.0","id":1,"result":1}`, set(check.BadJSONRPCVersion)},
	{"call: bad error", call1, `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`, set(check.BadErrorObject)},
	{"call: not JSON", call1, `{"jsonrpc":"2.0","id":1,"result":`, set(check.InvalidJSON)},
	{"call: array", call1, `[` + res1 + `]`, set(check.InvalidEnvelope)},
	{"call: no id", call1, `{"jsonrpc":"2.0","result":1}`, set(check.InvalidEnvelope)},
	{"call: server notification", call1, `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, 0},
	{"call: server request", call1, `{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`, 0},

	// Ids: equal values in other spellings, and the id tolerances.
	{"id 1e2 echoed 100", `{"jsonrpc":"2.0","id":1e2,"method":"x"}`, result("100"), 0},
	{"id 12 echoed 12.0", `{"jsonrpc":"2.0","id":12,"method":"x"}`, result("12.0"), 0},
	{"id 12 echoed 1.2e1", `{"jsonrpc":"2.0","id":12,"method":"x"}`, result("1.2e1"), 0},
	{"id -0 echoed 0", `{"jsonrpc":"2.0","id":-0,"method":"x"}`, result("0"), 0},
	{"id 1.5 echoed", `{"jsonrpc":"2.0","id":1.5,"method":"x"}`, result("1.5"), 0},
	{"id 1.5 echoed 15", `{"jsonrpc":"2.0","id":1.5,"method":"x"}`, result("15"), set(check.UnknownID)},
	{"id 1.5 refused", `{"jsonrpc":"2.0","id":1.5,"method":"x"}`, errReply("null", -32600), 0},
	{"id 2^53+1 through float64", `{"jsonrpc":"2.0","id":9007199254740993,"method":"x"}`, result("9007199254740992"), 0},
	{"id 2^53-1 changed", `{"jsonrpc":"2.0","id":9007199254740991,"method":"x"}`, result("9007199254740990"), set(check.UnknownID)},
	{"id 2^64 refused", `{"jsonrpc":"2.0","id":18446744073709551616,"method":"x"}`, errReply("null", -32600), 0},
	{"id 1e400 refused", `{"jsonrpc":"2.0","id":1e400,"method":"x"}`, errReply("null", -32700), 0},
	{"id escaped string", `{"jsonrpc":"2.0","id":"\u0037","method":"x"}`, result(`"7"`), 0},
	{"id string changed", `{"jsonrpc":"2.0","id":"7","method":"x"}`, result(`"8"`), set(check.UnknownID)},
	{"id string to number", `{"jsonrpc":"2.0","id":"7","method":"x"}`, result(`7`), set(check.IDTypeChanged)},
	{"id empty string", `{"jsonrpc":"2.0","id":"","method":"x"}`, result(`""`), 0},
	{"id negative", `{"jsonrpc":"2.0","id":-3,"method":"x"}`, result(`-3`), 0},
	{"id null: result null", `{"jsonrpc":"2.0","id":null,"method":"x"}`, result("null"), 0},
	// Silence to id null is tolerated as a failure, and reported as the
	// warning null_id_unanswered (JSON-RPC 1.0's notification).
	{"id null: silence", `{"jsonrpc":"2.0","id":null,"method":"x"}`, noReply, set(check.NullIDUnanswered)},
	{"id null, invalid request: silence", `{"id":null,"method":"x"}`, noReply, set(check.NullIDUnanswered)},
	{"id null, scalar params: silence", `{"jsonrpc":"2.0","id":null,"method":"x","params":1}`, noReply, set(check.NullIDUnanswered)},
	{"id null, response-like: silence", `{"jsonrpc":"2.0","id":null,"result":1}`, noReply, 0},
	{"id null, repeated method: silence", `{"jsonrpc":"2.0","id":null,"method":"x","method":"y"}`, noReply, 0},
	{"id null: answered 0", `{"jsonrpc":"2.0","id":null,"method":"x"}`, result("0"), set(check.UnknownID)},

	// Ids with text a decoder replaces: the echo of what it read passes.
	{"invalid UTF-8 id echoed U+FFFD", "{\"jsonrpc\":\"2.0\",\"id\":\"\x80\",\"method\":\"x\"}", result("\"\uFFFD\""), 0},
	{"invalid UTF-8 id echoed \\ufffd", "{\"jsonrpc\":\"2.0\",\"id\":\"\xbf\",\"method\":\"x\"}", result(`"\ufffd"`), 0},
	{"invalid UTF-8 id of an invalid request", "{\"id\":\"\x80\"}", errReply("\"\uFFFD\"", -32600), 0},
	{"invalid UTF-8 inside an id", "{\"jsonrpc\":\"2.0\",\"id\":\"call-\xfe5\",\"method\":\"x\"}", result("\"call-\uFFFD5\""), 0},
	{"truncated sequence, one U+FFFD per byte", "{\"jsonrpc\":\"2.0\",\"id\":\"a\xf0\x90\x80b\",\"method\":\"x\"}", result("\"a\uFFFD\uFFFD\uFFFDb\""), 0},
	{"truncated sequence, one U+FFFD", "{\"jsonrpc\":\"2.0\",\"id\":\"a\xf0\x90\x80b\",\"method\":\"x\"}", result("\"a\uFFFDb\""), 0},
	{"invalid UTF-8 id echoed otherwise", "{\"jsonrpc\":\"2.0\",\"id\":\"a\x80\",\"method\":\"x\"}", result("\"b\uFFFD\""), set(check.UnknownID)},
	{"invalid UTF-8 id echoed empty", "{\"jsonrpc\":\"2.0\",\"id\":\"call-\xfe5\",\"method\":\"x\"}", result(`""`), set(check.UnknownID)},
	{"U+FFFD id echoed shorter", "{\"jsonrpc\":\"2.0\",\"id\":\"\uFFFD\uFFFD\",\"method\":\"x\"}", result("\"\uFFFD\""), set(check.UnknownID)},
	{"lone surrogate id echoed U+FFFD", `{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, result("\"\uFFFD\""), 0},
	{"lone surrogate id echoed as sent", `{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, result(`"\ud800"`), 0},
	{"lone surrogate id echoed otherwise", `{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, result(`"?"`), set(check.UnknownID)},

	// An id readable although the frame has a trait elsewhere that may hit
	// a parser's limits: the id or null.
	{"lone surrogate in a name, big id echoed", `{"\udc00":"","id":23372036854775808,"method":"x"}`, errReply("23372036854775808", -32600), 0},
	{"lone surrogate in a name, big id through float64", `{"\udc00":"","id":23372036854775808,"method":"x"}`, errReply("2.337203685477581e+16", -32600), 0},
	{"lone surrogate in a name, id null", `{"\udc00":"","id":23372036854775808,"method":"x"}`, errReply("null", -32700), 0},
	{"exponent id of an invalid request echoed", `{"":"","id":1E2}`, errReply("100", -32600), 0},
	{"deep elsewhere, id echoed", `{"id":9007199254740993,"":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`, errReply("9007199254740992", -32600), 0},
	{"deep elsewhere, other id", `{"id":9007199254740993,"":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`, errReply("9007199254740990", -32600), set(check.UnknownID)},

	// "method": "" names no method: refusing it as invalid passes too.
	{"empty method notification: refused", `{"jsonrpc":"2.0","method":""}`, errReply("null", -32600), 0},
	{"empty method notification: silence", `{"jsonrpc":"2.0","method":""}`, noReply, 0},
	{"empty method notification: -32601", `{"jsonrpc":"2.0","method":""}`, errReply("null", -32601), set(check.ReplyToNotification)},
	{"empty method call: refused with id null", `{"jsonrpc":"2.0","id":3,"method":""}`, errReply("null", -32600), 0},
	{"empty method call: -32601 with id null", `{"jsonrpc":"2.0","id":3,"method":""}`, errReply("null", -32601), set(check.UnexpectedNullID)},
	{"empty method call: silence", `{"jsonrpc":"2.0","id":3,"method":""}`, noReply, set(check.Hang)},

	// Edges where parsers legitimately differ.
	{"invalid UTF-8: parse error", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\xff\"}", errReply("null", -32700), 0},
	{"invalid UTF-8: result", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\xff\"}", res1, 0},
	{"lone surrogate: parse error", `{"jsonrpc":"2.0","id":1,"method":"x","params":["\ud800"]}`, errReply("null", -32700), 0},
	{"paired surrogates: parse error", `{"jsonrpc":"2.0","id":1,"method":"x","params":["\ud83d\ude00"]}`, errReply("null", -32700), set(check.WrongErrorCode, check.UnexpectedNullID)},
	{"lone surrogate notification: error", `{"jsonrpc":"2.0","method":"x","params":["\udc00"]}`, errReply("null", -32700), 0},
	{"deep: refused", nest(70), errReply("null", -32700), 0},
	{"deep: internal error with id", nest(70), errReply("1", -32603), 0},
	{"shallow: refused", nest(10), errReply("null", -32700), set(check.WrongErrorCode, check.UnexpectedNullID)},
	{"huge number in params: refused", `{"jsonrpc":"2.0","id":1,"method":"x","params":[1e999]}`, errReply("null", -32700), 0},
	{"huge number in params: result", `{"jsonrpc":"2.0","id":1,"method":"x","params":[1e999]}`, res1, 0},
	{"duplicate method: result", `{"jsonrpc":"2.0","id":1,"method":"x","method":5}`, res1, 0},
	{"duplicate method: -32600", `{"jsonrpc":"2.0","id":1,"method":"x","method":5}`, errReply("1", -32600), 0},
	{"duplicate method: other id", `{"jsonrpc":"2.0","id":1,"method":"x","method":5}`, result("2"), set(check.UnknownID)},
	{"duplicate method: parse error, other id", `{"jsonrpc":"2.0","id":1,"method":"x","method":5}`, errReply("2", -32700), set(check.WrongErrorCode)},
	{"duplicate id: first", `{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}`, result("1"), 0},
	{"duplicate id: last", `{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}`, result("2"), 0},
	{"duplicate key in params: refused", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"a":2}}`, errReply("null", -32700), 0},
	{"duplicate escaped key: refused", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"\u0061":2}}`, errReply("null", -32600), 0},
	{"same key in sibling objects: refused", `{"jsonrpc":"2.0","id":1,"method":"x","params":[{"a":1},{"a":2}]}`, errReply("null", -32700), set(check.WrongErrorCode, check.UnexpectedNullID)},
	{"duplicate method, no id: silence", `{"jsonrpc":"2.0","method":"x","method":5}`, noReply, 0},
	{"extra member: refused", `{"jsonrpc":"2.0","id":1,"method":"x","x":0}`, errReply("1", -32600), 0},
	{"extra member: result", `{"jsonrpc":"2.0","id":1,"method":"x","x":0}`, res1, 0},
	{"extra member: -32601", `{"jsonrpc":"2.0","id":1,"method":"x","x":0}`, errReply("1", -32601), 0},
	{"response sent: ignored", `{"jsonrpc":"2.0","id":1,"result":1}`, noReply, 0},
	{"response sent: refused", `{"jsonrpc":"2.0","id":1,"result":1}`, errReply("1", -32600), 0},
	{"BOM: answered", "\uFEFF" + call1, res1, 0},
	{"BOM: refused", "\uFEFF" + call1, errReply("null", -32700), 0},
	{"BOM: wrong id", "\uFEFF" + call1, result("2"), set(check.WrongErrorCode)},
	{"NBSP around: answered", "\u00a0" + call1 + "\u00a0", res1, 0},
	{"two messages: first answered", call1 + `{"jsonrpc":"2.0","id":2,"method":"y"}`, res1, 0},
	{"two messages: second answered", call1 + `{"jsonrpc":"2.0","id":2,"method":"y"}`, result("2"), set(check.WrongErrorCode)},
	{"NaN: answered", `{"jsonrpc":"2.0","id":1,"method":"x","params":[NaN]}`, res1, 0},
	{"comment: answered", `{"jsonrpc":"2.0","id":1,"method":"x" /* c */}`, res1, 0},
	{"trailing comma: silence", `{"jsonrpc":"2.0","method":"x",}`, noReply, 0},
	{"bare key: answered", `{jsonrpc:"2.0","id":1,"method":"x"}`, res1, 0},
	{"exponent plus is no extension", `{"jsonrpc":"2.0","id":1e+1,"method":`, result("10"), set(check.WrongErrorCode)},
	{"truncated literal is no extension", `{"jsonrpc":"2.0","id":1,"method":"x","params":[tru`, res1, set(check.WrongErrorCode)},
	{"too deep for the scanner: answered", `{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, res1, 0},

	// Repeated envelope members: the answer to either reading passes.
	{"jsonrpc repeated, last valid: result", `{"jsonrpc":"3.0","jsonrpc":"2.0","id":null,"method":"echo"}`, result("null"), 0},
	{"jsonrpc repeated, last valid: refused", `{"jsonrpc":"3.0","jsonrpc":"2.0","id":null,"method":"echo"}`, errReply("null", -32600), 0},
	{"jsonrpc repeated, last valid: other id", `{"jsonrpc":"3.0","jsonrpc":"2.0","id":null,"method":"echo"}`, result("1"), set(check.UnknownID)},
	// go-sdk reads the first "jsonrpc", then the scalar params, and answers
	// -32602 as it should, but under an id wrapped to int64.
	{"jsonrpc repeated, -32602 to a wrapped id", `{"jsonrpc":"2.0","jsonrpc":null,"id":9223372036854775807,"method":"tools/list","params":0}`,
		errReply("-9223372036854775808", -32602), set(check.UnknownID)},
	{"jsonrpc repeated, -32602 with the id", `{"jsonrpc":"2.0","jsonrpc":null,"id":9,"method":"tools/list","params":0}`, errReply("9", -32602), 0},
	{"jsonrpc repeated, first valid: result", `{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"echo"}`, res1, 0},
	{"jsonrpc repeated, escaped: result", `{"jsonrpc":"1.0","\u006asonrpc":"\u0032.0","id":1,"method":"echo"}`, res1, 0},
	{"params repeated, first an array: result", `{"jsonrpc":"2.0","id":1,"method":"x","params":[1],"params":7}`, res1, 0},
	// Read last-wins (go-sdk), the second params is the one: a result
	// whose id is wrong blames the id.
	{"params repeated, last an object: wrapped id", `{"jsonrpc":"2.0","id":18446744073709551615,"method":"initialize","params":0,"params":{}}`,
		result("-9223372036854775808"), set(check.UnknownID)},
	{"method repeated, last a string: other id", `{"jsonrpc":"2.0","id":1,"method":5,"method":"x"}`, result("2"), set(check.UnknownID)},
	// A method that is no string next to an error member: a response
	// with a member too many as much as an invalid request (go-ethereum
	// drops it as a response), so silence is allowed, as is -32600.
	{"error and a numeric method: silence", `{"jsonrpc":"2.0","error":[2,40],"id":2,"method":1}`, noReply, 0},
	{"error and a numeric method: -32600", `{"jsonrpc":"2.0","error":[2,40],"id":2,"method":1}`, errReply("2", -32600), 0},
	// With a string method as well the message is still both at once, and
	// the spec does not say which role wins (mcp-go drops it as a response).
	{"result and a string method: silence", `{"jsonrpc":"2.0","result":1,"id":2,"method":"x"}`, noReply, 0},
	{"result and a string method: -32600", `{"jsonrpc":"2.0","result":1,"id":2,"method":"x"}`, errReply("2", -32600), 0},
	{"result and a string method: a reply with another id", `{"jsonrpc":"2.0","result":1,"id":2,"method":"x"}`, errReply("3", -32600), set(check.UnknownID)},
	{"id repeated, first null: silence", `{"jsonrpc":"2.0","method":"x","id":null,"id":[1]}`, noReply, 0},
	{"id repeated, neither allows silence", `{"jsonrpc":"2.0","method":"x","id":5,"id":[1]}`, noReply, set(check.WrongErrorCode)},
	// Inputs once listed as oracle false positives in interop/fuzz_test.go.
	{"jsonrpc null then 2.0: last-wins result", `{"jsonrpc":null,"jsonrpc":"2.0","id":1,"method":"x"}`, res1, 0},
	{"jsonrpc empty then 2.0: last-wins notification", `{"jsonrpc":"","jsonrpc":"2.0","method":"u"}`, noReply, 0},
	{"lone surrogate member name, id echoed", `{"\uD80d":0,"id":9372036854775807}`, errReply("9372036854775807", -32600), 0},
	{"lone surrogate member name, id echoed as float64", `{"\uD80d":0,"id":9372036854775807}`, errReply("9372036854775808", -32600), 0},
	{"lone surrogate id answered under U+FFFD", `{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, result(`"\ufffd"`), 0},
	{"invalid UTF-8 id, -32601 under U+FFFD", "{\"jsonrpc\":\"2.0\",\"id\":\"\xbf\",\"method\":\"o\"}", errReply("\"\uFFFD\"", -32601), 0},
	{"null params, no jsonrpc: result", `{"id":3,"method":"x","params":null}`, result("3"), set(check.WrongErrorCode)},
	{"null params, no jsonrpc, no id: silence", `{"method":"x","params":null}`, noReply, set(check.WrongErrorCode)},
}

func TestJudgeFuzzReply(t *testing.T) {
	for _, tc := range judgeTests {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.input)
			reply, got := []byte(tc.reply), true
			if tc.reply == noReply {
				reply, got = nil, false
			}
			rules, note := JudgeFuzzReply(in, ClassifyRequest(in), reply, got)
			if rules != tc.want {
				t.Fatalf("JudgeFuzzReply(%.80s, %.80s) = %s %q; want %s", tc.input, tc.reply, names(rules), note, names(tc.want))
			}
			if (rules != 0) != (note != "") && !strings.Contains(tc.name, "server") {
				t.Errorf("rules %s with note %q: a finding needs a note and only a finding has one", names(rules), note)
			}
			if len(note) > 300 {
				t.Errorf("note is %d bytes long", len(note))
			}
		})
	}
}

const specBatch = `[
 {"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},
 {"jsonrpc":"2.0","method":"notify_hello","params":[7]},
 {"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":"2"},
 {"foo":"boo"},
 {"jsonrpc":"2.0","method":"foo.get","params":{"name":"myself"},"id":"5"},
 {"jsonrpc":"2.0","method":"get_data","id":"9"}
]`

func arr(elems ...string) string { return "[" + strings.Join(elems, ",") + "]" }

// nullIDReq is a request with id null, which a server reading JSON-RPC
// 1.0 takes for a notification.
const nullIDReq = `{"jsonrpc":"2.0","id":null,"method":"x"}`

var batchTests = []judgeTestCase{
	{"spec example", specBatch, arr(result(`"1"`), result(`"2"`), errReply("null", -32600), errReply(`"5"`, -32601), result(`"9"`)), 0},
	{"spec example shuffled", specBatch, arr(result(`"9"`), errReply("null", -32600), errReply(`"5"`, -32601), result(`"2"`), result(`"1"`)), 0},
	{"missing one", specBatch, arr(result(`"1"`), result(`"2"`), errReply("null", -32600), errReply(`"5"`, -32601)), set(check.BatchMissingReply)},
	{"missing the invalid one", specBatch, arr(result(`"1"`), result(`"2"`), errReply(`"5"`, -32601), result(`"9"`)), set(check.BatchMissingReply)},
	{"extra id", specBatch, arr(result(`"1"`), result(`"2"`), errReply("null", -32600), errReply(`"5"`, -32601), result(`"9"`), result(`"10"`)), set(check.ReplyToNotification)},
	// One fault, one rule: a reply to nothing is a reply to a notification
	// when the batch has one, whatever id the server made up for it.
	{"extra id, no notification", arr(call1), arr(res1, result(`"10"`)), set(check.BatchExtraReply)},
	{"answered twice", specBatch, arr(result(`"1"`), result(`"1"`), result(`"2"`), errReply("null", -32600), errReply(`"5"`, -32601), result(`"9"`)), set(check.DuplicateReply)},
	{"id type changed", specBatch, arr(result(`1`), result(`"2"`), errReply("null", -32600), errReply(`"5"`, -32601), result(`"9"`)), set(check.IDTypeChanged)},
	{"invalid element answered -32700", specBatch, arr(result(`"1"`), result(`"2"`), errReply("null", -32700), errReply(`"5"`, -32601), result(`"9"`)), set(check.WrongErrorCode)},
	{"notification answered", specBatch, arr(result(`"1"`), result(`"2"`), errReply("null", -32600), errReply("null", -32601), errReply(`"5"`, -32601), result(`"9"`)), set(check.ReplyToNotification)},
	{"single object", specBatch, errReply("null", -32600), set(check.BatchNotArray)},
	{"empty array", specBatch, `[]`, set(check.BatchMissingReply)},
	{"silence", specBatch, noReply, set(check.Hang)},
	{"element envelope", specBatch, arr(result(`"1"`), result(`"2"`), errReply("null", -32600), errReply(`"5"`, -32601), `{"jsonrpc":"2.0","id":"9","result":1,"x":2}`), set(check.InvalidEnvelope)},
	{"element not an object", specBatch, arr(result(`"1"`), result(`"2"`), errReply("null", -32600), errReply(`"5"`, -32601), result(`"9"`), `7`), set(check.InvalidEnvelope)},
	{"request inside the reply", arr(call1), arr(res1, `{"jsonrpc":"2.0","id":9,"method":"m"}`), set(check.BatchExtraReply)},
	{"reply not JSON", arr(call1), `[` + res1, set(check.InvalidJSON)},

	// An element with id null left out, as a notification would be: the
	// warning null_id_unanswered; answered, nothing.
	{"id null element left out", arr(call1, nullIDReq), arr(res1), set(check.NullIDUnanswered)},
	{"id null element answered", arr(call1, nullIDReq), arr(result("null"), res1), 0},
	{"id null element alone: silence", arr(nullIDReq), noReply, set(check.NullIDUnanswered)},
	{"id null element left out, another missing", arr(call1, nullIDReq, `{"jsonrpc":"2.0","id":2,"method":"x"}`), arr(res1), set(check.BatchMissingReply, check.NullIDUnanswered)},
	{"all invalid: correct", `[1,2]`, arr(errReply("null", -32600), errReply("null", -32600)), 0},
	{"all invalid: one", `[1,2]`, arr(errReply("null", -32600)), set(check.BatchMissingReply)},
	{"all invalid: silence", `[1,2]`, noReply, set(check.WrongErrorCode)},
	{"all invalid: wrong code", `[1,2]`, arr(errReply("null", -32600), errReply("null", -32700)), set(check.WrongErrorCode)},
	{"nested batch", `[[]]`, arr(errReply("null", -32600)), 0},
	{"only notifications: silence", `[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]`, noReply, 0},
	{"only notifications: []", `[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]`, `[]`, set(check.ReplyToNotification)},
	{"only notifications: errors", `[{"jsonrpc":"2.0","method":"a"}]`, arr(errReply("null", -32601)), set(check.ReplyToNotification)},
	{"only notifications: object", `[{"jsonrpc":"2.0","method":"a"}]`, errReply("null", -32601), set(check.ReplyToNotification)},
	{"only calls: null id", arr(call1), arr(errReply("null", -32603)), set(check.UnexpectedNullID)},
	{"only calls: null id, all answered", arr(call1), arr(res1, errReply("null", -32603)), set(check.UnexpectedNullID)},
	{"duplicate ids", arr(call1, call1), arr(res1, res1), 0},
	{"duplicate ids, one answer", arr(call1, call1), arr(res1), set(check.BatchMissingReply)},
	{"same id, invalid first", arr(`{"id":1,"method":"x"}`, call1), arr(res1, errReply("1", -32600)), 0},
	{"same id, call first", arr(call1, `{"id":1,"method":"x"}`), arr(errReply("1", -32600), errReply("1", -32601)), 0},
	{"same id, scalar params", arr(call1, `{"jsonrpc":"2.0","id":1,"method":"x","params":3}`), arr(errReply("1", -32602), res1), 0},
	{"id null call and invalid", arr(`{"jsonrpc":"2.0","id":null,"method":"x"}`, `5`), arr(errReply("null", -32600), result("null")), 0},
	{"scalar params, no id", arr(`{"jsonrpc":"2.0","method":"x","params":1}`, call1), arr(res1, errReply("null", -32602)), 0},
	{"scalar params, no id, silent", arr(`{"jsonrpc":"2.0","method":"x","params":1}`, call1), arr(res1), 0},
	{"float id echoed", arr(`{"jsonrpc":"2.0","id":9007199254740993,"method":"x"}`), arr(result("9007199254740992")), 0},
	{"capped batch", arr(strings.Split(strings.Repeat(call1+"\n", 101), "\n")[:101]...), errReply("null", -32600), 0},
	{"uncapped batch", arr(strings.Split(strings.Repeat(call1+"\n", 100), "\n")[:100]...), errReply("null", -32600), set(check.BatchNotArray)},
	{"edge element refused", arr(strings.Replace(nest(70), `"id":1`, `"id":2`, 1), call1), arr(res1, errReply("null", -32700)), 0},
	{"plain element refused", arr(strings.Replace(nest(7), `"id":1`, `"id":2`, 1), call1), arr(res1, errReply("null", -32700)), set(check.UnexpectedNullID, check.WrongErrorCode)},

	// Pairing: a reply goes to an element it answers correctly while one is
	// left, whatever the order of the replies.
	{"id null error to the element needing it", nullParamsAndNull, arr(errReply("null", -32600)), 0},
	{"one error for a batch with null params", nullParamsAndNull, errReply("null", -32600), 0},
	{"null params element answered too", nullParamsAndNull, arr(errReply("null", -32600), errReply("null", -32600)), 0},
	{"null params element answered, null one not", nullParamsAndNull, arr(errReply("null", -32602)), set(check.BatchMissingReply)},
	{"one error for a plain batch", arr(`{"jsonrpc":"2.0","method":"x","params":1}`, `null`), errReply("null", -32600), set(check.BatchNotArray)},
	{"id repeated: both answered with the id", repeatedID, arr(result("2"), result("2")), 0},
	{"id repeated: answered as invalid", repeatedID, arr(result("2"), errReply("null", -32600)), 0},
	{"id repeated: answered as invalid, reversed", repeatedID, arr(errReply("null", -32600), result("2")), 0},
	{"id repeated: answered three times", repeatedID, arr(result("2"), result("2"), result("2")), set(check.DuplicateReply)},
	{"fractional id repeated", `[{"jsonrpc":"2.0","method":"m","id":2.5},{"jsonrpc":"2.0","method":"m","id":[],"id":2.5}]`, arr(result("2.5"), result("2.5")), 0},
	{"id repeated: answered with the first", arr(`{"jsonrpc":"2.0","method":"x","id":1,"id":2}`, `{"jsonrpc":"2.0","method":"x","id":2}`), arr(result("2"), result("1")), 0},
	{"method repeated, read first", arr(call12, `{"jsonrpc":"2.0","id":12,"method":"echo","method":1}`, call12, `{"jsonrpc":"2.0","id":12,"method":null}`),
		arr(result("12"), result("12"), errReply("12", -32600), result("12")), 0},
	{"-32600 to the invalid one of ten", arr(append(slices.Repeat([]string{call7}, 9), `{"jsonrpc":"1.0","id":7,"method":"x"}`)...),
		arr(append([]string{errReply("7", -32600)}, slices.Repeat([]string{errReply("7", -32601)}, 9)...)...), 0},
	{"id null: each error where it fits", arr(`{"jsonrpc":"2.0","method":"x","id":null}`, `{"jsonrpc":null,"method":"x"}`, `{"jsonrpc":"2.0","method":"x","params":"null"}`),
		arr(errReply("null", -32600), errReply("null", -32600), errReply("null", -32601)), 0},
	{"augmenting path", arr(`{"jsonrpc":"2.0","id":79,"method":"x"}`, `{"jsonrpc":"2.0","id":79,"method":"x","params":"2"}`,
		`{"jsonrpc":"2.0","id":79,"method":"x","method":1}`, `{"jsonrpc":false,"id":79,"method":"x"}`),
		arr(errReply("79", -32600), result("79"), errReply("79", -32600), result("79")), 0},
	{"augmenting path, one -32600 short", arr(`{"jsonrpc":"2.0","id":79,"method":"x"}`, `{"jsonrpc":"2.0","id":79,"method":"x","params":"2"}`,
		`{"jsonrpc":"2.0","id":79,"method":"x","method":1}`, `{"jsonrpc":false,"id":79,"method":"x"}`),
		arr(errReply("79", -32600), result("79"), result("79"), result("79")), set(check.WrongErrorCode)},
	// An unknown method with scalar params answered -32601 takes its own
	// element, and the id-null error goes to the element that needs it.
	{"scalar params -32601 and an id-null element", arr(`{"jsonrpc":"2.0","id":0,"method":"a","params":true}`, `{"id":null}`),
		arr(errReply("0", -32601), errReply("null", -32600)), 0},
	{"scalar params -32601 among invalid elements", arr(`{"params":0}`, `{"jsonrpc":"2.0","id":0,"method":"t","params":false}`, `{"id":""}`),
		arr(errReply("null", -32600), errReply("0", -32601), errReply(`""`, -32600)), 0},
	{"geth's scalar params batch", arr(`{"id":0}`, `{"jsonrpc":"2.0","method":"m","params":"","id":""}`),
		arr(errReply("0", -32600), `{"jsonrpc":"2.0","id":"","error":{"code":-32601,"message":"the method m does not exist/is not available"}}`), 0},
	{"invalid UTF-8 id echoed U+FFFD in a batch", arr("{\"jsonrpc\":\"2.0\",\"id\":\"\x80\",\"method\":\"x\"}", `{"jsonrpc":"2.0","method":"n"}`),
		arr(result("\"\uFFFD\"")), 0},
	{"truncated sequence echoed as one U+FFFD in a batch", arr("{\"jsonrpc\":\"2.0\",\"id\":\"\xf0\x90\x80\",\"method\":\"x\"}", call1),
		arr(res1, result(`"\ufffd"`)), 0},
	{"empty method notification refused in a batch", arr(`{"jsonrpc":"2.0","method":""}`, `{"id":0}`),
		arr(errReply("0", -32600), errReply("null", -32600)), 0},
	// A response whose id is of a wrong type (geth echoes id true) is an
	// envelope fault; it still answers its element, which is not missing.
	{"bool id echoed in a batch", `[{"id":true}]`, arr(errReply("true", -32600)), set(check.InvalidEnvelope)},
	{"bool id echoed with a result in a batch", arr(`{"jsonrpc":"2.0","id":false,"method":"eth_blockNumber"}`, `{"jsonrpc":"2.0","id":0,"method":"eth_blockNumber"}`),
		arr(`{"jsonrpc":"2.0","id":false,"result":"0x60"}`, `{"jsonrpc":"2.0","id":0,"result":"0x61"}`), set(check.InvalidEnvelope, check.WrongErrorCode)},
	{"bool id answering nothing", arr(call1), arr(res1, `{"jsonrpc":"2.0","id":true,"result":1}`), set(check.InvalidEnvelope)},
	{"reply without id for an invalid element", arr(`{"id":{}}`, call1), arr(res1, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"m"}}`), set(check.InvalidEnvelope)},
	// A fraction no float64 holds (1e-999999999 reads as 0) next to the
	// same id after a repeated "id" (first true, last 1e-999999999). Both
	// are invalid requests (no method) due -32600; the first with its id
	// or null, the second with any id (the repeat makes its id whatever
	// the reader kept). Two responses with one id are no duplicate: two
	// elements carry it. An echo through float64 (0; -0 in Go, 0 in
	// JavaScript) is the id as read (the tolerance for ids float64 cannot
	// hold); a different number answers no element.
	{"tiny fraction id twice: raw echoes", tinyIDs, arr(errReply(tiny, -32600), errReply(tiny, -32600)), 0},
	{"tiny fraction id twice: float64 echoes", tinyIDs, arr(errReply("0", -32600), errReply("-0", -32600)), 0},
	{"tiny fraction id twice: mixed echoes", tinyIDs, arr(errReply("-0", -32600), errReply(tiny, -32600)), 0},
	{"tiny fraction id twice: first-wins reader", tinyIDs, arr(errReply("null", -32600), errReply(tiny, -32600)), 0},
	{"tiny fraction id twice: id null both", tinyIDs, arr(errReply("null", -32600), errReply("null", -32600)), 0},
	{"tiny fraction id twice: answered three times", tinyIDs, arr(errReply(tiny, -32600), errReply("0", -32600), errReply("0", -32600)), set(check.DuplicateReply)},
	{"tiny fraction id twice: one answer", tinyIDs, arr(errReply("0", -32600)), set(check.BatchMissingReply)},
	{"tiny fraction id twice: the id echoed true", tinyIDs, arr(errReply(tiny, -32600), errReply("true", -32600)), set(check.InvalidEnvelope)},
	// (The second element takes any id: the tolerance for a repeated "id"
	// member does not guess what a reader made of it.)
	{"tiny fraction id twice: another number", tinyIDs, arr(errReply(tiny, -32600), errReply("1", -32600)), 0},
	{"tiny fraction id: another number", `[{"id":1e-999999999}]`, arr(errReply("1", -32600)), set(check.UnknownID)},
	{"tiny fraction id: answered twice", `[{"id":1e-999999999}]`, arr(errReply("0", -32600), errReply(tiny, -32600)), set(check.DuplicateReply)},
	// Answers of interop servers whose pairing once named the wrong rule.
	// go-ethereum echoes the id false of the second element (its -32601 is
	// a wrong code); the response is that element's, though the first
	// element (read first-wins, a notification) could take it.
	{"bool id echoed next to a notification that could take it", arr(`{"jsonrpc":"2.0","method":"test_echo","params":[1],"params":1}`, `{"jsonrpc":"2.0","method":"n","id":false}`),
		arr(`{"jsonrpc":"2.0","id":false,"error":{"code":-32601,"message":"the method n does not exist/is not available"}}`), set(check.InvalidEnvelope, check.WrongErrorCode)},
	// jrpc2 answers valid JSON that is no request with -32700; the id-null
	// -32600 answers the notification with method "" then.
	{"-32700 with the id, -32600 free for a notification", arr(`{"jsonrpc":"2.0","method":""}`, `{"jsonrpc":-0,"method":"x","id":1}`),
		arr(errReply("null", -32600), errReply("1", -32700)), set(check.WrongErrorCode)},
	{"-32700 with id null, -32600 free for a notification", arr(`{"jsonrpc":"2.0","method":""}`, `[1]`),
		arr(errReply("null", -32600), errReply("null", -32700)), set(check.WrongErrorCode)},
	{"one -32700 for the invalid element, not the notification", arr("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"\xf4\x90\x80\x80\"]}", `1`),
		arr(errReply("null", -32700)), set(check.WrongErrorCode)},
	{"one -32600 for the invalid element, the notification refused", arr("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"\xf4\x90\x80\x80\"]}", `1`),
		arr(errReply("null", -32600)), 0},
	{"both refused", arr("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"\xf4\x90\x80\x80\"]}", `1`),
		arr(errReply("null", -32700), errReply("null", -32600)), 0},
	{"a call left unanswered is not blamed on a notification's error", arr(`{"jsonrpc":"2.0","method":""}`, call1),
		arr(errReply("null", -32600)), set(check.BatchMissingReply)},
	// Inputs once listed as oracle false positives in interop/fuzz_test.go.
	{"repeated id member read last-wins", `[{"id":[],"id":1},{"id":1}]`, arr(errReply("1", -32600), errReply("1", -32600)), 0},
	{"repeated id member read first-wins", `[{"id":[],"id":1},{"id":1}]`, arr(errReply("1", -32600), errReply("null", -32600)), 0},
	{"repeated jsonrpc member in a batch", `[{"jsonrpc":null,"jsonrpc":"2.0","id":1,"method":"x"},{"jsonrpc":"2.0","method":"n"}]`, arr(res1), 0},
	{"geth: one id-null error for the invalid element, not the notification", `[{"jsonrpc":"2.0","method":"5","params":null},{}]`,
		arr(errReply("null", -32600)), 0},
	{"lone surrogate id answered under U+FFFD next to a notification", `[{"jsonrpc":"2.0","id":"\ud800","method":"ping"},{"jsonrpc":"2.0","method":"n"}]`,
		arr(result(`"\ufffd"`)), 0},
	{"geth: id 0 twice past 46 elements", "[" + strings.Repeat(`{"id":null},`, 60) + `{"id":0},{"jsonrpc":"2.0","method":"l","params":0,"id":0}]`,
		arr(append([]string{errReply("0", -32601), errReply("0", -32600)}, slices.Repeat([]string{errReply("null", -32600)}, 60)...)...), 0},
	{"id null: a result for the invalid one", arr(`{"jsonrpc":"2.0","method":"x","id":null}`, `{"jsonrpc":null,"method":"x"}`),
		arr(result("null"), result("null")), set(check.WrongErrorCode)},
	// jrpc2: the id 0 answers the first element (which a repeated member
	// and its error member let go unanswered or take any error), the
	// id-null -32700 the 0; it was "a second response for id 0".
	{"an id for an element that may take any error", `[{"error":0,"id":0,"method":0,"method":0},0]`,
		arr(errReply("0", -32700), errReply("null", -32700)), set(check.WrongErrorCode)},
}

const (
	nullParamsAndNull = `[{"jsonrpc":"2.0","method":"echo","params":null},null]`
	repeatedID        = `[{"jsonrpc":"2.0","method":"echo","id":2},{"jsonrpc":"2.0","method":"echo","id":[2,40],"id":2}]`
	call7             = `{"jsonrpc":"2.0","id":7,"method":"x"}`
	call12            = `{"jsonrpc":"2.0","id":12,"method":"x"}`
	tiny              = "1e-999999999"
	tinyIDs           = `[{"id":1e-999999999},{"id":true,"id":1e-999999999}]`
)

func TestJudgeBatch(t *testing.T) {
	for _, tc := range batchTests {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.input)
			reply, got := []byte(tc.reply), true
			if tc.reply == noReply {
				reply, got = nil, false
			}
			class := ClassifyRequest(in)
			if class != Batch {
				t.Fatalf("ClassifyRequest = %s; want batch", class)
			}
			rules, note := JudgeFuzzReply(in, class, reply, got)
			if rules != tc.want {
				t.Fatalf("JudgeFuzzReply = %s %q; want %s", names(rules), note, names(tc.want))
			}
			if (rules != 0) != (note != "") {
				t.Errorf("rules %s with note %q", names(rules), note)
			}
		})
	}
}

// TestJudgeCoversRules checks that the tables reach every rule
// JudgeFuzzReply can return, so a verdict added later gets a row.
func TestJudgeCoversRules(t *testing.T) {
	var seen check.Set
	for _, tc := range append(judgeTests, batchTests...) {
		seen |= tc.want
	}
	judgeRules := envelopeRules.Add(check.UnknownID).Add(check.DuplicateReply).Add(check.IDTypeChanged).Add(check.UnexpectedNullID).
		Add(check.ReplyToNotification).Add(check.BatchMissingReply).Add(check.BatchExtraReply).Add(check.BatchNotArray).
		Add(check.EmptyBatchReplyWrong).Add(check.Hang).Add(check.WrongErrorCode).Add(check.NullIDUnanswered)
	if seen != judgeRules {
		t.Errorf("rows cover %s; JudgeFuzzReply can return %s", names(seen), names(judgeRules))
	}
}

// correctReply is the answer the spec prescribes to input, written from the
// class alone: the reference the fuzz target holds JudgeFuzzReply to.
func correctReply(input []byte) ([]byte, bool) {
	class := ClassifyRequest(input)
	if class == Batch {
		out := []byte{'['}
		for off := 0; ; {
			elem, next, ok := wire.NextElement(input, off)
			if !ok {
				break
			}
			off = next
			c := ClassifyRequest(elem)
			if c == Batch || c == EmptyBatch {
				c = InvalidRequest
			}
			if r, ok := answer(elem, c); ok {
				if len(out) > 1 {
					out = append(out, ',')
				}
				out = append(out, r...)
			}
		}
		if len(out) == 1 {
			return nil, false
		}
		return append(out, ']'), true
	}
	return answer(input, class)
}

func answer(frame []byte, class RequestClass) ([]byte, bool) {
	var m wire.Message
	wire.Scan(frame, &m)
	readable := !m.Problems.Has(wire.ProblemBadID) && (m.IDKind == wire.IDNumber || m.IDKind == wire.IDString || m.IDKind == wire.IDNull)
	switch class {
	case ParseError:
		return wire.AppendError(nil, nil, wire.CodeParseError, "Parse error", nil), true
	case InvalidRequest, EmptyBatch:
		var id []byte
		if readable {
			id = m.ID
		}
		return wire.AppendError(nil, id, wire.CodeInvalidRequest, "Invalid Request", nil), true
	case InvalidParams:
		if !readable {
			return nil, false
		}
		return wire.AppendError(nil, m.ID, wire.CodeInvalidParams, "Invalid params", nil), true
	case Call:
		return wire.AppendResult(nil, m.ID, []byte(`{"ok":true}`)), true
	}
	return nil, false
}

// TestCorrectAnswersPass holds every input of the tables to its
// spec-correct answer.
func TestCorrectAnswersPass(t *testing.T) {
	var inputs []string
	for _, tc := range classifyTests {
		inputs = append(inputs, tc.frame)
	}
	for _, tc := range append(judgeTests, batchTests...) {
		inputs = append(inputs, tc.input)
	}
	for _, in := range inputs {
		reply, ok := correctReply([]byte(in))
		if rules, note := JudgeFuzzReply([]byte(in), ClassifyRequest([]byte(in)), reply, ok); rules != 0 {
			t.Errorf("the correct answer %.100s to %.100s breaks %s: %s", reply, in, names(rules), note)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, tc := range classifyTests {
		f.Add([]byte(tc.frame), []byte(nil), uint64(1), "x", false)
	}
	for _, tc := range append(judgeTests, batchTests...) {
		// Big seeds make the fuzzer's minimizing slow; the tables test them.
		if len(tc.input) < 4096 {
			f.Add([]byte(tc.input), []byte(tc.reply), uint64(7), "tools/call", true)
		}
	}
	f.Fuzz(func(t *testing.T, input, reply []byte, id uint64, method string, quoted bool) {
		class := ClassifyRequest(input)
		if class >= NumRequestClasses {
			t.Fatalf("ClassifyRequest(%q) = %d", input, class)
		}
		// Never panics, whatever the reply; a finding always has a note.
		for _, got := range []bool{true, false} {
			rules, note := JudgeFuzzReply(input, class, reply, got)
			if rules != 0 && note == "" {
				t.Fatalf("JudgeFuzzReply(%q, %q, %v) = %s without a note", input, reply, got, names(rules))
			}
			if rules&^(check.Set(1)<<check.NumRules-1) != 0 {
				t.Fatalf("JudgeFuzzReply returned bits beyond the rules: %b", rules)
			}
		}
		// The spec-correct answer breaks no rule.
		want, ok := correctReply(input)
		if rules, note := JudgeFuzzReply(input, class, want, ok); rules != 0 {
			t.Fatalf("the correct answer %q to %q breaks %s: %s", want, input, names(rules), note)
		}
		// A request built by the encoder is a call, and its correct answer passes.
		f := wire.IDInt
		if quoted {
			f = wire.IDQuoted
		}
		// input is the params when it is a JSON array or object.
		var params []byte
		var m wire.Message
		if wire.Scan(input, &m); !m.Problems.Has(wire.ProblemInvalidJSON) {
			if i := wire.SkipSpace(input, 0); input[i] == '[' || input[i] == '{' {
				params = input
			}
		}
		req := wire.AppendRequest(nil, id, f, wire.AppendString(nil, method), params)
		if c := ClassifyRequest(req); c != Call {
			t.Fatalf("ClassifyRequest(%s) = %s; want call", req, c)
		}
		want, _ = correctReply(req)
		if rules, note := JudgeFuzzReply(req, Call, want, true); rules != 0 {
			t.Fatalf("the correct answer %s to %s breaks %s: %s", want, req, names(rules), note)
		}
	})
}

// TestJudgeHugeBatch judges big batches (the mutator's go up to 100,000
// elements; 10,000 keeps the race run short and would still take minutes
// if pairing were quadratic): pairing must stay linear even when every
// element has the same id, the replies come in reverse order, or no reply
// fits any element.
func TestJudgeHugeBatch(t *testing.T) {
	const n = 10_000
	for _, tc := range []struct {
		name      string
		elem, rep string
		full      check.Set // the verdict on the reply
		short     check.Set // the verdict when the last reply is missing
	}{
		{"one id", call1, res1, 0, set(check.BatchMissingReply)},
		{"distinct ids, reversed", "", "", 0, set(check.BatchMissingReply)},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"x"}`, result("null"), 0, set(check.NullIDUnanswered)},
		{"invalid", `7`, errReply("null", -32600), 0, set(check.BatchMissingReply)},
		{"invalid, wrong code", `7`, errReply("null", -32700), set(check.WrongErrorCode), set(check.WrongErrorCode, check.BatchMissingReply)},
		{"one id, wrong code", call1, errReply("1", -32700), set(check.WrongErrorCode), set(check.WrongErrorCode, check.BatchMissingReply)},
		{"repeated id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}`, result("3"), 0, set(check.BatchMissingReply)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, out := make([]string, n), make([]string, n)
			for i := range n {
				in[i], out[i] = tc.elem, tc.rep
				if tc.elem == "" {
					in[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"x"}`
					out[i] = result(strconv.Itoa(n - 1 - i))
				}
			}
			input := []byte(arr(in...))
			if rules, note := JudgeFuzzReply(input, Batch, []byte(arr(out...)), true); rules != tc.full {
				t.Fatalf("reply: %s %s; want %s", names(rules), note, names(tc.full))
			}
			if rules, note := JudgeFuzzReply(input, Batch, []byte(arr(out[:n-1]...)), true); rules != tc.short {
				t.Fatalf("reply without its last element: %s %s; want %s", names(rules), note, names(tc.short))
			}
			if tc.elem == call1 && tc.full == 0 {
				// A reply too many sends the pairing looking for a
				// request to free, through every request of the id.
				if rules, note := JudgeFuzzReply(input, Batch, []byte(arr(append(out, res1)...)), true); rules != set(check.DuplicateReply) {
					t.Fatalf("reply with an element too many: %s %s; want duplicate_reply", names(rules), note)
				}
			}
		})
	}
}

// exchanger makes the traffic of a fuzz run against a correct server:
// mutated seeds, and the replies of fuzztarget without planted bugs.
type exchanger struct {
	seeds []corpus.Seed
	mut   *mutate.Mutator
	srv   *fuzztarget.Server
}

// trickyIDSeeds join the corpus in the correct-server property: ids equal
// as numbers but spelled apart (1e-999999999, 0, -0), alone, repeated
// within one object and shared by batch elements.
var trickyIDSeeds = []corpus.Seed{
	{Name: "tiny-ids", Frames: [][]byte{[]byte(tinyIDs)}},
	{Name: "zero-ids", Frames: [][]byte{[]byte(`[{"jsonrpc":"2.0","id":-0,"method":"echo"},{"jsonrpc":"2.0","id":0,"method":"echo"},{"jsonrpc":"2.0","id":0.0,"id":1e-999999999,"method":"echo"}]`)}},
	{Name: "tiny-id-call", Frames: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1e-999999999,"method":"echo","params":[-0]}`)}},
}

func newExchanger() *exchanger {
	x := &exchanger{seeds: append(corpus.Seeds(""), trickyIDSeeds...), srv: fuzztarget.New(0)}
	var donors [][]byte
	var methods []string
	for _, s := range x.seeds {
		donors = append(donors, s.Frames...)
	}
	for _, p := range corpus.Profiles() {
		methods = append(methods, corpus.Methods(p)...)
	}
	x.mut = mutate.New(&mutate.Env{Methods: methods, Corpus: donors})
	return x
}

// frames mutates seed k (modulo their number) one to three times, as the
// chains of a fuzz run stack up, drawing from c. Every fourth case also
// gets a batch of the frames of a few more: many elements of all kinds that
// share ids, which the mutator's batch ops make less of.
func (x *exchanger) frames(c mutate.Chooser, k int) [][]byte {
	out := x.mutated(c, k)
	if k%4 != 3 {
		return out
	}
	var elems [][]byte
	for m := range 2 + k%7 {
		for _, f := range x.mutated(c, k+m) {
			if json.Valid(f) {
				elems = append(elems, f)
			}
		}
	}
	if len(elems) > 0 {
		out = append(out, append(append([]byte{'['}, bytes.Join(elems, []byte{','})...), ']'))
	}
	return out
}

func (x *exchanger) mutated(c mutate.Chooser, k int) [][]byte {
	cs := mutate.Case{Frames: x.seeds[k%len(x.seeds)].Frames}
	for range 1 + k%3 {
		cs, _ = x.mut.Mutate(c, cs)
	}
	return cs.Frames
}

// answer returns the server's reply to frame, nil for none.
func (x *exchanger) answer(frame []byte) []byte {
	return x.srv.Handle(context.Background(), frame)
}

// finding judges the server's answers to frame: its reply, the reply array
// shuffled by seed, and the replies to frame as read by a reader keeping
// the first or the last of repeated members. It describes the first
// finding, or returns "".
func (x *exchanger) finding(frame []byte, seed uint64) string {
	class := ClassifyRequest(frame)
	judge := func(how string, reply []byte) string {
		rules, note := JudgeFuzzReply(frame, class, reply, reply != nil)
		if rules == 0 {
			return ""
		}
		return how + " " + names(rules) + " " + note + "\ninput: " + shortText(frame) + "\nreply: " + shortText(reply)
	}
	reply := x.answer(frame)
	if msg := judge("reply", reply); msg != "" {
		return msg
	}
	if shuffled := shuffleArray(reply, seed); shuffled != nil {
		if msg := judge("shuffled reply", shuffled); msg != "" {
			return msg
		}
	}
	for _, js := range []bool{false, true} {
		if echoed, ok := floatEchoIDs(reply, js); ok {
			if msg := judge("reply with ids echoed through float64 (js "+strconv.FormatBool(js)+")", echoed); msg != "" {
				return msg
			}
		}
	}
	for _, first := range []bool{true, false} {
		if alt, ok := readAs(frame, first); ok {
			if msg := judge("reply to "+string(alt[:min(len(alt), 300)]), x.answer(alt)); msg != "" {
				return msg
			}
		}
	}
	return ""
}

func shortText(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}

// floatEchoIDs returns reply (an object, or an array of them) with every
// numeric id that float64 cannot hold exactly replaced by the float64 a
// decoder reads from it, as a server that keeps ids in a float64 echoes
// them (Go's encoding/json into any, JavaScript's JSON.parse, which also
// turns -0 into 0 when js is set); false when that changes nothing. The
// oracle must accept such echoes: the ids are the input's, as read.
func floatEchoIDs(reply []byte, js bool) ([]byte, bool) {
	reply = reply[:len(reply):len(reply)]
	var elems [][]byte
	if i := wire.SkipSpace(reply, 0); i < len(reply) && reply[i] == '[' {
		for off := 0; ; {
			e, next, ok := wire.NextElement(reply, off)
			if !ok {
				break
			}
			elems, off = append(elems, e), next
		}
	} else {
		elems = [][]byte{reply}
	}
	changed := false
	out := make([][]byte, len(elems))
	for k, e := range elems {
		out[k] = e
		var m wire.Message
		if wire.Scan(e, &m); m.IDKind != wire.IDNumber || wire.SafeInteger(m.ID) && !(js && string(m.ID) == "-0") {
			continue
		}
		f, err := strconv.ParseFloat(string(m.ID), 64)
		if err != nil {
			continue // beyond float64: such a decoder refuses the request
		}
		if js && f == 0 {
			f = 0 // JSON.stringify(-0) is "0"
		}
		text := strconv.FormatFloat(f, 'g', -1, 64)
		if text == string(m.ID) {
			continue
		}
		at := cap(e) - cap(m.ID)
		out[k] = slices.Concat(e[:at], []byte(text), e[at+len(m.ID):])
		changed = true
	}
	if !changed {
		return nil, false
	}
	if len(elems) == 1 && !(len(reply) > 0 && bytes.TrimSpace(reply)[0] == '[') {
		return out[0], true
	}
	return []byte(arr(func() []string {
		s := make([]string, len(out))
		for k, e := range out {
			s[k] = string(e)
		}
		return s
	}()...)), true
}

// shuffleArray returns the elements of the JSON array reply in an order
// drawn from seed, or nil when reply is not an array of two or more.
func shuffleArray(reply []byte, seed uint64) []byte {
	var elems [][]byte
	for off := 0; ; {
		e, next, ok := wire.NextElement(reply, off)
		if !ok {
			break
		}
		elems, off = append(elems, e), next
	}
	if len(elems) < 2 {
		return nil
	}
	c := mutate.NewRand(seed)
	for i := len(elems) - 1; i > 0; i-- {
		j := c.Intn(i + 1)
		elems[i], elems[j] = elems[j], elems[i]
	}
	return append(append([]byte{'['}, bytes.Join(elems, []byte{','})...), ']')
}

// readAs returns frame re-encoded as a reader that keeps the first (or the
// last) occurrence of a repeated member reads the envelope (of each element,
// for a batch), and whether that changed anything. It is written with
// encoding/json, apart from the oracle's own reading.
func readAs(frame []byte, first bool) ([]byte, bool) {
	t := bytes.TrimSpace(frame)
	if !json.Valid(t) {
		return nil, false
	}
	if len(t) == 0 || t[0] != '[' {
		out := dedupObject(t, first)
		return out, !bytes.Equal(out, t)
	}
	var elems []json.RawMessage
	if json.Unmarshal(t, &elems) != nil || len(elems) == 0 {
		return nil, false
	}
	out, changed := []byte{'['}, false
	for i, e := range elems {
		if i > 0 {
			out = append(out, ',')
		}
		d := dedupObject(e, first)
		changed = changed || !bytes.Equal(d, e)
		out = append(out, d...)
	}
	return append(out, ']'), changed
}

// dedupObject returns the JSON object raw without repeated members, keeping
// the first or the last occurrence; raw itself when it is not an object.
func dedupObject(raw []byte, first bool) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return raw
	}
	var names []string
	values := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return raw
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return raw
		}
		if _, seen := values[name]; !seen {
			names = append(names, name)
		} else if first {
			continue
		}
		values[name] = v
	}
	if len(names) == 0 {
		return raw
	}
	out := []byte{'{'}
	for i, name := range names {
		if i > 0 {
			out = append(out, ',')
		}
		quoted, _ := json.Marshal(name)
		out = append(append(append(out, quoted...), ':'), values[name]...)
	}
	return append(out, '}')
}

// TestCorrectServerPasses holds JudgeFuzzReply to a correct server's
// answers to mutated seeds (see exchanger.finding): any finding is a false
// positive of the oracle, or a bug of fuzztarget.
func TestCorrectServerPasses(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	x := newExchanger()
	c := mutate.NewRand(1)
	failures := 0
	for k := range n {
		for _, f := range x.frames(c, k) {
			if msg := x.finding(f, uint64(k)); msg != "" {
				t.Errorf("case %d: %s", k, msg)
				if failures++; failures == 5 {
					t.FailNow()
				}
			}
		}
	}
}

// FuzzCorrectServer is TestCorrectServerPasses with the fuzzer choosing
// the seed and the mutations.
func FuzzCorrectServer(f *testing.F) {
	for k := range 32 {
		f.Add(uint16(k), []byte{byte(k), byte(k * 7), byte(k * 13), 0, 0xff, byte(k)})
	}
	x := newExchanger()
	f.Fuzz(func(t *testing.T, seed uint16, choices []byte) {
		for _, frame := range x.frames(mutate.NewBytes(choices), int(seed)) {
			if msg := x.finding(frame, uint64(seed)); msg != "" {
				t.Fatal(msg)
			}
		}
	})
}

// TestJudgeNoteNamesRule checks that when a batch (or a reply's envelope)
// breaks several rules, the note describes the one the finding is named
// after (MostSevere), not the first deviation found.
func TestJudgeNoteNamesRule(t *testing.T) {
	calls12 := arr(call1, `{"jsonrpc":"2.0","id":2,"method":"x"}`)
	for _, tc := range []struct {
		name, input, reply string
		want               check.Set
		main               check.Rule
		note               string // the note's start
	}{
		// Element 0 gets a wrong code first, then id 3 answers nothing,
		// then element 1 is unanswered: batch_missing_reply names it.
		{"missing after a wrong code", calls12, arr(errReply("1", -32700)),
			set(check.WrongErrorCode, check.BatchMissingReply), check.BatchMissingReply, "no response for element 1 (id 2) (and 1 more)"},
		{"changed id after a wrong code", calls12, arr(errReply("1", -32700), result("3")),
			set(check.WrongErrorCode, check.UnknownID), check.UnknownID, "element 1 (id 2): reply id 3; want 2 (and 1 more)"},
		{"extra reply after a wrong code", calls12, arr(errReply("1", -32700), result("2"), result("3")),
			set(check.WrongErrorCode, check.BatchExtraReply), check.BatchExtraReply, "reply element 2 (id 3) answers no request of the batch (and 1 more)"},
		{"duplicate after an extra reply", calls12, arr(result("3"), res1, result("2"), res1),
			set(check.BatchExtraReply, check.DuplicateReply), check.DuplicateReply, "reply element 3: a second response for id 1 (and 1 more)"},
		{"one finding keeps its note", calls12, arr(res1, errReply("2", -32700)),
			set(check.WrongErrorCode), check.WrongErrorCode, "element 1 (id 2): "},
		// A single frame: the envelope's extra member outranks the code.
		{"envelope before the code", `{"jsonrpc":"2.0","id":1,"method":"x","params":5}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32700,"message":"m"},"x":1}`,
			set(check.InvalidEnvelope, check.WrongErrorCode), check.InvalidEnvelope, "reply envelope: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.input)
			rules, note := JudgeFuzzReply(in, ClassifyRequest(in), []byte(tc.reply), true)
			if rules != tc.want {
				t.Fatalf("JudgeFuzzReply = %s %q; want %s", names(rules), note, names(tc.want))
			}
			if got := check.MostSevere(rules); got != tc.main {
				t.Errorf("MostSevere(%s) = %s; want %s", names(rules), got, tc.main)
			}
			if !strings.HasPrefix(note, tc.note) {
				t.Errorf("note %q; want it to start with %q", note, tc.note)
			}
		})
	}
}

// TestJudgeRepeatedIDsShuffled holds correct answers to batches whose
// elements share a few ids (calls, scalar params, invalid requests, null
// params, notifications), shuffled, against the oracle: none is a finding.
// A pairing that blames a reply before it has tried every element of its
// id (the budget of repeatWork) fails here; the batches are seeded, so a
// failure repeats.
func TestJudgeRepeatedIDsShuffled(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 46))
	for iter := range 600 {
		n, ids := 2+r.IntN(150), 1+r.IntN(4)
		var in, out []string
		for range n {
			id := strconv.Itoa(r.IntN(ids))
			if r.IntN(5) == 0 {
				id = "null"
			}
			switch r.IntN(5) {
			case 0:
				in, out = append(in, `{"jsonrpc":"2.0","id":`+id+`,"method":"x"}`), append(out, result(id))
			case 1:
				in = append(in, `{"jsonrpc":"2.0","id":`+id+`,"method":"l","params":0}`)
				out = append(out, errReply(id, []int{-32600, -32601, -32602}[r.IntN(3)]))
			case 2:
				in = append(in, `{"id":`+id+`}`)
				if r.IntN(2) == 0 {
					id = "null"
				}
				out = append(out, errReply(id, -32600))
			case 3:
				in = append(in, `{"jsonrpc":"2.0","method":"n"}`)
			case 4:
				in, out = append(in, `{"jsonrpc":"2.0","id":`+id+`,"method":"x","params":null}`), append(out, result(id))
			}
		}
		if len(out) == 0 {
			continue
		}
		r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		input, reply := arr(in...), arr(out...)
		if rules, note := JudgeFuzzReply([]byte(input), Batch, []byte(reply), true); rules != 0 {
			t.Fatalf("batch %d (%d elements, %d ids): %s %q\ninput %s\nreply %s", iter, n, ids, names(rules), note, input, reply)
		}
	}
}
