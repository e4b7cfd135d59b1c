package rpcfuzz

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/rpcload/rpcload/internal/wire"
)

// Target is a JSON-RPC server as the harness talks to it: one message in,
// its reply out. RoundTrip sends frame (one message, without framing) and
// returns the reply, or nil when none came (a notification's due). An
// error means the server failed to answer at all and is reported as a
// crash, unless ctx has ended by then (a hang). RoundTrip must return
// soon after ctx ends; until it returns, the input counts as running.
// frame is the target's to keep: the harness hands each call its own copy.
//
// Handler, Func and Stream adapt the common server shapes; implement
// Target yourself when your server needs a context, a session or headers.
// A Target is used by one input at a time, in message order.
type Target interface {
	RoundTrip(ctx context.Context, frame []byte) (reply []byte, err error)
}

// Func returns a Target that calls fn with each message and takes its
// result as the reply; nil means no reply. fn cannot see the input's
// deadline: if it never returns, the input is a hang and the goroutine
// running fn is left behind.
func Func(fn func(req []byte) []byte) Target { return funcTarget(fn) }

type funcTarget func([]byte) []byte

// RoundTrip calls the function.
func (f funcTarget) RoundTrip(_ context.Context, frame []byte) ([]byte, error) {
	return f(frame), nil
}

// Handler returns a Target that POSTs each message to h as the body of a
// request for "/" (Content-Type application/json, Accept application/json
// and text/event-stream), with the input's context. The response body is
// the reply: an empty body (a 202 or 204) is none, and a text/event-stream
// body is read as Server-Sent Events, whose first JSON-RPC response is the
// reply (requests and notifications the server sends on it are skipped).
// A 5xx status is an error (a crash); a 4xx status whose body is not JSON
// is a refusal at the HTTP level, an error the harness does not judge,
// except for unparseable input (the warning plain_http_error, see
// oracle.JudgeRefusal).
func Handler(h http.Handler) Target { return handlerTarget{h} }

type handlerTarget struct{ h http.Handler }

// errRefused marks a 4xx response without a JSON body: the HTTP layer
// refused the message, so the JSON-RPC oracles have nothing to judge.
var errRefused = errors.New("refused at the HTTP level")

// maxBody bounds a response body the harness keeps: a handler gone wild
// must not exhaust the fuzzer's memory.
const maxBody = 64 << 20

var rootURL = &url.URL{Path: "/"}

// RoundTrip serves one POST with h.
func (t handlerTarget) RoundTrip(ctx context.Context, frame []byte) ([]byte, error) {
	req := (&http.Request{
		Method:        http.MethodPost,
		URL:           rootURL,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}},
		Body:          io.NopCloser(bytes.NewReader(frame)),
		ContentLength: int64(len(frame)),
		Host:          "rpcfuzz.invalid",
		RemoteAddr:    "127.0.0.1:1",
		RequestURI:    "/",
	}).WithContext(ctx)
	w := &responseRecorder{header: http.Header{}}
	t.h.ServeHTTP(w, req)
	w.mu.Lock()
	defer w.mu.Unlock()
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	body := w.body.Bytes()
	if w.tooLarge {
		return nil, fmt.Errorf("HTTP status %d: the response body is over %d bytes", status, maxBody)
	}
	if status >= 500 {
		return nil, fmt.Errorf("HTTP status %d: %s", status, quoteTrunc(body, 200))
	}
	if ct := w.header.Get("Content-Type"); len(ct) >= 17 && equalFoldASCII(ct[:17], "text/event-stream") {
		body = sseReply(body)
	}
	if status >= 400 && !looksLikeJSON(body) {
		return nil, fmt.Errorf("HTTP status %d: %w", status, errRefused)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	return body, nil
}

// responseRecorder is the least http.ResponseWriter a handler needs; it
// is locked because a handler that outlived its input may still write.
type responseRecorder struct {
	mu       sync.Mutex
	header   http.Header
	status   int
	body     bytes.Buffer
	tooLarge bool
}

func (w *responseRecorder) Header() http.Header { return w.header }

func (w *responseRecorder) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status = code
	}
}

func (w *responseRecorder) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.body.Len()+len(b) > maxBody {
		w.tooLarge = true
		return 0, errors.New("rpcfuzz: response body too large")
	}
	return w.body.Write(b)
}

// Flush lets streaming (SSE) handlers flush; the body is kept whole.
func (w *responseRecorder) Flush() {}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func looksLikeJSON(b []byte) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// sseReply returns the first event of an SSE body whose data is not a
// request or notification from the server, or nil.
func sseReply(body []byte) []byte {
	var data []byte
	have := false
	var m wire.Message
	flush := func() []byte {
		if !have {
			return nil
		}
		msg := data
		data, have = nil, false
		wire.Scan(msg, &m)
		if m.Kind == wire.KindRequest || m.Kind == wire.KindNotification {
			return nil
		}
		return msg
	}
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			if msg := flush(); msg != nil {
				return msg
			}
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if have {
				data = append(data, '\n')
			}
			data = append(data, v...)
			have = true
		}
	}
	return flush()
}

// Stream returns a Target for a server of newline-delimited JSON over a
// connection. Each input gets a fresh in-memory connection: serve reads
// the input's messages (one per line, with a sync request after each but
// the last, so that replies can be told apart) from r until EOF, writes
// its replies to w one per line, and must return once r is at EOF and
// the replies are written. A returned error is a crash; a serve that
// does not return within the timeout is a hang. The whole input is
// readable at once, so serve must not wait for a reply's turn: it reads
// ahead as fast as it likes.
//
// Used through RoundTrip, a Stream sends one message on a fresh
// connection and returns its first reply.
func Stream(serve func(ctx context.Context, r io.Reader, w io.Writer) error) Target {
	return streamTarget{serve}
}

type streamTarget struct {
	serve func(ctx context.Context, r io.Reader, w io.Writer) error
}

// RoundTrip serves frame alone on a fresh connection and returns the
// first line the server wrote that is not a request or notification of
// its own.
func (s streamTarget) RoundTrip(ctx context.Context, frame []byte) ([]byte, error) {
	in := append(frame[:len(frame):len(frame)], '\n')
	var out lockedBuffer
	err := s.serve(ctx, bytes.NewReader(in), &out)
	for _, line := range splitLines(out.close()) {
		if !serverMessage(line) {
			return line, err
		}
	}
	return nil, err
}

// lockedBuffer collects a stream server's output. Once closed it takes no
// more: a server that outlived its input gets an error instead of
// writing into a buffer being judged.
type lockedBuffer struct {
	mu     sync.Mutex
	b      []byte
	closed bool
}

var errClosedConn = errors.New("rpcfuzz: the input's connection is closed")

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, errClosedConn
	}
	if len(l.b)+len(p) > maxBody {
		return 0, errors.New("rpcfuzz: stream output too large")
	}
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *lockedBuffer) close() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return l.b
}

// splitLines splits a newline-delimited stream into its non-blank lines,
// a CR before the LF dropped.
func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) > 0 {
			lines = append(lines, line)
		}
	}
	return lines
}

// serverMessage reports whether a line from the server is a request or a
// notification of its own rather than a reply.
func serverMessage(line []byte) bool {
	var m wire.Message
	wire.Scan(line, &m)
	return m.Kind == wire.KindRequest || m.Kind == wire.KindNotification
}

// quoteTrunc quotes b as a Go string, cut after n bytes.
func quoteTrunc(b []byte, n int) string {
	if len(b) <= n {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:n])) + "... (" + strconv.Itoa(len(b)) + " bytes)"
}
