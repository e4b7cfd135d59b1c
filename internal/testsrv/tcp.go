package testsrv

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// TCP tuning. The read buffer holds a few hundred typical requests, so one
// read syscall feeds many frames and their replies leave in one write.
const (
	readBufSize = 32 << 10
	flushAt     = 64 << 10 // hand replies to the writer at least this often
	maxOut      = 8 << 20  // reader waits while this much is unwritten (client not reading)
)

// ServeTCP serves newline-delimited JSON-RPC on every connection ln accepts:
// one message per line, replies one per line in completion order, any number
// of requests in flight per connection. Blank lines are skipped. It returns
// nil after Close (ln is closed then), or the accept error that stopped it.
// It is ServeStream(ln, FramingNewline).
func (s *Server) ServeTCP(ln net.Listener) error { return s.ServeStream(ln, FramingNewline) }

// ServeStream serves JSON-RPC framed as f on every connection ln accepts: a
// TCP or a Unix socket listener, or any other. Every connection has any
// number of requests in flight; replies are framed like requests and leave in
// completion order. It returns nil after Close (ln is closed then), the
// accept error that stopped it, or an ErrConfig error for a framing it
// cannot serve (ln is left open then).
func (s *Server) ServeStream(ln net.Listener, f Framing) error {
	if err := streamFraming(f); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ln.Close()
		return nil
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
	}()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and the like: back off like net/http
				// does instead of spinning or giving up.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				t := time.NewTimer(backoff)
				select {
				case <-t.C:
				case <-s.done:
					t.Stop()
					return nil
				}
				continue
			}
			return fmt.Errorf("testsrv: accept: %w", err)
		}
		backoff = 0
		c := s.newConn(nc, nil, f, s.nextRand())
		if !s.addConn(c) {
			_ = nc.Close()
			return nil
		}
		go c.serve()
	}
}

func (s *Server) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// streamConn is one connection of any transport (TCP or Unix socket, stdio,
// WebSocket): a reader goroutine that parses and answers frames, and a writer
// goroutine that owns the write side and the timers of slow replies.
type streamConn struct {
	s       *Server
	rw      io.ReadWriteCloser // the byte stream (net.Conn, stdio); nil on WebSocket
	ws      *websocket.Conn    // the WebSocket; nil on byte streams
	cork    *corkConn          // the WebSocket's connection, batching its writes
	framing Framing
	fr      frameReader // reads rw; nil on WebSocket
	rng     *rand.Rand
	p       proc
	local   []byte // reader-owned replies not yet handed to the writer
	long    []byte // assembles a frame longer than the read buffer

	wake chan struct{} // cap 1: the writer has work
	done chan struct{} // closed by teardown
	wg   sync.WaitGroup

	// mu guards everything below; cond (on mu) wakes a reader waiting for the
	// writer to drain out.
	mu        sync.Mutex
	cond      sync.Cond
	out       []byte
	heap      delayHeap
	seq       uint64 // tie-breaker so equal deadlines keep arrival order
	spinning  int    // replies busy-waiting in their own goroutine
	closeReq  bool   // close after writing what is in out
	closeCode int    // WebSocket close code of that close (0: normal closure)
	readDone  bool   // the client closed its side; finish when nothing is pending
	quiet     bool   // no more output is accepted (closing or torn down)
	torn      bool   // teardown ran
	err       error  // the I/O error that ended the connection, if any

	stopRead atomic.Bool // set by a graceful close: the reader discards input

	proto protoConn // the MCP or LSP state of the connection; nil in plain JSON-RPC mode
}

// newConn returns a connection over rw (a byte stream) or ws.
func (s *Server) newConn(rw io.ReadWriteCloser, ws *websocket.Conn, f Framing, rng *rand.Rand) *streamConn {
	c := &streamConn{
		s:       s,
		rw:      rw,
		ws:      ws,
		framing: f,
		rng:     rng,
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	if rw != nil {
		c.fr = newFrameReader(rw, f, s.cfg.MaxFrame)
	}
	c.p.s = s
	c.cond.L = &c.mu
	c.proto = s.newProtoConn(c)
	return c
}

// addConn registers c so Close tears it down, and counts it in s.wg; false if
// the server is closed.
func (s *Server) addConn(c *streamConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return true
}

// serve runs the connection to its end; it balances addConn.
func (c *streamConn) serve() {
	defer c.s.wg.Done()
	c.wg.Add(1)
	go c.writer()
	c.readLoop()
	c.wg.Wait()
	c.finishConn()
}

// finishConn tears the connection down (normally done already, this makes
// sure it never leaks) and unregisters it.
func (c *streamConn) finishConn() {
	c.teardown()
	if c.proto != nil {
		c.proto.stop()
	}
	c.s.mu.Lock()
	delete(c.s.conns, c)
	c.s.mu.Unlock()
}

var errTooLarge = errors.New("testsrv: request too large")

func (c *streamConn) readLoop() {
	for {
		frame, err := c.readFrame()
		if err != nil {
			c.readFailed(err)
			return
		}
		if c.stopRead.Load() { // closed while this frame was on its way
			c.drain()
			return
		}
		if c.framing != FramingNewline || len(blankTrim(frame)) > 0 {
			c.handle(frame)
		}
		if c.fr == nil || !c.fr.Buffered() || len(c.local) >= flushAt {
			c.flushLocal()
		}
		if c.stopRead.Load() {
			c.drain()
			return
		}
	}
}

// readFailed ends the reader after readFrame failed.
func (c *streamConn) readFailed(err error) {
	var he *transport.HeaderError
	var ce *websocket.CloseError
	switch {
	case errors.Is(err, errTooLarge):
		c.breakFraming(wire.CodeInvalidRequest, msgInvalidRequest, []byte(`"request too large"`), websocket.CloseMessageTooBig)
	case errors.As(err, &he):
		c.breakFraming(wire.CodeParseError, msgParseError, wire.AppendString(nil, he.Reason), websocket.CloseProtocolError)
	case errors.Is(err, io.EOF), errors.As(err, &ce):
		// The client finished sending; answer what is pending, then close.
		c.flushLocal()
		c.mu.Lock()
		c.readDone = true
		c.mu.Unlock()
		c.signal()
	default:
		c.fail(err)
	}
}

// breakFraming answers a frame that broke the framing with an error reply
// (on WebSocket the close code says it instead) and closes the connection
// after the replies before it: what follows on the stream cannot be read.
func (c *streamConn) breakFraming(code int64, msg string, data []byte, wsCode int) {
	c.flushLocal()
	if c.ws == nil {
		dst, start := c.beginFrame(c.local)
		c.local = c.endFrame(wire.AppendError(dst, nil, code, msg, data), start)
		c.flushLocal()
	}
	c.requestClose(wsCode)
	c.drain()
}

// blankTrim strips JSON whitespace so that blank lines can be skipped.
func blankTrim(b []byte) []byte {
	return b[wire.SkipSpace(b, 0):]
}

// handle answers one frame: immediately into c.local when possible, else via
// the writer's timer heap (slow methods, delay fault, stall, close).
func (c *streamConn) handle(frame []byte) {
	s := c.s
	s.countRequest()
	if c.proto != nil {
		c.proto.frame(frame)
		return
	}
	p := &c.p
	p.eval(frame)
	f, target := fNone, -1
	if len(s.specs) > 0 {
		f, target = p.roll(s.specs, c.rng)
	}
	if f == fDrop {
		s.count(f)
		return
	}
	if !p.willReply(f) {
		return
	}
	delay, spin := p.cost(f)
	if f == fDelay {
		delay += s.cfg.FaultDelay
	}
	delay += s.queued(p)
	if f == fClose {
		// Replies completed before this one still go out, then the close.
		c.flushLocal()
		if wait := s.deliverAfter(delay); wait > 0 {
			it := getItem()
			it.close, it.fault = true, f
			c.schedule(it, wait)
			return
		}
		// Closing now: no later frame of this connection is answered, which
		// keeps what the client sees independent of goroutine timing.
		s.count(f)
		c.requestClose(websocket.CloseNormalClosure)
		c.stopRead.Store(true)
		return
	}
	wait := delay
	if spin == 0 {
		if s.cfg.Shuffle > 0 {
			delay += time.Duration(c.rng.Int64N(int64(s.cfg.Shuffle)))
		}
		wait = s.deliverAfter(delay)
	}
	if wait == 0 && spin == 0 {
		c.local = c.appendReply(c.local, f, target)
		s.count(f)
		return
	}
	it := getItem()
	it.buf, it.fault = c.appendReply(it.buf[:0], f, target), f
	if spin > 0 {
		c.spin(it, spin, delay)
		return
	}
	c.schedule(it, wait)
}

// appendReply appends the reply frame(s) for the evaluated frame.
func (c *streamConn) appendReply(dst []byte, f fid, target int) []byte {
	dst, start := c.beginFrame(dst)
	dst = c.endFrame(c.p.assemble(dst, f, target), start)
	if f == fDuplicate {
		dst = append(dst, dst[start:]...)
	}
	return dst
}

// spin busy-waits for d in its own goroutine (so the connection keeps
// reading), then schedules the reply after the remaining timer delay.
func (c *streamConn) spin(it *delayItem, d, delay time.Duration) {
	c.mu.Lock()
	if c.quiet {
		c.mu.Unlock()
		putItem(it)
		return
	}
	c.spinning++
	c.wg.Add(1) // under mu while !quiet: the writer has not exited (see ServeStdio)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		busyWait(d, c.done)
		c.mu.Lock()
		c.spinning--
		c.mu.Unlock()
		c.schedule(it, c.s.deliverAfter(delay))
	}()
}

// busyWait burns CPU for d (checking stop now and then) because spin exists
// to model CPU-bound handlers, which a timer would not.
func busyWait(d time.Duration, stop <-chan struct{}) {
	start := time.Now()
	for n := 0; time.Since(start) < d; n++ {
		if n&1023 == 0 {
			select {
			case <-stop:
				return
			default:
			}
		}
	}
}

// flushLocal hands the reader's replies to the writer.
func (c *streamConn) flushLocal() {
	if len(c.local) == 0 {
		return
	}
	c.mu.Lock()
	for len(c.out) > maxOut && !c.quiet {
		c.cond.Wait()
	}
	switch {
	case c.quiet:
		c.local = c.local[:0]
	case len(c.out) == 0:
		c.out, c.local = c.local, c.out[:0]
	default:
		c.out = append(c.out, c.local...)
		c.local = c.local[:0]
	}
	c.mu.Unlock()
	c.signal()
}

func (c *streamConn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}
