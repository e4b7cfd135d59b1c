package fuzz

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// httpConn POSTs each frame of a case on one keep-alive HTTP/1.1
// connection. A response is judged by its status and body: a 5xx status,
// or a connection the server closes or resets instead of answering, is a
// crash.
type httpConn struct {
	d      *dialer
	c      *transport.H1Conn
	served int // responses read on c: a keep-alive connection closed before its first is no idle timeout
	buf    []byte
	header http.Header // what c sends with each request, for the profile's exchange rules

	// The exchange's context ending expires the connection, so that a POST
	// waiting for a slow server returns at once. It is watched once per
	// context, not once per POST: context.AfterFunc takes a lock the
	// workers share.
	watched context.Context
	unwatch func() bool
	mu      sync.Mutex        // guards live and gen against the watch's callback
	live    *transport.H1Conn // c, for the callback
	gen     uint64            // the watch in force; a callback of an older one does nothing
}

func (h *httpConn) options() transport.H1Options {
	hdr := h.d.cfg.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	if h.d.prof.Name() == profile.MCP && hdr.Get("Accept") == "" {
		hdr.Set("Accept", "application/json, text/event-stream")
	}
	return transport.H1Options{URL: h.d.cfg.Target.URL, Header: hdr, MaxBody: h.d.cfg.MaxReply, TLS: h.d.cfg.TLS}
}

func (h *httpConn) redial(ctx context.Context) error {
	h.drop()
	dctx, cancel := context.WithTimeout(ctx, max(h.d.cfg.Timeout, time.Second))
	defer cancel()
	opts := h.options()
	c, err := transport.DialH1(dctx, opts)
	if err != nil {
		return err
	}
	h.c, h.served, h.header = c, 0, opts.Header
	h.setLive(c)
	return nil
}

func (h *httpConn) setLive(c *transport.H1Conn) {
	h.mu.Lock()
	h.live = c
	h.mu.Unlock()
}

// watch expires the connection in use when ctx ends, until close or a
// watch of another context.
func (h *httpConn) watch(ctx context.Context) {
	if h.watched == ctx && h.unwatch != nil {
		return
	}
	h.stopWatch()
	h.mu.Lock()
	h.gen++
	gen := h.gen
	h.mu.Unlock()
	h.watched = ctx
	h.unwatch = context.AfterFunc(ctx, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.gen == gen && h.live != nil {
			h.live.Expire(time.Now())
		}
	})
}

func (h *httpConn) stopWatch() {
	if h.unwatch == nil {
		return
	}
	h.unwatch()
	h.mu.Lock()
	h.gen++ // a callback already running finds its watch over
	h.mu.Unlock()
	h.watched, h.unwatch = nil, nil
}

func (h *httpConn) usable() bool { return h.c != nil }

// drop closes the HTTP connection; the next POST dials another.
func (h *httpConn) drop() {
	if h.c != nil {
		h.c.Close()
		h.c = nil
		h.setLive(nil)
	}
}

func (h *httpConn) close() {
	h.drop()
	h.stopWatch()
}

func (h *httpConn) exchange(ctx context.Context, c mutate.Case, _ waitFor, timeout time.Duration) outcome {
	o := outcome{perFrame: true, frameReplies: make([][][]byte, len(c.Frames)), httpStatus: make([]int, len(c.Frames)), header: h.header}
	start := h.d.cfg.Now() // the configured clock: see streamConn.exchange
	for i, f := range c.Frames {
		o.endFrame = i
		if ctx.Err() != nil {
			o.end = endInterrupted
			break
		}
		end, note := h.post(ctx, f, timeout, &o, i)
		o.sent = i + 1
		if end != endNone {
			o.end, o.note = end, note
			break
		}
	}
	o.latency = h.d.cfg.Now().Sub(start)
	if o.end == endTimeout {
		o.latency = timeout
	}
	return o
}

// post sends one frame, retrying once on a fresh connection when a
// connection that served before turns out closed (an idle timeout).
func (h *httpConn) post(ctx context.Context, frame []byte, timeout time.Duration, o *outcome, i int) (endKind, string) {
	for attempt := 0; ; attempt++ {
		if h.c == nil || !h.c.Reusable() {
			// The run's deadline must not cut a dial short and pass for a
			// dead server: dial under the run's own context only.
			if err := h.redial(h.d.base); err != nil {
				if h.d.base.Err() != nil || ctx.Err() != nil {
					return endInterrupted, ""
				}
				return endUnreachable, err.Error()
			}
		}
		h.watch(ctx)
		body, status, err := h.c.Post(frame, h.buf[:0], time.Now().Add(timeout+writeAllowance(len(frame))))
		h.buf = body[:0]
		o.httpStatus[i] = status
		var se *transport.StatusError
		switch {
		case err == nil || errors.As(err, &se) || errors.Is(err, transport.ErrEventStream):
			// (An SSE body is read whole: splitBody takes its events, as
			// MCP's Streamable HTTP sends them.)
			h.served++
			o.frameReplies[i] = splitBody(body, h.d.cfg.MaxReply)
			if status >= 500 {
				return endReset, se.Error()
			}
			return endNone, ""
		case errors.Is(err, transport.ErrBodyTooLarge):
			h.served++
			o.tooLarge++
			return endNone, ""
		}
		h.drop()
		if ctx.Err() != nil {
			return endInterrupted, ""
		}
		if isTimeout(err) {
			return endTimeout, "no response within the timeout"
		}
		if errors.Is(err, transport.ErrConnClosed) && h.served > 0 && attempt == 0 {
			continue
		}
		if errors.Is(err, transport.ErrConnClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return endClosed, "connection closed without a response"
		}
		return endReset, err.Error()
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// splitBody returns the messages of a response body: none for an empty
// body, the data of each event of a text/event-stream body (MCP
// Streamable HTTP) that has any, else the body itself.
func splitBody(body []byte, maxEvent int) [][]byte {
	t := bytes.TrimSpace(body)
	if len(t) == 0 {
		return nil
	}
	if !looksLikeSSE(t) {
		return [][]byte{bytes.Clone(body)}
	}
	var out [][]byte
	r := transport.NewSSEReader(bytes.NewReader(body), maxEvent)
	for {
		_, data, err := r.Next()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(data)) == 0 {
			// An event without data carries no message: MCP Streamable
			// HTTP (2025-11-25) has the server open a stream with such a
			// priming event (an id for resumption, empty data).
			continue
		}
		out = append(out, bytes.Clone(data))
	}
	return out // an event stream of no message answers nothing
}

func looksLikeSSE(b []byte) bool {
	for _, p := range [...]string{"data:", "event:", "id:", ":", "retry:"} {
		if len(b) >= len(p) && string(b[:len(p)]) == p {
			return true
		}
	}
	return false
}

// idlessError reports whether b is one JSON-RPC error response with id
// null or none.
func idlessError(b []byte) bool {
	var m wire.Message
	wire.Scan(b, &m)
	return m.Kind == wire.KindError && (m.IDKind == wire.IDNull || m.IDKind == wire.IDAbsent)
}

func looksLikeJSON(b []byte) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}
