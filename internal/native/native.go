// Package native turns the []byte of a native Go fuzz input into the
// JSON-RPC messages it stands for, the same way for the rpcfuzz harness
// (package rpcfuzz, which sends them) and for the CLI's import-go (which
// expands a saved input to replay it black-box).
//
// An input is either the literal form of package fuzzcase (the messages
// themselves) or a choice stream: its bytes, read by mutate.NewBytes, first
// pick a seed (the shipped corpus for the profile, then one request per
// method of the user's dictionary, then the user's own seeds), then drive
// one mutate.Mutator chain over that seed. The mutator's weights are never
// rewarded here, so the same bytes always make the same messages for a
// given Options and a given version of the corpus and the mutator: Go's
// coverage guidance does the steering that rewards do in the black-box
// engine.
package native

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/rpcload/rpcload/corpus"
	"github.com/rpcload/rpcload/internal/fuzzcase"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/schemagen"
	"github.com/rpcload/rpcload/internal/wire"
)

// DefaultMaxFrame is the frame size limit when Options.MaxFrame is 0:
// 64 KiB keeps an input cheap under coverage instrumentation (the mutator's
// own default, 1 MiB, suits a black-box run, not thousands of inputs a
// second) while still crossing the usual 4 KiB buffer boundaries.
const DefaultMaxFrame = 64 << 10

// ErrProfile is wrapped by New's error for a profile the corpus does not
// have.
var ErrProfile = errors.New("unknown profile")

// Options say what an input expands over. Two Expanders made with equal
// Options expand every input the same way.
type Options struct {
	// Profile picks the shipped seeds: "" or "jsonrpc" (the JSON-RPC and
	// tricky seeds), "mcp", "lsp" or "eth" (those plus the protocol's own).
	// It also tells the sequence ops which handshake and shutdown to use.
	Profile string
	// Methods are the user's method names: each gets a seed request (with
	// params valid for its schema in Params, when there is one), and they
	// lead the mutator's method dictionary.
	Methods []string
	// Params maps a method to its params JSON Schema.
	Params map[string]json.RawMessage
	// Seeds are the user's own messages, one seed each, after the others.
	Seeds [][]byte
	// MaxFrame bounds every message of an input (a literal input aside);
	// 0 means DefaultMaxFrame.
	MaxFrame int
	// Framing is the framing the framing ops may break (FramingNewline for
	// a stream target, FramingNone when every message is delivered whole).
	Framing mutate.Framing
}

// Seed is one starting point of a choice stream.
type Seed struct {
	// Name says where the seed comes from: its corpus path
	// ("jsonrpc/call-positional.json"), "method NAME" or "Seeds[i]".
	Name string
	Case mutate.Case
}

// Input is what one fuzz input stands for.
type Input struct {
	// Case holds the messages to send.
	Case mutate.Case
	// Literal is true when the input was in the literal form; Seed and Ops
	// are then empty.
	Literal bool
	// Seed is the name of the seed a choice stream picked.
	Seed string
	// Ops are the indices (into mutate.Ops()) of the ops applied to it, in
	// order; OpNames spells them.
	Ops []int
}

// OpNames returns the names of in's ops.
func (in *Input) OpNames() []string {
	table := mutate.Ops()
	names := make([]string, len(in.Ops))
	for k, i := range in.Ops {
		names[k] = table[i].Name
	}
	return names
}

// Expander expands fuzz inputs. It is safe for concurrent use.
type Expander struct {
	seeds []Seed
	env   mutate.Env
	m     *mutate.Mutator
}

// New returns an Expander for o. It fails on an unknown profile, on a
// seed of o.Seeds longer than MaxFrame, and when no seed is left; shipped
// seeds longer than MaxFrame are left out.
func New(o Options) (*Expander, error) {
	profile := o.Profile
	if profile == "" {
		profile = "jsonrpc"
	}
	shipped := corpus.Seeds(profile)
	if shipped == nil {
		return nil, fmt.Errorf("profile %q: %w (known: %v)", o.Profile, ErrProfile, corpus.Profiles())
	}
	e := &Expander{env: mutate.Env{
		Params:   o.Params,
		Framing:  o.Framing,
		MaxFrame: o.MaxFrame,
		Profile:  profile,
	}}
	if e.env.MaxFrame <= 0 {
		e.env.MaxFrame = DefaultMaxFrame
	}
	for _, s := range shipped {
		// A seed the ops could not keep under MaxFrame is left out: every
		// message of an input stays within it.
		if len(s.Frames) > 0 && maxLen(s.Frames) <= e.env.MaxFrame {
			e.seeds = append(e.seeds, Seed{Name: s.Name, Case: mutate.Case{Frames: s.Frames}})
		}
	}
	for i, name := range o.Methods {
		e.seeds = append(e.seeds, Seed{Name: "method " + name, Case: mutate.Case{Frames: [][]byte{methodSeed(name, i+1, o.Params[name])}}})
	}
	for i, s := range o.Seeds {
		if len(s) > e.env.MaxFrame {
			return nil, fmt.Errorf("seed Seeds[%d] is %d bytes, over MaxFrame (%d)", i, len(s), e.env.MaxFrame)
		}
		if len(s) > 0 {
			e.seeds = append(e.seeds, Seed{Name: fmt.Sprintf("Seeds[%d]", i), Case: mutate.Case{Frames: [][]byte{slices.Clone(s)}}})
		}
	}
	if len(e.seeds) == 0 {
		return nil, fmt.Errorf("no seed fits in MaxFrame (%d bytes)", e.env.MaxFrame)
	}
	e.env.Methods = dictionary(o, profile)
	for _, s := range e.seeds {
		e.env.Corpus = append(e.env.Corpus, s.Case.Frames...)
	}
	e.m = mutate.New(&e.env)
	return e, nil
}

func maxLen(frames [][]byte) int {
	n := 0
	for _, f := range frames {
		n = max(n, len(f))
	}
	return n
}

// methodSeed is a call of method with id n, and params valid for schema
// when one is given and generates.
func methodSeed(method string, n int, schema json.RawMessage) []byte {
	var params []byte
	if len(schema) > 0 {
		// A fixed source: the seed must not change from run to run.
		if v, err := schemagen.Valid(schema, rand.New(rand.NewPCG(uint64(n), 0x5eed))); err == nil {
			params = v
		}
	}
	return wire.AppendRequest(nil, uint64(n), wire.IDInt, wire.AppendString(nil, method), params)
}

// dictionary is the mutator's method dictionary: the user's methods and
// those of the user's seeds; the shipped corpus's only when the user gave
// none, so that a dictionary pick lands on the server's own methods.
func dictionary(o Options, profile string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, m := range o.Methods {
		add(m)
	}
	var msg wire.Message
	for _, s := range o.Seeds {
		wire.Scan(s, &msg)
		if name, ok := wire.Unquote(nil, msg.Method); ok && msg.Method != nil {
			add(string(name))
		}
	}
	if len(out) == 0 {
		for _, m := range corpus.Methods(profile) {
			add(m)
		}
	}
	return out
}

// Seeds returns the seeds a choice stream picks from, in pick order. The
// caller must not modify them.
func (e *Expander) Seeds() []Seed { return e.seeds }

// Env returns the mutation environment (a copy; its slices are shared and
// must not be modified).
func (e *Expander) Env() mutate.Env { return e.env }

// Expand returns what data stands for: its literal case, or the seed its
// first choice picks after the rounds of mutation the rest drives. Every
// byte string expands to at least one message. The case may share memory
// with data and with the seeds: neither may be modified while it is used.
func (e *Expander) Expand(data []byte) Input {
	if c, ok := fuzzcase.Decode(data); ok {
		return Input{Case: c, Literal: true}
	}
	k := seedBytes(len(e.seeds))
	pick := mutate.NewBytes(data[:min(k, len(data))])
	seed := &e.seeds[pick.Intn(len(e.seeds))]
	in := Input{Case: seed.Case, Seed: seed.Name}
	pos := min(k, len(data))
	big := max(caseSize(seed.Case), bigCase)
	for round := 0; round == 0 || pos < len(data) && round < maxRounds; round++ {
		end := len(data)
		if round < maxRounds-1 {
			end = min(end, pos+blockSize)
		}
		ch := &chooser{block: data[pos:end], prefix: data[:end]}
		pos = end
		out, ops := e.m.Mutate(ch, in.Case)
		in.Case = out
		in.Ops = append(in.Ops, ops...)
		if caseSize(out) > big {
			// The big input is its own point; more rounds would only copy
			// and re-scan it.
			break
		}
	}
	return in
}

// The shape of a choice stream: the seed pick, then one block of choices
// per round of mutate.Mutator.Mutate (a chain of one to three ops each;
// the last round takes every byte left). Two things make it a good search
// space for Go's fuzzer, which starts from short inputs and changes a few
// bytes at a time:
//   - Rounds rather than one long chain keep the meaning of a prefix: bytes
//     appended after a full block leave the rounds before it as they were
//     and drive a round on top. So an input kept for new coverage can gain
//     an edit without losing the one that made it interesting, as a bug
//     behind two precise edits (an id of -0 and an empty method) needs.
//   - A round whose block runs out draws its other choices from a PCG
//     seeded with the hash of the input up to the end of the block, not
//     zeros: with zeros every short input would end in the first ops of
//     the table, and measured, Go's fuzzer then made an id of -0 fifty
//     times less often than uniform random bytes do.
const (
	blockSize = 16
	maxRounds = 4
	bigCase   = 4 << 10 // past this size (or the seed's), no more rounds
)

// seedBytes is how many bytes the seed pick takes among n seeds.
func seedBytes(n int) int {
	if n <= 256 {
		return 1
	}
	return 2
}

func caseSize(c mutate.Case) int {
	n := len(c.Wire)
	for _, f := range c.Frames {
		n += len(f)
	}
	return n
}

// chooser reads a round's choices from its block of the input, as
// mutate.NewBytes does, then from a PCG seeded with the hash of the input
// up to the block's end, so a round depends on nothing after its block.
type chooser struct {
	block  []byte
	prefix []byte
	pos    int
	tail   mutate.Chooser // nil until block runs out
}

func (c *chooser) Intn(n int) int {
	if n <= 1 {
		return 0
	}
	k := 0
	for rest := uint64(n - 1); rest > 0; rest >>= 8 {
		k++
	}
	if c.tail == nil && c.pos+k <= len(c.block) {
		var v uint64
		for _, b := range c.block[c.pos : c.pos+k] {
			v = v<<8 | uint64(b)
		}
		c.pos += k
		return int(v % uint64(n))
	}
	if c.tail == nil {
		h := fnv.New64a()
		h.Write(c.prefix)
		c.tail = mutate.NewRand(h.Sum64())
	}
	return c.tail.Intn(n)
}

// SeedStream returns the shortest choice stream that picks seed i (an
// index into Seeds). Fuzz adds one per seed, so that Go's fuzzer has short
// choice streams to grow from, and not only literal forms, whose
// byte-level mutations mostly stay literal.
func (e *Expander) SeedStream(i int) []byte {
	if seedBytes(len(e.seeds)) == 1 {
		return []byte{byte(i)}
	}
	return []byte{byte(i >> 8), byte(i)}
}

// ExpandFile expands a Go fuzz corpus file (the "go test fuzz v1" text Go
// saves under testdata/fuzz, one []byte value) as the harness expands the
// input it holds: a literal form is its messages, a choice stream the
// messages it stands for under e's Options. It is the one way a saved input
// becomes messages outside a fuzz test (rpcfuzz import-go), so that a
// choice stream replays black-box as the harness sent it, given the
// Options of the fuzz test that saved it.
func (e *Expander) ExpandFile(file []byte) (Input, error) {
	data, err := fuzzcase.UnmarshalGoCorpus(file)
	if err != nil {
		return Input{}, err
	}
	return e.Expand(data), nil
}
