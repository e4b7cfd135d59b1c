package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/ratecap"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/workload"
)

// tick is one scheduled call: its sequence number and when the schedule
// wanted it sent (nanoseconds on the run clock).
type tick struct {
	seq      uint64
	intended int64
	call     uint16 // index into run.calls
}

// run is the state shared by the goroutines of one run.
type run struct {
	cfg *Config
	// The run clock is base plus offset: readers start reading (handshakes)
	// before the schedule starts, and the clock is reset under them then,
	// so the offset is atomic. epoch is the same zero as a time.Time, for
	// the dispatcher (the only goroutine that reads it).
	base     time.Time
	offset   atomic.Int64
	epoch    time.Time
	agg      *stats.Aggregator
	diverted atomic.Uint64 // ticks taken off the load (Config.Divert)
	// warmEnd is the end of the warm-up (run clock; 0: none): requests
	// scheduled before it are counted apart (Config.Warmup).
	warmEnd int64
	ticks   chan tick
	tokens  chan struct{}      // closed loop over HTTP: one token per request allowed in flight
	rates   *workload.Schedule // open loop: the schedule, for the target rate of each interval
	retire  atomic.Int64       // closed-loop stages over HTTP: tokens to take out of the pool as they come back
	pool    int                // closed loop: tokens (or credits) made at the start
	limit   int                // closed loop: the most ever in flight (concurrency, capped by --max-inflight)
	// Closed loop over streams: each connection slot's writer makes its own
	// ticks from its part of the credits (credits.go), so there is no
	// dispatcher; closedK numbers their ticks across writers, and sendDone
	// tells them that sending has ended.
	pools    []*credits
	closedK  atomic.Uint64
	sendDone <-chan struct{}
	// maxRate is --max-rate's token bucket, one for all connections (nil:
	// no cap); closed-loop ticks wait on it under sending, which ends with
	// sendDone.
	maxRate  *rate.Limiter
	sending  context.Context
	inflight atomic.Int64
	maxSeen  atomic.Int64
	// ivMax is the most in flight since the interval began (ivMaxSwap).
	ivMax    atomic.Int64
	calls    []callState               // the mix, ready to send
	timeouts [pending.MaxClasses]int64 // by timeout class of the pending tables
	// unmatched is the stats method index of replies that matched no
	// request: the one after the calls.
	unmatched uint16
	pickPCG   *rand.PCG // the dispatcher's, reseeded per call
	pickRand  *rand.Rand
	rewrites  bool        // generated params pass through the profile (MCP's modern _meta)
	stopping  atomic.Bool // sending has ended; failures from closing are expected
	// cutoff is the run-clock time after which a tick still queued is not
	// sent (0: sending goes on): the end of the drain. A server that
	// answers slowly or never over HTTP would otherwise keep the run going
	// for queued ticks × --timeout / --conns after the schedule ended.
	cutoff atomic.Int64
	// interrupted is set when the run was interrupted: requests cut short
	// by that are leaked, not timed out.
	interrupted atomic.Bool
	// endSending stops the dispatcher early (a call's data ran out).
	endSending context.CancelFunc
	reuse      reuseCounts // the id-reuse probes
	gensMu     sync.Mutex  // guards gens
	gens       []*paramGen // every writer's

	mu     sync.Mutex // guards tables
	tables map[*pending.Table]tableOwner

	prof  profile.Profile
	era   profile.Era // mcp: EraAuto until the first connection detected it
	tools []string    // mcp with --tool: the tools the server listed
	// What the profile layer did, for the result's profile section.
	handshakes, answered, cancels, outboxDropped atomic.Int64
	// MCP over HTTP: notifications the server refused with an error status
	// (legal in Streamable HTTP), and how the first one was refused.
	notifyRefused       atomic.Int64
	notifyRefusedSample atomic.Value

	errMu      sync.Mutex // guards errSample, childExits and what ended the run early
	errSample  []string
	childExits []string
	lastStderr []string
	exitCount  int
	// ended is closed when sending must stop before its time (endEarly):
	// every child process exited without --restart, or the target
	// answers in a way this run cannot read. endWhy says why, for the
	// report; abort, when set, is why the run could not run against its
	// target after all (Run's error: exit 3).
	ended    chan struct{}
	endOnce  sync.Once
	endWhy   string
	abort    error
	earlyEnd string // the first child that exited within its first second: how, and its stderr

	connsOpened, connsLost atomic.Int64
	// abandoned counts the HTTP requests that timed out: their POST was
	// given up (connection closed, stream reset), so no late reply can ever
	// come, and the gauges count them as timed out and unanswered for good.
	abandoned atomic.Int64
	childMu   sync.Mutex // guards children
	children  map[transport.ChildStream]struct{}

	// --requests in closed loop over streams, where every writer makes its
	// own ticks: countLeft counts down the ticks this instance still owes,
	// and countDone is closed when none is left, which ends sending. nil
	// without --requests.
	countLeft atomic.Int64
	countDone chan struct{}
	// countEnded: the open loop stopped at --requests, before its schedule
	// spanned the duration.
	countEnded atomic.Bool
}

// now is the run clock: monotonic nanoseconds since the run began.
func (r *run) now() int64 { return int64(time.Since(r.base)) - r.offset.Load() }

// wallClock is the time.Time of run-clock time now, without reading the
// clock again.
func (r *run) wallClock(now int64) time.Time {
	return r.base.Add(time.Duration(now + r.offset.Load()))
}

// resetClock makes now the zero of the run clock.
func (r *run) resetClock() {
	t := time.Now()
	r.offset.Store(int64(t.Sub(r.base)))
	r.epoch = t
}

// warm reports whether a request scheduled at intended (run clock) belongs
// to the warm-up, whose samples are counted apart.
func (r *run) warm(intended int64) bool { return intended < r.warmEnd }

// release ends n elements in flight at time at (run clock): the in-flight
// count drops first, then the closed loop gets them back, as credits of
// pool (a stream slot's, which records at as when they came back) or as
// tokens of the dispatcher (pool nil).
func (r *run) release(pool *credits, n int, at int64) {
	r.inflight.Add(-int64(n))
	if pool != nil {
		pool.give(n, at)
		return
	}
	if r.tokens != nil {
		for range n {
			select {
			case r.tokens <- struct{}{}:
			default:
			}
		}
	}
}

// canceller tells a server that requests timed out (nil: no way to).
type canceller interface{ cancel([]pending.Entry) }

// tableOwner is what the sweeper needs to know of a table's connection: how
// to cancel on it, and the credits its ended requests go back to (nil: the
// run's tokens).
type tableOwner struct {
	c    canceller
	pool *credits
	// settles: the table's own worker ends every entry (an HTTP worker,
	// whose POST ends with its reply, an error or its timeout), so the
	// sweeper leaves it alone; the interval's gauges still read it.
	settles bool
}

func (r *run) addTable(t *pending.Table, c canceller, pool *credits) {
	r.mu.Lock()
	r.tables[t] = tableOwner{c: c, pool: pool}
	r.mu.Unlock()
}

// watchTable registers the table of an HTTP worker for the gauges only.
func (r *run) watchTable(t *pending.Table) {
	r.mu.Lock()
	r.tables[t] = tableOwner{settles: true}
	r.mu.Unlock()
}

func (r *run) removeTable(t *pending.Table) { r.mu.Lock(); delete(r.tables, t); r.mu.Unlock() }

// noteTransportError keeps a few distinct transport error messages for the report.
func (r *run) noteTransportError(err error) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	msg := err.Error()
	if len(r.errSample) >= 5 {
		return
	}
	for _, s := range r.errSample {
		if s == msg {
			return
		}
	}
	r.errSample = append(r.errSample, msg)
}

// streamOptions are the transport options of this run's streams.
func (r *run) streamOptions() transport.StreamOptions {
	return transport.StreamOptions{MaxFrame: r.cfg.MaxFrame, Header: r.cfg.Header, TLS: r.cfg.TLS, Child: r.cfg.Child}
}

// driver sends ticks over one kind of transport until ticks is closed.
type driver interface {
	// start connects; an error here means the target is unreachable.
	start(ctx context.Context) error
	// serve consumes ticks until the channel is closed and returns.
	serve()
	// interrupt cuts requests still in progress short after grace: the run
	// was interrupted and must end promptly.
	interrupt(grace time.Duration)
	// close tears down connections after the drain.
	close()
}

// Run executes one load run and returns what it measured. Cancelling ctx
// stops sending early; the result is still complete and marked interrupted.
// The error is non-nil only when the run could not run against its target
// (ErrUnreachable, ErrNoSuchTool, a plan the era refuses): most often it
// could not start, and the result is nil; when the target turned out
// unusable only once the run had started (a child process that exited
// before answering anything, replies this profile cannot read), the
// result of what was measured comes with the error.
func Run(ctx context.Context, cfg Config) (*stats.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Divert == nil && cfg.Malformed() {
		// (Checked here, not by Validate: the command sets Divert up
		// after the Config is validated.)
		return nil, errors.New("the mix has raw or mutated calls, which go to connections of their own (rpcload run sets them up): no Divert was given")
	}
	r := newRun(&cfg)
	r.tables = map[*pending.Table]tableOwner{}
	r.children = map[transport.ChildStream]struct{}{}
	r.makeLoop()
	var d driver
	switch {
	case cfg.Target.IsStream():
		d = &streamDriver{r: r}
	case r.prof.Name() == profile.MCP:
		d = newMCPHTTPDriver(r)
	default:
		d = newHTTPDriver(r)
	}
	startedAt := time.Now()
	r.base, r.epoch = startedAt, startedAt
	if err := d.start(ctx); err != nil {
		if errors.Is(err, ErrNoSuchTool) || errors.Is(err, ErrUnreachable) {
			return nil, err // it says what it is
		}
		r.errMu.Lock()
		hint := flagHint(r.lastStderr) // a child that exited at once
		r.errMu.Unlock()
		return nil, fmt.Errorf("%w: %s: %v%s", ErrUnreachable, cfg.Target.URL, err, hint)
	}
	// The era is known now: static params are rewritten for it once.
	if err := r.prepareCalls(); err != nil {
		d.close()
		return nil, err
	}
	var startLate time.Duration
	if !cfg.StartAt.IsZero() {
		startLate = time.Since(cfg.StartAt)
		switch err := waitStart(ctx.Done(), cfg.StartAt, time.Now); {
		case errors.Is(err, errStartCancelled):
			// Interrupted while waiting: the run starts and ends at once,
			// and reports as interrupted.
		case err != nil:
			d.close()
			return nil, err
		}
	}
	// The schedule starts once connections are up, so connecting does not
	// count as lag.
	r.resetClock()
	sendCtx, endSending := context.WithCancel(ctx)
	r.endSending = endSending
	go func() {
		select {
		case <-r.ended: // the run cannot go on: sending stops now
			endSending()
		case <-sendCtx.Done():
		}
	}()
	closedCtx, cancelClosed := context.WithTimeout(sendCtx, cfg.Duration)
	defer cancelClosed()
	r.sendDone, r.sending = closedCtx.Done(), closedCtx
	r.maxRate = ratecap.New(cfg.MaxRate) // made now: while connecting it would have filled up
	served := make(chan struct{})
	go func() { d.serve(); close(served) }()
	sweepDone := make(chan struct{})
	sweepStop := make(chan struct{})
	go func() { r.sweeper(sweepStop); close(sweepDone) }()
	sched := (*workload.Schedule)(nil)
	if cfg.OpenLoop() {
		sched = workload.NewSchedule(&cfg.Plan)
		r.rates = workload.NewSchedule(&cfg.Plan) // the interval ticker's copy: rateAt only
	}
	tickerStop := make(chan struct{})
	tickerDone := make(chan struct{})
	go func() { r.intervals(tickerStop); close(tickerDone) }()

	if sched != nil {
		// The schedule itself ends the open loop: every tick intended
		// before the duration is sent or dropped, however late.
		r.dispatchOpen(sendCtx, sched, r.agg.NewRecorder())
	} else {
		r.dispatchClosed(closedCtx)
		cancelClosed()
	}
	endSending()
	e := ending{r: r, d: d, ctx: ctx}
	e.start(sched, served)
	quiet := e.quiet()
	// Stop the readers before the final sweep, so no reply can race the
	// verdicts it hands out.
	r.stopping.Store(true)
	close(sweepStop)
	<-sweepDone
	d.close()
	r.finalSweep()
	close(tickerStop)
	<-tickerDone

	res, err := r.result(sched, e.interrupted, e.sendingEnded, e.drainEnded, startLate)
	if err != nil {
		return nil, err
	}
	res.Quiet = quiet
	if err := r.aborted(res); err != nil {
		return res, cannotRun(cfg.Target.URL, err)
	}
	return res, nil
}

// newRun is the state of a run of cfg (validated) before anything is
// connected: the aggregator with a method for each call, the profile, the
// dispatcher's random stream.
func newRun(cfg *Config) *run {
	names := make([]string, len(cfg.Calls))
	for i, c := range cfg.Calls {
		names[i] = c.Name
	}
	r := &run{cfg: cfg, agg: stats.NewAggregator(names), prof: cfg.Profile, unmatched: uint16(len(cfg.Calls)), pickPCG: rand.NewPCG(0, 0)}
	if cfg.Requests > 0 {
		r.countDone = make(chan struct{})
		if own := cfg.OwnRequests(); own > 0 {
			r.countLeft.Store(int64(own))
		} else {
			close(r.countDone) // a shard with none of them
		}
	}
	r.pickRand = rand.New(r.pickPCG)
	r.warmEnd = int64(cfg.Warmup)
	r.era = r.prof.Era()
	r.ended = make(chan struct{})
	return r
}

// makeLoop makes the channels of the load loop: the ticks, and in closed
// loop the token pool (over HTTP) and its size.
func (r *run) makeLoop() {
	cfg := r.cfg
	closed := !cfg.OpenLoop()
	if !closed || !cfg.Target.IsStream() {
		r.ticks = make(chan tick, min(cfg.MaxInFlight, 1<<16))
	} else {
		r.ticks = make(chan tick) // stream writers in closed loop make their own ticks
	}
	if !closed {
		return
	}
	n := min(cfg.Concurrency, cfg.MaxInFlight)
	r.limit, r.pool = n, n
	if cfg.ClosedStages() {
		r.pool = min(cfg.StartConcurrency, n) // the stages ramp from here
	}
	if !cfg.Target.IsStream() {
		r.tokens = make(chan struct{}, n)
		for range r.pool {
			r.tokens <- struct{}{}
		}
	}
}

// result assembles the run's result once everything has stopped: the
// sending phase ended at sendingEnded and the drain at drainEnded (run
// clock); sched is the open-loop schedule (nil in closed loop).
func (r *run) result(sched *workload.Schedule, interrupted bool, sendingEnded, drainEnded int64, startLate time.Duration) (*stats.Result, error) {
	res := &stats.Result{
		Tool: "rpcload", Target: r.cfg.Target.URL, StartedAt: r.epoch.UTC().Format(time.RFC3339Nano),
		DurationS: time.Duration(max(sendingEnded-r.warmEnd, 0)).Seconds(), DrainS: time.Duration(drainEnded - sendingEnded).Seconds(),
		InFlightMax: r.maxSeen.Load(), Interrupted: interrupted,
	}
	if err := r.agg.Fill(res); err != nil {
		return nil, err
	}
	if r.warmEnd > 0 {
		// The measured sending phase starts where the warm-up ends.
		res.Warmup = &stats.Warmup{DurationS: time.Duration(min(r.warmEnd, sendingEnded)).Seconds(), Requests: r.agg.WarmupRequests()}
	}
	res.Requests.Diverted = r.diverted.Load()
	if sched != nil {
		res.Rate.Target = sched.TargetRate()
		if d := float64(res.Requests.Diverted); d > 0 {
			// The load's own share of the schedule: what it was to send.
			res.Rate.Target *= 1 - d/(d+float64(res.Requests.Messages))
		}
	}
	res.SetAchieved()
	r.errMu.Lock()
	res.TransportErrorSamples = append([]string{}, r.errSample...)
	r.errMu.Unlock()
	res.Connections = stats.Connections{Opened: r.connsOpened.Load(), Lost: r.connsLost.Load()}
	res.Child = r.childReport()
	res.Profile = r.profileReport()
	res.IDReuse = r.reuseReport()
	res.Warnings = append(warnings(res), r.profileWarnings()...)
	if w := r.batchWarning(); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	res.Warnings = append(res.Warnings, errorReplyWarnings(res, r.cfg.Calls)...)
	r.errMu.Lock()
	res.EndedEarly = r.endWhy
	for _, w := range []string{r.endWhy, r.earlyEnd} {
		if w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	r.errMu.Unlock()
	if w := insecureWarning(r.cfg); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if startLate > time.Second {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the connections were up %s after --start-at; the schedule started then, not at --start-at", startLate.Round(time.Millisecond)))
	}
	if r.cfg.Shard.Sharded() {
		res.Shard = &stats.ShardInfo{Index: r.cfg.Shard.Index, Count: r.cfg.Shard.Count}
	}
	return res, nil
}

// dispatchOpen turns the schedule into ticks. The schedule gives the exact
// intended time of every arrival however late the dispatcher wakes up;
// ticks that are already due are released at once and keep their intended
// time, so lateness shows up as lag, never as a slower schedule.
func (r *run) dispatchOpen(ctx context.Context, sched *workload.Schedule, rec *stats.Recorder) {
	lockDispatcherThread()
	defer runtime.UnlockOSThread()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	maxIn := int64(r.cfg.MaxInFlight)
	var k uint64 // this instance's ticks so far
	for {
		intended, ok := sched.Next()
		if !ok {
			return
		}
		if !r.waitUntil(ctx, timer, intended) {
			return
		}
		k++
		seq := r.cfg.Shard.Seq(k)
		if r.cfg.Beyond(seq) {
			r.countEnded.Store(true)
			return // --requests: the count is sent
		}
		call := r.cfg.Pick(r.pickPCG, r.pickRand, seq)
		w := int64(r.calls[call].weight)
		if r.inflight.Load()+w > maxIn {
			for range w {
				rec.Record(stats.Sample{Kind: stats.Dropped, Method: call, Warmup: r.warm(intended)})
			}
			continue
		}
		r.admit(w)
		select {
		case r.ticks <- tick{seq: seq, intended: intended, call: call}:
		case <-ctx.Done():
			r.inflight.Add(-w)
			return
		}
	}
}

// timerSlack is how late Go timers can fire on Linux (the runtime's poller
// sleeps in whole milliseconds): the last part of every wait is slept with a
// precise OS sleep instead (see preciseSleep).
const timerSlack = 1500 * time.Microsecond

// waitUntil returns at the intended time (run clock), or false if ctx ends
// first. A Go timer alone wakes up to a millisecond late, which would show
// up as schedule lag at any rate above a few hundred requests per second;
// spinning instead would starve the goroutines that send and receive.
func (r *run) waitUntil(ctx context.Context, timer *time.Timer, intended int64) bool {
	wait := intended - r.now()
	if wait > int64(timerSlack) {
		timer.Reset(time.Duration(wait - int64(timerSlack)))
		select {
		case <-timer.C:
		case <-ctx.Done():
			return false
		}
		wait = intended - r.now()
	}
	if wait > 0 {
		preciseSleep(time.Duration(wait))
	}
	return ctx.Err() == nil
}

// pastCutoff reports whether sending has ended and the drain is over: a
// tick taken now is not sent.
func (r *run) pastCutoff() bool {
	c := r.cutoff.Load()
	return c > 0 && r.now() > c
}

// dropLate counts the elements of t as dropped (not sent: the run ended
// before a connection was free to send it) and releases them.
func (r *run) dropLate(rec *stats.Recorder, pool *credits, t tick) {
	w := r.calls[t.call].weight
	for range w {
		rec.Record(stats.Sample{Kind: stats.Dropped, Method: t.call, Warmup: r.warm(t.intended)})
	}
	r.release(pool, w, r.now())
}

// admit counts w more elements in flight and tracks the maximum. The
// dispatcher and, in closed loop over streams, every writer call it.
func (r *run) admit(w int64) {
	n := r.inflight.Add(w)
	raise(&r.maxSeen, n)
	raise(&r.ivMax, n)
}

// raise makes m at least n.
func raise(m *atomic.Int64, n int64) {
	for {
		v := m.Load()
		if n <= v || m.CompareAndSwap(v, n) {
			return
		}
	}
}

// ivMaxSwap returns the most in flight during the interval that ends and
// starts the next at what is in flight now: a gauge read at the interval's
// end misses a burst that came and went within it.
func (r *run) ivMaxSwap() int64 {
	m := r.ivMax.Swap(r.inflight.Load())
	raise(&r.ivMax, r.inflight.Load()) // an admit between the two loads
	return m
}

// dispatchClosed keeps Concurrency requests in flight: each resolution hands
// a token back, and each token (or, for a batch, one per element) becomes a
// tick whose intended time is the moment the last token came back. With
// stages, a controller adds tokens or retires returned ones to follow the
// target. Over streams the writers make the ticks from their credits, and
// this only moves the credits with the stages until sending ends.
func (r *run) dispatchClosed(ctx context.Context) {
	if r.pools != nil {
		if r.cfg.ClosedStages() {
			r.followStagesCredits(ctx)
		}
		select {
		case <-ctx.Done():
		case <-r.countDone: // --requests: the writers have taken the count (nil without: never)
		}
		return
	}
	if r.cfg.ClosedStages() {
		go r.followStages(ctx)
	}
	var k uint64 // this instance's ticks so far
	for {
		k++
		seq := r.cfg.Shard.Seq(k)
		if r.cfg.Beyond(seq) {
			return // --requests: the count is sent
		}
		call := r.cfg.Pick(r.pickPCG, r.pickRand, seq)
		w := r.calls[call].weight
		for k := 0; k < w; {
			select {
			case <-ctx.Done():
				for range k {
					r.tokens <- struct{}{}
				}
				return
			case <-r.tokens:
				if r.takeRetire() {
					continue // the target went down: this token leaves the pool
				}
				k++
			}
		}
		if r.maxRate != nil && r.maxRate.Wait(ctx) != nil {
			for range w {
				r.tokens <- struct{}{}
			}
			return // no token before sending ends
		}
		r.admit(int64(w))
		select {
		case r.ticks <- tick{seq: seq, intended: r.now(), call: call}:
		case <-ctx.Done():
			r.inflight.Add(-int64(w))
			for range w {
				r.tokens <- struct{}{}
			}
			return
		}
	}
}

// stageTick is how often the closed-loop controller follows the stages.
const stageTick = 10 * time.Millisecond

// followStages moves the token pool to the stages' target concurrency.
func (r *run) followStages(ctx context.Context) {
	t := time.NewTicker(stageTick)
	defer t.Stop()
	pool := r.pool
	for {
		target := min(workload.ConcurrencyAt(&r.cfg.Plan, time.Duration(r.now())), cap(r.tokens))
		for ; pool < target; pool++ {
			if r.takeRetire() {
				continue // a retirement not yet carried out is cancelled instead
			}
			select {
			case r.tokens <- struct{}{}:
			default: // cannot happen while the count is right; never block on it
			}
		}
		if pool > target {
			r.retire.Add(int64(pool - target))
			pool = target
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// followStagesCredits moves the stream slots' credits to the stages' target
// concurrency, split over the slots as at the start.
func (r *run) followStagesCredits(ctx context.Context) {
	t := time.NewTicker(stageTick)
	defer t.Stop()
	weight := r.cfg.MaxWeight()
	held := shares(r.pool, len(r.pools), weight)
	for {
		now := r.now()
		target := shares(min(workload.ConcurrencyAt(&r.cfg.Plan, time.Duration(now)), r.limit), len(r.pools), weight)
		for i, p := range r.pools {
			switch {
			case target[i] > held[i]:
				p.grant(target[i]-held[i], now)
			case target[i] < held[i]:
				p.revoke(held[i] - target[i])
			}
		}
		held = target
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// takeRetire takes one pending retirement, if there is one.
func (r *run) takeRetire() bool {
	for {
		v := r.retire.Load()
		if v <= 0 {
			return false
		}
		if r.retire.CompareAndSwap(v, v-1) {
			return true
		}
	}
}
