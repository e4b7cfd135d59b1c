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
	"sync"
	"sync/atomic"

	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
)

// Config is what share of a load to make malformed, and how.
type Config struct {
	Fraction float64  // of the load's calls, 0 < Fraction <= 1
	Seed     uint64   // which calls, and how each is mutated
	Ops      []string // the mutation ops (names of mutate.Ops); empty: every op the target's framing allows
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
	cfg       Config
	threshold uint64 // a call is taken when its draw is below it
	mut       *mutate.Mutator
	feed      chan mutate.Case
	taken     atomic.Uint64
	dropped   atomic.Uint64
	mu        sync.RWMutex // Send holds it shared; Close exclusively, so no send races the close
	closed    bool
}

// New validates cfg and returns its Diverter.
func New(cfg Config) (*Diverter, error) {
	switch {
	case !(cfg.Fraction > 0 && cfg.Fraction <= 1):
		return nil, fmt.Errorf("--mutate-fraction must be above 0 and at most 1, e.g. 5%% (got %g)", cfg.Fraction)
	case cfg.Target.Scheme == transport.Stdio:
		return nil, errors.New("--mutate-fraction needs a network target: a child process has one connection, which the load uses, and malformed inputs go on connections of their own")
	}
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultQueue
	}
	env := &mutate.Env{MaxFrame: cfg.MaxFrame, Profile: cfg.Profile}
	switch {
	case !cfg.Target.IsStream(), cfg.Target.Framing == transport.Messages:
		env.Framing = mutate.FramingNone
	case cfg.Target.Framing == transport.ContentLength:
		env.Framing = mutate.FramingContentLength
	default:
		env.Framing = mutate.FramingNewline
	}
	m := mutate.New(env)
	if len(cfg.Ops) > 0 {
		if err := m.Only(cfg.Ops); err != nil {
			return nil, fmt.Errorf("--mutate-ops: %w", err)
		}
	}
	d := &Diverter{cfg: cfg, mut: m, feed: make(chan mutate.Case, cfg.Queue)}
	if cfg.Fraction >= 1 {
		d.threshold = math.MaxUint64
	} else {
		d.threshold = uint64(cfg.Fraction * (1 << 64))
	}
	return d, nil
}

// draw is the call's uniform 64-bit draw: splitmix64 of the seed and the
// sequence number, so which calls are taken depends on them alone.
func (d *Diverter) draw(seq uint64) uint64 {
	z := d.cfg.Seed + seq*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Takes reports whether the call of sequence number seq is made malformed.
func (d *Diverter) Takes(seq uint64) bool { return d.draw(seq) < d.threshold }

// Send mutates the frame of call seq (a chooser seeded by the seed and seq,
// so the same run mutates it the same way) and queues it for the malformed
// connections, or counts it dropped when they are all busy.
func (d *Diverter) Send(seq uint64, frame []byte) {
	in := mutate.Case{Frames: [][]byte{bytes.Clone(frame)}}
	out, _ := d.mut.Mutate(mutate.NewRand(d.draw(seq)^d.cfg.Seed), in)
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
