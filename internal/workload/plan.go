package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/rpcload/rpcload/internal/wire"
)

// Plan is what a run sends and when. Build makes one from a scenario file
// and the command line; a Plan written as a literal is checked by Validate.
// Either way it is checked once: Validate fills in the defaults, divides a
// shard's load and builds the one call of Method, and does nothing more
// when called again.
type Plan struct {
	Rate        float64       // open loop: requests per second; 0 = closed loop
	Concurrency int           // closed loop: requests kept in flight
	MaxRate     float64       // closed loop: at most this many messages a second over all connections (a batch counts once); 0 = no cap
	Duration    time.Duration // length of the sending phase
	Timeout     time.Duration // per request (a call's own Timeout overrides it)
	Drain       time.Duration // how long to wait for replies after sending stops
	MaxInFlight int           // cap on requests scheduled and not yet resolved
	Method      string
	Params      []byte // raw JSON array or object, or nil
	IDFormat    wire.IDFormat
	NotifyEvery int // every Nth call is sent as a notification; 0 = never
	Batch       int // send each tick as a batch array of this many calls; 0 or 1 = no batches
	// Requests, if not 0, ends sending after this many messages of the
	// whole run (a request, a notification or a batch each, as Rate
	// counts): those of sequence numbers 1 to Requests, of which a shard
	// sends its own. The run then ends when their replies or timeouts are
	// in (the drain), or earlier at Duration.
	Requests uint64

	// Calls is the mix of a scenario. Empty: Method, Params and Batch make
	// the one call (and NotifyEvery applies to it).
	Calls []Call
	// Seed drives every random choice (which call, generated params,
	// Poisson arrivals), so a run can be replayed exactly.
	Seed uint64
	// Stages shape the load over time instead of a steady Rate or
	// Concurrency; StartRate and StartConcurrency are where the first
	// stage ramps from.
	Stages           []Stage
	StartRate        float64
	StartConcurrency int
	// Poisson makes open-loop arrivals a Poisson process at the scheduled
	// rate instead of evenly spaced.
	Poisson bool
	// Shard makes this run part i of n runs that together make the load the
	// rest of the Plan describes; the zero value is a whole run.
	Shard Shard
	// StartAt, if set, is the wall-clock time the schedule starts at, after
	// the connections are up: shards on many machines start together.
	StartAt time.Time

	valid        bool              // Validate has run and passed
	single       bool              // the one call of the flags
	whole        *WholeLoad        // a shard's whole run, before the division
	stagedOpen   bool              // stages of rates: open loop
	stagedClosed bool              // stages of concurrency: closed loop
	cumWeight    []float64         // cumulative call weights, for Pick
	names        map[string]string // how the user wrote each setting (Build); absent: its flag
}

// Validate checks p and fills in its defaults, once: a Plan already valid
// (built by Build, or validated before) is left as it is. stream tells
// whether the target is a stream (the id-reuse probe needs one).
func (p *Plan) Validate(stream bool) error {
	if p.valid {
		return nil
	}
	if err := p.validateStages(); err != nil {
		return err
	}
	if err := p.applyShard(); err != nil {
		return err
	}
	if err := p.validateLoad(); err != nil {
		return err
	}
	if p.Params != nil {
		var m wire.Message
		wire.Scan(p.Params, &m)
		t := wire.TrimSpace(p.Params)
		if m.Problems.Has(wire.ProblemInvalidJSON) || len(t) == 0 || (t[0] != '[' && t[0] != '{') {
			return fmt.Errorf("%s must be a JSON array or object (got %.40q)", p.Name(keyParams), p.Params)
		}
		// Newline framing cannot carry a line break inside a frame, so
		// pretty-printed params are compacted once here.
		var compact bytes.Buffer
		if err := json.Compact(&compact, p.Params); err != nil {
			return fmt.Errorf("%s: %w", p.Name(keyParams), err)
		}
		p.Params = compact.Bytes()
	}
	if err := p.validateCalls(stream); err != nil {
		return err
	}
	if p.NotifyEvery > 0 && !p.single {
		return errNotifyInMix
	}
	p.valid = true
	return nil
}

// validateLoad checks the steady load and the run's times.
func (p *Plan) validateLoad() error {
	switch {
	case p.Rate < 0:
		return fmt.Errorf("%s must not be negative (got %g)", p.Name(keyRate), p.Rate)
	case p.Rate > 0 && p.Concurrency > 0:
		return fmt.Errorf("%s (open loop) and %s (closed loop) exclude each other", p.Name(keyRate), p.Name(keyConcurrency))
	case p.Rate == 0 && p.Concurrency <= 0 && !p.stagedOpen:
		return fmt.Errorf("give %s R (open loop) or %s N (closed loop)", p.Name(keyRate), p.Name(keyConcurrency))
	case !(p.MaxRate >= 0) || math.IsInf(p.MaxRate, 1):
		return fmt.Errorf("%s must be a number of messages per second, 0 or more (got %g)", p.Name(keyMaxRate), p.MaxRate)
	case p.MaxRate > 0 && (p.Rate > 0 || p.stagedOpen):
		return fmt.Errorf("%s caps a closed loop (%s); an open loop (%s) sends at its intended times, which a token bucket does not keep",
			p.Name(keyMaxRate), p.Name(keyConcurrency), p.Name(keyRate))
	case p.Rate > 10_000_000:
		return fmt.Errorf("%s %g is above the supported 10,000,000 req/s", p.Name(keyRate), p.Rate)
	case p.Duration <= 0:
		return fmt.Errorf("%s must be positive (got %s)", p.Name(keyDuration), p.Duration)
	case p.Timeout <= 0:
		return fmt.Errorf("%s must be positive (got %s)", p.Name(keyTimeout), p.Timeout)
	case p.Drain < 0:
		return fmt.Errorf("%s must not be negative (got %s)", p.Name(keyDrain), p.Drain)
	case p.MaxInFlight < 1:
		return fmt.Errorf("%s must be at least 1 (got %d)", p.Name(keyMaxInFlight), p.MaxInFlight)
	case p.NotifyEvery < 0:
		return fmt.Errorf("%s must not be negative (got %d)", p.Name(keyNotifyEvery), p.NotifyEvery)
	case p.Batch < 0 || p.Batch > 100000:
		return fmt.Errorf("%s must be between 0 and 100000 (got %d)", p.Name(keyBatch), p.Batch)
	}
	return nil
}

// Steady makes p a steady open loop of rate messages a second for as long
// as it lasted (its stages' lengths, when it had stages and no Duration),
// whatever load it described: for runs that pace by settings of their own
// (--diff, a one-off call) but send p's calls. It keeps p's validity: a
// steady rate needs none of the checks a shaped load does, and a Plan must
// not be validated twice (a shard's load would be divided again).
func (p *Plan) Steady(rate float64) {
	if len(p.Stages) > 0 && p.Duration == 0 {
		for _, st := range p.Stages {
			p.Duration += st.Duration
		}
	}
	p.Rate, p.Concurrency, p.MaxRate, p.Stages = rate, 0, 0, nil
	p.StartRate, p.StartConcurrency = 0, 0
	p.stagedOpen, p.stagedClosed = false, false
}

// Pace is the steady load that stands for p's in a run that paces by its
// own rule (--diff): an open loop's rate (the average of its stages, when
// it has stages), or a closed loop's concurrency (the peak of its stages).
// The other is 0. p must be valid.
func (p *Plan) Pace() (rate float64, concurrency int) {
	switch {
	case p.stagedOpen:
		return NewSchedule(p).TargetRate(), 0
	case p.Rate > 0:
		return p.Rate, 0
	}
	return 0, p.Concurrency
}

// OpenEnded is the Duration of a run bounded by Requests alone: longer
// than any run, so the count ends it.
const OpenEnded = 100 * 365 * 24 * time.Hour

// Beyond reports whether the tick of sequence number seq is past
// Requests: it is not sent, and no later one is.
func (p *Plan) Beyond(seq uint64) bool { return p.Requests > 0 && seq > p.Requests }

// OwnRequests is how many of the first Requests ticks of the whole run
// this instance sends (all of them, or its shard's); 0 when Requests is 0.
func (p *Plan) OwnRequests() uint64 {
	s := p.Shard
	switch {
	case p.Requests == 0 || !s.Sharded():
		return p.Requests
	case p.Requests < uint64(s.Index):
		return 0
	}
	return (p.Requests-uint64(s.Index))/uint64(s.Count) + 1
}

// Single reports whether the run is the one call of the flags (Method),
// not a mix.
func (p *Plan) Single() bool { return p.single }

// OpenLoop reports whether the load is open loop: a steady rate or stages
// of rates (the schedule gives every arrival its time).
func (p *Plan) OpenLoop() bool { return p.Rate > 0 || p.stagedOpen }

// ClosedStages reports whether the load is stages of concurrency: a closed
// loop whose concurrency follows ConcurrencyAt.
func (p *Plan) ClosedStages() bool { return p.stagedClosed }

// MaxWeight is the largest number of requests one message of the mix
// carries: its largest batch, or 1.
func (p *Plan) MaxWeight() int {
	w := 1
	for _, c := range p.Calls {
		w = max(w, c.Batch)
	}
	return w
}
