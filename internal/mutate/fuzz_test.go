package mutate

import (
	"bytes"
	"encoding/json"
	"testing"
)

var fuzzEnvs = []*Env{
	{MaxFrame: 4096, Methods: []string{"echo", "add"}, Framing: FramingNewline, Profile: "mcp"},
	{MaxFrame: 4096, Framing: FramingContentLength, Profile: "lsp", Corpus: [][]byte{[]byte(req), []byte(named)},
		Params: map[string]json.RawMessage{"echo": arraySchema}},
	{MaxFrame: 300},
}

// FuzzMutate: for any seed frames and any choice bytes, Mutate never panics,
// stays within MaxFrame, leaves its input alone and is deterministic.
func FuzzMutate(f *testing.F) {
	for _, e := range examples {
		f.Add([]byte(e), []byte{0, 1, 2, 3})
	}
	f.Add([]byte(lspIni+"\n"+lspNot+"\n"+req), []byte{1, 40, 41, 200, 7})
	f.Add([]byte(req), []byte("\x02\xff\xfe\x10\x99"))
	f.Fuzz(func(t *testing.T, seed, choices []byte) {
		in := Case{Frames: bytes.SplitN(seed, []byte("\n"), 8)}
		env := fuzzEnvs[0]
		if len(choices) > 0 {
			env = fuzzEnvs[int(choices[0])%len(fuzzEnvs)]
		}
		orig := cloneCase(in)
		out, applied := New(env).Mutate(NewBytes(choices), in)
		if !equalCase(in, orig) {
			t.Fatal("input modified")
		}
		checkBounded(t, out, in, env)
		if len(applied) > MaxChain {
			t.Fatalf("%d ops applied", len(applied))
		}
		again, applied2 := New(env).Mutate(NewBytes(choices), in)
		if !equalCase(out, again) || len(applied) != len(applied2) {
			t.Fatal("not deterministic")
		}
	})
}

// FuzzParseTree: the tolerant parser never panics; on valid JSON it agrees
// with encoding/json (its compact form is json.Compact's); whatever it
// parses re-parses to the same text; the lexer's tokens tile the input.
func FuzzParseTree(f *testing.F) {
	for _, e := range examples {
		f.Add([]byte(e))
	}
	f.Add([]byte("[\"\xff\\ud800\", NaN, {\"a\":1,\"a\":2}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		prev := 0
		lex(data, func(tk token) bool {
			if tk.start < prev || tk.end <= tk.start || tk.end > len(data) {
				t.Fatalf("token [%d,%d) after %d in %d bytes", tk.start, tk.end, prev, len(data))
			}
			prev = tk.end
			return true
		})
		n, ok := parseTree(data)
		shallow, shallowOK := parseShallow(data)
		if ok && !shallowOK {
			t.Fatalf("%q parses but not shallowly", data)
		}
		if shallowOK {
			text := appendNode(nil, shallow)
			again, ok := parseShallow(text)
			if !ok || !bytes.Equal(appendNode(nil, again), text) {
				t.Fatalf("shallow %q does not re-parse to itself", text)
			}
			var compact bytes.Buffer
			if json.Compact(&compact, data) == nil && bytes.Equal(compact.Bytes(), data) && !bytes.Equal(text, data) {
				t.Fatalf("compact JSON %q came back as %q", data, text)
			}
		}
		if json.Valid(data) && depth(data) <= maxTreeDepth {
			if !ok {
				t.Fatalf("valid JSON %q did not parse", data)
			}
			var want bytes.Buffer
			if err := json.Compact(&want, data); err != nil {
				t.Fatal(err)
			}
			if got := appendNode(nil, n); !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("compact %q, json.Compact %q", got, want.Bytes())
			}
		}
		if !ok {
			return
		}
		text := appendNode(nil, n)
		n2, ok := parseTree(text)
		if !ok || !bytes.Equal(appendNode(nil, n2), text) {
			t.Fatalf("%q does not re-parse to itself", text)
		}
	})
}
