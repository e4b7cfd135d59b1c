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

// FuzzLex: the lexer never panics and its tokens tile the input. (The
// tree's parser has its own fuzz target, jsontree.FuzzParse.)
func FuzzLex(f *testing.F) {
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
	})
}
