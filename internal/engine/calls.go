package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
	"github.com/rpcload/rpcload/internal/workload"
)

// callState is a call as the run sends it.
type callState struct {
	workload.Call
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
		case workload.StaticParams:
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
	return nil
}

// paramGen is one writer's generator of params, and what the run needs to
// know of the writer: when it last sent something.
type paramGen struct {
	pcg *rand.PCG
	rnd *rand.Rand
	buf []byte
	// diverted holds the frame of a call Config.Divert takes.
	diverted []byte
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
	r.cfg.SeedParams(g.pcg, seq)
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
