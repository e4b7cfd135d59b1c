package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// httpDriver runs workers that each POST one message at a time and read its
// reply in the same goroutine; each worker's pending table still checks the
// reply's ids. Over HTTP/1.1 a worker owns one keep-alive connection (so
// --conns workers); over HTTP/2 the workers share a client that multiplexes
// them onto few connections.
type httpDriver struct {
	r    *run
	opts transport.H1Options
	h2   *transport.H2Client // nil for HTTP/1.1

	// stop ends HTTP/2 requests in progress when the run is interrupted;
	// for HTTP/1.1, interrupt shortens the deadline of the live connections.
	stop    context.Context
	stopNow context.CancelFunc
	mu      sync.Mutex // guards live
	live    map[*transport.H1Conn]struct{}
}

func newHTTPDriver(r *run) *httpDriver {
	d := &httpDriver{r: r, opts: transport.H1Options{
		URL: r.cfg.Target.URL, Header: r.cfg.Header, MaxBody: r.cfg.MaxFrame, TLS: r.cfg.TLS, Dials: &r.connsOpened,
	}, live: map[*transport.H1Conn]struct{}{}}
	d.stop, d.stopNow = context.WithCancel(context.Background())
	if r.cfg.HTTP2 {
		d.h2 = transport.NewH2(d.opts)
	}
	return d
}

// start checks that the target accepts connections (and, for https, that
// the TLS handshake succeeds), without sending a request that would count.
// With --http2 it checks that the server speaks HTTP/2: otherwise every
// request of the run would fail, one --timeout at a time.
func (d *httpDriver) start(ctx context.Context) error {
	if d.h2 != nil {
		pctx, cancel := context.WithTimeout(ctx, d.r.cfg.Timeout)
		err := transport.ProbeH2(pctx, d.uncounted())
		cancel()
		if errors.Is(err, transport.ErrNoHTTP2) {
			return cannotRun(d.r.cfg.Target.URL, fmt.Errorf("%s: %w; without it rpcload speaks HTTP/1.1", d.r.cfg.Name("http2"), err))
		}
		if err != nil {
			return err
		}
	} else {
		c, err := transport.DialH1(ctx, d.uncounted())
		if err != nil {
			return err
		}
		c.Close()
	}
	if d.r.cfg.Batch > 1 {
		d.probeEmptyBatchHTTP(ctx)
	}
	if d.r.limit > 0 && !d.pipelined() {
		// Closed loop: each worker makes its own ticks from its part of
		// the credits, as a stream slot's writer does.
		d.r.makePools(d.workers())
	}
	return nil
}

// uncounted are the options of the connections that carry no load (the
// check that the target is up, the [] probe): they are not among the
// connections the result counts.
func (d *httpDriver) uncounted() transport.H1Options {
	o := d.opts
	o.Dials = nil
	return o
}

// h2Workers bounds the requests in flight over HTTP/2 in open loop (each
// worker has its own recorder and table, about 45 KB).
const h2Workers = 256

func (d *httpDriver) workers() int {
	switch {
	case d.h2 == nil:
		return d.r.cfg.Conns
	case d.r.cfg.Concurrency > 0:
		return d.r.cfg.Concurrency
	default:
		return min(d.r.cfg.MaxInFlight, h2Workers)
	}
}

func (d *httpDriver) serve() {
	var wg sync.WaitGroup
	for i := range d.workers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d.pipelined() {
				d.workPipelined()
			} else {
				d.work(i)
			}
		}()
	}
	wg.Wait()
}

// pipelined reports whether the workers pipeline their POSTs (--pipeline
// over HTTP/1.1).
func (d *httpDriver) pipelined() bool { return d.r.cfg.Pipeline > 1 && d.h2 == nil }

func (d *httpDriver) close() {
	d.stopNow()
	if d.h2 != nil {
		d.h2.Close()
	}
}

func (d *httpDriver) interrupt(grace time.Duration) {
	time.AfterFunc(grace, d.stopNow)
	d.mu.Lock()
	defer d.mu.Unlock()
	for c := range d.live {
		c.Expire(time.Now().Add(grace))
	}
}

// poster sends one worker's messages: over HTTP/2 through the shared client,
// over HTTP/1.1 on the worker's own connection, dialled on first use and
// again after any failure that leaves it unusable.
type poster struct {
	d    *httpDriver
	conn *transport.H1Conn
	// until is the connection's deadline (run clock) while it is set for
	// many requests at once; 0 when none is.
	until int64
}

// errLate is a reply that came after --timeout but before the connection's
// deadline, which is set for many requests at once: counted as a timeout.
var errLate = fmt.Errorf("transport: the reply came after --timeout: %w", os.ErrDeadlineExceeded)

// post sends body, a POST whose requests were registered at sent (run
// clock), and returns the reply body appended to reply[:0]. Over HTTP/1.1
// the connection's deadline is set for --timeout plus 1/64 of it and kept
// while every request still gets --timeout under it, rather than reset per
// request (a clock read and two runtime timer updates each); the caller
// gives up a reply that came in the extra 1/64 as a timeout all the same
// (late), so a hung server ends each request at most 1/64 of --timeout
// late and no verdict changes.
func (p *poster) post(body, reply []byte, sent int64) ([]byte, error) {
	timeout := p.d.r.cfg.Timeout
	if p.d.h2 != nil {
		ctx, cancel := context.WithTimeout(p.d.stop, timeout)
		defer cancel()
		reply, _, err := p.d.h2.Post(ctx, body, reply)
		if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			// net/http's HTTP/2 transport does not always wrap the
			// context's error; the timeout must still count as one.
			err = fmt.Errorf("%w: %v", ctx.Err(), err)
		}
		return reply, err
	}
	if err := p.dial(); err != nil {
		return reply[:0], err
	}
	r := p.d.r
	var deadline time.Time // zero: the one set holds
	switch due := sent + int64(timeout); {
	case r.interrupted.Load():
		deadline, p.until = time.Now().Add(r.cfg.InterruptDrain), 0
	case p.until < due:
		p.until = due + int64(timeout)/64
		deadline = r.wallClock(p.until)
	}
	reply, _, err := p.conn.Post(body, reply, deadline)
	if (err != nil && !isStatusError(err)) || !p.conn.Reusable() {
		p.close()
	}
	return reply, err
}

// late reports whether a reply read at now (run clock) to a POST sent at
// sent came after --timeout, under a deadline set for many requests (see
// post): it is given up as a timeout, and its connection closed, as a
// deadline of its own would have done.
func (p *poster) late(sent, now int64) bool {
	if p.d.h2 != nil || now-sent <= int64(p.d.r.cfg.Timeout) || p.d.r.interrupted.Load() {
		return false
	}
	p.close()
	return true
}

// dial opens the worker's HTTP/1.1 connection if it has none.
func (p *poster) dial() error {
	if p.conn != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.d.r.cfg.Timeout)
	c, err := transport.DialH1(ctx, p.d.opts)
	cancel()
	if err != nil {
		return err
	}
	p.conn = c
	p.d.mu.Lock()
	p.d.live[c] = struct{}{}
	p.d.mu.Unlock()
	return nil
}

// isStatusError reports whether err is an HTTP error status, after which
// the connection is still usable. It is a function of its own because the
// target errors.As fills escapes to the heap: declared in post, it was
// allocated on every POST; here, only for a POST that failed.
func isStatusError(err error) bool {
	var se *transport.StatusError
	return errors.As(err, &se)
}

func (p *poster) close() {
	if p.conn != nil {
		p.d.mu.Lock()
		delete(p.d.live, p.conn)
		p.d.mu.Unlock()
		p.conn.Close()
		p.conn = nil
		p.until = 0
	}
}

func (d *httpDriver) work(i int) {
	r := d.r
	// One request is in flight per worker, but entries whose reply carried
	// another id stay until the sweeper times them out, so the table may
	// hold up to the run's cap.
	// The worker alone resolves its entries: each POST ends with its reply,
	// a transport error or its timeout, and whatever the body did not answer
	// is settled right after it, so the table holds one message at a time
	// and the sweeper never races the worker.
	tb := pending.NewAt(r.cfg.MaxWeight(), r.cfg.Shard.IDBase())
	r.watchTable(tb)
	defer r.removeTable(tb)
	var counters connCounters
	j := judge{r: r, rec: r.agg.NewRecorder(), sent: &counters}
	defer j.finish()
	rec := j.rec
	body := make([]byte, 0, 1024)
	reply := make([]byte, 0, 4096)
	ids := make([]uint64, 0, r.cfg.MaxWeight())
	g := r.newParamGen()
	p := &poster{d: d}
	defer p.close()
	post := p.post
	var o outgoing
	next := d.nextTick
	if r.pools != nil {
		j.pool = r.pools[i]
		next = d.tickFromCredits(newCreditTicker(r, j.pool, g, 1))
	}
	for {
		t, ok := next()
		if !ok {
			return
		}
		if r.pastCutoff() {
			r.dropLate(rec, j.pool, t)
			continue
		}
		var expectReply bool
		body, ids, expectReply = r.encodeTick(&o, tb, rec, &counters, g, j.pool, body, ids[:0], t)
		if len(body) == 0 {
			continue
		}
		var err error
		reply, err = post(body, reply, g.lastSent)
		now := r.now()
		if err == nil && p.late(g.lastSent, now) {
			err = errLate
		}
		d.outcome(&j, tb, ids, expectReply, reply, err, now)
	}
}

// nextTick takes the next tick from the dispatcher: false once sending
// has ended and every tick queued has been taken.
func (d *httpDriver) nextTick() (tick, bool) {
	t, ok := <-d.r.ticks
	return t, ok
}

// tickFromCredits makes a worker's ticks itself from its credits (closed
// loop): each reply gives its credit back to the worker that sends the
// next request, with no dispatcher goroutine to wake in between. It waits
// while the worker has none (a stage lowered the concurrency), and says
// false once sending has ended.
func (d *httpDriver) tickFromCredits(ct creditTicker) func() (tick, bool) {
	r := d.r
	batch := make([]tick, 0, 1)
	return func() (tick, bool) {
		for {
			select {
			case <-r.sendDone:
				return tick{}, false
			default:
			}
			var ended bool
			if batch, ended = ct.fill(batch[:0], 1); ended {
				return tick{}, false
			}
			if len(batch) > 0 {
				return batch[0], true
			}
			select {
			case <-ct.pool.wake:
			case <-r.sendDone:
				return tick{}, false
			}
		}
	}
}

// outcome settles the requests of one POST (ids) from its reply body or
// its error, read at time now (run clock). Nothing is left pending: a
// request the body did not answer cannot be answered any more.
func (d *httpDriver) outcome(j *judge, tb *pending.Table, ids []uint64, expectReply bool, reply []byte, err error, now int64) {
	r, rec := d.r, j.rec
	if !expectReply {
		// Only notifications: the answer must be an empty body.
		switch {
		case err != nil:
			rec.Record(stats.Sample{Kind: stats.TransportError})
			r.noteTransportError(err)
		case len(bytes.TrimSpace(reply)) > 0:
			j.violations(check.Set(0).Add(check.ReplyToNotification), 0, reply)
		}
		return
	}
	if err == nil && len(bytes.TrimSpace(reply)) == 0 {
		err = errors.New("transport: empty reply body to a request")
	}
	if errors.Is(err, transport.ErrBodyTooLarge) {
		j.violations(check.Set(0).Add(check.FrameTooLarge), 0, reply)
	}
	if err != nil {
		if why := mcpOnly(err, r.prof.Name()); why != "" {
			r.endEarly(why, errors.New(why)) // every reply would be the same: stop now
		}
		kind := r.failKind(err)
		if kind == stats.TransportError {
			r.noteTransportError(err)
		}
		r.settle(tb, rec, ids, kind, j.pool, now)
		return
	}
	d.judgeBody(j, tb, reply, now)
	// No other reply can come for a request the body did not answer:
	// it counts as a timeout now rather than after --timeout.
	r.settle(tb, rec, ids, stats.Timeout, j.pool, now)
}

// failKind is how a request whose POST failed with err is counted.
func (r *run) failKind(err error) stats.Kind {
	switch {
	case r.interrupted.Load() && (errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.Canceled)):
		return stats.Leaked // cut short by the interrupt, not by --timeout
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return stats.Timeout
	}
	return stats.TransportError
}

// settle ends the requests of one POST that are still pending, all as
// kind at time now, giving their slots back to pool (nil: the run's
// tokens), and returns how many there were. Over HTTP a request that timed
// out is given up with its POST: it stays in the gauges as timed out and
// unanswered, since no late reply can come for it.
func (r *run) settle(tb *pending.Table, rec *stats.Recorder, ids []uint64, kind stats.Kind, pool *credits, now int64) int {
	n := 0
	for _, id := range ids {
		if e, ok := tb.Forget(id); ok {
			rec.Record(stats.Sample{Kind: kind, Method: e.Method, Warmup: r.warm(e.Intended)})
			r.release(pool, 1, now)
			n++
		}
	}
	if kind == stats.Timeout {
		r.abandoned.Add(int64(n))
	}
	return n
}

// judgeBody judges a reply body. A body holding several JSON values on
// separate lines (a server answering twice in one body) is judged value by
// value; anything else is one frame.
func (d *httpDriver) judgeBody(j *judge, tb *pending.Table, body []byte, now int64) {
	wire.Scan(body, &j.msg)
	if !j.msg.Problems.Has(wire.ProblemInvalidJSON) || bytes.IndexByte(bytes.TrimSpace(body), '\n') < 0 || !allLinesJSON(body, &j.msg) {
		j.frame(tb, body, now)
		return
	}
	for line := range bytes.SplitSeq(body, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) > 0 {
			j.frame(tb, line, now)
		}
	}
}

func allLinesJSON(body []byte, m *wire.Message) bool {
	for line := range bytes.SplitSeq(body, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if wire.Scan(line, m); m.Problems.Has(wire.ProblemInvalidJSON) {
			return false
		}
	}
	return true
}

// mcpOnly is why the run cannot go on when err shows the server speaks
// MCP's Streamable HTTP, which only the mcp profile reads: it answered in
// SSE, or refused the request for not accepting SSE (406). "" otherwise.
func mcpOnly(err error, prof profile.Name) string {
	var how string
	var se *transport.StatusError
	switch {
	case errors.Is(err, transport.ErrEventStream):
		how = "the server answers with Content-Type text/event-stream (Server-Sent Events)"
	case errors.As(err, &se) && se.Code == http.StatusNotAcceptable && strings.Contains(se.Body, "text/event-stream"):
		how = "the server refuses the request with 406 Not Acceptable unless it accepts text/event-stream (Server-Sent Events)"
	default:
		return ""
	}
	return fmt.Sprintf("%s, as MCP's Streamable HTTP does; the %s profile reads JSON bodies only: use --profile mcp", how, prof)
}
