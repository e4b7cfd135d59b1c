package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/workload"
)

// sweepEvery is how often the sweeper looks for timed-out entries; a timeout
// is therefore detected at most this late (or Timeout/20 for short timeouts).
const sweepEvery = 20 * time.Millisecond

func (r *run) sweepInterval() time.Duration {
	return max(time.Millisecond, min(sweepEvery, r.cfg.Timeout/20))
}

// sweeper times out entries whose deadline has passed, in every table.
func (r *run) sweeper(stop <-chan struct{}) {
	rec := r.agg.NewRecorder()
	t := time.NewTicker(r.sweepInterval())
	defer t.Stop()
	var buf []pending.Entry
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		buf = r.sweepAll(rec, buf)
	}
}

func (r *run) sweepAll(rec *stats.Recorder, buf []pending.Entry) []pending.Entry {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for tb, o := range r.tables {
		if o.settles {
			continue
		}
		buf = tb.Sweep(now, buf[:0])
		for i := range buf {
			rec.Record(stats.Sample{Kind: stats.Timeout, Method: buf[i].Method, Warmup: r.warm(buf[i].Intended)})
		}
		if len(buf) > 0 {
			r.releaseWaking(o.pool, len(buf), now)
		}
		if o.c != nil && len(buf) > 0 && !r.stopping.Load() {
			o.c.cancel(buf)
		}
	}
	return buf
}

// finalSweep ends the run's bookkeeping: entries past their deadline are
// timeouts, the rest were never answered within the drain and are leaked.
func (r *run) finalSweep() {
	rec := r.agg.NewRecorder()
	buf := r.sweepAll(rec, nil)
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	for tb, o := range r.tables {
		if o.settles {
			continue
		}
		buf = tb.Leak(buf[:0])
		for i := range buf {
			rec.Record(stats.Sample{Kind: stats.Leaked, Method: buf[i].Method, Warmup: r.warm(buf[i].Intended)})
		}
		if len(buf) > 0 {
			r.releaseWaking(o.pool, len(buf), now)
		}
	}
}

// waitDrain waits until nothing is in flight and every request that timed
// out has had its late reply, or until the drain time d is up. It reports
// true if stop came first (nil: nothing stops it).
func (r *run) waitDrain(stop <-chan struct{}, d time.Duration) bool {
	deadline := time.Now().Add(d)
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for (r.inflight.Load() > 0 || r.awaitingLate()) && time.Now().Before(deadline) {
		select {
		case <-t.C:
		case <-stop:
			return true
		}
	}
	return false
}

func (r *run) awaitingLate() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for tb, o := range r.tables {
		if !o.settles && tb.TimedOut() > 0 {
			return true
		}
	}
	return false
}

// statusEvery is how often OnStatus sees the interval in progress.
const statusEvery = time.Second

// intervals closes one time-series interval per cfg.Interval, and between
// closes shows the interval so far to OnStatus once a second.
func (r *run) intervals(stop <-chan struct{}) {
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	var status <-chan time.Time
	if r.cfg.OnStatus != nil && r.cfg.Interval > statusEvery {
		st := time.NewTicker(statusEvery)
		defer st.Stop()
		status = st.C
	}
	var total uint64
	var prev time.Duration
	var hists *stats.IntervalHists
	if r.cfg.IntervalHists {
		hists = stats.NewIntervalHists()
	}
	for {
		last := false
		select {
		case <-stop:
			last = true
		case <-t.C:
		case <-status:
			now := r.now()
			g := r.gauges(now)
			g.InFlightMax = r.ivMax.Load()
			p := r.agg.Peek(time.Duration(now).Seconds(), g)
			elapsed := time.Duration(now)
			r.cfg.OnStatus(Interval{
				Elapsed: elapsed, Length: elapsed - prev, Sent: p.Sent, Answered: p.Answered,
				Errors: p.RPCErrors + p.TransportErrors + p.Timeouts, InFlight: p.InFlight, P99us: p.P99us,
				TotalSent: total + p.Sent, Point: p, MethodHists: r.agg.MethodHists,
			})
			continue
		}
		// The server is read first: its gauges then go with the counts
		// of the interval they close, however long the read took.
		var server map[string]float64
		var failed uint64
		if r.cfg.ReadServer != nil {
			server, failed = r.cfg.ReadServer(context.Background())
		}
		now := r.now()
		g := r.gauges(now)
		g.InFlightMax = r.ivMaxSwap()
		g.Server, g.ServerReadFailures = server, failed
		p := r.agg.TickWith(time.Duration(now).Seconds(), g, hists)
		r.report(p, hists, &total, &prev)
		if last {
			return
		}
	}
}

// gauges reads the figures of an interval that are states, not counts,
// from every table: the streams' and the HTTP workers'.
func (r *run) gauges(now int64) stats.Gauges {
	child := r.childProc()
	g := stats.Gauges{InFlight: r.inflight.Load(), ChildRSS: child.RSSBytes, ChildThreads: child.Threads, ChildOpenFDs: child.OpenFDs,
		TimedOutUnanswered: r.abandoned.Load()}
	if r.rates != nil {
		g.TargetRate = r.rates.RateAt(time.Duration(now).Seconds())
	}
	r.mu.Lock()
	oldest, found := int64(0), false
	for tb := range r.tables {
		if sent, ok := tb.OldestSent(); ok && (!found || sent < oldest) {
			oldest, found = sent, true
		}
		g.TimedOutUnanswered += int64(tb.TimedOut())
	}
	r.mu.Unlock()
	if found && now > oldest {
		g.OldestPendingUs = (now - oldest) / 1000
	}
	return g
}

func (r *run) report(p stats.Point, hists *stats.IntervalHists, total *uint64, prev *time.Duration) {
	*total += p.Sent
	elapsed := time.Duration(p.T * float64(time.Second))
	length := elapsed - *prev
	*prev = elapsed
	if r.cfg.OnInterval != nil {
		r.cfg.OnInterval(Interval{
			Elapsed: elapsed, Length: length, Sent: p.Sent, Answered: p.Answered,
			Errors: p.RPCErrors + p.TransportErrors + p.Timeouts, InFlight: p.InFlight, P99us: p.P99us, TotalSent: *total,
			Point: p, Hists: hists, MethodHists: r.agg.MethodHists,
		})
	}
}

// warnings says plainly when the numbers need a second look.
func warnings(res *stats.Result) []string {
	w := []string{}
	if lag := res.Latency.Lag.P99us; lag > 1000 {
		w = append(w, fmt.Sprintf("the generator fell behind its schedule: lag p99 is %s (over 1 ms); corrected latency includes that wait, service time does not", fmtUs(lag)))
	}
	if d := res.Requests.Dropped; d > 0 {
		w = append(w, fmt.Sprintf("%d scheduled requests were dropped: --max-inflight was reached (the server could not keep up with --rate, or --max-inflight is too low), they were still queued for a connection when the drain ended, or their child process had exited (without --restart)", d))
	}
	if res.Rate.Target > 0 && res.Rate.Achieved < 0.99*res.Rate.Target && !res.Interrupted {
		unit := stats.RateUnit(res.Requests.Messages, res.Requests.Batches)
		w = append(w, fmt.Sprintf("achieved rate %.1f %s is below 99%% of the target %.1f %s", res.Rate.Achieved, unit, res.Rate.Target, unit))
	}
	if res.ClampedValues > 0 {
		w = append(w, fmt.Sprintf("%d latency values above one hour were recorded as one hour", res.ClampedValues))
	}
	if res.Interrupted {
		w = append(w, "the run was interrupted; figures cover the time until the interrupt")
	}
	return w
}

// errorReplyWarnings names each call every reply of which was a JSON-RPC
// error, with the code most of them carried and its message: a misspelled
// method or wrong params would otherwise pass unnoticed (error replies are
// answers, not findings; --max-error-rate fails a run on them).
func errorReplyWarnings(res *stats.Result, calls []workload.Call) []string {
	var w []string
	for _, c := range calls {
		m, ok := res.Methods[c.Name]
		if !ok || m.Requests.Answered == 0 || m.Requests.RPCErrors != m.Requests.Answered {
			continue
		}
		top := ""
		for _, code := range stats.SortedKeys(m.ErrorCodes) {
			if top == "" || m.ErrorCodes[code] > m.ErrorCodes[top] {
				top = code
			}
		}
		name := c.Method
		if c.Name != c.Method {
			name = fmt.Sprintf("%s (method %s)", c.Name, c.Method)
		}
		msg := ""
		if ms := res.ErrorMessages[top]; len(ms) > 0 {
			msg = fmt.Sprintf(" %q", stats.OneLine(ms[0], 120))
		}
		how, codes := ":", ""
		if len(m.ErrorCodes) > 1 {
			how, codes = ", most often", fmt.Sprintf("; %d codes in all", len(m.ErrorCodes))
		}
		w = append(w, fmt.Sprintf("every reply to %s was an error%s %s%s (%d of %d replies%s): check the method name and params; --max-error-rate fails such a run",
			name, how, top, msg, m.ErrorCodes[top], m.Requests.Answered, codes))
	}
	return w
}

// insecureWarning is the report's warning when --insecure turned off the
// verification of a TLS target's certificate; "" otherwise.
func insecureWarning(cfg *Config) string {
	if !cfg.TLS.Insecure {
		return ""
	}
	switch cfg.Target.Scheme {
	case transport.HTTPS, transport.WSS:
		return "--insecure: the server's TLS certificate was not verified; anyone on the path could have answered in its place"
	}
	return ""
}

func fmtUs(us int64) string { return (time.Duration(us) * time.Microsecond).String() }

// ending is the end of a run: the queue sent, the drain, and an interrupt
// at any point of them. A signal is watched until the drain is over, so
// one that comes while the run waits for its last replies cuts the wait to
// InterruptDrain as it would have cut the sending.
type ending struct {
	r   *run
	d   driver
	ctx context.Context
	// What the result needs (run clock): when sending and the drain ended,
	// and whether the run was interrupted.
	sendingEnded, drainEnded int64
	interrupted              bool
}

// start ends the run once sending has stopped: the queue goes out (or is
// dropped at the cutoff) and the drain waits for the replies.
func (e *ending) start(sched *workload.Schedule, served <-chan struct{}) {
	r, cfg := e.r, e.r.cfg
	r.cutoff.Store(r.now() + int64(cfg.Drain))
	ended := false
	select {
	case <-r.ended:
		// The run cannot go on (endEarly): what is still queued is
		// dropped, and no reply is waited for.
		ended = true
		r.cutoff.Store(r.now())
	default:
	}
	if e.ctx.Err() != nil {
		e.interrupt()
	} else if n := r.inflight.Load(); n > 0 && cfg.Drain > 0 && cfg.OnDrain != nil && !ended {
		cfg.OnDrain(n, cfg.Drain)
	}
	close(r.ticks)
	// An HTTP worker returns only after its last reply, which belongs to
	// the drain: a signal may come while it waits.
	select {
	case <-served:
	case <-e.ctx.Done():
		e.interrupt()
		<-served
	}
	// The sending phase ends with the last message written.
	e.sendingEnded = r.now()
	if last := r.lastSent(); last > 0 && last < e.sendingEnded {
		e.sendingEnded = last
		if sched != nil && !e.interrupted && !r.countEnded.Load() {
			// An open-loop schedule spans its whole duration, its last
			// tick one interval before the end.
			e.sendingEnded = max(e.sendingEnded, min(int64(cfg.Duration), r.now()))
		}
	}
	if e.interrupted {
		e.cut() // interrupted while the queue was sent: the drain is cut short
	}
	// The drain ends at the cutoff: the HTTP workers may have spent part
	// of it on the queue.
	if !e.interrupted && (r.waitDrain(e.ctx.Done(), time.Duration(max(0, r.cutoff.Load()-r.now()))) || e.ctx.Err() != nil) {
		e.interrupt()
		e.cut()
	}
	if e.interrupted {
		r.waitDrain(nil, time.Duration(max(0, r.cutoff.Load()-r.now())))
	}
	e.drainEnded = r.now()
}

// quiet is the quiet phase (Config.Quiet): once the drain has ended, the
// run sends nothing for the phase's length while its connections (and
// children) stay up and the intervals go on closing, so the series shows
// what the server's gauges do when the load is gone. An interrupt ends it
// early. It returns the phase, or nil when the run has none.
func (e *ending) quiet() *stats.QuietPhase {
	r, d := e.r, e.r.cfg.Quiet
	r.errMu.Lock()
	ended := r.endWhy != ""
	r.errMu.Unlock()
	if d <= 0 || e.interrupted || ended || e.ctx.Err() != nil {
		return nil
	}
	if r.cfg.OnQuiet != nil {
		r.cfg.OnQuiet(d)
	}
	start := r.now()
	t := time.NewTimer(d)
	defer t.Stop()
	q := &stats.QuietPhase{StartS: time.Duration(start).Seconds()}
	select {
	case <-t.C:
	case <-e.ctx.Done():
		q.Cut = true
	}
	q.DurationS = time.Duration(r.now() - start).Seconds()
	return q
}

// interrupt marks the run interrupted and cuts what is in progress short
// after InterruptDrain; it acts once.
func (e *ending) interrupt() {
	if e.interrupted {
		return
	}
	e.interrupted = true
	e.r.interrupted.Store(true)
	e.d.interrupt(e.r.cfg.InterruptDrain)
	e.cut()
}

// cut brings the cutoff to InterruptDrain from now if that is sooner.
func (e *ending) cut() {
	if c := e.r.now() + int64(e.r.cfg.InterruptDrain); c < e.r.cutoff.Load() {
		e.r.cutoff.Store(c)
	}
}
