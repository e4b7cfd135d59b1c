package testsrv

import (
	"io"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// delayItem is a reply waiting for its time: a slow method, the delay fault,
// a stall, or a close that must happen when the reply would have.
type delayItem struct {
	at    time.Time
	seq   uint64
	buf   []byte
	close bool // close the connection instead of writing buf
	fault fid  // counted when the item takes effect
}

var itemPool = sync.Pool{New: func() any { return new(delayItem) }}

func getItem() *delayItem { return itemPool.Get().(*delayItem) }

func putItem(it *delayItem) {
	buf := it.buf[:0]
	if cap(buf) > 1<<16 {
		buf = nil
	}
	*it = delayItem{buf: buf}
	itemPool.Put(it)
}

// delayHeap is a binary min-heap on (at, seq). It is hand-written rather than
// container/heap so pushes and pops stay free of interface conversions.
type delayHeap []*delayItem

func (h delayHeap) less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].seq < h[j].seq
	}
	return h[i].at.Before(h[j].at)
}

func (h *delayHeap) push(it *delayItem) {
	*h = append(*h, it)
	a := *h
	for i := len(a) - 1; i > 0; {
		parent := (i - 1) / 2
		if !a.less(i, parent) {
			break
		}
		a[i], a[parent] = a[parent], a[i]
		i = parent
	}
}

func (h *delayHeap) pop() *delayItem {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a[n] = nil
	a = a[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && a.less(l, m) {
			m = l
		}
		if r < n && a.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}

// schedule queues it to take effect after wait.
func (c *streamConn) schedule(it *delayItem, wait time.Duration) {
	it.at = time.Now().Add(wait)
	c.mu.Lock()
	if c.quiet {
		c.mu.Unlock()
		putItem(it)
		return
	}
	c.seq++
	it.seq = c.seq
	c.heap.push(it)
	first := c.heap[0] == it
	c.mu.Unlock()
	if first {
		c.signal() // the writer re-arms its timer for the new earliest item
	}
}

// writer owns the socket's write side. It wakes for new output, for the
// earliest due item of the heap, or for teardown; every wake writes all that
// accumulated in one syscall, which is what keeps pipelined load cheap.
func (c *streamConn) writer() {
	defer c.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var armed time.Time // deadline the timer is set for; zero = not armed
	var buf []byte
	for {
		select {
		case <-c.wake:
		case <-timer.C:
			armed = time.Time{}
		case <-c.done:
			return
		}
		c.mu.Lock()
		if c.quiet {
			c.mu.Unlock()
			return
		}
		if len(c.heap) > 0 {
			now := time.Now()
			for len(c.heap) > 0 && !c.closeReq && !c.heap[0].at.After(now) {
				it := c.heap.pop()
				if it.close {
					c.closeReq = true
				} else {
					c.out = append(c.out, it.buf...)
				}
				c.s.count(it.fault)
				putItem(it)
			}
			if len(c.heap) > 0 && !c.closeReq && !c.heap[0].at.Equal(armed) {
				armed = c.heap[0].at
				timer.Reset(armed.Sub(now))
			}
		}
		buf, c.out = c.out, buf[:0]
		closeNow, code := c.closeReq, c.closeCode
		finished := c.readDone && c.spinning == 0 && len(c.heap) == 0
		c.cond.Broadcast()
		c.mu.Unlock()
		if len(buf) > 0 {
			if err := c.write(buf); err != nil {
				c.fail(err)
				return
			}
		}
		if cap(buf) > 4*maxOut {
			buf = nil
		}
		switch {
		case closeNow:
			c.closeGracefully(code)
			return
		case finished:
			if c.ws != nil { // answer the client's close frame
				_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(lingerTimeout))
			}
			c.teardown()
			return
		}
	}
}

// drain discards input until the client closes or the linger deadline set by
// closeGracefully passes. Closing a socket that still holds unread input
// makes the kernel send RST, which can destroy replies the client has not
// read yet; draining turns the close into an orderly FIN. The teardown is
// left to the connection's owner, after the writer has flushed and closed.
func (c *streamConn) drain() {
	if c.ws != nil {
		for { // NextReader skips the rest of each message; it fails once
			if _, _, err := c.ws.NextReader(); err != nil {
				return
			}
		}
	}
	_, _ = io.Copy(io.Discard, c.rw) // what the reader buffered goes with it
}

// requestClose makes the writer close the connection after flushing; on
// WebSocket with close code wsCode (the first one asked for wins).
func (c *streamConn) requestClose(wsCode int) {
	c.mu.Lock()
	c.closeReq = true
	if c.closeCode == 0 {
		c.closeCode = wsCode
	}
	c.mu.Unlock()
	c.signal()
}

// silence stops all further output and drops pending replies. Callers hold
// c.mu.
func (c *streamConn) silence() {
	c.quiet = true
	for _, it := range c.heap {
		putItem(it)
	}
	c.heap = nil
	c.cond.Broadcast()
}

// teardown closes the connection now and drops everything pending.
func (c *streamConn) teardown() {
	c.mu.Lock()
	if c.torn {
		c.mu.Unlock()
		return
	}
	c.torn = true
	c.silence()
	c.mu.Unlock()
	close(c.done)
	if c.ws != nil {
		_ = c.ws.Close()
	} else {
		_ = c.rw.Close()
	}
}

// fail records err as what ended the connection (unless it was torn down
// already, which makes the error moot) and tears it down.
func (c *streamConn) fail(err error) {
	c.mu.Lock()
	if !c.torn && c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	c.teardown()
}

// lingerTimeout bounds how long a gracefully closed connection waits for the
// client to close its side.
const lingerTimeout = 2 * time.Second

// closeGracefully ends the connection after the writer flushed: it sends FIN
// (a WebSocket close frame with wsCode, 0 meaning normal closure), so the
// client reads every reply and then the end, and lets the reader drain input
// until the client closes or lingerTimeout passes. A stream that cannot
// half-close (stdio) is closed at once.
func (c *streamConn) closeGracefully(wsCode int) {
	c.mu.Lock()
	c.silence()
	c.mu.Unlock()
	deadline := time.Now().Add(lingerTimeout)
	if c.ws != nil {
		if wsCode == 0 {
			wsCode = websocket.CloseNormalClosure
		}
		msg := websocket.FormatCloseMessage(wsCode, closeReason(wsCode))
		if c.ws.WriteControl(websocket.CloseMessage, msg, deadline) != nil {
			c.teardown()
			return
		}
		c.stopRead.Store(true)
		_ = c.ws.SetReadDeadline(deadline)
		return
	}
	type halfCloser interface {
		CloseWrite() error
		SetReadDeadline(time.Time) error
	}
	hc, ok := c.rw.(halfCloser)
	if !ok || hc.CloseWrite() != nil {
		c.teardown()
		return
	}
	c.stopRead.Store(true)
	_ = hc.SetReadDeadline(deadline)
}
