// Package malformed mixes malformed traffic into a load (rpcload run
// --mutate-fraction): a seeded share of the load's calls, each its own
// encoded request put through internal/mutate's ops, is taken off the load
// connections (engine.Config.Divert) and sent on connections of its own,
// where internal/fuzz judges each exchange with the fuzz oracle, keeps the
// failures as finding directories in rpcfuzz's format, and counts every
// input under the rule it broke. The load's figures never include these
// calls, and the load's connections never carry a broken frame, so the
// checks of the well-formed load stay exact.
package malformed

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/workload"
)

// Config is what share of a load to make malformed, and how.
type Config struct {
	// Fraction of the calls is made malformed, 0 to 1 (--mutate-fraction),
	// with the mutation ops Ops (names of mutate.Ops; empty: every op the
	// target's framing allows). A call with its own Mutate uses its own
	// fraction and ops instead; a raw call is always taken, and sent as
	// it is.
	Fraction float64
	Ops      []string
	Calls    []workload.Call // the plan's mix
	Seed     uint64          // which calls, and how each is mutated
	// Target is the load's target: its framing decides which framing ops
	// apply.
	Target   transport.Target
	MaxFrame int // no mutated frame is longer
	Profile  string
	// Queue bounds the inputs waiting for a free malformed connection;
	// past it a diverted call is dropped (counted), never waited for: the
	// load's writers hand the calls over.
	Queue int
}

// DefaultQueue is Config.Queue's default.
const DefaultQueue = 1024

// Diverter takes the calls (engine.Divert) and feeds them, mutated, to a
// fuzz run (fuzz.Config.Feed).
type Diverter struct {
	cfg     Config
	calls   []callRule // by the mix's call index
	feed    chan mutate.Case
	taken   atomic.Uint64
	dropped atomic.Uint64
	mu      sync.RWMutex // Send holds it shared; Close exclusively, so no send races the close
	closed  bool
}

// callRule is how one call of the mix is diverted.
type callRule struct {
	raw       bool            // always taken, sent as it is
	threshold uint64          // taken when its draw is below it (0: never)
	mut       *mutate.Mutator // the ops its mutations draw from
}

// New validates cfg and returns its Diverter.
func New(cfg Config) (*Diverter, error) {
	own := slices.ContainsFunc(cfg.Calls, func(c workload.Call) bool { return c.Raw != nil || c.Mutate != nil })
	switch {
	case !(cfg.Fraction >= 0 && cfg.Fraction <= 1):
		return nil, fmt.Errorf("--mutate-fraction must be above 0 and at most 1, e.g. 5%% (got %g)", cfg.Fraction)
	case cfg.Fraction == 0 && !own:
		return nil, errors.New("--mutate-fraction must be above 0, e.g. 1%")
	case cfg.Target.Scheme == transport.Stdio:
		return nil, errors.New("malformed traffic (--mutate-fraction, and raw or mutate calls) needs a network target: a child process has one connection, which the load uses, and malformed inputs go on connections of their own")
	}
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultQueue
	}
	d := &Diverter{cfg: cfg, feed: make(chan mutate.Case, cfg.Queue)}
	mutators := map[string]*mutate.Mutator{}
	mutator := func(ops []string) (*mutate.Mutator, error) {
		key := strings.Join(ops, ",")
		if m, ok := mutators[key]; ok {
			return m, nil
		}
		m, err := newMutator(&cfg, ops)
		mutators[key] = m
		return m, err
	}
	global, err := mutator(cfg.Ops)
	if err != nil {
		return nil, fmt.Errorf("--mutate-ops: %w", err)
	}
	if len(cfg.Calls) == 0 {
		cfg.Calls = []workload.Call{{}} // the one call: the flags'
	}
	for _, c := range cfg.Calls {
		r := callRule{raw: c.Raw != nil, threshold: threshold(cfg.Fraction), mut: global}
		if c.Mutate != nil {
			if r.mut, err = mutator(c.Mutate.Ops); err != nil {
				return nil, fmt.Errorf("call %q: mutate.ops: %w", c.Name, err)
			}
			r.threshold = threshold(c.Mutate.Fraction)
		}
		d.calls = append(d.calls, r)
	}
	return d, nil
}

// threshold is the draw below which a call is taken, for a fraction.
func threshold(f float64) uint64 {
	if f >= 1 {
		return math.MaxUint64
	}
	return uint64(f * (1 << 64))
}

// newMutator is a Mutator for cfg's target, limited to ops when any.
func newMutator(cfg *Config, ops []string) (*mutate.Mutator, error) {
	m := mutate.New(&mutate.Env{MaxFrame: cfg.MaxFrame, Profile: cfg.Profile, Framing: fuzz.MutationFraming(cfg.Target)})
	if len(ops) > 0 {
		if err := m.Only(ops); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// draw is the call's uniform 64-bit draw, from the seed and the sequence
// number alone (fuzz.Spread).
func (d *Diverter) draw(seq uint64) uint64 { return fuzz.Spread(d.cfg.Seed, seq) }

// rule is the rule of the mix's call (the one call of the flags when the
// mix was not given).
func (d *Diverter) rule(call int) *callRule {
	if call < 0 || call >= len(d.calls) {
		call = 0
	}
	return &d.calls[call]
}

// Takes reports whether the tick of sequence number seq, of the mix's
// call, is made malformed (a raw call's always is).
func (d *Diverter) Takes(seq uint64, call int) bool {
	r := d.rule(call)
	return r.raw || r.threshold > 0 && d.draw(seq) < r.threshold
}

// Send mutates the frame of tick seq (a chooser seeded by the seed and
// seq, so the same run mutates it the same way; a raw call's frame is
// sent as it is) and queues it for the malformed connections, or counts
// it dropped when they are all busy.
func (d *Diverter) Send(seq uint64, call int, frame []byte) {
	out := mutate.Case{Frames: [][]byte{bytes.Clone(frame)}}
	if r := d.rule(call); !r.raw {
		out, _ = r.mut.Mutate(mutate.NewRand(d.draw(seq)^d.cfg.Seed), out)
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return
	}
	select {
	case d.feed <- out:
		d.taken.Add(1)
	default:
		d.dropped.Add(1)
	}
}

// Feed is what the fuzz run's workers take their inputs from.
func (d *Diverter) Feed() <-chan mutate.Case { return d.feed }

// Close ends the feed once the load has stopped sending: the malformed
// connections finish what is queued, and the fuzz run ends.
func (d *Diverter) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.closed = true
		close(d.feed)
	}
}

// Report is the malformed traffic's section of the run's result: what was
// diverted, how each input ended and the rules they broke (from the fuzz
// run's summary; nil when it gave none), the findings written.
func (d *Diverter) Report(sum *fuzz.Summary, outDir string) *stats.MalformedReport {
	r := &stats.MalformedReport{Fraction: d.cfg.Fraction, Seed: d.cfg.Seed, Ops: slices.Clone(d.cfg.Ops),
		Queued: d.taken.Load(), Dropped: d.dropped.Load(), OutDir: outDir, Rules: map[string]uint64{}}
	if sum == nil {
		return r
	}
	r.Inputs, r.Stopped, r.Unconfirmed, r.ParseErrorIDs = sum.Execs, sum.Stopped, sum.Unconfirmed, sum.ParseErrorIDs
	if lat := sum.Latency; lat != nil {
		r.Requests, r.Latency = lat.Requests, lat.Latency.Corrected
	}
	for rule, n := range sum.Hits {
		r.Rules[rule] = n
	}
	for _, f := range sum.Findings {
		r.Findings = append(r.Findings, stats.MalformedFinding{ID: f.ID, Rule: f.Rule, Severity: f.Severity, Dir: f.Dir, Note: f.Note})
		if f.Severity == "failure" {
			r.Failures++
		}
	}
	return r
}
