package engine

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// httpDriver runs Conns workers over one keep-alive pool of Conns
// connections. HTTP/1.1 has no multiplexing: each POST's body is its reply,
// so each worker is also its request's reader; its pending table still
// checks the reply's id.
type httpDriver struct {
	r      *run
	client *transport.HTTPClient
}

func newHTTPDriver(r *run) *httpDriver {
	return &httpDriver{r: r, client: transport.NewHTTP(transport.HTTPOptions{
		URL: r.cfg.Target.URL, Conns: r.cfg.Conns, Header: r.cfg.Header, MaxBody: r.cfg.MaxFrame, Insecure: r.cfg.Insecure,
	})}
}

// start checks that the target accepts TCP connections at all, without
// sending a request that would count in the results.
func (d *httpDriver) start(ctx context.Context) error {
	u, err := url.Parse(d.r.cfg.Target.URL)
	if err != nil {
		return err
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	dl := net.Dialer{Timeout: 5 * time.Second}
	c, err := dl.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
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

func (d *httpDriver) close() { d.client.CloseIdle() }

func (d *httpDriver) work() {
	r := d.r
	tb := pending.New(16)
	r.addTable(tb)
	var notified atomic.Uint64
	j := judge{r: r, rec: r.agg.NewRecorder(), notified: &notified}
	rec := j.rec
	body := make([]byte, 0, 1024)
	reply := make([]byte, 0, 4096)
	for t := range r.ticks {
		now := r.now()
		if r.isNotification(t.seq) {
			notified.Add(1)
			body = wire.AppendNotification(body[:0], r.method, r.cfg.Params)
			rec.Record(stats.Sample{Kind: stats.NotifySent, A: now - t.intended})
			var err error
			reply, err = d.post(body, reply)
			switch {
			case err != nil:
				rec.Record(stats.Sample{Kind: stats.TransportError})
				r.noteTransportError(err)
			case len(bytes.TrimSpace(reply)) > 0:
				j.violations(check.Set(0).Add(check.ReplyToNotification), 0, reply)
			}
			r.done()
			continue
		}
		id, err := tb.Add(pending.Entry{
			Format: r.cfg.IDFormat, Intended: t.intended, Sent: now, Deadline: now + int64(r.cfg.Timeout), Fingerprint: r.fp,
		})
		if err != nil {
			rec.Record(stats.Sample{Kind: stats.Dropped})
			r.done()
			continue
		}
		body = wire.AppendRequest(body[:0], id, r.cfg.IDFormat, r.method, r.cfg.Params)
		rec.Record(stats.Sample{Kind: stats.Sent, A: now - t.intended})
		reply, err = d.post(body, reply)
		now = r.now()
		if err == nil && len(bytes.TrimSpace(reply)) == 0 {
			err = errors.New("transport: empty reply body to a request")
		}
		if err != nil {
			// The sweeper may have timed the entry out already; only the
			// one that removes it counts it.
			if e, ok := tb.Forget(id); ok {
				kind := stats.TransportError
				if errors.Is(err, context.DeadlineExceeded) {
					kind = stats.Timeout
				} else {
					r.noteTransportError(err)
				}
				rec.Record(stats.Sample{Kind: kind, Method: e.Method})
				r.done()
			}
			continue
		}
		d.judgeBody(&j, tb, reply, now)
		// A body whose id matched nothing leaves the entry pending; no other
		// reply can come for it, and the sweeper times it out.
	}
}

func (d *httpDriver) post(body, reply []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d.r.cfg.Timeout)
	defer cancel()
	reply, _, err := d.client.Post(ctx, body, reply)
	return reply, err
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
