package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rpcload/rpcload/internal/procstat"
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

// childGone records how a child ended, once it has, and forgets it. self
// tells that it exited by itself, before rpcload closed its stream.
func (r *run) childGone(c transport.ChildStream, self bool) {
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
	if ran := c.RanFor(); ran > 0 && ran < earlyExit && self && r.earlyEnd == "" {
		r.earlyEnd = exitedEarly(c.PID(), status, c.StderrTail())
	}
	r.exitCount++
	if len(r.childExits) < maxExitsKept {
		r.childExits = append(r.childExits, fmt.Sprintf("pid %d at %.3fs of the run: %s", c.PID(), time.Duration(r.now()).Seconds(), status))
	}
	r.lastStderr = c.StderrTail()
	r.errMu.Unlock()
}

// childProc sums the resident memory, threads and open files of the
// running children.
func (r *run) childProc() procstat.Stat {
	r.childMu.Lock()
	defer r.childMu.Unlock()
	var sum procstat.Stat
	for c := range r.children {
		if st, err := c.Proc(); err == nil {
			sum = sum.Add(st)
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

// earlyExit is how soon after its start a child's exit counts as a failure
// to start: the report then shows its exit status and stderr up front.
const earlyExit = time.Second

// endEarly stops sending before the run's end for why, which the report
// says; a non-nil abort is why the run could not run against its target
// after all (Run's error). The first call counts.
func (r *run) endEarly(why string, abort error) {
	if r.ended == nil {
		return // an exchange run (CallOnce, Diff) has no sending to stop
	}
	r.endOnce.Do(func() {
		r.errMu.Lock()
		r.endWhy, r.abort = why, abort
		r.errMu.Unlock()
		close(r.ended)
	})
}

// childrenGone is why a stdio run without --restart ended early: every
// child process exited.
func (r *run) childrenGone() string {
	who := "the child process exited"
	if r.cfg.Conns > 1 {
		who = fmt.Sprintf("all %d child processes exited", r.cfg.Conns)
	}
	return fmt.Sprintf("%s and --restart was not given: sending stopped at %.2fs of the planned %s; calls not sent by then count as dropped",
		who, time.Duration(r.now()).Seconds(), r.cfg.Duration)
}

// aborted is why the run could not run against its target after all: what
// ended it early said so, or every child process exited and the first one
// did so by itself within its first second, before anything was answered
// (a command that fails to start). nil otherwise.
func (r *run) aborted(res *stats.Result) error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	switch {
	case r.abort != nil:
		return r.abort
	case r.endWhy != "" && r.earlyEnd != "" && res.Requests.Answered == 0:
		return errors.New(r.earlyEnd)
	}
	return nil
}

// exitedEarly describes a child that exited within its first second: how
// it ended, its last stderr lines, and what they suggest.
func exitedEarly(pid int, status string, tail []string) string {
	return fmt.Sprintf("the child process (pid %d) exited within its first second: %s%s", pid, status, stderrNote(tail))
}

// stderrNote is the last lines of a child's stderr for a message, and the
// likely cause when they name an unknown flag; "" when it wrote nothing.
func stderrNote(tail []string) string {
	var last []string
	for i := len(tail) - 1; i >= 0 && len(last) < 5; i-- {
		if l := strings.TrimSpace(tail[i]); l != "" {
			last = append(last, stats.OneLine(l, 200))
		}
	}
	if len(last) == 0 {
		return "; it wrote nothing to stderr"
	}
	slices.Reverse(last)
	return "; its last stderr lines: " + strings.Join(last, " | ") + flagHint(last)
}

// flagHint is the advice for a child whose stderr complains of an unknown
// flag: the likeliest cause is rpcload's own flags written after --.
func flagHint(lines []string) string {
	for _, l := range lines {
		low := strings.ToLower(l)
		for _, s := range [...]string{"unknown flag", "flag provided but not defined", "unknown option", "unrecognized option",
			"unrecognized argument", "unrecognised option", "invalid option", "no such option", "unexpected argument"} {
			if strings.Contains(low, s) {
				return " (its stderr names an unknown flag: rpcload's own flags go before --; everything after -- is the child's command line)"
			}
		}
	}
	return ""
}
