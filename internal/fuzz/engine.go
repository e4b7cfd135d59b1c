package fuzz

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/ratecap"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// Bounds that need no setting.
const (
	recentInputs     = 64                    // inputs a failed canary may be blamed on
	recentBytes      = 16 << 20              // and their total size
	redialWait       = 50 * time.Millisecond // first wait before dialling again after a failed dial
	confirmTries     = 2                     // re-runs that must reproduce a finding at least once before it is one
	unconfirmedLimit = 3                     // candidates of one dedup key that may fail to reproduce before the key is ignored
	// windDownTimeouts × --timeout is how long past --duration the finding
	// in progress may take to be confirmed, minimized and followed by its
	// canary, dials included. What is cut short is written as far as it
	// got (a minimization marked incomplete); a confirmation cut short is
	// counted as unconfirmed. A child's shutdown (2 × --grace at most)
	// comes after. Without this bound a finding made at the end of a
	// 500 ms run against a child that never answers took its whole
	// minimization, every check a restart and a timeout.
	windDownTimeouts = 4
)

// windDown is how long past --duration the finding in progress may take:
// windDownTimeouts timeouts, and a hang's confirmation, each of its checks
// given hangPatience and a child's deathGrace.
func windDown(timeout time.Duration) time.Duration {
	return windDownTimeouts*timeout + confirmTries*(hangPatience(timeout)+deathGrace(timeout))
}

// EndBound is how long a run with --duration d and --timeout t may take,
// a child process's shutdown aside (2 × --grace at most): d, the canary's
// selection before it (canarySelectTimeouts × t, and a child's deathGrace)
// and the wind-down of the finding in progress after it (windDown).
// docs/fuzzing.md ("Limits") states it.
func EndBound(d, t time.Duration) time.Duration {
	return d + canarySelectTimeouts*t + deathGrace(t) + windDown(t)
}

// run is the state of one fuzzing run shared by its workers.
type run struct {
	cfg    *Config
	d      *dialer
	mut    *mutate.Mutator
	ops    []mutate.Op
	corpus *workCorpus
	tuples *tupleSet
	recent *recentRing
	agg    *stats.Aggregator
	canary *canaryProbe
	found  *findingSet
	pr     *profileRules
	// api holds the exchanges to the API's schemas (nil: no API known);
	// apiTurn picks the method of the next fresh call of it.
	api     *apiRules
	apiTurn atomic.Uint64
	// maxRate is Config.MaxRate's token bucket, shared by the workers (nil:
	// no cap).
	maxRate *rate.Limiter
	parent  context.Context // the caller's: interrupts end everything
	// bound is parent with the run's hard end: --duration, then
	// windDownTimeouts × --timeout for the finding in progress (confirming,
	// minimizing, its canary) and the dials it needs. Everything after the
	// main loop runs under it.
	bound context.Context
	start time.Time

	execs  atomic.Uint64
	checks atomic.Uint64                 // exchanges spent confirming, minimizing and on canaries
	hits   [check.NumRules]atomic.Uint64 // verdict.hits summed over every exchange judged
	// parseIDs is verdict.parseIDs summed over every exchange judged.
	parseIDs atomic.Uint64
	// minimizing is the time the run's minimizations took, summed over
	// workers (see minimizeShare).
	minimizing atomic.Int64
	// streak counts child processes in a row that could not be started,
	// or did not survive their handshake or a known-good request
	// (--max-restarts); crashRun counts fuzz inputs in a row that killed
	// the child, which is what makes the run check that it still survives
	// a known-good request (lifeCheck).
	streak   atomic.Int64
	crashRun atomic.Int64
	// lifeProbe is the known-good request without a canary: the first
	// canary candidate (empty when the seeds have no call).
	lifeProbe mutate.Case
	stopOnce  sync.Once
	stop      context.CancelFunc
	mu        sync.Mutex // guards reason, warnings, split and cov
	reason    string
	warnings  []string
	split     [numPhases]time.Duration // the workers' stopwatches, summed as each worker ends
	cov       []methodCov              // the workers' API coverage, summed as each worker ends

	// slots hold each worker's last input sent, the suspects of a server's
	// crash (server.go); serverGone is set once a network server rpcfuzz
	// did not start is gone, after which nothing more is blamed.
	slots      []inflightSlot
	serverGone atomic.Bool
}

// Run fuzzes cfg.Target until cfg.Duration or cfg.Execs is reached, the
// target is lost, or ctx ends (then Summary.Interrupted is set and what was
// found so far is written). Findings go to cfg.OutDir, one directory each,
// with summary.json and latency.json. The error is ErrUnreachable (wrapped)
// when the target could not be reached at all, or a configuration or
// output error; findings are not errors.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	seeds := cfg.Seeds
	if len(seeds) == 0 {
		seeds = shippedSeeds(string(cfg.Profile))
	}
	if len(seeds) == 0 {
		return nil, fmt.Errorf("fuzz: no seed inputs for profile %q", cfg.Profile)
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	r, err := newRun(ctx, &cfg, seeds)
	if err != nil {
		return nil, err
	}
	defer r.d.srv.close() // the server process started last, if any: on every way out
	if cfg.TLS.Insecure && (cfg.Target.Scheme == transport.HTTPS || cfg.Target.Scheme == transport.WSS) {
		r.warn("TLS certificate verification was off (--insecure)")
	}
	d := r.d
	first := r.newWorker(0)
	c, err := d.dial(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrUnreachable) {
			return nil, err // the server command's own error says it all
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrUnreachable, cfg.Target.URL, err)
	}
	first.c = c
	apiSeeds, err := r.setupAPI(ctx, first)
	if err != nil {
		first.closeConn()
		return nil, err
	}
	if len(apiSeeds) > 0 {
		// The API's calls join the corpus (to be mutated) and the
		// canary's candidates, ahead of the shipped seeds.
		seeds = append(apiSeeds, seeds...)
		r.corpus = newWorkCorpus(seeds, cfg.MaxCorpus, cfg.MaxCorpusBytes)
		r.mut = mutate.New(mutationEnv(&cfg, seeds, r.api))
	}
	r.selectCanary(ctx, first, seeds)
	if cands := canaryCandidates(seeds, cfg.Profile); len(cands) > 0 {
		r.lifeProbe = cands[0]
	}
	if ctx.Err() != nil {
		first.closeConn()
		return nil, ctx.Err()
	}
	// A fresh cap: the loop starts with one token, neither what choosing
	// the canary left nor what built up meanwhile.
	r.maxRate = ratecap.New(cfg.MaxRate)
	r.start = cfg.Now()
	loopCtx, stop := context.WithCancel(ctx)
	r.bound = ctx
	if cfg.Duration > 0 {
		stop() // replaced by the one with the deadline
		end := time.Now().Add(cfg.Duration)
		loopCtx, stop = context.WithDeadline(ctx, end)
		var cancel context.CancelFunc
		r.bound, cancel = context.WithDeadline(ctx, end.Add(windDown(cfg.Timeout)))
		defer cancel()
	}
	r.stop = stop
	defer stop()

	statusDone := make(chan struct{})
	statusStop := make(chan struct{})
	go r.status(statusStop, statusDone)
	var wg sync.WaitGroup
	for i := range cfg.Workers {
		w := first
		if i > 0 {
			w = r.newWorker(i)
		}
		wg.Go(func() { r.work(loopCtx, w) })
	}
	wg.Wait()
	close(statusStop)
	<-statusDone
	return r.finish()
}

// boundCtx is the run's hard end (bound), or the caller's context before
// the main loop starts.
func (r *run) boundCtx() context.Context {
	if r.bound == nil {
		return r.parent
	}
	return r.bound
}

// fatal stops the run for good: the target cannot be fuzzed any more.
func (r *run) fatal(reason string) {
	r.stopOnce.Do(func() {
		r.mu.Lock()
		r.reason = reason
		r.mu.Unlock()
		r.stop()
	})
}

func (r *run) warn(format string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.warnings) < 32 {
		r.warnings = append(r.warnings, fmt.Sprintf(format, a...))
	}
}

// status closes an interval of the latency series and reports progress
// every Interval.
func (r *run) status(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	lastExecs, lastAt := uint64(0), r.cfg.Now()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := r.cfg.Now()
		r.agg.TickWith(now.Sub(r.start).Seconds(), stats.Gauges{}, nil)
		if r.cfg.OnStatus == nil {
			continue
		}
		n := r.execs.Load()
		rate := 0.0
		if dt := now.Sub(lastAt).Seconds(); dt > 0 {
			rate = float64(n-lastExecs) / dt
		}
		lastExecs, lastAt = n, now
		r.cfg.OnStatus(Status{Elapsed: now.Sub(r.start), Execs: r.execCount(), ExecsPerS: rate, Tuples: r.tuples.len(),
			Corpus: r.corpus.len(), Findings: r.found.count(), Restarts: r.restarts()})
	}
}

// execCount is the number of inputs sent (the counter overshoots by the
// workers that found the bound reached).
func (r *run) execCount() uint64 {
	n := r.execs.Load()
	if r.cfg.Execs > 0 && n > r.cfg.Execs {
		n = r.cfg.Execs
	}
	return n
}

func (r *run) restarts() int64 {
	if r.cfg.Target.Scheme != transport.Stdio {
		return r.d.srv.restarts()
	}
	return max(0, r.d.children.Load()-int64(r.cfg.Workers))
}

// worker is one connection's fuzzing loop.
type worker struct {
	r     *run
	id    int
	ch    mutate.Chooser
	rec   *stats.Recorder
	c     conn
	lat   oracle.SlowRule // latencies of clean exchanges by input size, for slow_input
	since int             // inputs since the last canary
	last  result          // the last exchange, for replay's report
	alone bool            // the worker holds the server alone (holdServer)
	// apiRand draws the params of the API calls; cov counts them per
	// method (api.go).
	apiRand *rand.Rand
	cov     []methodCov
	sw      stopwatch // where the worker's time goes (started by work)
	// patient: the exchanges wait for replies to id null until the
	// timeout (awaitNullIDs): set while a null_id_unanswered finding is
	// checked.
	patient bool
	// patientAll: every reply is waited for until the timeout, set while
	// a missing reply is confirmed (a reply later than the grace on a
	// loaded machine made a false "no reply").
	patientAll bool
	// linger: after the replies an input waits for, the replies it may
	// still get (a refused notification's, a second reply) are waited
	// for until the server has been silent for the grace: set while a
	// finding is confirmed or replayed, whose verdict must not depend on
	// whether such a reply came before the wait ended.
	linger bool
	// patience, when longer than --timeout, is the exchanges' timeout:
	// set while a hang is confirmed (hangPatience).
	patience time.Duration
	// owed is the charge of the last input that ended its connection:
	// the restart its end makes the next input wait for is its cost too
	// (an input that crashes a child is cheap to send and dear to run),
	// and is added when the next input has measured it.
	owed struct {
		parent corpusPick
		cost   time.Duration
		set    bool
	}
}

func (r *run) newWorker(i int) *worker {
	return &worker{r: r, id: i, ch: mutate.NewRand(workerSeed(r.cfg.Seed, i)), rec: r.agg.NewRecorder(),
		lat:     oracle.SlowRule{Factor: r.cfg.SlowFactor, Floor: r.cfg.SlowFloor},
		apiRand: rand.New(rand.NewPCG(workerSeed(r.cfg.Seed, i), 0xa91))}
}

// workerSeed spreads the run's seed over workers (splitmix64 of seed+i), so
// worker 0 of a run with seed S draws what a one-worker run with seed S
// draws.
func workerSeed(seed uint64, i int) uint64 {
	if i == 0 {
		return seed
	}
	return Spread(seed, uint64(i))
}

// Spread is splitmix64 of seed + i·0x9e3779b97f4a7c15: a well-mixed 64-bit
// value that depends on seed and i alone, for drawing the i-th of many
// independent choices from one seed.
func Spread(seed, i uint64) uint64 {
	z := seed + i*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (w *worker) closeConn() {
	if w.c != nil {
		prev := w.sw.to(phaseRestart)
		w.c.close()
		w.c = nil
		w.sw.to(prev)
	}
}

// result is one exchange and its verdict.
type result struct {
	o     outcome
	v     verdict
	infos []frameInfo
	gen   uint64 // the server process's generation it went to (a server command)
}

// exec sends c on the worker's connection (dialled first if it is gone or
// fresh is set) and judges what came back.
func (w *worker) exec(ctx context.Context, c mutate.Case, fresh bool) result {
	defer w.r.shareServer(w)()
	if fresh {
		w.closeConn()
	}
	infos, lifecycle := inspect(c, w.r.pr)
	// An input with a handshake message of its own goes to a connection
	// without the profile's handshake: what the server sees before, after
	// and instead of initialize is the input's (the lifecycle is fuzzed).
	// Every other input goes to a connection the handshake opened.
	bare := lifecycle && w.r.cfg.Target.IsStream() && ownHandshake(c, w.r.pr)
	if bare {
		w.closeConn()
	}
	var o outcome
	if w.c == nil || !w.c.usable() {
		prev := w.sw.to(phaseRestart)
		w.closeConn()
		// Dial under the run's hard end only: the main loop's deadline
		// must not cut a dial short and pass for a dead server.
		bound := w.r.boundCtx()
		nc, err := w.r.d.dialWith(bound, !bare)
		for wait := redialWait; err != nil && wait <= 4*redialWait && bound.Err() == nil; wait *= 2 {
			// A refused connection may be a full accept queue, not a dead
			// server: try again a little later before calling it one.
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-bound.Done():
			}
			t.Stop()
			nc, err = w.r.d.dialWith(bound, !bare)
		}
		if err != nil {
			o.end, o.note = endUnreachable, err.Error()
			if errors.Is(err, ErrUnreachable) {
				w.r.fatal(err.Error()) // the server command could not be started again
				o.end = endInterrupted
			}
			if bound.Err() != nil {
				o.end = endInterrupted
			}
		}
		w.c = nc
		if ctx.Err() != nil {
			o.end = endInterrupted
		}
		w.sw.to(prev)
	}
	if w.c != nil && o.end == endNone && !w.r.paced(ctx) {
		o.end = endInterrupted
	}
	var gen uint64
	if w.c != nil && o.end == endNone {
		gen = w.r.sending(w, c, infos)
		wait := newWaitFor(c.Frames, infos)
		wait.patient = w.patientAll || w.patient && awaitNullIDs(c.Frames, infos)
		if !wait.patient {
			wait.slowNull = w.r.d.awaitSlowNull(c.Frames, infos)
		}
		wait.linger = w.linger
		w.sw.to(w.sw.exchange(phaseSend))
		o = w.c.exchange(ctx, c, wait, max(w.r.cfg.Timeout, w.patience))
		if o.written.IsZero() {
			w.sw.relabel(w.sw.exchange(phaseWait))
		} else {
			w.sw.toAt(w.sw.exchange(phaseWait), o.written)
		}
		if w.r.d.srv != nil {
			w.r.d.srv.settle(ctx, &o, gen, max(w.r.cfg.Timeout, w.patience)) // (waiting for a dying server's exit)
		}
		w.sw.to(w.sw.exchange(phaseJudge))
		if !w.c.usable() || lifecycle || w.r.reshapes(c) {
			w.closeConn() // the session the input started, ended or reshaped is not the next input's
		}
	}
	o.lifecycle = lifecycle
	v := judgeExchange(c, infos, &o, w.r.pr, w.r.api)
	w.r.parseIDs.Add(uint64(parseErrorIDs(infos, &o)))
	w.record(&o, &v)
	w.last = result{o: o, v: v, infos: infos, gen: gen}
	w.sw.to(w.sw.exchange(phaseOther))
	return w.last
}

// ownHandshake reports whether a frame of c is a message of the profile's
// handshake (profile.FuzzRules.Handshake). It reads only the frames'
// methods, so that the input alone decides, in the run, in its checks and
// in a replay of its finding.
func ownHandshake(c mutate.Case, pr *profileRules) bool {
	var m wire.Message
	for _, f := range c.Frames {
		wire.Scan(f, &m)
		if pr.Handshake(m.Method) {
			return true
		}
	}
	return false
}

// record feeds the latency histograms and counters of latency.json.
func (w *worker) record(o *outcome, v *verdict) {
	if o.end == endInterrupted || o.end == endReplaced {
		return
	}
	w.rec.Record(stats.Sample{Kind: stats.MessageSent})
	w.rec.Record(stats.Sample{Kind: stats.Sent})
	ns := o.latency.Nanoseconds()
	switch {
	case o.end == endTimeout:
		w.rec.Record(stats.Sample{Kind: stats.Timeout})
	case v.rules.Has(check.Crash), o.end == endUnreachable:
		w.rec.Record(stats.Sample{Kind: stats.TransportError})
	case v.rules != 0:
		w.rec.Record(stats.Sample{Kind: stats.InvalidReply, A: ns, B: ns})
	case v.code != 0 || anyError(o):
		w.rec.Record(stats.Sample{Kind: stats.RPCError, A: ns, B: ns, Code: firstCode(o)})
	default:
		w.rec.Record(stats.Sample{Kind: stats.OK, A: ns, B: ns})
	}
	if v.rules != 0 {
		// The rule the input is a finding of: a crash also leaves the
		// messages after it unanswered, which is not news.
		w.rec.Record(stats.Sample{Kind: stats.Violation, Rule: v.rule})
		for r, n := range v.hits {
			if n > 0 {
				w.r.hits[r].Add(uint64(n))
			}
		}
	}
}

func allReplies(o *outcome) [][]byte {
	if !o.perFrame {
		return o.replies
	}
	var out [][]byte
	for _, rs := range o.frameReplies {
		out = append(out, rs...)
	}
	return out
}

func anyError(o *outcome) bool { return firstCode(o) != 0 }

func firstCode(o *outcome) int64 {
	if !o.perFrame {
		for _, sc := range o.replyScans() {
			if sc.hasCode {
				return sc.code
			}
		}
		return 0
	}
	for i := range o.frameReplies {
		for _, sc := range o.frameScans(i) {
			if sc.hasCode {
				return sc.code
			}
		}
	}
	return 0
}

// paced waits for the MaxRate token of one exchange; false means ctx
// ended first. A token due after ctx's deadline is not waited for, but the
// deadline is: an interrupted exchange always means its context ended.
func (r *run) paced(ctx context.Context) bool {
	if r.maxRate == nil {
		return true
	}
	if r.maxRate.Wait(ctx) != nil {
		<-ctx.Done()
		return false
	}
	if r.cfg.sent != nil {
		r.cfg.sent(r.maxRate.Tokens())
	}
	return true
}

// work is a worker's loop: pick, mutate, send, judge, keep what is new.
func (r *run) work(ctx context.Context, w *worker) {
	w.sw.start(r.cfg.Now)
	defer func() {
		w.closeConn()
		w.sw.to(phaseOther)
		r.mu.Lock()
		for p, d := range w.sw.acc {
			r.split[p] += d
		}
		r.mergeCoverage(w.cov)
		r.mu.Unlock()
	}()
	for ctx.Err() == nil {
		n := r.execs.Add(1)
		if r.cfg.Execs > 0 && n > r.cfg.Execs {
			return
		}
		in, applied, parent, ok := r.next(ctx, w)
		if !ok {
			r.execs.Add(^uint64(0)) // no input after all
			return
		}
		began, restarted := r.cfg.Now(), w.sw.acc[phaseRestart]
		res := w.exec(ctx, in, false)
		if res.o.end == endInterrupted {
			return
		}
		cost := w.chargeRestart(began, restarted)
		w.slow(&res, in)
		w.cover(res.v.calls)
		r.noteEnd(w, &res)
		if r.tuples.add(res.v.tuples) && r.cfg.Feed == nil {
			r.corpus.add(w.ch, in, cost)
			r.mut.Reward(applied)
		}
		w.charge(parent, cost)
		if res.v.rules != 0 {
			r.finding(w, in, applied, &res, n)
		}
		r.recent.push(in)
		if every := r.cfg.CanaryEvery; every > 0 && r.canary != nil {
			if w.since++; w.since >= every {
				w.since = 0
				r.checkCanary(w)
			}
		}
	}
}

// next is the worker's next input: a mutation of a corpus input (parent,
// slot -1 for any other), or the next one of Config.Feed (ok false once it
// is closed, or ctx ends first).
func (r *run) next(ctx context.Context, w *worker) (in mutate.Case, applied []int, parent corpusPick, ok bool) {
	parent.slot = -1
	if r.cfg.Feed == nil {
		if r.api != nil && w.apiRand.Float64() < r.cfg.APIShare {
			if in, ok := r.apiInput(w); ok {
				return in, nil, parent, true
			}
		}
		parent = r.corpus.pick(w.ch)
		in, applied = r.mut.Mutate(w.ch, parent.c)
		return in, applied, parent, true
	}
	prev := w.sw.to(phaseOther)
	defer w.sw.to(prev)
	select {
	case in, ok = <-r.cfg.Feed:
		return in, nil, parent, ok
	case <-ctx.Done():
		return in, nil, parent, false
	}
}

// chargeRestart returns what the input just run cost by the run's clock
// since began, less the restart it began with (restarted: the restart
// time before it), which goes to the input that made it needed.
func (w *worker) chargeRestart(began time.Time, restarted time.Duration) time.Duration {
	restart := w.sw.acc[phaseRestart] - restarted
	if w.owed.set {
		w.owed.set = false
		w.r.corpus.charge(w.owed.parent, w.owed.cost+restart)
	}
	return max(0, w.r.cfg.Now().Sub(began)-restart)
}

// charge charges cost, what an input mutated from parent took, to
// parent; when the input ended its connection, the charge waits for the
// next input's restart (chargeRestart).
func (w *worker) charge(parent corpusPick, cost time.Duration) {
	if parent.slot < 0 {
		return
	}
	if w.c == nil || !w.c.usable() {
		w.owed.parent, w.owed.cost, w.owed.set = parent, cost, true
		return
	}
	w.r.corpus.charge(parent, cost)
}

// noteEnd keeps count, for a child process, of the fuzz inputs in a row
// that killed it and of the children in a row that could not be started
// (--max-restarts). Inputs that kill the child are findings, found once
// and counted after that: the run goes on, restarting the child, as long
// as a fresh child survives a known-good request (lifeCheck, after every
// MaxRestarts+1 such inputs in a row). Only children that cannot start, or
// die on a known-good request, MaxRestarts+1 times in a row stop it.
func (r *run) noteEnd(w *worker, res *result) {
	if r.cfg.Target.Scheme != transport.Stdio {
		return
	}
	switch {
	case res.o.end == endUnreachable:
		r.failedStart("could not be started, or did not survive its handshake")
	case res.v.rules.Has(check.Crash):
		if r.crashRun.Add(1) > int64(r.cfg.MaxRestarts) {
			r.crashRun.Store(0)
			r.lifeCheck(w)
		}
	case res.o.end == endNone:
		r.streak.Store(0)
		r.crashRun.Store(0)
	}
}

// failedStart counts a child that could not serve at all, and stops the
// run after MaxRestarts+1 in a row; it reports whether the run goes on.
func (r *run) failedStart(why string) bool {
	if n := r.streak.Add(1); n > int64(r.cfg.MaxRestarts) {
		r.fatal(fmt.Sprintf("the child process %s %d times in a row (--max-restarts %d)", why, n, r.cfg.MaxRestarts))
		return false
	}
	return true
}

// lifeCheck sends a known-good request (the canary, else the first seed
// call) to a fresh child until one survives it: a child that dies on it
// too cannot be fuzzed, since every input would only find that. Without
// any known-good request, the inputs that killed the child in a row count
// as children that did not survive.
func (r *run) lifeCheck(w *worker) {
	defer w.sw.end(w.sw.begin(phaseCanary))
	ctx := r.boundCtx()
	for ctx.Err() == nil {
		w.closeConn()
		var res result
		switch {
		case r.canary != nil:
			res = r.canaryOn(ctx, w, false).result
		case len(r.lifeProbe.Frames) > 0:
			res = w.exec(ctx, r.lifeProbe, false)
			r.checks.Add(1)
		default:
			r.fatal(fmt.Sprintf("the child process died at %d inputs in a row, and no seed call is known to be harmless (--max-restarts %d)",
				r.cfg.MaxRestarts+1, r.cfg.MaxRestarts))
			return
		}
		switch {
		case res.o.end == endInterrupted:
			return
		case !res.v.rules.Has(check.Crash):
			r.streak.Store(0) // it lives: what a wrong answer means is the canary's business
			return
		case !r.failedStart("died on a known-good request (" + r.probeMethod() + ")"):
			return
		}
	}
}

// probeMethod names lifeCheck's request.
func (r *run) probeMethod() string {
	c := r.lifeProbe
	if r.canary != nil {
		return r.canary.method
	}
	var m wire.Message
	wire.Scan(c.Frames[0], &m)
	name, _ := wire.Unquote(nil, m.Method)
	return string(name)
}

// minimizeShare caps the time a minimization may take to what is left of
// the run's share for minimizing: half of --duration per worker, summed
// over the workers' minimizations (no cap without --duration). A run is
// for finding: every new finding took its whole --minimize-time of the
// run's time (a language server whose exit on a parse error came out as 7
// findings got 25 inputs in a 60 s run). A finding past the share is
// written as found, marked incomplete; `rpcfuzz minimize` goes on.
func (r *run) minimizeShare(limit time.Duration) time.Duration {
	if r.cfg.Duration <= 0 {
		return limit
	}
	share := time.Duration(r.cfg.Workers) * r.cfg.Duration / 2
	return max(0, min(limit, share-time.Duration(r.minimizing.Load())))
}

// slow adds slow_input to a clean exchange of input c that took more than
// SlowFactor times the median latency of inputs its size (and more than
// SlowFloor): oracle.SlowRule.
func (w *worker) slow(res *result, c mutate.Case) {
	if res.o.end != endNone || res.v.rules.Has(check.Crash) || !w.lat.Judge(c, res.o.latency) {
		return
	}
	clean := res.v.rules == 0
	res.v.rules = res.v.rules.Add(check.SlowInput)
	if clean {
		rep := firstReply(&res.o)
		med, _ := w.lat.Median(oracle.InputSize(c))
		res.v.rule, res.v.shape, res.v.reply = check.SlowInput, replyShape(rep), rep
		res.v.code = firstCode(&res.o)
		res.v.note = fmt.Sprintf("answered in %s; the median of inputs this size is %s", res.o.latency.Round(time.Microsecond), med)
	}
}

func firstReply(o *outcome) []byte {
	rs := allReplies(o)
	if len(rs) == 0 {
		return nil
	}
	return rs[0]
}

// MutationFraming is the framing the mutation ops may break on target t:
// none for HTTP and message transports (WebSocket), else the stream's.
func MutationFraming(t transport.Target) mutate.Framing {
	switch {
	case !t.IsStream(), t.Framing == transport.Messages:
		return mutate.FramingNone
	case t.Framing == transport.ContentLength:
		return mutate.FramingContentLength
	}
	return mutate.FramingNewline
}
