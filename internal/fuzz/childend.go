package fuzz

import (
	"fmt"
	"time"
)

// settleEnd finds out, for a child process, whether it exited: a crash is
// an exit, and its stderr tells why. A timeout counts too: on a loaded
// machine a child that died of the input may be seen dead only after the
// timeout passed, and its exit within the grace below is the verdict (a
// crash), not the missing reply (a hang that replay called a crash).
func (s *streamConn) settleEnd(o *outcome, start time.Time) {
	if s.child == nil || o.end == endNone || o.end == endInterrupted {
		return
	}
	if o.end == endTimeout && !s.stdoutEnded(o.synced) {
		return // a live child that is silent: a hang
	}
	// Waiting for the exit status (and the stderr of a crash) is bounded
	// by the timeout too: a child that closed its stdout and lives on took
	// a second at every input.
	t := time.NewTimer(min(time.Second, max(s.d.cfg.Timeout, minDeathGrace)))
	defer t.Stop()
	select {
	case <-s.child.Exited():
	case <-t.C:
		return
	}
	o.end = endExited
	o.note = s.child.ExitStatus()
	o.exitCode = exitCodeOf(o.note)
	o.stderr = s.child.StderrTail()
}

// stdoutEnded reports whether the child's stdout has ended, or ends
// within a moment (a child that dies closes it; the timer and the end of
// the stream can be ready together, and either may be seen first). A
// child that never answered the sync request may be dying of the input:
// on a loaded machine a Go server's panic took 300 ms and more to end its
// process, and a crash seen as silence was a hang or a missing reply that
// its replay then called a crash. Such a child gets deathGrace.
func (s *streamConn) stdoutEnded(synced bool) bool {
	wait := min(stdoutEndGrace, s.d.cfg.Timeout/4)
	if !synced {
		wait = deathGrace(s.d.cfg.Timeout)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-s.done:
		return true
	case <-s.child.Exited():
		return true
	case <-t.C:
		return false
	}
}

// stdoutEndGrace bounds how long a timed-out exchange with a child that
// answered the sync request waits to see its stdout end.
const stdoutEndGrace = 50 * time.Millisecond

// minDeathGrace and maxDeathGrace bound deathGrace.
const (
	minDeathGrace = 500 * time.Millisecond
	maxDeathGrace = 2 * time.Second
)

// deathGrace is how long a timed-out child that did not answer the sync
// request may take to be seen dead: two timeouts, within bounds (with six
// CPU burners beside a -race build, a Go server's panic ended its process
// up to 650 ms after an input sent with a 300 ms timeout; every hang of a
// child costs this once more).
func deathGrace(timeout time.Duration) time.Duration {
	return min(max(2*timeout, minDeathGrace), maxDeathGrace)
}

// exitCodeOf reads the exit code from a status like "exit status 2 after
// 3ms"; -1 for a signal.
func exitCodeOf(status string) int {
	var n int
	if _, err := fmt.Sscanf(status, "exit status %d", &n); err == nil {
		return n
	}
	return -1
}
