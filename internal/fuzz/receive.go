package fuzz

import "time"

// maxBurst bounds the replies an exchange takes from the reader's queue
// before it judges its wait again.
const maxBurst = 256

// receiving is what an exchange knows of the sync reply: whether it came,
// when (syncAt on the configured clock, at least start; syncReal on the
// real one), and when the last message came (last, lastReal).
type receiving struct {
	seq                    uint64
	start                  time.Time
	gotSync                bool
	last, syncAt, syncReal time.Time
	lastReal               time.Time // when the last message came, on the real clock
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// receive takes message m into the exchange's outcome and wait, and
// reports whether it was a reply to the input.
func (s *streamConn) receive(o *outcome, m *streamMsg, wait *waitFor, rs *receiving) bool {
	wasSync := rs.gotSync
	replied := s.take(o, m, rs.seq, &rs.gotSync, &rs.last)
	if replied && !wait.answer(o.replies, o.scans) && wasSync && !keyedScan(&m.scan) {
		// A reply without an id after the sync reply: the grace is for
		// the silence before it (the grace starts again with every
		// reply), not for the time since the sync reply, which a flood's
		// last refusal would make the grace of every later input.
		s.d.noteLate(m.real.Sub(later(rs.syncReal, rs.lastReal)))
	}
	rs.lastReal = later(rs.lastReal, m.real)
	if rs.gotSync && !wasSync {
		rs.syncAt, rs.syncReal = s.d.cfg.Now(), m.real
		s.syncReal = rs.syncReal
		if rs.syncAt.Before(rs.start) {
			rs.syncAt = rs.start
		}
	}
	return replied
}

// receiveQueued receives what else the reader has queued, up to maxBurst
// messages, and reports whether a reply to the input was among them. (The
// wait is judged again only after them: judged after every reply, a
// flood's replies were read slower than the server sent them.)
func (s *streamConn) receiveQueued(o *outcome, wait *waitFor, rs *receiving) bool {
	replied := false
	for range maxBurst {
		select {
		case m := <-s.msgs:
			replied = s.receive(o, &m, wait, rs) || replied
		default:
			return replied
		}
	}
	return replied
}
