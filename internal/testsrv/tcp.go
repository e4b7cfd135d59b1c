package testsrv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

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
func (s *Server) ServeTCP(ln net.Listener) error {
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
		if !s.startConn(nc) {
			_ = nc.Close()
			return nil
		}
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

// tcpConn is one NDJSON connection: a reader goroutine that parses and
// answers frames, and a writer goroutine that owns the socket's write side
// and the timers of slow replies.
type tcpConn struct {
	s     *Server
	nc    net.Conn
	br    *bufio.Reader
	rng   *rand.Rand
	p     proc
	local []byte // reader-owned replies not yet handed to the writer
	long  []byte // assembles a line longer than the read buffer

	wake chan struct{} // cap 1: the writer has work
	done chan struct{} // closed by teardown
	wg   sync.WaitGroup

	// mu guards everything below; cond (on mu) wakes a reader waiting for the
	// writer to drain out.
	mu       sync.Mutex
	cond     sync.Cond
	out      []byte
	heap     delayHeap
	seq      uint64 // tie-breaker so equal deadlines keep arrival order
	spinning int    // replies busy-waiting in their own goroutine
	closeReq bool   // close after writing what is in out
	readDone bool   // the client closed its side; finish when nothing is pending
	quiet    bool   // no more output is accepted (closing or torn down)
	torn     bool   // teardown ran

	stopRead atomic.Bool // set by a graceful close: the reader discards input
}

// startConn registers nc and starts its goroutines; false if closed.
func (s *Server) startConn(nc net.Conn) bool {
	c := &tcpConn{
		s:    s,
		nc:   nc,
		br:   bufio.NewReaderSize(nc, readBufSize),
		rng:  s.nextRand(),
		wake: make(chan struct{}, 1),
		done: make(chan struct{}),
	}
	c.p.s = s
	c.cond.L = &c.mu
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go c.serve()
	return true
}

func (c *tcpConn) serve() {
	defer c.s.wg.Done()
	c.wg.Add(1)
	go c.writer()
	c.readLoop()
	c.wg.Wait()
	c.teardown() // normally done already; makes sure the socket never leaks
	c.s.mu.Lock()
	delete(c.s.conns, c)
	c.s.mu.Unlock()
}

var errTooLarge = errors.New("testsrv: request too large")

func (c *tcpConn) readLoop() {
	for {
		frame, err := c.readFrame()
		switch {
		case err == nil:
		case errors.Is(err, errTooLarge):
			c.flushLocal()
			c.local = wire.AppendError(c.local, nil, wire.CodeInvalidRequest, msgInvalidRequest, []byte(`"request too large"`))
			c.local = append(c.local, '\n')
			c.flushLocal()
			c.requestClose()
			c.drain()
			return
		case errors.Is(err, io.EOF):
			// The client finished sending; answer what is pending, then close.
			c.flushLocal()
			c.mu.Lock()
			c.readDone = true
			c.mu.Unlock()
			c.signal()
			return
		default:
			c.teardown()
			return
		}
		if c.stopRead.Load() { // closed while this frame was on its way
			c.drain()
			return
		}
		if len(blankTrim(frame)) > 0 {
			c.handle(frame)
		}
		if c.br.Buffered() == 0 || len(c.local) >= flushAt {
			c.flushLocal()
		}
		if c.stopRead.Load() {
			c.drain()
			return
		}
	}
}

// blankTrim strips JSON whitespace so that blank lines can be skipped.
func blankTrim(b []byte) []byte {
	i := skipWS(b, 0)
	return b[i:]
}

// readFrame returns the next line without its line ending. The slice aliases
// the read buffer until the next call.
func (c *tcpConn) readFrame() ([]byte, error) {
	limit := c.s.cfg.MaxFrame
	line, err := c.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		c.long = append(c.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(c.long) > limit+2 { // +2: the line ending is not part of the frame
				c.long = nil
				return nil, errTooLarge
			}
			line, err = c.br.ReadSlice('\n')
			c.long = append(c.long, line...)
		}
		line = c.long
		if cap(c.long) > 4*readBufSize {
			c.long = nil // do not pin a huge buffer per idle connection
		}
	}
	if err != nil && (!errors.Is(err, io.EOF) || len(line) == 0) {
		return nil, err
	}
	// A last line without '\n' before EOF is still a frame; EOF comes next call.
	n := len(line)
	if n > 0 && line[n-1] == '\n' {
		n--
	}
	if n > 0 && line[n-1] == '\r' {
		n--
	}
	if n > limit {
		return nil, errTooLarge
	}
	return line[:n], nil
}

// handle answers one frame: immediately into c.local when possible, else via
// the writer's timer heap (slow methods, delay fault, stall, close).
func (c *tcpConn) handle(frame []byte) {
	s := c.s
	s.requests.Add(1)
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
		c.requestClose()
		c.stopRead.Store(true)
		return
	}
	wait := delay
	if spin == 0 {
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

// appendReply appends the reply line(s) for the evaluated frame.
func (c *tcpConn) appendReply(dst []byte, f fid, target int) []byte {
	start := len(dst)
	dst = append(c.p.assemble(dst, f, target), '\n')
	if f == fDuplicate {
		dst = append(dst, dst[start:]...)
	}
	return dst
}

// spin busy-waits for d in its own goroutine (so the connection keeps
// reading), then schedules the reply after the remaining timer delay.
func (c *tcpConn) spin(it *delayItem, d, delay time.Duration) {
	c.mu.Lock()
	if c.quiet {
		c.mu.Unlock()
		putItem(it)
		return
	}
	c.spinning++
	c.mu.Unlock()
	c.wg.Add(1)
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
func (c *tcpConn) flushLocal() {
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

func (c *tcpConn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}
