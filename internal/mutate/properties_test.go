package mutate

import (
	"encoding/json"
	"testing"
)

// examples are JSON-RPC 2.0 inputs of every shape: the specification's
// kinds of calls, notifications and batches, and broken ones.
var examples = []string{
	`{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}`,
	`{"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42},"id":3}`,
	`{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}`,
	`{"jsonrpc":"2.0","method":"foobar"}`,
	`{"jsonrpc":"2.0","method":"foobar","id":"1"}`,
	`{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]`,
	`{"jsonrpc":"2.0","method":1,"params":"bar"}`,
	`[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method"]`,
	`[]`,
	`[1]`,
	`[1,2,3]`,
	`[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method":"notify_hello","params":[7]},{"foo":"boo"},{"jsonrpc":"2.0","method":"get_data","id":"9"}]`,
	`[{"jsonrpc":"2.0","method":"notify_sum","params":[1,2,4]},{"jsonrpc":"2.0","method":"notify_hello","params":[7]}]`,
	` { "jsonrpc" : "2.0" , "id" : 6 , "method" : "echo" , "params" : [ "a\u00e9\"b" , -1.5e3 , null , true ] } `,
	`{"jsonrpc":"2.0","id":4,"method":"convert","params":{"value":5}}`,
	`{"jsonrpc":"2.0","id":6,"method":`,
	``,
}

// sequence is a stateful session: handshake, calls, a notification.
var sequence = []string{lspIni, lspNot, req, named, notif}

func propertyEnvs() []*Env {
	schemas := map[string]json.RawMessage{"subtract": arraySchema, "echo": arraySchema,
		"convert": json.RawMessage(`{"type":"object","required":["value","to"],"properties":{"value":{"type":"number"},"to":{"enum":["c","f"]}}}`)}
	corpus := [][]byte{[]byte(examples[1]), []byte(examples[11]), []byte(`{"a":[{"b":"\ud800"}]}`)}
	return []*Env{
		{MaxFrame: 64 << 10, Methods: []string{"subtract", "sum"}, Params: schemas, Framing: FramingContentLength, Profile: "lsp", Corpus: corpus},
		{MaxFrame: 256, Methods: []string{"x"}, Params: schemas, Framing: FramingNewline, Profile: "mcp", Corpus: corpus},
		{MaxFrame: 64},
	}
}

// TestOpsProperties holds every op, on every example and on a session, to
// its contract: input untouched, output within MaxFrame, and the same output
// for the same choices.
func TestOpsProperties(t *testing.T) {
	var cases []Case
	for _, e := range examples {
		cases = append(cases, frames(e))
	}
	cases = append(cases, frames(sequence...), Case{})
	seeds := uint64(6)
	if testing.Short() {
		seeds = 2
	}
	for _, op := range Ops() {
		t.Run(op.Name, func(t *testing.T) {
			applied := 0
			for _, env := range propertyEnvs() {
				for ci, in := range cases {
					for seed := range seeds {
						orig := cloneCase(in)
						out, ok := op.Apply(NewRand(seed), in, env)
						if !equalCase(in, orig) {
							t.Fatalf("case %d seed %d: input modified", ci, seed)
						}
						if !ok {
							continue
						}
						applied++
						checkBounded(t, out, in, env)
						again, ok2 := op.Apply(NewRand(seed), in, env)
						if !ok2 || !equalCase(out, again) {
							t.Fatalf("case %d seed %d: not deterministic", ci, seed)
						}
					}
				}
			}
			if applied == 0 {
				t.Fatalf("never applied to any example")
			}
		})
	}
}

// checkBounded: every frame of c is within MaxFrame, or is a frame of in
// passed through untouched.
func checkBounded(t *testing.T, c, in Case, env *Env) {
	t.Helper()
	total := 0
	for i, f := range c.Frames {
		if len(f) > env.maxFrame() && !passedThrough(f, in) {
			t.Fatalf("frame %d: %d bytes over MaxFrame %d", i, len(f), env.maxFrame())
		}
		total += len(f) + wireOverhead
	}
	if len(c.Wire) > total {
		t.Fatalf("wire of %d bytes for %d frames", len(c.Wire), len(c.Frames))
	}
}
