package nativefuzz

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/rpcfuzz"
)

// fuzzTarget is one of the fuzz tests' servers with its options.
type fuzzTarget struct {
	name string
	make func(testing.TB) rpcfuzz.Target
	opts rpcfuzz.Options
}

var fuzzTargets = []fuzzTarget{
	{"geth", func(tb testing.TB) rpcfuzz.Target { return rpcfuzz.Handler(newGethHandler(tb)) }, gethOptions},
	{"jrpc2", func(testing.TB) rpcfuzz.Target { return jrpc2Target{jrpc2Methods} }, jrpc2Options},
	{"mcpgo", func(tb testing.TB) rpcfuzz.Target { return rpcfuzz.Handler(newMCPGoHandler(tb)) }, mcpGoOptions},
}

func findTarget(t *testing.T, name string) fuzzTarget {
	t.Helper()
	for _, ft := range fuzzTargets {
		if ft.name == name {
			return ft
		}
	}
	t.Fatalf("no target %q", name)
	return fuzzTarget{}
}

// TestTargetsAnswer makes sure the fuzz tests reach their servers: a call
// of the server's own gets its result and a notification no reply. (A
// target that refused everything at the HTTP level, or answered nothing,
// would pass every fuzz input unjudged.)
func TestTargetsAnswer(t *testing.T) {
	cases := []struct {
		target, msg string
		want        string // the result, as compact JSON; "" for no reply
	}{
		{"geth", `{"jsonrpc":"2.0","id":1,"method":"test_add","params":[2,3]}`, `5`},
		{"geth", `{"jsonrpc":"2.0","id":"b","method":"eth_blockNumber"}`, `"0x10"`},
		{"geth", `{"jsonrpc":"2.0","method":"test_echo","params":[1]}`, ``},
		{"jrpc2", `{"jsonrpc":"2.0","id":1,"method":"add","params":[2,3]}`, `5`},
		{"jrpc2", `{"jsonrpc":"2.0","id":"e","method":"echo","params":{"a":[1]}}`, `{"a":[1]}`},
		{"jrpc2", `{"jsonrpc":"2.0","id":2,"method":"echo"}`, `null`},
		{"jrpc2", `{"jsonrpc":"2.0","method":"echo","params":[1]}`, ``},
		{"mcpgo", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}`,
			`{"content":[{"type":"text","text":"5"}]}`},
		{"mcpgo", `{"jsonrpc":"2.0","id":"p","method":"ping"}`, `{}`},
		{"mcpgo", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ``},
	}
	for _, c := range cases {
		t.Run(c.target+"/"+c.msg, func(t *testing.T) {
			target := findTarget(t, c.target).make(t)
			reply, err := target.RoundTrip(context.Background(), []byte(c.msg))
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			if c.want == "" {
				if len(reply) != 0 {
					t.Fatalf("reply %s; want none", reply)
				}
				return
			}
			var r struct {
				Result json.RawMessage
				Error  json.RawMessage
			}
			if err := json.Unmarshal(reply, &r); err != nil {
				t.Fatalf("reply %s: %v", reply, err)
			}
			got, _ := json.Marshal(r.Result) // compacts it
			if r.Result == nil || string(got) != c.want {
				t.Fatalf("reply %s; want result %s", reply, c.want)
			}
		})
	}
}

// TestIgnoredDeviations holds every rule a fuzz test ignores to an input
// that breaks it: the input fails without the entry and passes with the
// options as they are. When a server release (or a fix of the oracle, for
// the entries marked TODO) makes an entry unneeded, this test says which.
func TestIgnoredDeviations(t *testing.T) {
	cases := []struct {
		target, rule, msg string
	}{
		{"geth", "invalid_envelope", `{"jsonrpc":"2.0","id":true,"method":"eth_blockNumber"}`},
		{"geth", "invalid_envelope", `[{"jsonrpc":"2.0","id":false,"method":"eth_blockNumber"}]`},
		{"geth", "wrong_error_code", `{"jsonrpc":"2.0","id":true,"method":"eth_blockNumber"}`},
		// The wrong code inside a batch, where the oracle once paired the
		// response with another element and named another rule.
		{"geth", "wrong_error_code", `[{"jsonrpc":"2.0","method":"test_echo","params":[1],"params":1},{"jsonrpc":"2.0","method":"n","id":false}]`},
		{"jrpc2", "wrong_error_code", `[1]`},
		{"jrpc2", "wrong_error_code", `[{"jsonrpc":"2.0","method":""},{"jsonrpc":-0,"method":"echo","id":1}]`},
		{"jrpc2", "wrong_error_code", `[{"jsonrpc":"2.0","method":""},[1]]`},
		{"jrpc2", "wrong_error_code", "[{\"jsonrpc\":\"2.0\",\"method\":\"log\",\"params\":[\"\xf4\x90\x80\x80\"]},1]"},
		{"mcpgo", "wrong_error_code", `[]`},
		{"mcpgo", "wrong_error_code", `{"id":false}`},
		{"mcpgo", "invalid_envelope", `{"jsonrpc":"2.0","id":true,"method":"ping"}`},
		{"mcpgo", "reply_to_notification", `{"jsonrpc":"2.0","method":"","params":[]}`},
		{"mcpgo", "no_result_or_error", `{"id":0}`},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.target+" "+c.rule] = true
		t.Run(c.target+"/"+c.rule+"/"+c.msg, func(t *testing.T) {
			ft := findTarget(t, c.target)
			target := ft.make(t)
			input := rpcfuzz.Literal([]byte(c.msg))
			without := ft.opts
			without.Ignore = slices.DeleteFunc(slices.Clone(ft.opts.Ignore), func(e string) bool { return ignoredRule(e) == c.rule })
			if len(without.Ignore) == len(ft.opts.Ignore) {
				t.Fatalf("%s does not ignore %s", c.target, c.rule)
			}
			rt := &recordT{name: "TestIgnoredDeviations"}
			rpcfuzz.Check(rt, target, input, without)
			if len(rt.fatal) == 0 || !strings.HasPrefix(rt.fatal[0], "rpcfuzz: "+c.rule+" ") {
				t.Errorf("without ignoring %s: failures %q; want one of rule %s (is the entry still needed?)", c.rule, rt.fatal, c.rule)
			}
			rt = &recordT{name: "TestIgnoredDeviations"}
			rpcfuzz.Check(rt, target, input, ft.opts)
			if len(rt.fatal) > 0 {
				t.Errorf("with the options as they are: %q", rt.fatal)
			}
		})
	}
	for _, ft := range fuzzTargets {
		for _, e := range ft.opts.Ignore {
			if !covered[ft.name+" "+ignoredRule(e)] {
				t.Errorf("%s ignores %s, which no case here shows", ft.name, e)
			}
		}
	}
}

// ignoredRule is the rule of an Options.Ignore entry: the rule alone, or
// the rule before its pattern.
func ignoredRule(entry string) string {
	rule, _, _ := strings.Cut(entry, " ")
	return rule
}

// TestAcceptedAnswers holds answers of the servers that the black-box
// baselines list, or that were once findings, but that the oracle allows,
// so no fuzz test ignores their rules: each input passes with no Ignore at
// all.
func TestAcceptedAnswers(t *testing.T) {
	cases := []struct {
		target, msg, why string
	}{
		{"geth", `{"jsonrpc":"2.0","error":[2,40],"id":2,"method":1}`,
			`silence: with an error member and a method that is no string, the message is a response with a member too many as much as an invalid request`},
		{"geth", `{"jsonrpc":"2.0","method":""}`,
			`-32600 with id null to a notification with method "", which names no method`},
		{"geth", `[{"jsonrpc":"2.0","method":""},{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}]`,
			`the same inside a batch`},
		{"geth", `{"jsonrpc":"2.0","id":18,"method":"echo","params":42}`,
			`-32601 to an unknown method with scalar params: the spec orders no checks`},
		{"geth", `[{"jsonrpc":"2.0","id":"a","method":"x"},{"jsonrpc":"2.0","jsonrpc":"1.0","method":"m","params":[9]},{"jsonrpc":"2.0","id":"d","method":"y","params":false}]`,
			`a repeated jsonrpc member read last-wins (-32600, id null) next to scalar params answered -32601`},
		{"jrpc2", `{"jsonrpc":"2.0","method":""}`,
			`-32600 "empty method name" with id null`},
		{"jrpc2", `{"jsonrpc":"2.0","method":"echo","x":1}`,
			`-32600 "extra fields in request" with id null to a notification with a member the spec does not list`},
	}
	for _, c := range cases {
		t.Run(c.target+"/"+c.msg, func(t *testing.T) {
			ft := findTarget(t, c.target)
			opts := ft.opts
			opts.Ignore = nil
			rt := &recordT{name: "TestAcceptedAnswers"}
			rpcfuzz.Check(rt, ft.make(t), rpcfuzz.Literal([]byte(c.msg)), opts)
			if len(rt.fatal) > 0 {
				t.Errorf("%s: %q", c.why, rt.fatal)
			}
		})
	}
}

// recordT is an rpcfuzz.T that keeps the failures instead of failing.
type recordT struct {
	name  string
	fatal []string
}

func (r *recordT) Helper()           {}
func (r *recordT) Fatal(args ...any) { r.fatal = append(r.fatal, fmt.Sprint(args...)) }
func (r *recordT) Log(...any)        {}
func (r *recordT) Name() string      { return r.name }
