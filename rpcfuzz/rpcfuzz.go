package rpcfuzz

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/fuzzcase"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/native"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/profile"
)

// F is the part of *testing.F that Fuzz uses. OSS-Fuzz's stand-in for
// testing.F (go-118-fuzz-build) satisfies it too.
type F interface {
	Helper()
	// Add adds a seed input; Fuzz passes one []byte.
	Add(args ...any)
	// Fuzz runs the fuzz function. Fuzz passes a func(*testing.T, []byte)
	// to a *testing.F and a func(T, []byte) to any other F.
	Fuzz(ff any)
	Fatal(args ...any)
}

// T is the part of *testing.T that an input's run uses. OSS-Fuzz's
// stand-in for testing.T satisfies it too.
type T interface {
	Helper()
	// Fatal reports a failing input.
	Fatal(args ...any)
	// Log reports a warning that does not fail the input.
	Log(args ...any)
	// Name names the fuzz test in the failure message's advice on where
	// to save the input.
	Name() string
}

// Options tune Fuzz and Check. The zero value fuzzes a plain JSON-RPC
// server with the shipped corpus.
type Options struct {
	// Methods are the server's method names: each gets a seed request,
	// and they become the mutator's method dictionary (with the methods
	// of Seeds; the corpus's own are used only when both are empty).
	Methods []string
	// Profile is "" or "jsonrpc" (the JSON-RPC seeds), "mcp", "lsp" or
	// "eth": that protocol's handshakes and calls join the seeds. mcp and
	// lsp have no batches: an array there is an invalid request.
	Profile string
	// Seeds are real requests of the server's own, one message each.
	Seeds [][]byte
	// Params maps a method to its params JSON Schema: its seed request
	// carries params valid for it, and the mutator makes schema-valid and
	// schema-invalid params.
	Params map[string]json.RawMessage
	// Timeout is the wait for each reply (for a Stream target: for serve
	// to return) before the input is a hang; 0 means DefaultTimeout. Keep
	// it well under 10s, Go's own limit per input.
	Timeout time.Duration
	// MaxFrame bounds every message of a choice stream; 0 means 64 KiB.
	// Shipped seeds longer than it are left out, and a longer one in Seeds
	// is an error.
	MaxFrame int
	// Ignore lists known deviations of the server, which never fail an
	// input. An entry is either a rule id as failure messages name it
	// ("wrong_error_code": every finding of the rule), or a rule id, a
	// space and a regular expression (RE2 syntax) quoted as a Go string,
	// the form of the interop baselines' #accept lines:
	//
	//	wrong_error_code "answered with error -32700"
	//
	// which ignores only the findings of that rule whose evidence matches
	// the expression: the note (the text after the rule in a failure
	// message; for a batch, about its first problem only), the message
	// sent or the reply, each matched on its own. IgnoreMatching builds
	// such an entry. Give each the spec reference its failure message
	// names, in a comment: an ignored rule is a deviation, not a pass.
	Ignore []string
	// FailOnWarnings fails inputs on warnings too (slow_input); by default
	// they are logged.
	FailOnWarnings bool
	// SlowFactor, when above 0, reports an input answered more than this
	// many times slower than the median of the inputs its size before it
	// (and slower than 10ms) as slow_input, a warning: the rule of the
	// black-box fuzzer (--slow-factor). Off by default: timing is not
	// reproducible.
	SlowFactor float64
}

// IgnoreMatching returns the Options.Ignore entry that ignores findings
// of rule whose note, message or reply matches the regular expression
// pattern (RE2 syntax): rule, a space and pattern quoted.
func IgnoreMatching(rule, pattern string) string {
	return rule + " " + strconv.Quote(pattern)
}

// ignoreEntry is a parsed Options.Ignore entry with a pattern.
type ignoreEntry struct {
	rule check.Rule
	re   *regexp.Regexp
}

// parseIgnore reads Options.Ignore: rules ignored outright, and entries
// with a pattern.
func parseIgnore(list []string) (check.Set, []ignoreEntry, error) {
	var all check.Set
	var some []ignoreEntry
	for _, e := range list {
		name, quoted, hasPattern := strings.Cut(strings.TrimSpace(e), " ")
		r, ok := check.ParseRule(name)
		if !ok {
			return 0, nil, fmt.Errorf("Options.Ignore: no rule %q in %q", name, e)
		}
		if !hasPattern {
			all = all.Add(r)
			continue
		}
		pattern, err := strconv.Unquote(strings.TrimSpace(quoted))
		if err != nil {
			return 0, nil, fmt.Errorf("Options.Ignore: %q: want RULE \"REGEXP\" with the regexp quoted as a Go string", e)
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return 0, nil, fmt.Errorf("Options.Ignore: %q: %w", e, err)
		}
		some = append(some, ignoreEntry{rule: r, re: re})
	}
	return all, some, nil
}

// DefaultTimeout is the wait for a reply when Options.Timeout is 0.
const DefaultTimeout = time.Second

// Fuzz runs target under Go's fuzzer. It adds every seed with f.Add as the
// shortest choice stream that picks it (a starting point for Go's
// mutations) and, unless the test binary is fuzzing (-test.fuzz set), in
// literal form too, so that plain go test replays the seeds as they are.
// (Measured against fuzztarget's planted hang, the literal forms in the
// fuzzing corpus held Go's fuzzer back: their baseline coverage left few
// inputs interesting, and their byte-level mutations mostly stay literal.)
// It then calls f.Fuzz with a function of one []byte that expands
// the input (literal form, or a choice stream over the seeds and the
// mutator), sends it to target and judges every reply; a broken rule fails
// the input through t.Fatal with the message and advice documented in the
// package comment. Bad Options fail through f.Fatal. In a driven run
// (the environment variables RPCFUZZ_NATIVE_INPUT and
// RPCFUZZ_NATIVE_OUTCOME set, by rpcfuzz minimize and Replay) it adds only
// the input the first names, and writes its messages and verdict to the
// file the second names.
func Fuzz(f F, target Target, opts Options) {
	f.Helper()
	h, err := newHarness(target, opts)
	if err != nil {
		f.Fatal("rpcfuzz: " + err.Error())
		return
	}
	if input, outcome, ok := native.DrivenFiles(); ok {
		h.drive(f, input, outcome)
		return
	}
	if !fuzzing() {
		for _, s := range h.exp.Seeds() {
			f.Add(fuzzcase.Encode(s.Case))
		}
	}
	for i := range h.exp.Seeds() {
		f.Add(h.exp.SeedStream(i))
	}
	if tf, ok := f.(*testing.F); ok {
		// testing.F insists on *testing.T; other Fs (OSS-Fuzz's) pass
		// their own T, which reflect assigns to the interface.
		// (Not a helper: the failure's line is then this one, not
		// reflect's, which calls the function.)
		tf.Fuzz(func(t *testing.T, data []byte) { h.test(t, data) })
		return
	}
	f.Fuzz(func(t T, data []byte) { h.test(t, data) })
}

// fuzzing reports whether this test binary runs under go test -fuzz
// (coordinator or worker): its -test.fuzz flag is set.
func fuzzing() bool {
	fl := flag.Lookup("test.fuzz")
	return fl != nil && fl.Value.String() != ""
}

// Check runs one input against target, as one input of Fuzz would run:
// a regression test for a finding. input is a literal form (see Literal)
// or a choice stream.
func Check(t T, target Target, input []byte, opts Options) {
	t.Helper()
	h, err := newHarness(target, opts)
	if err != nil {
		t.Fatal("rpcfuzz: " + err.Error())
		return
	}
	h.test(t, input)
}

// Literal returns the literal form of an input made of msgs, sent in
// order: the bytes Fuzz and Check send as they are. With no message it
// returns bytes that are not a literal form (a choice stream).
func Literal(msgs ...[]byte) []byte {
	return fuzzcase.Encode(mutate.Case{Frames: msgs})
}

// harness holds what every input of one Fuzz or Check needs.
type harness struct {
	target         Target
	exp            *native.Expander
	timeout        time.Duration
	ignore         check.Set     // rules ignored outright
	ignoreMatching []ignoreEntry // rules ignored where their evidence matches
	failOnWarnings bool
	slowFactor     float64
	rules          *profile.FuzzRules
	now            func() time.Time // the clock of latencies (slow_input)
	slow           slowTracker
	caller         caller
}

func newHarness(target Target, o Options) (*harness, error) {
	if target == nil {
		return nil, errors.New("no target")
	}
	h := &harness{target: target, timeout: o.Timeout, failOnWarnings: o.FailOnWarnings, slowFactor: o.SlowFactor, now: time.Now}
	h.slow.rule = oracle.SlowRule{Factor: o.SlowFactor, Floor: slowFloor}
	if h.timeout <= 0 {
		h.timeout = DefaultTimeout
	}
	var err error
	if h.ignore, h.ignoreMatching, err = parseIgnore(o.Ignore); err != nil {
		return nil, err
	}
	framing := mutate.FramingNone
	if _, ok := target.(streamTarget); ok {
		framing = mutate.FramingNewline
	}
	exp, err := native.New(native.Options{
		Profile: o.Profile, Methods: o.Methods, Params: o.Params, Seeds: o.Seeds,
		MaxFrame: o.MaxFrame, Framing: framing,
	})
	if err != nil {
		return nil, fmt.Errorf("Options: %w", err)
	}
	h.exp = exp
	p, err := profile.New(profile.Name(exp.Env().Profile), profile.Options{})
	if err != nil {
		return nil, fmt.Errorf("Options.Profile: %w", err)
	}
	h.rules = profile.NewFuzzRules(p, nil)
	return h, nil
}

// run expands, sends and judges one input. It returns nil when nothing is
// wrong.
func (h *harness) run(data []byte) *result {
	in := h.exp.Expand(data)
	infos := h.inspect(in.Case)
	o := h.exchange(in.Case)
	res := h.judge(in, infos, &o)
	if res != nil {
		res.o = o
	}
	return res
}

// test runs one input and reports it to t.
func (h *harness) test(t T, data []byte) {
	t.Helper()
	h.report(t, data, h.run(data))
}

// report reports the result of one input to t.
func (h *harness) report(t T, data []byte, res *result) {
	t.Helper()
	switch {
	case res == nil:
	case res.failed:
		t.Fatal(res.message(data, t.Name()))
	default:
		t.Log(res.message(data, t.Name()))
	}
}
