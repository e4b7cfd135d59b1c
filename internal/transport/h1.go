package transport

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"
)

// maxHeaderBytes bounds a reply's status line and headers together.
const maxHeaderBytes = 64 << 10

// ErrConnClosed reports that the server ended the connection, or said it
// would (Connection: close), before this request: the caller redials.
var ErrConnClosed = errors.New("transport: connection closed by the server")

// H1Options configure an H1Conn.
type H1Options struct {
	URL     string
	Header  http.Header // extra request headers
	MaxBody int         // largest reply body read; longer bodies are an error
	TLS     TLS         // https: verification and client certificate
	// Dials, if not nil, counts the TCP connections opened: DialH1's, and
	// every one an H2Client opens (net/http dials them as it needs them).
	Dials *atomic.Int64
}

// Dial opens a TCP connection to addr as rpcload's HTTP clients do (10 s to
// connect), counting it in Dials: net/http's Transport takes it as its
// DialContext.
func (o H1Options) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	dl := net.Dialer{Timeout: 10 * time.Second}
	c, err := dl.DialContext(ctx, network, addr)
	if err == nil && o.Dials != nil {
		o.Dials.Add(1)
	}
	return c, err
}

// H1Conn is one HTTP/1.1 keep-alive connection, used by one goroutine at a
// time: the request is written and its response read in the caller's
// goroutine, with no per-request goroutine, channel or allocation. This is
// what keeps rpcload's HTTP path as cheap as wrk's; net/http's client costs
// two goroutine hand-offs and several allocations per request.
type H1Conn struct {
	conn    net.Conn
	br      *bufio.Reader
	head    []byte // the request up to and including "Content-Length: "
	wbuf    []byte
	maxBody int
	closing bool // the server announced Connection: close
	sse     bool // the response being read is text/event-stream
}

// ErrEventStream reports a response sent as Server-Sent Events
// (Content-Type: text/event-stream) to a plain JSON-RPC POST, whose reply
// must be a JSON body: MCP's Streamable HTTP answers so, which only the
// mcp profile reads. The body read is returned with it.
var ErrEventStream = errors.New("transport: the response is an SSE stream (Content-Type: text/event-stream), not a JSON body")

// isEventStream reports whether a Content-Type value is text/event-stream,
// whatever its parameters.
func isEventStream(v []byte) bool {
	mt, _, _ := bytes.Cut(v, []byte{';'})
	return asciiEqualFold(bytes.TrimSpace(mt), "text/event-stream")
}

// DialH1 connects to o.URL (http or https).
func DialH1(ctx context.Context, o H1Options) (*H1Conn, error) {
	c, u, err := dialHTTP(ctx, o, "http/1.1")
	if err != nil {
		return nil, err
	}
	return &H1Conn{conn: c, br: bufio.NewReaderSize(c, 32<<10), head: requestHead(u, o.Header), wbuf: make([]byte, 0, 4096), maxBody: o.MaxBody}, nil
}

// dialHTTP connects to o.URL, offering the application protocols alpn in
// the TLS handshake of an https URL.
func dialHTTP(ctx context.Context, o H1Options, alpn ...string) (net.Conn, *url.URL, error) {
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, nil, fmt.Errorf("transport: %w", err)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	c, err := o.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	if u.Scheme == "https" {
		tc := tls.Client(c, o.TLS.Config(u.Hostname(), alpn...))
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, nil, fmt.Errorf("transport: TLS handshake with %s: %w", addr, err)
		}
		c = tc
	}
	return c, u, nil
}

// requestHead renders everything of a request before the length. Extra
// headers replace the defaults of the same name, Host included (for virtual
// hosts behind one address).
func requestHead(u *url.URL, extra http.Header) []byte {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}, "User-Agent": {"rpcload"}}
	for k, v := range extra {
		h[http.CanonicalHeaderKey(k)] = v
	}
	host := u.Host
	if v := h.Get("Host"); v != "" {
		host = v
	}
	h.Del("Host")
	h.Del("Content-Length") // rpcload writes the real one
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\n", u.RequestURI(), host)
	h.Write(&b)
	b.WriteString("Content-Length: ")
	return b.Bytes()
}

// Close closes the connection.
func (c *H1Conn) Close() error { return c.conn.Close() }

// Expire moves the deadline of the request in progress (if any) to t. It
// may be called from another goroutine than the one posting.
func (c *H1Conn) Expire(t time.Time) { c.conn.SetDeadline(t) }

// SetDeadline sets the deadline of the requests that follow (see Post).
func (c *H1Conn) SetDeadline(t time.Time) { c.conn.SetDeadline(t) }

// Reusable reports whether another request may be sent on this connection.
func (c *H1Conn) Reusable() bool { return !c.closing }

// Post sends body and returns the response body appended to dst[:0] with the
// status code. A status outside 2xx also returns *StatusError. Any error
// other than *StatusError leaves the connection unusable; close it. A zero
// deadline keeps the one set before (SetDeadline): setting one costs clock
// reads and two timer updates in the runtime, so a caller may set one for
// many requests and check each request's own time itself.
func (c *H1Conn) Post(body, dst []byte, deadline time.Time) ([]byte, int, error) {
	if c.closing {
		return dst[:0], 0, ErrConnClosed
	}
	if !deadline.IsZero() {
		c.conn.SetDeadline(deadline)
	}
	c.Queue(body)
	if err := c.flush(); err != nil {
		return dst[:0], 0, err
	}
	return c.receive(dst)
}

// Queue adds a request for body to those Flush writes next, without
// writing it: a pipelined connection sends several requests in one write.
func (c *H1Conn) Queue(body []byte) {
	w := append(c.wbuf, c.head...)
	w = strconv.AppendInt(w, int64(len(body)), 10)
	w = append(w, "\r\n\r\n"...)
	c.wbuf = append(w, body...)
}

// Flush writes the queued requests in one write, by deadline.
func (c *H1Conn) Flush(deadline time.Time) error {
	c.conn.SetDeadline(deadline)
	return c.flush()
}

func (c *H1Conn) flush() error {
	_, err := c.conn.Write(c.wbuf)
	c.wbuf = c.wbuf[:0]
	return err
}

// Receive reads the next response, by deadline, as Post does: HTTP/1.1
// answers pipelined requests in the order they were sent. After a response
// that closes the connection (Connection: close, or a body that runs to its
// end) it returns ErrConnClosed at once: no more responses will come.
func (c *H1Conn) Receive(dst []byte, deadline time.Time) ([]byte, int, error) {
	if c.closing {
		return dst[:0], 0, ErrConnClosed
	}
	c.conn.SetDeadline(deadline)
	return c.receive(dst)
}

func (c *H1Conn) receive(dst []byte) ([]byte, int, error) {
	for {
		status, clen, chunked, err := c.readHead()
		if err != nil {
			return dst[:0], status, err
		}
		if status >= 100 && status < 200 {
			continue // an interim response (100 Continue); the real one follows
		}
		switch {
		case status == http.StatusNoContent || status == http.StatusNotModified:
			dst = dst[:0]
		case chunked:
			dst, err = c.readChunked(dst[:0])
		case clen >= 0:
			dst, err = c.readN(dst[:0], clen)
		default:
			// No length: the body runs to the end of the connection.
			c.closing = true
			dst, err = readLimited(c.br, dst[:0], c.maxBody)
		}
		if err != nil {
			return dst, status, err
		}
		if status < 200 || status > 299 {
			return dst, status, &StatusError{Code: status, Body: snippet(dst)}
		}
		if c.sse {
			return dst, status, ErrEventStream
		}
		return dst, status, nil
	}
}

func snippet(b []byte) string {
	if len(b) > 256 {
		b = b[:256]
	}
	return string(bytes.ToValidUTF8(b, []byte("?")))
}

// readHead reads a status line and headers, keeping what framing needs:
// Content-Length (-1 if absent), chunked transfer coding, Connection: close;
// and whether the body is an SSE stream.
func (c *H1Conn) readHead() (status int, clen int64, chunked bool, err error) {
	clen = -1
	c.sse = false
	total := 0
	for lineNo := 0; ; lineNo++ {
		line, err := c.br.ReadSlice('\n')
		total += len(line)
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) || total > maxHeaderBytes {
				return status, clen, chunked, errors.New("transport: HTTP response header too large")
			}
			if errors.Is(err, io.EOF) && total == len(line) && lineNo == 0 && len(line) == 0 {
				return 0, clen, chunked, ErrConnClosed
			}
			return status, clen, chunked, err
		}
		if total > maxHeaderBytes {
			return status, clen, chunked, errors.New("transport: HTTP response header too large")
		}
		line = bytes.TrimRight(line, "\r\n")
		if lineNo == 0 {
			if status, err = parseStatusLine(line); err != nil {
				return 0, clen, chunked, err
			}
			continue
		}
		if len(line) == 0 {
			return status, clen, chunked, nil
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			return status, clen, chunked, fmt.Errorf("transport: malformed HTTP header line %q", snippet(line))
		}
		value = bytes.TrimSpace(value)
		switch {
		case asciiEqualFold(name, "content-length"):
			n, perr := strconv.ParseInt(string(value), 10, 64)
			if perr != nil || n < 0 || (clen >= 0 && clen != n) {
				return status, clen, chunked, fmt.Errorf("transport: bad Content-Length %q", snippet(value))
			}
			clen = n
		case asciiEqualFold(name, "transfer-encoding"):
			chunked = asciiEqualFold(value, "chunked")
			if !chunked && !asciiEqualFold(value, "identity") {
				return status, clen, chunked, fmt.Errorf("transport: unsupported Transfer-Encoding %q", snippet(value))
			}
		case asciiEqualFold(name, "content-type"):
			c.sse = isEventStream(value)
		case asciiEqualFold(name, "connection"):
			if asciiEqualFold(value, "close") {
				c.closing = true
			}
		}
	}
}

func parseStatusLine(line []byte) (int, error) {
	// HTTP/1.1 200 OK
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, fmt.Errorf("transport: not an HTTP/1.x status line: %q", snippet(line))
	}
	code, err := strconv.Atoi(string(line[9:12]))
	if err != nil || code < 100 || code > 999 {
		return 0, fmt.Errorf("transport: bad HTTP status in %q", snippet(line))
	}
	return code, nil
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x := b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if x != s[i] {
			return false
		}
	}
	return true
}

// readN reads a body of exactly n bytes. A body over maxBody is not read:
// the connection is given up instead, so a reply of a gigabyte costs nothing.
func (c *H1Conn) readN(dst []byte, n int64) ([]byte, error) {
	if n > int64(c.maxBody) {
		c.closing = true
		return dst, ErrBodyTooLarge
	}
	dst = grow(dst, int(n))
	_, err := io.ReadFull(c.br, dst[:n])
	return dst[:n], err
}

func (c *H1Conn) readChunked(dst []byte) ([]byte, error) {
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return dst, fmt.Errorf("transport: reading chunk size: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions are ignored
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || n < 0 {
			return dst, fmt.Errorf("transport: bad chunk size %q", snippet(line))
		}
		if n == 0 {
			// Trailers, if any, end with an empty line.
			for {
				t, err := c.br.ReadSlice('\n')
				if err != nil {
					return dst, err
				}
				if len(bytes.TrimRight(t, "\r\n")) == 0 {
					return dst, nil
				}
			}
		}
		// Compare without adding: a chunk size near 2^63 would overflow
		// len(dst)+n into a negative number and pass the check.
		if n > int64(c.maxBody)-int64(len(dst)) {
			c.closing = true
			return dst, ErrBodyTooLarge
		}
		start := len(dst)
		dst = grow(dst, start+int(n))[:start+int(n)]
		if _, err := io.ReadFull(c.br, dst[start:]); err != nil {
			return dst, err
		}
		if _, err := c.br.Discard(2); err != nil { // the CRLF after the chunk
			return dst, err
		}
	}
}

func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b
	}
	nb := make([]byte, len(b), max(n, 2*cap(b)))
	copy(nb, b)
	return nb
}
