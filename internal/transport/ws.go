package transport

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// WebSocket streams (ws://, wss://) use github.com/gorilla/websocket for
// what is fiddly and off the hot path: the handshake, ping/pong and close
// handling, and reading: NextReader hands out each message as an io.Reader,
// so we read it into one reused buffer bounded by MaxFrame instead of
// holding a message of whatever size the server chose (ReadMessage would
// allocate every message; SetReadLimit would end the connection).
//
// Data frames we write ourselves, into a buffer we own. Gorilla's client
// writer costs an allocation per message (NextWriter's messageWriter; the
// allocation-free WriteMessage path is server-only) and one Write, hence one
// syscall, per message. Our Send appends a masked frame to wbuf and Flush
// writes everything queued in one Write: measured with BenchmarkWSRoundTrip,
// 64 pipelined messages cost one write syscall instead of 64.
//
// Frames must not interleave on the socket, and gorilla writes control
// frames (pong replies, the close reply) from the goroutine that reads. So
// gorilla gets a wsNetConn from its dial hook: every byte written to the
// connection, gorilla's or ours, goes through its mutex in one Write with
// its own deadline, and a pong's 1 s deadline cannot cut a Flush short.

func init() {
	streamDialers[WS] = dialWebSocket
	streamDialers[WSS] = dialWebSocket
}

// WebSocket opcodes and close code we write ourselves (RFC 6455 5.2, 7.4).
const (
	wsOpText        = 0x1
	wsOpClose       = 0x8
	wsNormalClosure = 1000
)

// wsHandshakeTimeout bounds the TCP, TLS and HTTP upgrade exchange when ctx
// has no earlier deadline.
const wsHandshakeTimeout = 10 * time.Second

// wsReadBuffer is gorilla's read buffer: many small messages per read(2).
const wsReadBuffer = 64 << 10

func dialWebSocket(ctx context.Context, t Target, o StreamOptions) (Stream, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	return dialWS(ctx, t, o, d.DialContext)
}

// dialWS opens a WebSocket stream to t.URL; dial makes the TCP connection
// (tests pass one that counts writes).
func dialWS(ctx context.Context, t Target, o StreamOptions, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (Stream, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	var nc *wsNetConn
	// Gorilla only watches ctx while dialing; closing the connection when ctx
	// ends also cuts the TLS handshake and the HTTP exchange short.
	stop := func() bool { return true }
	plain := func(hctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(hctx, network, addr)
		if err != nil {
			return nil, err
		}
		nc = &wsNetConn{Conn: c}
		stop = context.AfterFunc(ctx, func() { c.Close() })
		return nc, nil
	}
	d := websocket.Dialer{
		NetDialContext: plain,
		NetDialTLSContext: func(hctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(hctx, network, addr)
			if err != nil {
				return nil, err
			}
			// Certificates are checked against the URL's host even when a
			// Host header overrides the name sent, as with https targets.
			tc := tls.Client(c, o.TLS.Config(u.Hostname(), "http/1.1"))
			if err := tc.HandshakeContext(hctx); err != nil {
				c.Close()
				return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
			}
			nc = &wsNetConn{Conn: tc}
			stop = context.AfterFunc(ctx, func() { c.Close() })
			return nc, nil
		},
		HandshakeTimeout: wsHandshakeTimeout,
		ReadBufferSize:   wsReadBuffer,
		WriteBufferSize:  1, // gorilla's message writer is never used
	}
	h := make(http.Header, len(o.Header))
	for k, v := range o.Header {
		// Canonical names, so gorilla sees "Host" (and sends it as the Host
		// of the request, like h1.go) whatever case the user wrote.
		h[http.CanonicalHeaderKey(k)] = v
	}
	ws, resp, err := d.DialContext(ctx, t.URL, h)
	if !stop() && err == nil {
		ws.Close()
		err = context.Cause(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return nil, wsDialError(t.URL, resp, err)
	}
	maxFrame := max(0, o.MaxFrame)
	// A message is skipped past MaxFrame, but not without end: one that
	// announces (or grows to) more than wsGiveUp costs the connection, as
	// an HTTP body over the limit does. A frame length of 2^62 is refused
	// as soon as its header is read.
	ws.SetReadLimit(wsGiveUp(maxFrame))
	s := &wsStream{ws: ws, nc: nc, max: maxFrame, wbuf: make([]byte, 0, 64<<10), rbuf: make([]byte, 0, min(4<<10, maxFrame))}
	reply := ws.CloseHandler() // gorilla's: answers the server's close frame
	ws.SetCloseHandler(func(code int, text string) error {
		s.peerClosed.Store(true)
		return reply(code, text)
	})
	return s, nil
}

// wsDialError names the HTTP status of a refused upgrade.
func wsDialError(target string, resp *http.Response, err error) error {
	if resp == nil || !errors.Is(err, websocket.ErrBadHandshake) {
		return fmt.Errorf("transport: WebSocket dial %s: %w", target, err)
	}
	if resp.StatusCode == http.StatusSwitchingProtocols || resp.StatusCode/100 == 2 {
		return fmt.Errorf("transport: WebSocket dial %s: HTTP %d but no valid upgrade: %w", target, resp.StatusCode, err)
	}
	body, _ := io.ReadAll(resp.Body) // gorilla kept at most 1 KiB of it
	return fmt.Errorf("%w (WebSocket upgrade of %s)", &StatusError{Code: resp.StatusCode, Body: snippet(body)}, target)
}

// wsNetConn is the connection gorilla writes to. mu serializes every write
// to the socket and its deadline, gorilla's (handshake, pong, close reply)
// and ours (Flush, the close frame of Close).
type wsNetConn struct {
	net.Conn
	mu  sync.Mutex
	wdl time.Time // guarded by mu: gorilla's write deadline, applied by Write
	set time.Time // guarded by mu: the deadline last set on the connection
	err error     // guarded by mu: a write stopped inside a frame; no more writes
	// reads counts the reads that returned data. Gorilla reads only from
	// the goroutine that calls Recv (after the handshake, which the dialling
	// goroutine finished before the stream was handed over).
	reads uint64
}

func (c *wsNetConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.reads++
	}
	return n, err
}

// SetWriteDeadline records gorilla's deadline for its own next Write, so it
// never changes the deadline of a Flush in progress.
func (c *wsNetConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.wdl = t
	c.mu.Unlock()
	return nil
}

// SetDeadline is called by gorilla around the handshake.
func (c *wsNetConn) SetDeadline(t time.Time) error {
	c.SetWriteDeadline(t)
	return c.Conn.SetReadDeadline(t)
}

func (c *wsNetConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writeLocked(p, c.wdl)
}

func (c *wsNetConn) writeLocked(p []byte, deadline time.Time) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	// Setting a deadline costs a clock read and a runtime timer update; a
	// sender that writes often passes the same deadline for a while.
	if !deadline.Equal(c.set) {
		c.Conn.SetWriteDeadline(deadline)
		c.set = deadline
	}
	n, err := c.Conn.Write(p)
	if err != nil && n > 0 {
		c.err = fmt.Errorf("a write stopped inside a frame: %w", err)
	}
	return n, err
}

// wsStream is a Stream over one WebSocket connection: one JSON-RPC message
// per WebSocket message. Send and Flush belong to the sending goroutine,
// Recv to the receiving one; Close may be called from any goroutine.
type wsStream struct {
	ws  *websocket.Conn
	nc  *wsNetConn
	max int

	wbuf []byte // sender: frames queued by Send, masked, ready to write

	rbuf    []byte // receiver: the last message; cap(rbuf) <= max
	rerr    error  // receiver: sticky; gorilla panics on 1000 reads after an error
	scratch [512]byte
	// skip is the rest of a message already reported as too large, read
	// and dropped by the next Recv.
	skip io.Reader

	peerClosed atomic.Bool // the server sent a close frame and gorilla answered it
	// closing is set by Close before its close frame goes out: the server's
	// answering close frame can reach Recv before the connection is closed,
	// and a caller that closed the stream must see net.ErrClosed either way.
	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Send queues msg as one masked text frame (RFC 6455 5.2, 5.3).
func (s *wsStream) Send(msg []byte) error {
	s.wbuf = appendWSFrame(s.wbuf, wsOpText, msg, rand.Uint32())
	return nil
}

// appendWSFrame appends a final, masked client frame carrying payload.
func appendWSFrame(dst []byte, op byte, payload []byte, key uint32) []byte {
	const finBit, maskBit = 0x80, 0x80
	n := len(payload)
	dst = append(dst, finBit|op)
	switch {
	case n <= 125:
		dst = append(dst, maskBit|byte(n))
	case n <= 0xffff:
		dst = append(dst, maskBit|126, byte(n>>8), byte(n))
	default:
		dst = append(dst, maskBit|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	dst = binary.LittleEndian.AppendUint32(dst, key)
	start := len(dst)
	dst = append(dst, payload...)
	maskWS(dst[start:], key)
	return dst
}

// maskWS XORs b with the masking key whose wire bytes are key in
// little-endian order, eight bytes at a time.
func maskWS(b []byte, key uint32) {
	k8 := uint64(key) | uint64(key)<<32
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k8)
	}
	for ; i < len(b); i++ {
		b[i] ^= byte(key >> (8 * (i & 3)))
	}
}

// Flush writes every queued frame in one Write. A write that fails after
// putting part of it on the wire has broken the framing, so it ends the
// stream's writes.
func (s *wsStream) Flush(deadline time.Time) error {
	if len(s.wbuf) == 0 {
		return nil
	}
	s.nc.mu.Lock()
	_, err := s.nc.writeLocked(s.wbuf, deadline)
	s.nc.mu.Unlock()
	s.wbuf = s.wbuf[:0]
	if err != nil {
		return fmt.Errorf("transport: WebSocket write: %w", err)
	}
	return nil
}

// Reads counts the reads from the connection that returned data.
func (s *wsStream) Reads() uint64 { return s.nc.reads }

// wsGiveUp is the message size past which a WebSocket stream gives up its
// connection instead of skipping the message: 64 times the frame limit, at
// least 64 MiB.
func wsGiveUp(maxFrame int) int64 {
	return max(64*int64(maxFrame), 64<<20)
}

// errWSGiveUp reports a message over wsGiveUp: the connection was closed.
var errWSGiveUp = errors.New("transport: WebSocket message far larger than --max-frame: connection given up")

// Recv returns the next text or binary message. A message longer than max is
// reported as ErrFrameTooLarge as soon as it grows past max, and the next
// Recv reads the rest and drops it, never holding it. A message longer than
// wsGiveUp ends the stream (ErrFrameTooLarge first if it was not yet
// reported).
func (s *wsStream) Recv() ([]byte, error) {
	if s.rerr != nil {
		return nil, s.rerr
	}
	if r := s.skip; r != nil {
		s.skip = nil
		if err := s.discard(r); err != nil {
			return nil, err
		}
	}
	_, r, err := s.ws.NextReader() // allocates gorilla's 8-byte messageReader
	if err != nil && s.closing.Load() {
		s.rerr = fmt.Errorf("transport: WebSocket read after Close: %w", net.ErrClosed)
		return nil, s.rerr
	}
	if errors.Is(err, websocket.ErrReadLimit) {
		s.rerr = errWSGiveUp
		return nil, ErrFrameTooLarge // counted once; the next Recv ends the stream
	}
	if err != nil {
		s.rerr = wsReadError(err, false)
		return nil, s.rerr
	}
	buf := s.rbuf[:0]
	for {
		if len(buf) == cap(buf) && cap(buf) < s.max {
			nb := make([]byte, len(buf), min(max(2*cap(buf), 512), s.max))
			copy(nb, buf)
			buf = nb
			s.rbuf = nb
		}
		p := buf[len(buf):cap(buf)]
		if len(p) == 0 { // buf holds max bytes: one more makes it too large
			p = s.scratch[:1]
		}
		n, err := r.Read(p)
		if (n > 0 && len(buf) == cap(buf)) || errors.Is(err, websocket.ErrReadLimit) {
			// Reported now, not when (if ever) the message ends.
			s.skip = r
			return nil, ErrFrameTooLarge
		}
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			s.rerr = wsReadError(err, true)
			return nil, s.rerr
		}
	}
}

// discard reads the rest of an oversized message into scratch; an error
// ends the stream.
func (s *wsStream) discard(r io.Reader) error {
	for {
		_, err := r.Read(s.scratch[:])
		switch {
		case err == io.EOF:
			return nil
		case errors.Is(err, websocket.ErrReadLimit):
			s.rerr = errWSGiveUp
			return s.rerr
		case err != nil:
			s.rerr = wsReadError(err, true)
			return s.rerr
		}
	}
}

// wsReadError says how the connection ended. Gorilla reports an end of the
// TCP stream as close code 1006, which no peer may send.
func wsReadError(err error, inMessage bool) error {
	var ce *websocket.CloseError
	switch {
	case errors.As(err, &ce) && ce.Code == websocket.CloseAbnormalClosure && inMessage:
		return fmt.Errorf("transport: WebSocket connection ended inside a message: %w", io.ErrUnexpectedEOF)
	case errors.As(err, &ce) && ce.Code == websocket.CloseAbnormalClosure:
		return fmt.Errorf("transport: WebSocket connection closed without a close frame: %w", io.EOF)
	case errors.As(err, &ce) && inMessage:
		return fmt.Errorf("transport: WebSocket closed by the server inside a message: %w", err)
	case errors.As(err, &ce):
		return fmt.Errorf("transport: WebSocket closed by the server: %w", err)
	}
	return fmt.Errorf("transport: WebSocket read: %w", err)
}

// Close sends a close frame if no Flush holds the connection (waiting for
// one could take its whole deadline), then closes the connection, which
// unblocks Recv and Flush.
func (s *wsStream) Close() error {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		if !s.peerClosed.Load() && s.nc.mu.TryLock() {
			var payload [2]byte
			binary.BigEndian.PutUint16(payload[:], wsNormalClosure)
			var frame [8]byte
			s.nc.writeLocked(appendWSFrame(frame[:0], wsOpClose, payload[:], rand.Uint32()), time.Now().Add(100*time.Millisecond))
			s.nc.mu.Unlock()
		}
		s.closeErr = s.ws.Close()
	})
	return s.closeErr
}
