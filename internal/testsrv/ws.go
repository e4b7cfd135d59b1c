package testsrv

import (
	"bufio"
	"encoding/binary"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// WebSocket tuning: buffers as large as the TCP read buffer, so a typical
// reply is written as one frame.
const wsBufSize = 32 << 10

// upgrader accepts every origin: the server is a load-test target, and load
// generators send no (or an arbitrary) Origin header.
var upgrader = websocket.Upgrader{
	ReadBufferSize:  wsBufSize,
	WriteBufferSize: wsBufSize,
	CheckOrigin:     func(*http.Request) bool { return true },
}

// WSHandler returns the WebSocket transport: it upgrades every request
// (answering non-WebSocket requests with the upgrader's 4xx) and then serves
// JSON-RPC with one message per WebSocket text message (binary messages are
// read the same way), replies as text messages in completion order, and any
// number of requests in flight, slow methods answered from timers like on
// TCP. A message over Config.MaxFrame closes the connection with status 1009
// (message too big) after the replies before it. When the client sends a
// close frame, pending replies are delivered before the server answers it.
// Handler serves the same on path /ws for WebSocket upgrade requests.
func (s *Server) WSHandler() http.Handler { return wsHandler{s} }

type wsHandler struct{ s *Server }

func (h wsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.s.enter() {
		http.Error(w, "testsrv: server closed", http.StatusServiceUnavailable)
		return
	}
	defer h.s.wg.Done()
	h.s.serveWS(w, r)
}

// serveWS upgrades the request and serves the connection until it ends.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	hw := &hijackWriter{ResponseWriter: w}
	ws, err := upgrader.Upgrade(hw, r, nil)
	if err != nil {
		return // the upgrader has answered with an HTTP error
	}
	// The connection's PRNG: the one ConnContext gave it (no HTTP request
	// uses it any more), else the next connection index.
	rng := s.nextRandFor(r)
	c := s.newConn(nil, ws, framingWS, rng)
	c.cork = hw.cork
	// Deliver pending replies before answering a close frame (the writer
	// answers it when nothing is pending, like a TCP half-close).
	ws.SetCloseHandler(func(int, string) error { return nil })
	if !s.addConn(c) {
		_ = ws.Close()
		return
	}
	c.serve()
}

// readWS returns the next message, read into c.long.
func (c *streamConn) readWS() ([]byte, error) {
	_, r, err := c.ws.NextReader()
	if err != nil {
		return nil, err
	}
	body, err := readBody(r, c.long[:0], c.s.cfg.MaxFrame)
	c.long = body[:0]
	if cap(c.long) > 4*readBufSize {
		c.long = nil // do not pin a huge buffer per idle connection
	}
	return body, err
}

// write writes buf, which holds whole frames, to the connection: in one
// write on a byte stream, one message per record on WebSocket.
func (c *streamConn) write(buf []byte) error {
	if c.ws == nil {
		_, err := c.rw.Write(buf)
		return err
	}
	// Records are a 4-byte big-endian length and the message (endFrame).
	c.cork.hold()
	for len(buf) >= 4 {
		n := int(binary.BigEndian.Uint32(buf)) + 4
		if err := c.ws.WriteMessage(websocket.TextMessage, buf[4:n]); err != nil {
			_ = c.cork.flush()
			return err
		}
		buf = buf[n:]
	}
	return c.cork.flush()
}

// hijackWriter hands the upgrader a corkConn instead of the bare connection.
type hijackWriter struct {
	http.ResponseWriter
	cork *corkConn
}

func (h *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.cork = &corkConn{Conn: nc}
	return h.cork, brw, nil
}

// corkConn lets the writer send a batch of WebSocket messages in one write
// (gorilla/websocket writes every frame on its own): between hold and flush,
// writes are buffered. Writes from other goroutines (pongs, close frames)
// are whole frames; mu keeps them from landing inside a flush.
type corkConn struct {
	net.Conn
	mu   sync.Mutex // guards held and buf, and orders writes to Conn
	held bool
	buf  []byte
}

func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// hold starts buffering. A nil corkConn does nothing.
func (c *corkConn) hold() {
	if c != nil {
		c.mu.Lock()
		c.held = true
		c.mu.Unlock()
	}
}

// flush writes what was buffered since hold and stops buffering.
func (c *corkConn) flush() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = false
	if len(c.buf) == 0 {
		return nil
	}
	// A pong may have left its own deadline on the connection.
	_ = c.Conn.SetWriteDeadline(time.Time{})
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	if cap(c.buf) > 4*maxOut {
		c.buf = nil
	}
	return err
}

// closeReason is the reason text of the server's close frames.
func closeReason(code int) string {
	if code == websocket.CloseMessageTooBig {
		return "request too large"
	}
	return ""
}
