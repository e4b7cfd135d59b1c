package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
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

// Validator checks a decoded JSON value (as encoding/json decodes into
// any, with json.Number for numbers); a JSON Schema compiled by
// santhosh-tekuri/jsonschema is one.
type Validator interface {
	Validate(v any) error
}

// Expect is what a call's replies must satisfy; the zero value expects
// nothing. A reply that breaks it is the rule expectation_failed.
type Expect struct {
	ResultEqualsParams bool      // the result equals the params sent, as JSON (key order and spacing ignored)
	Result             Validator // the result must validate
	ErrorCode          *int64    // the reply must be an error with this code
	ResultEquals       []byte    // the result must equal this JSON value
}

func (e Expect) any() bool {
	return e.ResultEqualsParams || e.Result != nil || e.ErrorCode != nil || e.ResultEquals != nil
}

// maxCalls bounds the mix (statistics keep a histogram set per call).
const maxCalls = 1000

// validateCalls checks the mix, or builds the one call of the flags.
func (c *Config) validateCalls() error {
	if len(c.Calls) == 0 {
		if c.Method == "" {
			return errors.New("--method must not be empty")
		}
		var params Template
		if c.Params != nil {
			params = StaticParams(c.Params)
		}
		c.Calls = []Call{{Name: c.Method, Method: c.Method, Params: params, Batch: c.Batch}}
		c.single = true
	}
	if len(c.Calls) > maxCalls {
		return fmt.Errorf("the mix has %d calls; at most %d", len(c.Calls), maxCalls)
	}
	names := map[string]bool{}
	timeouts := map[time.Duration]bool{}
	for i := range c.Calls {
		call := &c.Calls[i]
		if call.Name == "" {
			call.Name = call.Method
		}
		if call.Weight == 0 {
			call.Weight = 1
		}
		if call.Timeout == 0 {
			call.Timeout = c.Timeout
		}
		switch {
		case call.Method == "":
			return fmt.Errorf("call %d has no method", i+1)
		case names[call.Name]:
			return fmt.Errorf("two calls are named %q; names must be unique", call.Name)
		case call.Weight < 0 || call.Weight != call.Weight:
			return fmt.Errorf("call %q: weight must be positive", call.Name)
		case call.Batch < 0 || call.Batch > 100000:
			return fmt.Errorf("call %q: batch must be between 0 and 100000 (got %d)", call.Name, call.Batch)
		case call.Timeout < 0:
			return fmt.Errorf("call %q: timeout must be positive", call.Name)
		case call.Notify && call.Expect.any():
			return fmt.Errorf("call %q: a notification gets no reply to expect anything of", call.Name)
		case call.IDReuse && (call.Notify || call.Batch > 1 || call.Expect.any()):
			return fmt.Errorf("call %q: the id-reuse probe is a single request without expectations", call.Name)
		case call.IDReuse && !c.Target.IsStream():
			return fmt.Errorf("call %q: the id-reuse probe needs a stream target (over HTTP every request stands alone)", call.Name)
		case call.Batch > 1 && c.Concurrency > 0 && c.Concurrency < call.Batch:
			return fmt.Errorf("--concurrency %d cannot hold one batch of %d; it counts requests in flight", c.Concurrency, call.Batch)
		case call.Batch > 1 && c.MaxInFlight < call.Batch:
			return fmt.Errorf("--max-inflight %d cannot hold one batch of %d", c.MaxInFlight, call.Batch)
		}
		names[call.Name] = true
		timeouts[call.Timeout] = true
	}
	if len(timeouts) > pending.MaxClasses {
		return fmt.Errorf("the mix has %d different timeouts; at most %d", len(timeouts), pending.MaxClasses)
	}
	return nil
}

// callState is a call as the run sends it.
type callState struct {
	Call
	method   []byte // the method as a JSON string
	class    uint8  // timeout class in the pending tables
	weight   int    // elements per message: the batch size, or 1
	static   []byte // the params, when they never change (after the profile's rewrite)
	isStatic bool
}

// prepareCalls builds the calls' send-time state once the era is known:
// static params are rewritten by the profile once; timeouts get classes.
func (r *run) prepareCalls() error {
	var timeouts []time.Duration
	for _, c := range r.cfg.Calls {
		if !slices.Contains(timeouts, c.Timeout) {
			timeouts = append(timeouts, c.Timeout)
		}
	}
	sort.Slice(timeouts, func(i, j int) bool { return timeouts[i] < timeouts[j] })
	r.calls = make([]callState, len(r.cfg.Calls))
	for i, c := range r.cfg.Calls {
		s := &r.calls[i]
		s.Call = c
		s.method = wire.AppendString(nil, c.Method)
		s.class = uint8(slices.Index(timeouts, c.Timeout))
		r.timeouts[s.class] = int64(c.Timeout)
		s.weight = max(c.Batch, 1)
		switch p := c.Params.(type) {
		case nil:
			s.isStatic = true
		case StaticParams:
			s.static, s.isStatic = p, true
		}
		if s.isStatic {
			params, err := r.prof.Params(r.era, c.Method, s.static)
			if err != nil {
				return fmt.Errorf("call %q: params for the %s profile: %w", c.Name, r.prof.Name(), err)
			}
			s.static = params
		}
	}
	r.rewrites = r.prof.Name() == profile.MCP && r.era.Modern()
	total := 0.0
	r.cumWeight = make([]float64, len(r.calls))
	for i, c := range r.calls {
		total += c.Weight
		r.cumWeight[i] = total
	}
	return nil
}

// seeds for the two random streams of a call: one picks the call (in the
// dispatcher), the other generates its params (in the writer). Both depend
// only on --seed and the call's sequence number.
const (
	pickStream   = 0x9e3779b97f4a7c15
	paramsStream = 0xc2b2ae3d27d4eb4f
)

// pick returns the call for sequence number seq (the dispatcher's).
func (r *run) pick(seq uint64) uint16 { return r.pickWith(r.pickPCG, r.pickRand, seq) }

// pickWith is pick with the caller's own random stream: the writers that
// make their own ticks (closed loop over streams) pick in parallel.
func (r *run) pickWith(pcg *rand.PCG, rnd *rand.Rand, seq uint64) uint16 {
	if len(r.calls) == 1 {
		return 0
	}
	pcg.Seed(r.cfg.Seed^pickStream, seq)
	x := rnd.Float64() * r.cumWeight[len(r.cumWeight)-1]
	i, _ := slices.BinarySearch(r.cumWeight, x)
	return uint16(min(i, len(r.calls)-1))
}

// maxWeight is the largest number of elements one message carries.
func (r *run) maxWeight() int {
	w := 1
	for _, c := range r.calls {
		w = max(w, c.weight)
	}
	return w
}

// paramGen is one writer's generator of params, and what the run needs to
// know of the writer: when it last sent something.
type paramGen struct {
	pcg *rand.PCG
	rnd *rand.Rand
	buf []byte
	// pickPCG and pickRnd pick the calls of the ticks a writer makes itself.
	pickPCG *rand.PCG
	pickRnd *rand.Rand
	// lastSent is when this writer last took a call for the wire (run
	// clock); read once the writer has returned.
	lastSent int64
}

// newParamGen returns a writer's generator, known to the run so that the
// sending phase can end at the last message written, not at the last reply
// an HTTP worker waited for.
func (r *run) newParamGen() *paramGen {
	p, q := rand.NewPCG(0, 0), rand.NewPCG(0, 0)
	g := &paramGen{pcg: p, rnd: rand.New(p), buf: make([]byte, 0, 256), pickPCG: q, pickRnd: rand.New(q)}
	r.gensMu.Lock()
	r.gens = append(r.gens, g)
	r.gensMu.Unlock()
	return g
}

// lastSent is when the last message of the run was written (0 if none);
// call it after every writer has returned.
func (r *run) lastSent() int64 {
	r.gensMu.Lock()
	defer r.gensMu.Unlock()
	var last int64
	for _, g := range r.gens {
		last = max(last, g.lastSent)
	}
	return last
}

// params returns the params of call c for sequence number seq (valid until
// the next call), or ok=false when its template ran out of data.
func (r *run) callParams(g *paramGen, c *callState, seq uint64) (params []byte, ok bool, err error) {
	if c.isStatic {
		return c.static, true, nil
	}
	g.pcg.Seed(r.cfg.Seed^paramsStream, seq)
	g.buf, ok = c.Params.Append(g.buf[:0], g.rnd, seq)
	if !ok {
		return nil, false, nil
	}
	if !r.rewrites {
		return g.buf, true, nil
	}
	params, err = r.prof.Params(r.era, c.Method, g.buf)
	return params, err == nil, err
}
