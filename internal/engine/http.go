package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// httpDriver runs Conns workers, each owning one HTTP/1.1 keep-alive
// connection. HTTP/1.1 has no multiplexing: each POST's body is its reply,
// so each worker is also its request's reader; its pending table still
// checks the reply's id.
type httpDriver struct {
	r    *run
	opts transport.H1Options
}

func newHTTPDriver(r *run) *httpDriver {
	return &httpDriver{r: r, opts: transport.H1Options{
		URL: r.cfg.Target.URL, Header: r.cfg.Header, MaxBody: r.cfg.MaxFrame, Insecure: r.cfg.Insecure,
	}}
}

// start checks that the target accepts connections (and, for https, that
// the TLS handshake succeeds), without sending a request that would count.
func (d *httpDriver) start(ctx context.Context) error {
	c, err := transport.DialH1(ctx, d.opts)
	if err != nil {
		return err
	}
	return c.Close()
}

func (d *httpDriver) serve() {
	var wg sync.WaitGroup
	for range d.r.cfg.Conns {
		wg.Add(1)
		go func() { defer wg.Done(); d.work() }()
	}
	wg.Wait()
}

func (d *httpDriver) close() {}

func (d *httpDriver) work() {
	r := d.r
	// One request is in flight per worker, but entries whose reply carried
	// another id stay until the sweeper times them out, so the table may
	// hold up to the run's cap.
	tb := pending.New(r.cfg.MaxInFlight)
	tb.ExpectNoLateReplies()
	r.addTable(tb)
	var counters connCounters
	j := judge{r: r, rec: r.agg.NewRecorder(), sent: &counters}
	rec := j.rec
	body := make([]byte, 0, 1024)
	reply := make([]byte, 0, 4096)
	ids := make([]uint64, 0, max(r.cfg.Batch, 1))
	var conn *transport.H1Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	post := func(body, reply []byte) ([]byte, error) {
		if conn == nil {
			ctx, cancel := context.WithTimeout(context.Background(), r.cfg.Timeout)
			c, err := transport.DialH1(ctx, d.opts)
			cancel()
			if err != nil {
				return reply[:0], err
			}
			conn = c
		}
		reply, _, err := conn.Post(body, reply, time.Now().Add(r.cfg.Timeout))
		var se *transport.StatusError
		if (err != nil && !errors.As(err, &se)) || !conn.Reusable() {
			conn.Close()
			conn = nil
		}
		return reply, err
	}
	for t := range r.ticks {
		var expectReply bool
		body, ids, expectReply = r.encodeTick(tb, rec, &counters, body, ids[:0], t)
		if len(body) == 0 {
			continue
		}
		var err error
		reply, err = post(body, reply)
		now := r.now()
		if !expectReply {
			// Only notifications: the answer must be an empty body.
			switch {
			case err != nil:
				rec.Record(stats.Sample{Kind: stats.TransportError})
				r.noteTransportError(err)
			case len(bytes.TrimSpace(reply)) > 0:
				j.violations(check.Set(0).Add(check.ReplyToNotification), 0, reply)
			}
			continue
		}
		if err == nil && len(bytes.TrimSpace(reply)) == 0 {
			err = errors.New("transport: empty reply body to a request")
		}
		if errors.Is(err, transport.ErrBodyTooLarge) {
			j.violations(check.Set(0).Add(check.FrameTooLarge), 0, reply)
		}
		if err != nil {
			// The sweeper may have timed an entry out already; only the
			// one that removes it counts it.
			kind := stats.TransportError
			if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
				kind = stats.Timeout
			} else {
				r.noteTransportError(err)
			}
			for _, id := range ids {
				if e, ok := tb.Forget(id); ok {
					rec.Record(stats.Sample{Kind: kind, Method: e.Method})
					r.done()
				}
			}
			continue
		}
		d.judgeBody(&j, tb, reply, now)
		// A body whose ids matched nothing leaves entries pending; no other
		// reply can come for them, and the sweeper times them out.
	}
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
