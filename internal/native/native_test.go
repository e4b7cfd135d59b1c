package native

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/corpus"
	"github.com/rpcload/rpcload/internal/fuzzcase"
	"github.com/rpcload/rpcload/internal/mutate"
)

func randomInputs(seed uint64, n int) [][]byte {
	r := rand.New(rand.NewPCG(seed, seed))
	out := make([][]byte, n)
	for i := range out {
		b := make([]byte, r.IntN(40))
		for k := range b {
			b[k] = byte(r.Uint32())
		}
		out[i] = b
	}
	return out
}

func mustNew(t *testing.T, o Options) *Expander {
	t.Helper()
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestNewSeeds(t *testing.T) {
	schema := json.RawMessage(`{"type":"array","prefixItems":[{"type":"integer"},{"type":"integer"}],"minItems":2,"maxItems":2}`)
	tests := []struct {
		name      string
		o         Options
		wantFirst string   // name of the first seed
		wantLast  []string // names of the last seeds, in order
		wantDict  []string // the dictionary's first names
	}{
		{"default", Options{}, "jsonrpc/", nil, corpus.Methods("jsonrpc")[:2]},
		{"methods and seeds", Options{Methods: []string{"add", "sub"}, Params: map[string]json.RawMessage{"add": schema},
			Seeds: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"mul"}`), nil}},
			"jsonrpc/", []string{"method add", "method sub", "Seeds[0]"}, []string{"add", "sub", "mul"}},
		{"profile", Options{Profile: "lsp"}, "jsonrpc/", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := mustNew(t, tc.o)
			seeds := e.Seeds()
			if !strings.HasPrefix(seeds[0].Name, tc.wantFirst) {
				t.Errorf("first seed %q", seeds[0].Name)
			}
			if len(tc.wantLast) > 0 {
				var got []string
				for _, s := range seeds[len(seeds)-len(tc.wantLast):] {
					got = append(got, s.Name)
				}
				if !slices.Equal(got, tc.wantLast) {
					t.Errorf("last seeds %q, want %q", got, tc.wantLast)
				}
			}
			if dict := e.Env().Methods; len(tc.wantDict) > 0 && !slices.Equal(dict[:len(tc.wantDict)], tc.wantDict) {
				t.Errorf("dictionary %q, want it to start %q", dict, tc.wantDict)
			}
			if tc.o.Profile == "lsp" && !slices.ContainsFunc(seeds, func(s Seed) bool { return strings.HasPrefix(s.Name, "lsp/") }) {
				t.Error("no lsp seed in the lsp profile")
			}
		})
	}
}

func TestMethodSeedParams(t *testing.T) {
	schema := json.RawMessage(`{"type":"array","prefixItems":[{"type":"integer"},{"type":"integer"}],"minItems":2,"maxItems":2}`)
	o := Options{Methods: []string{"add", "ping"}, Params: map[string]json.RawMessage{"add": schema}}
	a, b := mustNew(t, o), mustNew(t, o)
	seeds := a.Seeds()
	add, ping := seeds[len(seeds)-2].Case.Frames[0], seeds[len(seeds)-1].Case.Frames[0]
	var msg struct {
		ID     int             `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(add, &msg); err != nil || msg.Method != "add" || msg.ID != 1 {
		t.Fatalf("add seed %s: %v", add, err)
	}
	var params []int
	if err := json.Unmarshal(msg.Params, &params); err != nil || len(params) != 2 {
		t.Errorf("add seed params %s do not fit the schema: %v", msg.Params, err)
	}
	if string(ping) != `{"jsonrpc":"2.0","id":2,"method":"ping"}` {
		t.Errorf("ping seed %s", ping)
	}
	bs := b.Seeds()
	if !bytes.Equal(bs[len(bs)-2].Case.Frames[0], add) {
		t.Error("the schema seed differs between two Expanders")
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(Options{Profile: "xmpp"}); !errors.Is(err, ErrProfile) {
		t.Errorf("unknown profile: error %v, want ErrProfile", err)
	}
	_, err := New(Options{MaxFrame: 10, Seeds: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"a"}`)}})
	if err == nil || !strings.Contains(err.Error(), "Seeds[0]") {
		t.Errorf("a seed over MaxFrame: error %v", err)
	}
	if _, err := New(Options{MaxFrame: 1}); err == nil {
		t.Error("no seed under MaxFrame: no error")
	}
	// Shipped seeds over MaxFrame are left out, not an error.
	e := mustNew(t, Options{MaxFrame: 100})
	for _, s := range e.Seeds() {
		for _, f := range s.Case.Frames {
			if len(f) > 100 {
				t.Fatalf("seed %s has a %d-byte message", s.Name, len(f))
			}
		}
	}
}

func TestExpandLiteral(t *testing.T) {
	e := mustNew(t, Options{})
	c := mutate.Case{Frames: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"a"}`), []byte("x\ny")}}
	for _, wire := range [][]byte{nil, []byte("raw\n")} {
		c.Wire = wire
		in := e.Expand(fuzzcase.Encode(c))
		if !in.Literal || in.Seed != "" || len(in.Ops) != 0 {
			t.Fatalf("literal expanded as %+v", in)
		}
		if !slices.EqualFunc(in.Case.Frames, c.Frames, bytes.Equal) || !bytes.Equal(in.Case.Wire, wire) {
			t.Errorf("literal case %q, want %q", in.Case.Frames, c.Frames)
		}
	}
}

// TestExpandChoiceStream: every byte string expands to at least one
// message and within MaxFrame, the same way each time and in a second
// Expander, and names its seed and ops.
func TestExpandChoiceStream(t *testing.T) {
	o := Options{Methods: []string{"echo"}, MaxFrame: 4096, Framing: mutate.FramingNewline}
	a, b := mustNew(t, o), mustNew(t, o)
	names := map[string]bool{}
	for _, s := range a.Seeds() {
		names[s.Name] = true
	}
	for _, data := range append(randomInputs(1, 2000), nil, []byte{0xFF}, []byte{0xFF, 0}) {
		x, y := a.Expand(data), b.Expand(data)
		if x.Literal {
			t.Fatalf("%q expanded as a literal", data)
		}
		if !names[x.Seed] {
			t.Fatalf("%q: seed %q is not a seed", data, x.Seed)
		}
		if len(x.Case.Frames) == 0 && x.Case.Wire == nil {
			t.Fatalf("%q expanded to nothing", data)
		}
		for _, f := range x.Case.Frames {
			if len(f) > 4096 {
				t.Fatalf("%q: a %d-byte frame over MaxFrame", data, len(f))
			}
		}
		if x.Seed != y.Seed || !slices.Equal(x.Ops, y.Ops) || !slices.EqualFunc(x.Case.Frames, y.Case.Frames, bytes.Equal) ||
			!bytes.Equal(x.Case.Wire, y.Case.Wire) {
			t.Fatalf("%q expanded differently: %+v and %+v", data, x, y)
		}
		if len(x.Ops) != len(x.OpNames()) {
			t.Fatalf("ops %v named %v", x.Ops, x.OpNames())
		}
	}
	// Expanding is pure: the first input again gives what it gave first.
	first := randomInputs(1, 1)[0]
	if x, y := a.Expand(first), a.Expand(first); !slices.EqualFunc(x.Case.Frames, y.Case.Frames, bytes.Equal) {
		t.Error("an input expanded differently the second time")
	}
}

// TestSeedStream: SeedStream(i) picks seed i.
func TestSeedStream(t *testing.T) {
	many := make([][]byte, 300)
	for i := range many {
		many[i] = []byte(`{"jsonrpc":"2.0","id":1,"method":"m` + strconv.Itoa(i) + `"}`)
	}
	for _, o := range []Options{{Methods: []string{"a", "b"}}, {Seeds: many}} {
		e := mustNew(t, o)
		for i, s := range e.Seeds() {
			data := e.SeedStream(i)
			if got := e.Expand(data).Seed; got != s.Name {
				t.Fatalf("%d seeds: SeedStream(%d) = %x picked %q, want %q", len(e.Seeds()), i, data, got, s.Name)
			}
		}
	}
}

// TestRounds: bytes appended after a full block keep the rounds before
// them, and add a round on top (up to maxRounds).
func TestRounds(t *testing.T) {
	e := mustNew(t, Options{Methods: []string{"echo"}})
	seeds := e.Seeds()
	for k, data := range randomInputs(5, 300) {
		data = append(e.SeedStream(k%len(seeds)), data...)
		head := data[:min(len(data), 1+blockSize)]
		a, b := e.Expand(head), e.Expand(data)
		if a.Seed != seeds[k%len(seeds)].Name || b.Seed != a.Seed {
			t.Fatalf("%x: seeds %q and %q, want %q", data, a.Seed, b.Seed, seeds[k%len(seeds)].Name)
		}
		if caseSize(a.Case) > max(caseSize(seeds[k%len(seeds)].Case), bigCase) {
			continue // no round after a big one
		}
		if !slices.Equal(b.Ops[:min(len(a.Ops), len(b.Ops))], a.Ops) {
			t.Fatalf("%x: ops %v, then %v after appending", head, a.OpNames(), b.OpNames())
		}
		// One round by hand: the same ops on the same case.
		m := mutate.New(ptr(e.Env()))
		out, ops := m.Mutate(&chooser{block: head[1:], prefix: head}, seeds[k%len(seeds)].Case)
		if !slices.Equal(ops, a.Ops) || !slices.EqualFunc(out.Frames, a.Case.Frames, bytes.Equal) {
			t.Fatalf("%x: Expand applied %v, one Mutate round %v", head, a.OpNames(), ops)
		}
	}
	// Every byte past the last full block goes to the last round.
	long := bytes.Repeat([]byte{7}, 1+maxRounds*blockSize+100)
	if in := e.Expand(long); len(in.Ops) > maxRounds*mutate.MaxChain {
		t.Errorf("%d ops from %d rounds", len(in.Ops), maxRounds)
	}
}

func ptr[T any](v T) *T { return &v }

// TestChooser: a round's choices are its block's bytes, read as
// mutate.NewBytes reads them, then a tail that depends on the input up to
// the block's end and on nothing else.
func TestChooser(t *testing.T) {
	block := []byte{0x01, 0x02, 0x03, 0x04}
	c, ref := &chooser{block: block, prefix: block}, mutate.NewBytes(block)
	for _, n := range []int{3, 1000, 7} {
		if got, want := c.Intn(n), ref.Intn(n); got != want {
			t.Fatalf("Intn(%d) = %d, NewBytes gives %d", n, got, want)
		}
	}
	tail := func(prefix []byte) []int {
		c := &chooser{block: prefix[len(prefix)-1:], prefix: prefix}
		c.Intn(1 << 24) // more bytes than the block has: the tail from here
		var out []int
		for range 8 {
			out = append(out, c.Intn(1<<30))
		}
		return out
	}
	if a, b := tail([]byte{1, 2}), tail([]byte{1, 2}); !slices.Equal(a, b) {
		t.Errorf("the same bytes give tails %v and %v", a, b)
	}
	if a, b := tail([]byte{1, 2}), tail([]byte{0, 2}); slices.Equal(a, b) {
		t.Errorf("different prefixes give the same tail %v", a)
	}
	if c := (&chooser{}); c.Intn(1) != 0 || c.Intn(0) != 0 {
		t.Error("Intn(1) or Intn(0) is not 0")
	}
}

// TestExpandFile: a corpus file expands as the input it holds, a literal
// form to its messages and a choice stream to what Expand makes of it;
// a file that is no Go corpus file is an error.
func TestExpandFile(t *testing.T) {
	e := mustNew(t, Options{Methods: []string{"echo"}})
	lit := fuzzcase.Encode(mutate.Case{Frames: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"echo"}`), []byte("[]")}})
	stream := append(e.SeedStream(len(e.Seeds())-1), 7, 1, 2, 3)
	for _, tc := range []struct {
		name string
		data []byte
	}{{"literal", lit}, {"choice stream", stream}, {"seed stream", e.SeedStream(0)}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.ExpandFile(fuzzcase.MarshalGoCorpus(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			want := e.Expand(tc.data)
			if got.Literal != want.Literal || got.Seed != want.Seed || !slices.Equal(got.Ops, want.Ops) ||
				!slices.EqualFunc(got.Case.Frames, want.Case.Frames, bytes.Equal) || !bytes.Equal(got.Case.Wire, want.Case.Wire) {
				t.Fatalf("ExpandFile = %+v; Expand = %+v", got, want)
			}
		})
	}
	for _, bad := range []string{"", "go test fuzz v1\n", "go test fuzz v1\nstring(\"x\")\n", "not a corpus file"} {
		if _, err := e.ExpandFile([]byte(bad)); err == nil {
			t.Errorf("ExpandFile(%q): no error", bad)
		}
	}
}
