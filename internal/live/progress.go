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
	// With batches the schedule's rate counts messages (a batch is one),
	// not the requests in them: MessagesPerS is the last interval's
	// messages, MessageUnit names them ("batches/s", or "msg/s" for a mix
	// of batches and single requests; "" when no batch was sent, where a
	// message is a request).
	MessagesPerS                 float64
	MessageUnit                  string
	InFlight                     int64
	P50us, P99us                 int64 // corrected latency, last interval
	Errors, Timeouts, Violations uint64
	OldestPendingUs              int64 // 0 when nothing is pending
	ChildRSSBytes                int64 // 0 when no child process is measured
}

// String is the status line, without a line end. The figures people watch
// come first, so a line cut to a narrow terminal keeps them.
func (s Snapshot) String() string {
	return join(s.segments(), 0)
}

// Fit is the status line in at most width characters. When the whole line
// is wider, figures are left out, the least telling first (p50, counts that
// are zero, in flight, the target rate, memory, the oldest request,
// answered/s, p99, sent/s), so that a count of errors, timeouts or
// violations that is not zero stays in sight on an 80-column terminal; only
// then is the line cut.
func (s Snapshot) Fit(width int) string {
	segs := s.segments()
	for level := dropLevels; level > 0; level-- {
		line := join(segs, level)
		if utf8.RuneCountInString(line) <= width {
			return line
		}
	}
	return cut(join(segs, 1), width)
}

// segment is one figure of the status line. A segment whose drop is at
// least a level is left out at that level (0: never left out); glue joins
// it to the one before with one space instead of two.
type segment struct {
	text string
	drop int
	glue bool
}

// dropLevels is the highest drop of a segment: join at a level above it
// keeps every segment.
const dropLevels = 10

// join writes the segments whose drop is 0 or below level (level 0 keeps
// them all).
func join(segs []segment, level int) string {
	var b strings.Builder
	for _, g := range segs {
		if level > 0 && g.drop >= level {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(map[bool]string{true: " ", false: "  "}[g.glue])
		}
		b.WriteString(g.text)
	}
	return b.String()
}

// segments are the figures of the line in order, with the priority Fit
// keeps them by.
func (s Snapshot) segments() []segment {
	elapsed := formatElapsed(s.Elapsed)
	if s.Total > 0 {
		elapsed += "/" + formatElapsed(s.Total)
	}
	sent := fmt.Sprintf("sent %.0f/s", s.SentPerS)
	if s.MessageUnit != "" {
		sent = fmt.Sprintf("sent %.0f req/s in %.0f %s", s.SentPerS, s.MessagesPerS, s.MessageUnit)
	}
	segs := []segment{{text: elapsed}, {text: sent, drop: 1}}
	if s.TargetRate > 0 {
		segs = append(segs, segment{text: fmt.Sprintf("(target %.0f/s)", s.TargetRate), drop: 6, glue: true})
	}
	segs = append(segs, segment{text: fmt.Sprintf("answered %.0f/s", s.AnsweredPerS), drop: 3},
		segment{text: fmt.Sprintf("in flight %d", s.InFlight), drop: 7})
	if s.AnsweredPerS > 0 {
		segs = append(segs, segment{text: "p50 " + formatMicros(s.P50us), drop: 9}, segment{text: "p99 " + formatMicros(s.P99us), drop: 2})
	} else {
		// No reply this interval: 0 would read as instant.
		segs = append(segs, segment{text: "p50 -", drop: 9}, segment{text: "p99 -", drop: 2})
	}
	for _, c := range []struct {
		name string
		n    uint64
	}{{"errors", s.Errors}, {"timeouts", s.Timeouts}, {"violations", s.Violations}} {
		drop := 0 // a problem stays in sight
		if c.n == 0 {
			drop = 8
		}
		segs = append(segs, segment{text: fmt.Sprintf("%s %d", c.name, c.n), drop: drop})
	}
	if s.OldestPendingUs > 0 {
		segs = append(segs, segment{text: "oldest " + formatMicros(s.OldestPendingUs), drop: 4})
	}
	if s.ChildRSSBytes > 0 {
		segs = append(segs, segment{text: fmt.Sprintf("rss %.1fMiB", float64(s.ChildRSSBytes)/(1<<20)), drop: 5})
	}
	return segs
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
	if !p.terminal {
		_, _ = io.WriteString(p.w, s.String()+"\n")
		return
	}
	// One column short of the width: writing the last column leaves some
	// terminals about to wrap, and the next carriage return would then land
	// on a new line.
	line := s.Fit(p.width - 1)
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
