package testsrv

import (
	"io"
	"sync"
	"time"
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
func (c *tcpConn) schedule(it *delayItem, wait time.Duration) {
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
func (c *tcpConn) writer() {
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
		closeNow := c.closeReq
		finished := c.readDone && c.spinning == 0 && len(c.heap) == 0
		c.cond.Broadcast()
		c.mu.Unlock()
		if len(buf) > 0 {
			if _, err := c.nc.Write(buf); err != nil {
				c.teardown()
				return
			}
		}
		if cap(buf) > 4*maxOut {
			buf = nil
		}
		switch {
		case closeNow:
			c.closeGracefully()
			return
		case finished:
			c.teardown()
			return
		}
	}
}

// drain discards input until the client closes or the linger deadline set by
// closeGracefully passes, then tears down. Closing a socket that still holds
// unread input makes the kernel send RST, which can destroy replies the
// client has not read yet; draining turns the close into an orderly FIN.
func (c *tcpConn) drain() {
	_, _ = io.Copy(io.Discard, c.br)
	c.teardown()
}

// requestClose makes the writer close the connection after flushing.
func (c *tcpConn) requestClose() {
	c.mu.Lock()
	c.closeReq = true
	c.mu.Unlock()
	c.signal()
}

// silence stops all further output and drops pending replies. Callers hold
// c.mu.
func (c *tcpConn) silence() {
	c.quiet = true
	for _, it := range c.heap {
		putItem(it)
	}
	c.heap = nil
	c.cond.Broadcast()
}

// teardown closes the connection now and drops everything pending.
func (c *tcpConn) teardown() {
	c.mu.Lock()
	if c.torn {
		c.mu.Unlock()
		return
	}
	c.torn = true
	c.silence()
	c.mu.Unlock()
	close(c.done)
	_ = c.nc.Close()
}

// lingerTimeout bounds how long a gracefully closed connection waits for the
// client to close its side.
const lingerTimeout = 2 * time.Second

// closeGracefully ends the connection after the writer flushed: it sends FIN
// (so the client reads every reply, then EOF) and lets the reader drain
// input until the client closes or lingerTimeout passes.
func (c *tcpConn) closeGracefully() {
	c.mu.Lock()
	c.silence()
	c.mu.Unlock()
	cw, ok := c.nc.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		c.teardown()
		return
	}
	c.stopRead.Store(true)
	_ = c.nc.SetReadDeadline(time.Now().Add(lingerTimeout))
}
