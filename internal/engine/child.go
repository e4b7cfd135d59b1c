package engine

import (
	"fmt"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
)

// maxExitsKept bounds the exits listed in the report: a child in a crash
// loop under --restart would otherwise grow the list without end.
const maxExitsKept = 20

// exitWait bounds how long a reader waits for a child whose stdout closed
// to be reaped, so its exit status can be reported.
const exitWait = 2 * time.Second

func (r *run) addChild(c transport.ChildStream) {
	r.childMu.Lock()
	r.children[c] = struct{}{}
	r.childMu.Unlock()
}

// childGone records how a child ended, once it has, and forgets it.
func (r *run) childGone(c transport.ChildStream) {
	select {
	case <-c.Exited():
	case <-time.After(exitWait):
	}
	r.childMu.Lock()
	delete(r.children, c)
	r.childMu.Unlock()
	status := c.ExitStatus()
	if status == "" {
		status = "still running after its stdout closed"
	}
	r.errMu.Lock()
	r.exitCount++
	if len(r.childExits) < maxExitsKept {
		r.childExits = append(r.childExits, fmt.Sprintf("pid %d at %.3fs of the run: %s", c.PID(), time.Duration(r.now()).Seconds(), status))
	}
	r.lastStderr = c.StderrTail()
	r.errMu.Unlock()
}

// childRSS sums the resident memory of the running children.
func (r *run) childRSS() int64 {
	r.childMu.Lock()
	defer r.childMu.Unlock()
	var sum int64
	for c := range r.children {
		if n, err := c.RSS(); err == nil {
			sum += n
		}
	}
	return sum
}

// childReport describes the children of a stdio run; nil for other targets.
func (r *run) childReport() *stats.ChildReport {
	if r.cfg.Target.Scheme != transport.Stdio {
		return nil
	}
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return &stats.ChildReport{
		Command:    r.cfg.Target.URL,
		Restarts:   max(0, r.connsOpened.Load()-int64(r.cfg.Conns)),
		Exits:      exits(r.childExits, r.exitCount),
		StderrPath: r.cfg.Child.StderrPath,
		StderrTail: append([]string{}, r.lastStderr...),
	}
}

func exits(kept []string, total int) []string {
	out := append([]string{}, kept...)
	if total > len(kept) {
		out = append(out, fmt.Sprintf("... and %d more", total-len(kept)))
	}
	return out
}
