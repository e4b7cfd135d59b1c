package fuzz

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// canaryProbe is the known-good request: a seed call whose correct answer
// (its kind and error code) was seen before any fuzz input. After every
// CanaryEvery inputs, and after each finding, it is sent on the worker's
// connection and on a fresh one; a wrong answer or none means an input
// poisoned the server.
type canaryProbe struct {
	c    mutate.Case
	kind wire.Kind
	code int64
	// method and params rebuild the call with an id of its own each time
	// it is sent (see withID).
	method string
	params []byte
	seq    atomic.Uint64
}

// canaryPrefix starts the ids of canary calls: one per call, in a
// namespace of the fuzzer's own, so that a late reply to an earlier input
// (or canary), which may carry any id the input had, is never taken for
// the canary's answer, and a server that refuses an id it saw before (as
// jrpc2 does after an error) is not blamed for it.
const canaryPrefix = `"rpcfuzz-canary-`

func newCanary(c mutate.Case, kind wire.Kind, code int64) *canaryProbe {
	var m wire.Message
	wire.Scan(c.Frames[0], &m)
	name, _ := wire.Unquote(nil, m.Method)
	return &canaryProbe{c: c, kind: kind, code: code, method: string(name), params: bytes.Clone(m.Params)}
}

// withID returns the canary call with a new id, and the id.
func (p *canaryProbe) withID() (mutate.Case, []byte) {
	id := strconv.AppendUint([]byte(canaryPrefix), p.seq.Add(1), 10)
	id = append(id, '"')
	return mutate.Case{Frames: [][]byte{appendCall(nil, id, p.method, p.params)}}, id
}

// maxCanaryTries bounds the seeds tried as canaries.
const maxCanaryTries = 8

// canaryCandidates are the seeds that are one call each, the profile's
// calls whose answers do not depend on state first (canaryMethods), in
// that order.
func canaryCandidates(seeds []mutate.Case, prof profile.Name) []mutate.Case {
	methods := canaryMethods(prof)
	ranked := make([][]mutate.Case, len(methods)+1)
	var m wire.Message
	for _, s := range seeds {
		if len(s.Frames) != 1 || s.Wire != nil || oracle.ClassifyRequest(s.Frames[0]) != oracle.Call {
			continue
		}
		wire.Scan(s.Frames[0], &m)
		name, _ := wire.Unquote(nil, m.Method)
		rank := slices.Index(methods, string(name))
		if rank < 0 {
			rank = len(methods)
		}
		ranked[rank] = append(ranked[rank], s)
	}
	out := slices.Concat(ranked...)
	return out[:min(len(out), maxCanaryTries)]
}

// canaryMethods are the calls a profile's server answers the same way
// whatever came before: an Ethereum node's chain id, block number and
// network version (it answers the generic echo with an error), an MCP
// server's ping and tool list; else echo and ping.
func canaryMethods(prof profile.Name) []string {
	switch prof {
	case profile.Eth:
		return []string{"eth_chainId", "eth_blockNumber", "net_version"}
	case profile.MCP:
		return []string{"ping", "tools/list"}
	}
	return []string{"echo", "ping", "eth_chainId"}
}

// canarySelectTimeouts bounds the selection of the canary to this many
// --timeout: a server that answers no seed call correctly made it try
// every candidate for a whole timeout each (3.3 s of a 500 ms run against
// a server that never answers).
const canarySelectTimeouts = 2

// selectCanary finds the canary on the first connection, before any fuzz
// input, within canarySelectTimeouts timeouts. Without one, canaries are
// off (a warning says so).
func (r *run) selectCanary(parent context.Context, w *worker, seeds []mutate.Case) {
	if r.cfg.CanaryEvery < 0 {
		return
	}
	ctx, cancel := context.WithTimeout(parent, canarySelectTimeouts*r.cfg.Timeout)
	defer cancel()
	var fallback *canaryProbe // the first call answered with an error
	for _, c := range canaryCandidates(seeds, r.cfg.Profile) {
		res := w.exec(ctx, c, false)
		r.checks.Add(1)
		if parent.Err() != nil {
			return
		}
		if ctx.Err() != nil {
			break
		}
		if kind, code, ok := cleanAnswer(&res); ok {
			p := newCanary(c, kind, code)
			// The call with an id of the fuzzer's must be answered the same.
			cc, id := p.withID()
			res = w.exec(ctx, cc, false)
			r.checks.Add(1)
			if kind2, code2, ok := canaryAnswer(&res, id); ok && kind2 == kind && code2 == code {
				if kind == wire.KindResult {
					r.canary = p
					return
				}
				// An error (a method the server does not have) proves less
				// than a result: another candidate may do better.
				if fallback == nil {
					fallback = p
				}
			}
		}
	}
	if fallback != nil {
		r.canary = fallback
		return
	}
	r.warn("no seed call got a correct reply before fuzzing; the canary is off")
}

// cleanAnswer reports whether an exchange of one call got exactly one
// correct reply, and its kind and error code.
func cleanAnswer(res *result) (wire.Kind, int64, bool) {
	reps := allReplies(&res.o)
	if res.o.end != endNone || res.v.rules != 0 || len(reps) != 1 {
		return 0, 0, false
	}
	var m wire.Message
	wire.Scan(reps[0], &m)
	if m.Kind != wire.KindResult && m.Kind != wire.KindError {
		return 0, 0, false
	}
	return m.Kind, m.Code, true
}

// canaryAnswer reports whether an exchange of the canary call with the
// given id got one correct reply carrying that id, and its kind and error
// code. Other replies are late ones to what was sent before (the canary's
// own id is new): they are not the canary's business.
func canaryAnswer(res *result, id []byte) (wire.Kind, int64, bool) {
	if res.o.end != endNone {
		return 0, 0, false
	}
	var m wire.Message
	var kind wire.Kind
	var code int64
	n := 0
	for _, rep := range allReplies(&res.o) {
		if wire.Scan(rep, &m); m.IDKind != wire.IDString || !bytes.Equal(m.ID, id) {
			continue
		}
		if n++; m.Kind != wire.KindResult && m.Kind != wire.KindError || check.Envelope(&m) != 0 {
			return 0, 0, false
		}
		kind, code = m.Kind, m.Code
	}
	return kind, code, n == 1
}

// canaryReply is the reply of a canary exchange to show: the one carrying
// the canary's id, else the first.
func canaryReply(res *result, id []byte) []byte {
	var m wire.Message
	reps := allReplies(&res.o)
	for _, rep := range reps {
		if wire.Scan(rep, &m); m.IDKind == wire.IDString && bytes.Equal(m.ID, id) {
			return rep
		}
	}
	if len(reps) > 0 {
		return reps[0]
	}
	return nil
}

// canaryResult is a canary exchange and the id its call carried.
type canaryResult struct {
	result
	id []byte
}

// tells reports whether a canary exchange says anything about the
// server: not when it was interrupted, nor when the server process it went
// to died of another worker's input and was replaced (on jrpc2 over TCP
// with eight workers, such a canary's silence was blamed on an input that
// its replays never showed poisoning anything).
func (res *canaryResult) tells() bool {
	return res.o.end != endInterrupted && res.o.end != endReplaced
}

func (p *canaryProbe) answered(res *canaryResult) bool {
	kind, code, ok := canaryAnswer(&res.result, res.id)
	return ok && kind == p.kind && code == p.code
}

// verdict names what a failed canary exchange shows: a crash stays a
// crash; anything else is canary_failed, keyed by the reply it got.
func (p *canaryProbe) verdict(res *canaryResult) verdict {
	if res.v.rules.Has(check.Crash) {
		v := res.v
		v.rules = check.Set(0).Add(check.Crash)
		return v
	}
	rep := canaryReply(&res.result, res.id)
	v := verdict{rule: check.CanaryFailed, rules: check.Set(0).Add(check.CanaryFailed), shape: replyShape(rep), reply: rep}
	var m wire.Message
	wire.Scan(rep, &m)
	v.code = m.Code
	switch {
	case rep == nil && res.o.end == endTimeout:
		v.note = "the canary got no reply within the timeout"
	case rep == nil:
		v.note = "the canary got no reply: " + res.o.end.String() + " " + res.o.note
	default:
		v.note = "the canary got a different answer: " + string(trimTo(rep, 200))
	}
	return v
}

// canaryOn sends the canary on the worker's connection, or on a connection
// of its own when fresh is set (closed after).
func (r *run) canaryOn(ctx context.Context, w *worker, fresh bool) *canaryResult {
	r.checks.Add(1)
	c, id := r.canary.withID()
	if !fresh {
		return &canaryResult{w.exec(ctx, c, false), id}
	}
	saved := w.c
	w.c = nil
	res := w.exec(ctx, c, false)
	w.closeConn()
	w.c = saved
	return &canaryResult{res, id}
}

// checkCanary sends the canary on the same connection and a fresh one (a
// child process has no other connection: only the same one).
func (r *run) checkCanary(w *worker) {
	if r.canary == nil {
		return
	}
	defer w.sw.end(w.sw.begin(phaseCanary))
	ctx := r.boundCtx()
	for _, fresh := range []bool{false, true} {
		if fresh && r.cfg.Target.Scheme == transport.Stdio {
			return
		}
		res := r.canaryOn(ctx, w, fresh)
		if !res.tells() {
			return
		}
		if !r.canary.answered(res) {
			r.canaryFailed(w, res)
			return
		}
	}
}

// serverClean reports whether the canary passes on a fresh connection (for
// a child process: a fresh process).
func (r *run) serverClean(ctx context.Context, w *worker) bool {
	if r.cfg.Target.Scheme == transport.Stdio {
		w.closeConn()
		return r.canary.answered(r.canaryOn(ctx, w, false))
	}
	return r.canary.answered(r.canaryOn(ctx, w, true))
}

// canaryReproducer checks that an input poisons a clean server: the canary
// passes on a fresh connection first (a fresh process for a child), then
// fails the same way after the input.
func (r *run) canaryReproducer(w *worker, key string, ev *evidence) func(ctx context.Context, c mutate.Case) bool {
	stdio := r.cfg.Target.Scheme == transport.Stdio
	return func(ctx context.Context, c mutate.Case) bool {
		if !stdio && !r.serverClean(ctx, w) {
			return false
		}
		res := w.exec(ctx, c, true)
		if res.o.end == endInterrupted || res.o.end == endReplaced {
			return false
		}
		for _, fresh := range []bool{false, true} {
			if fresh && stdio {
				break
			}
			cr := r.canaryOn(ctx, w, fresh)
			if !cr.tells() {
				return false
			}
			if r.canary.answered(cr) {
				continue
			}
			if v := r.canary.verdict(cr); dedupKey(v) == key {
				// The finding shows what this input did, not what the
				// canary saw when the blame search began.
				ev.v, ev.set = v, true
				return true
			}
		}
		return false
	}
}

// canaryFailed turns a failed canary into a finding: the input to blame is
// searched among the last inputs sent, newest first, each tried alone on a
// clean server. A network server that stays poisoned without any input is
// reported with the last input, unminimized, and the run stops: nothing it
// answers can be trusted any more.
func (r *run) canaryFailed(w *worker, res *canaryResult) {
	ctx := r.boundCtx()
	v := r.canary.verdict(res)
	key := dedupKey(v)
	id := findingID(v.rule, key)
	if r.found.hit(id) || r.cfg.Baseline[id] {
		if r.cfg.Baseline[id] {
			r.found.baselined(id, v.rule)
		}
		return
	}
	recent := r.recent.newestFirst()
	if len(recent) > 0 && r.gone(w, recent[0], &res.result) {
		return // the server died: no input is blamed for the canary
	}
	// The blame search holds the server alone: another worker's crash
	// during a check would silence the canary and blame the input checked.
	if release := r.holdServerAlone(w); release != nil {
		defer release()
	}
	stdio := r.cfg.Target.Scheme == transport.Stdio
	if !stdio && !r.serverClean(ctx, w) {
		if len(recent) == 0 {
			r.fatal("the server fails the canary and no input is left to blame")
			return
		}
		r.report(w, candidate{in: recent[0], v: v, key: key, id: id, execN: r.execCount(), confirmed: true, fromCanary: true,
			note: "the server stayed poisoned: the input was not isolated (the last one sent is kept, unminimized)"})
		r.fatal("the server stays poisoned (canary_failed on a fresh connection without any input)")
		return
	}
	ev := &evidence{}
	check := r.canaryReproducer(w, key, ev)
	for _, in := range recent {
		if ctx.Err() != nil {
			return
		}
		if check(ctx, in) {
			r.report(w, candidate{in: in, v: v, key: key, id: id, execN: r.execCount(), confirmed: true, fromCanary: true, check: check, evidence: ev})
			r.recent.reset()
			return
		}
	}
	r.found.unconfirmed(key)
	r.recent.reset()
}

func trimTo(b []byte, n int) []byte {
	if len(b) > n {
		return append(slices.Clip(b[:n]), "…"...)
	}
	return b
}
