package fuzz

// deliver hands m to the exchange: through msgs while it has room, else
// through the overflow, which a pump goroutine drains into msgs in order.
// The reader must keep reading while the exchange still writes its input:
// stopped on a full channel, it left a server that answers as it reads
// (mcp-go, a call and 1,000 notifications, each answered -32700) blocked
// on its own writes, no longer reading, and rpcfuzz's write of the rest
// of the input never went out: a hang of rpcfuzz's own. The overflow is
// bounded (maxOverflowBytes, maxOverflowMsgs); past that the reader waits.
func (s *streamConn) deliver(m streamMsg) bool {
	s.ovMu.Lock()
	if !s.pumping {
		select {
		case s.msgs <- m:
			s.ovMu.Unlock()
			return true
		default:
		}
	}
	for len(s.overflow) >= maxOverflowMsgs || s.overflowBytes+len(m.frame) > maxOverflowBytes && len(s.overflow) > 0 {
		s.ovMu.Unlock()
		select {
		case <-s.ovSpace:
		case <-s.quit:
			return false
		}
		s.ovMu.Lock()
	}
	s.overflow = append(s.overflow, m)
	s.overflowBytes += len(m.frame)
	if !s.pumping {
		s.pumping = true
		s.pumpDone = make(chan struct{})
		go s.pump(s.pumpDone)
	}
	s.ovMu.Unlock()
	return true
}

// Bounds of a stream's overflow (deliver): what the reader takes in while
// the exchange is busy writing.
const (
	maxOverflowBytes = 32 << 20
	maxOverflowMsgs  = 1 << 16
)

// pump moves the overflow into msgs, in order, until it is empty; it
// closes done when it ends.
func (s *streamConn) pump(done chan struct{}) {
	defer close(done)
	for {
		s.ovMu.Lock()
		if len(s.overflow) == 0 {
			s.pumping = false
			s.overflow, s.overflowBytes = s.overflow[:0], 0
			s.ovMu.Unlock()
			return
		}
		m := s.overflow[0]
		s.overflow[0] = streamMsg{}
		s.overflow = s.overflow[1:]
		s.overflowBytes -= len(m.frame)
		s.ovMu.Unlock()
		select {
		case s.ovSpace <- struct{}{}:
		default:
		}
		select {
		case s.msgs <- m:
		case <-s.quit:
			return
		}
	}
}

// drained waits, as the reader ends, until the overflow is in msgs: the
// exchange takes what is queued once done is closed, and must find it
// there.
func (s *streamConn) drained() {
	s.ovMu.Lock()
	done := s.pumpDone
	pumping := s.pumping
	s.ovMu.Unlock()
	if !pumping {
		return
	}
	select {
	case <-done:
	case <-s.quit:
	}
}
