package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/rpcload/rpcload/internal/pending"
)

// Call is one entry of the mix: what to send, how often relative to the
// other calls, and what its reply must satisfy.
type Call struct {
	Name    string        // names its statistics; unique; default Method
	Method  string        // the JSON-RPC method
	Params  Template      // nil: no params
	Notify  bool          // send as a notification
	Batch   int           // send as batch arrays of this many; 0 or 1: alone
	Timeout time.Duration // 0: the run's
	Weight  float64       // relative frequency; 0 means 1
	Expect  Expect        // checked on every reply (requests only)
	// IDReuse makes the call the id-reuse probe: sent with the id of the
	// request in flight sent last on the connection (streams only).
	IDReuse bool
	// Raw, when set, is a frame sent exactly as it is instead of a
	// request of Method (a scenario's raw:): malformed traffic, sent on
	// connections of its own and judged by the fuzz oracle, apart from the
	// load (internal/malformed).
	Raw []byte
	// Mutate, when set, makes a share of this call's requests malformed
	// (a scenario's mutate:), as --mutate-fraction does for every call.
	Mutate *Mutation
}

// Mutation is a call's share of malformed traffic: which fraction of its
// requests go through which mutation ops (none named: every op the
// target's framing allows).
type Mutation struct {
	Fraction float64
	Ops      []string
}

// Malformed reports whether a call of the mix is raw or mutated: the run
// needs its malformed traffic set up (engine.Config.Divert).
func (p *Plan) Malformed() bool {
	return slices.ContainsFunc(p.Calls, func(c Call) bool { return c.Raw != nil || c.Mutate != nil })
}

// Template produces the params of one request: the JSON for the call with
// sequence number seq, every random choice drawn from r, which is seeded for
// this call alone. ok is false when its data ran out (a feeder read once):
// the run then stops sending.
type Template interface {
	Append(dst []byte, r *rand.Rand, seq uint64) (out []byte, ok bool)
}

// StaticParams is a Template whose params never change.
type StaticParams []byte

// Append appends the params.
func (p StaticParams) Append(dst []byte, _ *rand.Rand, _ uint64) ([]byte, bool) {
	return append(dst, p...), true
}

// maxCalls bounds the mix (statistics keep a histogram set per call).
const maxCalls = 1000

// validateCalls checks the mix, or builds the one call of the flags.
func (p *Plan) validateCalls(stream bool) error {
	if len(p.Calls) == 0 {
		if p.Method == "" {
			return fmt.Errorf("%s must not be empty", p.Name(keyMethod))
		}
		var params Template
		if p.Params != nil {
			params = StaticParams(p.Params)
		}
		p.Calls = []Call{{Name: p.Method, Method: p.Method, Params: params, Batch: p.Batch}}
		p.single = true
	}
	if len(p.Calls) > maxCalls {
		return fmt.Errorf("the mix has %d calls; at most %d", len(p.Calls), maxCalls)
	}
	names := map[string]bool{}
	timeouts := map[time.Duration]bool{}
	for i := range p.Calls {
		call := &p.Calls[i]
		if call.Name == "" {
			call.Name = call.Method
		}
		if call.Name == "" && call.Raw != nil {
			call.Name = fmt.Sprintf("raw%d", i+1)
		}
		if call.Weight == 0 {
			call.Weight = 1
		}
		if call.Timeout == 0 {
			call.Timeout = p.Timeout
		}
		if err := p.validateCall(i, call, names, stream); err != nil {
			return err
		}
		names[call.Name] = true
		timeouts[call.Timeout] = true
	}
	if len(timeouts) > pending.MaxClasses {
		return fmt.Errorf("the mix has %d different timeouts; at most %d", len(timeouts), pending.MaxClasses)
	}
	p.cumWeight = make([]float64, len(p.Calls))
	total := 0.0
	for i, c := range p.Calls {
		total += c.Weight
		p.cumWeight[i] = total
	}
	return nil
}

// validateCall checks call i of the mix against the others and the load.
func (p *Plan) validateCall(i int, call *Call, names map[string]bool, stream bool) error {
	switch {
	case call.Method == "" && call.Raw == nil:
		return fmt.Errorf("call %d has no method", i+1)
	case call.Raw != nil && (call.Method != "" || call.Params != nil || call.Notify || call.Batch > 1 || call.IDReuse || call.Expect.Any() || call.Mutate != nil):
		return fmt.Errorf("call %q: a raw frame is sent as it is: no method, params, notify, batch, id_reuse, expect or mutate", call.Name)
	case call.Raw != nil && len(call.Raw) == 0:
		return fmt.Errorf("call %q: the raw frame is empty", call.Name)
	case call.Mutate != nil && !(call.Mutate.Fraction > 0 && call.Mutate.Fraction <= 1):
		return fmt.Errorf("call %q: mutate.fraction must be above 0 and at most 1 (got %g)", call.Name, call.Mutate.Fraction)
	case call.Mutate != nil && (call.IDReuse || call.Batch > 1):
		return fmt.Errorf("call %q: mutate takes single requests and notifications, not the id-reuse probe or batches", call.Name)
	case names[call.Name]:
		return fmt.Errorf("two calls are named %q; names must be unique", call.Name)
	case call.Weight < 0 || call.Weight != call.Weight:
		return fmt.Errorf("call %q: weight must be positive", call.Name)
	case call.Batch < 0 || call.Batch > 100000:
		return fmt.Errorf("call %q: batch must be between 0 and 100000 (got %d)", call.Name, call.Batch)
	case call.Timeout < 0:
		return fmt.Errorf("call %q: timeout must be positive", call.Name)
	case call.Notify && call.Expect.Any():
		return fmt.Errorf("call %q: a notification gets no reply to expect anything of", call.Name)
	case call.IDReuse && (call.Notify || call.Batch > 1 || call.Expect.Any()):
		return fmt.Errorf("call %q: the id-reuse probe is a single request without expectations", call.Name)
	case call.IDReuse && !stream:
		return fmt.Errorf("call %q: the id-reuse probe needs a stream target (over HTTP every request stands alone)", call.Name)
	case call.Batch > 1 && p.Concurrency > 0 && p.Concurrency < call.Batch:
		return fmt.Errorf("%s %d cannot hold one batch of %d; it counts requests in flight", p.Name(keyConcurrency), p.Concurrency, call.Batch)
	case call.Batch > 1 && p.MaxInFlight < call.Batch:
		return fmt.Errorf("%s %d cannot hold one batch of %d", p.Name(keyMaxInFlight), p.MaxInFlight, call.Batch)
	}
	return nil
}

// Seeds of the two random streams of a call: one picks the call (where the
// tick is made), the other generates its params (in the writer). Both
// depend only on the plan's seed and the call's sequence number, so what is
// sent never depends on which goroutine sends it.
const (
	pickStream   = 0x9e3779b97f4a7c15
	paramsStream = 0xc2b2ae3d27d4eb4f
)

// Pick returns the index of the call for sequence number seq, drawn from
// the caller's own random stream (pcg, and rnd reading it): several
// goroutines pick in parallel, each with its own.
func (p *Plan) Pick(pcg *rand.PCG, rnd *rand.Rand, seq uint64) uint16 {
	if len(p.cumWeight) <= 1 {
		return 0
	}
	pcg.Seed(p.Seed^pickStream, seq)
	x := rnd.Float64() * p.cumWeight[len(p.cumWeight)-1]
	i, _ := slices.BinarySearch(p.cumWeight, x)
	return uint16(min(i, len(p.Calls)-1))
}

// SeedParams seeds pcg for generating the params of the call with sequence
// number seq (the elements of a batch draw on from it).
func (p *Plan) SeedParams(pcg *rand.PCG, seq uint64) { pcg.Seed(p.Seed^paramsStream, seq) }

// Notification reports whether the element with sequence number seq of
// call c is sent as a notification: every element of a notify call, or
// every NotifyEvery'th element of the one call of Method.
func (p *Plan) Notification(c *Call, seq uint64) bool {
	return c.Notify || (p.NotifyEvery > 0 && seq%uint64(p.NotifyEvery) == 0)
}

// Batches reports whether any call is sent as batches.
func (p *Plan) Batches() bool {
	for _, call := range p.Calls {
		if call.Batch > 1 {
			return true
		}
	}
	return p.Batch > 1
}

var errNotifyInMix = errors.New("--notify-every applies to --method; in a mix, give the call notify: true")
