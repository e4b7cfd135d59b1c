package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// mcpAccept is the Accept header Streamable HTTP requires on every POST.
const mcpAccept = "application/json, text/event-stream"

// mcpHTTPDriver speaks MCP's Streamable HTTP: every message is its own POST
// to one endpoint, answered by one JSON object, by an SSE stream carrying
// request-related messages and then the response, or (for a notification)
// by 202 Accepted. --conns workers each post one message at a time over a
// keep-alive connection of a shared client. A legacy server's session (one
// for the run, as one client would hold) is opened at start and deleted at
// the end.
type mcpHTTPDriver struct {
	r      *run
	client *http.Client
	url    string

	session string // set by start, before any worker runs
	// base are the headers of every POST; calls adds the headers of each
	// call with static params (Mcp-Method, Mcp-Name in the modern era),
	// built once; a call with generated params gets them per request.
	base  http.Header
	calls []http.Header

	stop    context.Context
	stopNow context.CancelFunc
}

func newMCPHTTPDriver(r *run) *mcpHTTPDriver {
	tr := &http.Transport{
		DialContext:         transport.H1Options{Dials: &r.connsOpened}.Dial,
		MaxIdleConnsPerHost: r.cfg.Conns,
		DisableCompression:  true,
		TLSClientConfig:     r.cfg.TLS.Config(""), // net/http sets the server name and ALPN per connection
	}
	d := &mcpHTTPDriver{r: r, url: r.cfg.Target.URL, client: &http.Client{
		Transport: tr,
		// The load goes to the target given and nowhere else.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	d.base = http.Header{"Content-Type": {"application/json"}, "Accept": {mcpAccept}, "User-Agent": {"rpcload"}}
	for k, v := range r.cfg.Header {
		d.base[http.CanonicalHeaderKey(k)] = v
	}
	d.stop, d.stopNow = context.WithCancel(context.Background())
	return d
}

// headers returns the base headers plus the profile's for a message of
// method with params in era, and the session's.
func (d *mcpHTTPDriver) headers(era profile.Era, method string, params []byte) http.Header {
	h := d.base.Clone()
	for _, kv := range d.r.prof.Headers(era, method, params) {
		h.Set(kv.Name, kv.Value)
	}
	if d.session != "" {
		h.Set("Mcp-Session-Id", d.session)
	}
	return h
}

// exchange POSTs body and returns the status, the response's headers and
// its JSON-RPC messages: the body of a JSON response, or the data of the
// first and the last SSE event up to the first response. each, if not nil, sees every message
// as it arrives: a server may wait for the answer to a request it sent on
// the stream before it sends the response.
func (d *mcpHTTPDriver) exchange(ctx context.Context, h http.Header, body []byte, each func([]byte)) (int, http.Header, [][]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header = h
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	var msgs [][]byte
	// keep holds a message: only the first (a reply to a notification) and
	// the last (the response) are ever looked at, so a stream that floods
	// notifications before its response costs two messages, not all of them.
	keep := func(m []byte) {
		if len(msgs) < 2 {
			msgs = append(msgs, append([]byte(nil), m...))
			return
		}
		msgs[1] = append(msgs[1][:0], m...)
	}
	if isEventStream(resp.Header) {
		sse := transport.NewSSEReader(resp.Body, d.r.cfg.MaxFrame)
		for {
			_, data, err := sse.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return resp.StatusCode, resp.Header, msgs, err
			}
			if len(bytes.TrimSpace(data)) == 0 {
				// An event without data: the priming event 2025-11-25
				// servers send first (an id for resuming, an empty data
				// line), not a message.
				continue
			}
			keep(data)
			if each != nil {
				each(data)
			}
			var m wire.Message
			if wire.Scan(data, &m); m.Kind == wire.KindResult || m.Kind == wire.KindError {
				break // the response ends the exchange, whether or not the server ends the stream
			}
		}
		return resp.StatusCode, resp.Header, msgs, nil
	}
	if resp.ContentLength > int64(d.r.cfg.MaxFrame) {
		// Refused before it is read, as H1Conn does: a Content-Length of
		// 2^62 followed by silence is counted at once, not at the timeout.
		return resp.StatusCode, resp.Header, nil, transport.ErrBodyTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(d.r.cfg.MaxFrame)+1))
	if err != nil {
		return resp.StatusCode, resp.Header, nil, err
	}
	if len(b) > d.r.cfg.MaxFrame {
		return resp.StatusCode, resp.Header, nil, transport.ErrBodyTooLarge
	}
	if len(bytes.TrimSpace(b)) > 0 {
		msgs = append(msgs, b)
		// An error status with a body that is not JSON (400 text/plain) is
		// an HTTP-level refusal, not a malformed JSON-RPC reply.
		if each != nil && (success(resp.StatusCode) || isJSON(b)) {
			each(b)
		}
	}
	return resp.StatusCode, resp.Header, msgs, nil
}

func success(status int) bool { return status >= 200 && status <= 299 }

func isJSON(b []byte) bool {
	var m wire.Message
	wire.Scan(b, &m)
	return !m.Problems.Has(wire.ProblemInvalidJSON)
}

func isEventStream(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/event-stream"
}

// lastResponse returns the response among msgs (the last message, when it
// is one).
func lastResponse(msgs [][]byte) []byte {
	if len(msgs) == 0 {
		return nil
	}
	return msgs[len(msgs)-1]
}

// start detects the era (a modern server/discover POST first, as the
// revision says), then opens a legacy session through the profile's step
// runner: initialize, whose response may carry Mcp-Session-Id, then
// notifications/initialized.
func (d *mcpHTTPDriver) start(ctx context.Context) error {
	r := d.r
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	if r.era == profile.EraAuto {
		// Not Handshake.Probe: over HTTP the status decides as much as the
		// body (a 404 means legacy), so the probe is read whole here.
		probe, _ := r.prof.Probe()
		status, _, msgs, err := d.exchange(ctx, d.headers(profile.EraModern, probe.Method, probe.Params), probe.Append(nil, 0, wire.IDInt), nil)
		if err != nil {
			return fmt.Errorf("MCP era probe (server/discover): %w", err)
		}
		era, ok := profile.DetectFromHTTP(status, lastResponse(msgs))
		if !ok {
			return fmt.Errorf("MCP era probe (server/discover): HTTP %d %q says nothing about the era", status, snippet(lastResponse(msgs)))
		}
		r.era = era
	}
	c := &mcpStepConn{d: d, ctx: ctx}
	h := profile.Handshake{Profile: r.prof, Era: r.era, Open: r.cfg.Steps}
	era, err := h.Steps(c, r.era)
	if err != nil {
		return err
	}
	r.era = era
	r.handshakes.Add(1)
	return r.checkTool(era, c.call)
}

// mcpStepConn runs profile steps over Streamable HTTP (profile.EraConn):
// each step is a POST of its own, and the last JSON-RPC message of its
// response (the JSON body, or the SSE event carrying the response) is the
// reply. A POST's headers depend on the era, which an Accept may change
// (initialize's reply choosing an older revision): RunSteps sets it
// (SetEra), so the conn never reads the era from a reply itself.
type mcpStepConn struct {
	d   *mcpHTTPDriver
	ctx context.Context
	era profile.Era
	seq uint64
}

// SetEra sets the era the next messages are sent under.
func (c *mcpStepConn) SetEra(era profile.Era) { c.era = era }

// ControlID appends the next id "rpcload-N" of the conn's control
// requests, the form a stream session's ctlConn uses. Each POST gets its
// own response, so no reply could be taken for a load reply anyway; the
// one form keeps the handshakes of both transports alike.
func (c *mcpStepConn) ControlID(dst []byte) []byte {
	c.seq++
	dst = append(dst, ctlPrefix...)
	dst = strconv.AppendUint(dst, c.seq, 10)
	return append(dst, '"')
}

// Send POSTs a notification step; a status other than 2xx is an error.
func (c *mcpStepConn) Send(msg []byte) error {
	_, _, err := c.post(msg)
	return err
}

// Call POSTs a request step and returns its response's JSON-RPC reply; a
// status other than 2xx is an error. The response's Mcp-Session-Id (a
// legacy server hands it out with initialize's) goes on every later POST.
func (c *mcpStepConn) Call(_, msg []byte) ([]byte, error) {
	hdr, msgs, err := c.post(msg)
	if err != nil {
		return nil, err
	}
	if id := hdr.Get("Mcp-Session-Id"); id != "" {
		c.d.session = id
	}
	return lastResponse(msgs), nil
}

// call sends one control request after the handshake (checkTool's
// tools/list) and returns its reply. Not through Call: a session is handed
// out at initialization, so a later response's Mcp-Session-Id (a modern
// server has no session at all) is not taken up.
func (c *mcpStepConn) call(method string, params []byte) ([]byte, error) {
	_, msgs, err := c.post(profile.Step{Method: method, Params: params}.AppendControl(nil, c.ControlID(nil)))
	return lastResponse(msgs), err
}

// post POSTs msg with the headers of c's era and of msg's method and
// params, read back from msg: StepConn hands over the message alone.
func (c *mcpStepConn) post(msg []byte) (http.Header, [][]byte, error) {
	var m wire.Message
	wire.Scan(msg, &m)
	method, _ := wire.Unquote(nil, m.Method)
	status, hdr, msgs, err := c.d.exchange(c.ctx, c.d.headers(c.era, string(method), m.Params), msg, nil)
	if err == nil && !success(status) {
		err = fmt.Errorf("HTTP %d %q", status, snippet(lastResponse(msgs)))
	}
	return hdr, msgs, err
}

func snippet(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}

func (d *mcpHTTPDriver) serve() {
	r := d.r
	d.calls = make([]http.Header, len(r.calls))
	for i, c := range r.calls {
		if c.isStatic {
			d.calls[i] = d.headers(r.era, c.Method, c.static)
		}
	}
	var wg sync.WaitGroup
	for w := range r.cfg.Conns {
		wg.Add(1)
		go func() { defer wg.Done(); d.work(w) }()
	}
	wg.Wait()
}

func (d *mcpHTTPDriver) interrupt(grace time.Duration) { time.AfterFunc(grace, d.stopNow) }

// close deletes a legacy session (the revision asks clients to) and closes
// the idle connections.
func (d *mcpHTTPDriver) close() {
	if d.session != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, d.url, nil)
		if err == nil {
			req.Header = d.headers(d.r.era, "", nil)
			if resp, err := d.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	d.stopNow()
	d.client.CloseIdleConnections()
}

// mcpPeer answers the requests a server sends inside an SSE response by
// POSTing the answer, as Streamable HTTP says; the POST's own answer is
// 202 with no body.
type mcpPeer struct {
	d   *mcpHTTPDriver
	buf []byte
	// ctx is the exchange in progress: answers are bounded by its
	// deadline, so a flood of the server's requests cannot keep a worker
	// posting answers for longer than --timeout.
	ctx context.Context
}

func (p *mcpPeer) control(*wire.Message, []byte) bool         { return false }
func (p *mcpPeer) emptyBatchReply(*wire.Message, []byte) bool { return false }

func (p *mcpPeer) answerServer(m *wire.Message) {
	r := p.d.r
	p.buf = r.prof.AnswerServerRequest(p.buf[:0], m)
	if len(p.buf) == 0 {
		return
	}
	ctx := p.ctx
	if ctx == nil {
		c, cancel := context.WithTimeout(p.d.stop, r.cfg.Timeout)
		defer cancel()
		ctx = c
	}
	if ctx.Err() != nil {
		return // the exchange is over: no answer can matter now
	}
	if _, _, _, err := p.d.exchange(ctx, p.d.headers(r.era, "", nil), p.buf, nil); err != nil {
		r.noteTransportError(fmt.Errorf("answering the server's request: %w", err))
		return
	}
	r.answered.Add(1)
}

func (d *mcpHTTPDriver) work(w int) {
	r := d.r
	// The workers share one session (a legacy server's Mcp-Session-Id), in
	// which ids must not repeat among requests in flight: each worker
	// takes ids from its own range.
	tb := pending.NewAt(1, r.cfg.Shard.IDBase()+uint64(w)<<32)
	r.watchTable(tb)
	defer r.removeTable(tb)
	var counters connCounters
	peer := &mcpPeer{d: d}
	j := judge{r: r, rec: r.agg.NewRecorder(), sent: &counters, peer: peer}
	defer j.finish()
	rec := j.rec
	var body []byte
	ids := make([]uint64, 0, 1)
	g := r.newParamGen()
	each := func(m []byte) { j.frame(tb, m, r.now()) }
	var o outgoing
	for t := range r.ticks {
		if r.pastCutoff() {
			r.dropLate(rec, nil, t)
			continue
		}
		var expectReply bool
		body, ids, expectReply = r.encodeTick(&o, tb, rec, &counters, g, nil, body, ids[:0], t)
		if len(body) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(d.stop, r.cfg.Timeout)
		peer.ctx = ctx
		judged := each
		if !expectReply {
			judged = nil
		}
		h := d.calls[t.call]
		if h == nil {
			h = d.headers(r.era, r.calls[t.call].Method, g.buf)
		}
		status, _, msgs, err := d.exchange(ctx, h, body, judged)
		cancel()
		peer.ctx = nil
		if err == nil && !expectReply {
			// A notification: 202 and no body; a response would be one to a
			// notification. A server that cannot accept it answers an HTTP
			// error status, which Streamable HTTP allows: counted apart.
			switch {
			case !success(status):
				if r.notifyRefused.Add(1) == 1 {
					r.notifyRefusedSample.Store(fmt.Sprintf("HTTP %d %q", status, snippet(lastResponse(msgs))))
				}
			case len(msgs) > 0:
				j.violations(check.Set(0).Add(check.ReplyToNotification), 0, msgs[0])
			}
			continue
		}
		if errors.Is(err, transport.ErrBodyTooLarge) || errors.Is(err, transport.ErrFrameTooLarge) {
			j.violations(check.Set(0).Add(check.FrameTooLarge), 0, nil)
		}
		// A 4xx with a JSON-RPC body (404 + -32601 for an unknown method,
		// 400 + -32020) is the server's answer and was judged as one.
		switch {
		case err != nil:
		case len(msgs) == 0:
			err = fmt.Errorf("HTTP %d with no JSON-RPC response", status)
		case !success(status) && !isJSON(lastResponse(msgs)):
			err = fmt.Errorf("HTTP %d with no JSON-RPC response: %q", status, snippet(lastResponse(msgs)))
		}
		d.settle(tb, rec, ids, err)
	}
}

// settle ends the requests of one POST that its response did not answer.
func (d *mcpHTTPDriver) settle(tb *pending.Table, rec *stats.Recorder, ids []uint64, err error) {
	r := d.r
	kind := stats.TransportError
	switch {
	case err == nil:
		err = errors.New("the response did not answer the request")
	case r.interrupted.Load() && errors.Is(err, context.Canceled):
		kind = stats.Leaked
	case errors.Is(err, context.DeadlineExceeded):
		// Closing the response stream is Streamable HTTP's cancellation.
		kind = stats.Timeout
	}
	n := r.settle(tb, rec, ids, kind, nil, 0)
	switch {
	case n == 0:
	case kind == stats.TransportError:
		r.noteTransportError(err)
	case kind == stats.Timeout:
		r.cancels.Add(int64(n))
	}
}
