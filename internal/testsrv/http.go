package testsrv

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rpcload/rpcload/internal/wire"
)

// Shared header values: assigning these slices avoids a per-request
// allocation that Header().Set would make. net/http only reads them.
var (
	hdrJSON  = []string{"application/json"}
	hdrAllow = []string{http.MethodPost}
)

// wsPath is where Handler accepts WebSocket upgrades.
const wsPath = "/ws"

// tooLargeBody is the body of a 413: a JSON-RPC error a client can log.
var tooLargeBody = wire.AppendError(nil, nil, wire.CodeInvalidRequest, msgInvalidRequest, []byte(`"request too large"`))

// connKey is the context key of the per-connection fault state.
type connKey struct{}

// connState gives one HTTP connection its own PRNG, so fault decisions on a
// keep-alive connection replay like on TCP. The lock is for HTTP/2, where
// requests of one connection run concurrently.
type connState struct {
	mu   sync.Mutex
	rng  *rand.Rand
	pipe *pipelineConn // with Config.TrackPipelining
}

func (cs *connState) Float64() float64 { return cs.rng.Float64() }

// nextRandFor returns the fault PRNG of the connection r came on (given by
// ConnContext), or else the next connection's.
func (s *Server) nextRandFor(r *http.Request) *rand.Rand {
	if cs, ok := r.Context().Value(connKey{}).(*connState); ok {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		return cs.rng
	}
	return s.nextRand()
}

// lockedRand serialises the shared fallback PRNG.
type lockedRand struct{ s *Server }

func (l lockedRand) Float64() float64 { return l.s.sharedRng.Float64() }

// ConnContext is for http.Server.ConnContext: it gives each connection its own
// fault PRNG (Seed + connection index). Without it (e.g. Handler mounted on a
// server you built), all requests share one PRNG seeded with Seed, so the
// decisions depend on request interleaving.
func (s *Server) ConnContext(ctx context.Context, c net.Conn) context.Context {
	pc, _ := c.(*pipelineConn)
	return context.WithValue(ctx, connKey{}, &connState{rng: s.nextRand(), pipe: pc})
}

// Handler returns the HTTP transport: POST to any path with a JSON body; 200
// with an application/json reply; 204 with an empty body when there is
// nothing to reply (notification, batch of notifications); 405 for other
// methods; 413 for bodies larger than MaxFrame. A WebSocket upgrade request
// (GET with "Upgrade: websocket") on path /ws is served as WSHandler does,
// so one HTTP port serves http://HOST:PORT/ and ws://HOST:PORT/ws.
func (s *Server) Handler() http.Handler { return httpHandler{s} }

type httpHandler struct{ s *Server }

var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func (h httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.s
	if !s.enter() {
		http.Error(w, "testsrv: server closed", http.StatusServiceUnavailable)
		return
	}
	defer s.wg.Done()
	if s.cfg.TrackPipelining && r.ProtoMajor == 1 {
		if cs, ok := r.Context().Value(connKey{}).(*connState); ok && cs.pipe != nil {
			s.notePipelined(cs.pipe)
		}
	}
	if r.URL.Path == MCPPath && s.cfg.Profile == ProfileMCP {
		s.serveMCPHTTP(w, r)
		return
	}
	if r.URL.Path == wsPath && websocket.IsWebSocketUpgrade(r) {
		s.serveWS(w, r)
		return
	}
	if s.metrics != nil && r.URL.Path == MetricsPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		s.metrics.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header()["Allow"] = hdrAllow
		http.Error(w, "testsrv: only POST is served", http.StatusMethodNotAllowed)
		return
	}
	if r.ContentLength > int64(s.cfg.MaxFrame) {
		writeBody(w, http.StatusRequestEntityTooLarge, tooLargeBody)
		return
	}
	bp := bodyPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 1<<20 {
			bodyPool.Put(bp)
		}
	}()
	body, err := readBody(r.Body, (*bp)[:0], s.cfg.MaxFrame)
	*bp = body[:0]
	switch {
	case errors.Is(err, errTooLarge):
		writeBody(w, http.StatusRequestEntityTooLarge, tooLargeBody)
		return
	case err != nil:
		http.Error(w, "testsrv: reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.countRequest()
	p := s.getProc()
	defer putProc(p)
	p.eval(body)
	f, target := fNone, -1
	if len(s.specs) > 0 {
		f, target = s.rollHTTP(r, p)
	}
	switch f {
	case fDrop:
		// "Never reply" over HTTP: hold the request until the client gives up
		// (its context ends) or the server closes.
		s.count(f)
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			panic(http.ErrAbortHandler) // close without a response
		}
	case fClose:
		s.count(f)
		hijackClose(w)
		return
	}
	if !p.willReply(f) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	delay, spin := p.cost(f)
	if f == fDelay {
		delay += s.cfg.FaultDelay
	}
	delay += s.queued(p)
	busyWait(spin, s.done)
	if wait := s.deliverAfter(delay); wait > 0 && !s.waitHTTP(r.Context(), wait) {
		return
	}
	out := p.assemble(p.out[:0], f, target)
	if f == fDuplicate {
		n := len(out)
		out = append(append(out, '\n'), out[:n]...)
	}
	p.out = out // keep the grown buffer with the pooled proc
	s.count(f)
	writeBody(w, http.StatusOK, out)
}

// rollHTTP decides the fault with the connection's PRNG when ConnContext is
// in use, else with the shared one.
func (s *Server) rollHTTP(r *http.Request, p *proc) (fid, int) {
	if cs, ok := r.Context().Value(connKey{}).(*connState); ok {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		return p.roll(s.specs, cs)
	}
	s.sharedMu.Lock()
	defer s.sharedMu.Unlock()
	return p.roll(s.specs, lockedRand{s})
}

// waitHTTP holds a reply for d; false if the client left (nothing to write).
// On Close the handler aborts without a response.
func (s *Server) waitHTTP(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		panic(http.ErrAbortHandler)
	}
}

// hijackClose closes the connection without a response. Where hijacking is
// not possible (HTTP/2) aborting the handler resets the stream instead.
func hijackClose(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func writeBody(w http.ResponseWriter, code int, body []byte) {
	h := w.Header()
	h["Content-Type"] = hdrJSON
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(code)
	_, _ = w.Write(body) // a client that went away is not the server's error
}

// readBody reads all of r into buf, failing with errTooLarge past limit.
func readBody(r io.Reader, buf []byte, limit int) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), limit+1)])
		buf = buf[:len(buf)+n]
		if len(buf) > limit {
			return buf, errTooLarge
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
