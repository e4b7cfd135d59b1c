// Package live shows a run while it goes on: a status line for people (one
// line rewritten in place on a terminal, a plain line per interval
// elsewhere) and the same figures in Prometheus text format for dashboards.
package live

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Snapshot is what the status line shows: rates and percentiles of the last
// interval, gauges read at its end, and cumulative counts.
type Snapshot struct {
	Elapsed time.Duration
	Total   time.Duration // the planned duration; 0 when open-ended
	// TargetRate is the schedule's rate (0 in closed loop); SentPerS and
	// AnsweredPerS are the last interval's.
	TargetRate, SentPerS, AnsweredPerS float64
	InFlight                           int64
	P50us, P99us                       int64 // corrected latency, last interval
	Errors, Timeouts, Violations       uint64
	OldestPendingUs                    int64 // 0 when nothing is pending
	ChildRSSBytes                      int64 // 0 when no child process is measured
}

// String is the status line, without a line end. The figures people watch
// come first, so a line cut to a narrow terminal keeps them.
func (s Snapshot) String() string {
	var b strings.Builder
	b.WriteString(formatElapsed(s.Elapsed))
	if s.Total > 0 {
		b.WriteString("/" + formatElapsed(s.Total))
	}
	fmt.Fprintf(&b, "  sent %.0f/s", s.SentPerS)
	if s.TargetRate > 0 {
		fmt.Fprintf(&b, " (target %.0f/s)", s.TargetRate)
	}
	fmt.Fprintf(&b, "  answered %.0f/s  in flight %d", s.AnsweredPerS, s.InFlight)
	if s.AnsweredPerS > 0 {
		fmt.Fprintf(&b, "  p50 %s  p99 %s", formatMicros(s.P50us), formatMicros(s.P99us))
	} else {
		b.WriteString("  p50 -  p99 -") // no reply this interval: 0 would read as instant
	}
	fmt.Fprintf(&b, "  errors %d  timeouts %d  violations %d", s.Errors, s.Timeouts, s.Violations)
	if s.OldestPendingUs > 0 {
		fmt.Fprintf(&b, "  oldest %s", formatMicros(s.OldestPendingUs))
	}
	if s.ChildRSSBytes > 0 {
		fmt.Fprintf(&b, "  rss %.1fMiB", float64(s.ChildRSSBytes)/(1<<20))
	}
	return b.String()
}

func formatElapsed(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func formatMicros(us int64) string {
	switch {
	case us < 1000:
		return fmt.Sprintf("%dµs", us)
	case us < 100_000:
		return fmt.Sprintf("%.1fms", float64(us)/1e3)
	case us < 1_000_000:
		return fmt.Sprintf("%.0fms", float64(us)/1e3)
	default:
		return fmt.Sprintf("%.2fs", float64(us)/1e6)
	}
}

// DefaultWidth is the line width on a terminal whose width is not known.
const DefaultWidth = 120

// terminalPeriod is the shortest time between two redraws on a terminal:
// faster changes only flicker.
const terminalPeriod = time.Second

// Progress writes status lines. On a terminal it keeps one line, rewritten
// in place (carriage return, the line, clear to its end) at most about once
// a second and cut to the terminal's width; elsewhere (a file, a pipe, a CI
// log) it writes a plain line per interval, without escape codes. Its
// methods may be called from several goroutines.
type Progress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	period   time.Duration
	now      func() time.Time
	width    int

	due       time.Time // the next write is due then; zero before the first
	last      Snapshot
	unwritten bool // last has not been written yet
	drawn     bool // a terminal line is showing and needs its line end
	done      bool
}

// NewProgress returns a Progress writing to w: for a terminal if terminal
// is true (see IsTerminal), else a line every interval. now is the clock
// (time.Now outside tests).
func NewProgress(w io.Writer, terminal bool, interval time.Duration, now func() time.Time) *Progress {
	period := interval
	if terminal {
		period = terminalPeriod
	}
	if period <= 0 {
		period = time.Second
	}
	return &Progress{w: w, terminal: terminal, period: period, now: now, width: DefaultWidth}
}

// SetWidth sets the terminal's width in columns (TerminalWidth finds it);
// 0 or less keeps DefaultWidth.
func (p *Progress) SetWidth(cols int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cols > 0 {
		p.width = cols
	}
}

// Update shows s if a line is due, else keeps it for the next one (or for
// Done). Writes are due on a fixed grid of the period from the first one; a
// call up to a tenth of the period early is taken, so a caller ticking at
// exactly the period with some jitter is not skipped every other time.
// Write errors are ignored: a broken status line must not stop a run.
func (p *Progress) Update(s Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.last, p.unwritten = s, true
	t := p.now()
	if !p.due.IsZero() && t.Before(p.due.Add(-p.period/10)) {
		return
	}
	p.writeLocked(s)
	if p.due.IsZero() {
		p.due = t
	}
	// The first grid point after t (an early call's t is less than a
	// period before due, so its quotient is 0): a long gap skips the
	// points it missed rather than writing them in a burst.
	p.due = p.due.Add((t.Sub(p.due)/p.period + 1) * p.period)
}

// Done writes the last snapshot if it has not been shown yet and ends the
// terminal line, so what follows starts on a line of its own. Updates
// after Done are ignored; calling it again does nothing.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	if p.unwritten {
		p.writeLocked(p.last)
	}
	if p.drawn {
		_, _ = io.WriteString(p.w, "\n")
	}
}

// Note writes line on a line of its own between status lines (on a
// terminal, below the line in place, which the next update draws again).
// Notes after Done are written too: they are not status lines.
func (p *Progress) Note(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		_, _ = io.WriteString(p.w, "\n")
		p.drawn = false
	}
	_, _ = io.WriteString(p.w, line+"\n")
}

func (p *Progress) writeLocked(s Snapshot) {
	p.unwritten = false
	line := s.String()
	if !p.terminal {
		_, _ = io.WriteString(p.w, line+"\n")
		return
	}
	// One column short of the width: writing the last column leaves some
	// terminals about to wrap, and the next carriage return would then land
	// on a new line.
	line = cut(line, p.width-1)
	_, _ = io.WriteString(p.w, "\r"+line+"\x1b[K")
	p.drawn = true
}

// cut shortens s to at most n characters (runes: the line holds "µ").
func cut(s string, n int) string {
	if n < 1 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}
