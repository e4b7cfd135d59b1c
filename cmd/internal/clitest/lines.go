// Package clitest holds what the tests of both commands share: reading a
// child process's output line by line and waiting for a line.
package clitest

import (
	"bufio"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// Lines reads a child's output line by line and keeps all of it; Wait
// takes the lines in order, each once, so one reader serves several waits.
type Lines struct {
	mu   sync.Mutex // guards all, eof and next
	all  []string
	eof  bool
	next int           // the first line Wait has not looked at
	more chan struct{} // capacity 1: a line came, or the output ended
	done chan struct{} // closed when the output ended
}

// Read starts reading r until it ends.
func Read(r io.Reader) *Lines {
	l := &Lines{more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l.mu.Lock()
			l.all = append(l.all, sc.Text())
			l.mu.Unlock()
			l.signal()
		}
		l.mu.Lock()
		l.eof = true
		l.mu.Unlock()
		l.signal()
		close(l.done)
	}()
	return l
}

func (l *Lines) signal() {
	select {
	case l.more <- struct{}{}:
	default: // a wake-up is pending already; Wait looks at everything then
	}
}

// Done is closed when the output has ended (a child's: it has exited).
func (l *Lines) Done() <-chan struct{} { return l.done }

// String returns the output read so far, each line ending in a newline.
func (l *Lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, s := range l.all {
		b.WriteString(s + "\n")
	}
	return b.String()
}

// Wait returns the first line after those earlier waits looked at that
// matches, failing the test when the output ends or limit passes first.
func (l *Lines) Wait(t testing.TB, limit time.Duration, what string, match func(string) bool) string {
	t.Helper()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		l.mu.Lock()
		for l.next < len(l.all) {
			s := l.all[l.next]
			l.next++
			if match(s) {
				l.mu.Unlock()
				return s
			}
		}
		eof := l.eof
		l.mu.Unlock()
		if eof {
			t.Fatalf("output ended before %s:\n%s", what, l)
		}
		select {
		case <-l.more:
		case <-timer.C:
			t.Fatalf("no %s within %s:\n%s", what, limit, l)
		}
	}
}
