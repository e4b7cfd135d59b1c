package live

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func snap(elapsed time.Duration) Snapshot {
	return Snapshot{Elapsed: elapsed, Total: 30 * time.Second, TargetRate: 5000, SentPerS: 4999, AnsweredPerS: 4998,
		InFlight: 12, P50us: 850, P99us: 3400, Errors: 1, Timeouts: 2, Violations: 3}
}

func TestSnapshotString(t *testing.T) {
	tests := []struct {
		name string
		s    Snapshot
		want string
	}{
		{"a short run", snap(12 * time.Second),
			"12.0s/30.0s  sent 4999/s (target 5000/s)  answered 4998/s  in flight 12  p50 850µs  p99 3.4ms  errors 1  timeouts 2  violations 3"},
		{"batches: requests and batches apart, the target in batches", Snapshot{Elapsed: 2 * time.Second, TargetRate: 150,
			SentPerS: 750, MessagesPerS: 150, MessageUnit: "batches/s", AnsweredPerS: 750, InFlight: 10, P50us: 500, P99us: 900},
			"2.0s  sent 750 req/s in 150 batches/s (target 150/s)  answered 750/s  in flight 10  p50 500µs  p99 900µs  errors 0  timeouts 0  violations 0"},
		{"closed loop, open-ended, nothing answered", Snapshot{Elapsed: 1500 * time.Millisecond, SentPerS: 10, InFlight: 10},
			"1.5s  sent 10/s  answered 0/s  in flight 10  p50 -  p99 -  errors 0  timeouts 0  violations 0"},
		{"a soak with a child", Snapshot{Elapsed: 3723 * time.Second, Total: 8 * time.Hour, SentPerS: 100, AnsweredPerS: 100,
			P50us: 250_000, P99us: 2_500_000, OldestPendingUs: 9_000_000, ChildRSSBytes: 150 << 20},
			"1h2m3s/8h0m0s  sent 100/s  answered 100/s  in flight 0  p50 250ms  p99 2.50s  errors 0  timeouts 0  violations 0  oldest 9.00s  rss 150.0MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// step is one call to Progress: an Update at an offset from the start, or
// Done when done is true.
type step struct {
	at   time.Duration
	done bool
}

func run(p *Progress, clock *fakeClock, steps []step) {
	for _, s := range steps {
		clock.t = epoch.Add(s.at)
		if s.done {
			p.Done()
		} else {
			p.Update(snap(s.at))
		}
	}
}

func TestProgressPlain(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		interval time.Duration
		steps    []step
		want     []time.Duration // the elapsed times of the lines written, in order
	}{
		{"one update per interval", time.Second,
			[]step{{at: 0}, {at: time.Second}, {at: 2 * time.Second}, {done: true, at: 2 * time.Second}},
			[]time.Duration{0, time.Second, 2 * time.Second}},
		{"updates faster than the interval", time.Second,
			[]step{{at: 0}, {at: 500 * ms}, {at: 1000 * ms}, {at: 1500 * ms}, {at: 2000 * ms}},
			[]time.Duration{0, time.Second, 2 * time.Second}},
		{"jitter around the interval", 10 * time.Second,
			[]step{{at: 0}, {at: 9950 * ms}, {at: 20020 * ms}, {at: 29600 * ms}},
			[]time.Duration{0, 9950 * ms, 20020 * ms, 29600 * ms}},
		{"Done writes the last update if it was held back", time.Second,
			[]step{{at: 0}, {at: 300 * ms}, {at: 600 * ms}, {done: true, at: 700 * ms}},
			[]time.Duration{0, 600 * ms}},
		{"a long gap does not bunch lines", time.Second,
			[]step{{at: 0}, {at: 10 * time.Second}, {at: 10500 * ms}, {at: 11 * time.Second}},
			[]time.Duration{0, 10 * time.Second, 11 * time.Second}},
		{"updates after Done are ignored", time.Second,
			[]step{{at: 0}, {done: true}, {at: 5 * time.Second}, {done: true}},
			[]time.Duration{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			clock := &fakeClock{t: epoch}
			p := NewProgress(&buf, false, tt.interval, clock.now)
			run(p, clock, tt.steps)
			var want strings.Builder
			for _, at := range tt.want {
				want.WriteString(snap(at).String() + "\n")
			}
			if buf.String() != want.String() {
				t.Errorf("got\n%s\nwant\n%s", buf.String(), want.String())
			}
			if strings.ContainsAny(buf.String(), "\r\x1b") {
				t.Errorf("escape codes in plain output: %q", buf.String())
			}
		})
	}
}

func TestProgressTerminal(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		interval time.Duration
		steps    []step
		want     []time.Duration // elapsed times of the lines drawn
	}{
		{"at most once a second", 100 * ms,
			[]step{{at: 0}, {at: 250 * ms}, {at: 500 * ms}, {at: 1000 * ms}, {at: 1250 * ms}, {at: 2000 * ms}, {done: true, at: 2000 * ms}},
			[]time.Duration{0, time.Second, 2 * time.Second}},
		{"Done draws what was held back", 100 * ms,
			[]step{{at: 0}, {at: 400 * ms}, {done: true, at: 400 * ms}},
			[]time.Duration{0, 400 * ms}},
		{"a long interval draws every update", 10 * time.Second,
			[]step{{at: 0}, {at: 10 * time.Second}, {at: 20 * time.Second}, {done: true, at: 20 * time.Second}},
			[]time.Duration{0, 10 * time.Second, 20 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			clock := &fakeClock{t: epoch}
			p := NewProgress(&buf, true, tt.interval, clock.now)
			p.SetWidth(200)
			run(p, clock, tt.steps)
			var want strings.Builder
			for _, at := range tt.want {
				want.WriteString("\r" + snap(at).String() + "\x1b[K")
			}
			want.WriteString("\n")
			if buf.String() != want.String() {
				t.Errorf("got\n%q\nwant\n%q", buf.String(), want.String())
			}
		})
	}
}

func TestProgressTerminalWidth(t *testing.T) {
	tests := []struct {
		name  string
		width int // 0: not set
		max   int // the longest line drawn, in characters
		keep  []string
	}{
		{"default", 0, DefaultWidth - 1, []string{"sent 4999/s", "p99 3.4ms", "errors 1", "timeouts 2", "violations 3", "oldest 1.2ms", "rss 5.0MiB"}},
		{"80 columns", 80, 79, []string{"sent 4999/s", "errors 1", "timeouts 2", "violations 3"}},
		{"narrow", 40, 39, []string{"errors 1", "timeouts 2"}},
		{"one column", 1, 0, nil},
		{"wide", 1000, 999, []string{"in flight 12", "p50 850µs", "(target 5000/s)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			clock := &fakeClock{t: epoch}
			p := NewProgress(&buf, true, time.Second, clock.now)
			p.SetWidth(tt.width)
			// A line longer than the default width: a child and an oldest request.
			s := snap(0)
			s.OldestPendingUs, s.ChildRSSBytes = 1234, 5<<20
			p.Update(s)
			p.Done()
			out := buf.String()
			line, ok := strings.CutPrefix(out, "\r")
			line, ok2 := strings.CutSuffix(line, "\x1b[K\n")
			if !ok || !ok2 {
				t.Fatalf("not one drawn line: %q", out)
			}
			if n := utf8.RuneCountInString(line); n > tt.max || line != s.Fit(tt.max) {
				t.Errorf("drew %d characters %q, want %q (at most %d)", n, line, s.Fit(tt.max), tt.max)
			}
			for _, k := range tt.keep {
				if !strings.Contains(line, k) {
					t.Errorf("drew %q: %q left out", line, k)
				}
			}
			if !utf8.ValidString(line) {
				t.Errorf("cut inside a character: %q", line)
			}
		})
	}
}

// TestSnapshotFit: a line too wide for the terminal leaves out the least
// telling figures first; a count of problems that is not zero is never left
// out (violations stay in sight at 80 columns), and a zero count goes
// before the rates.
func TestSnapshotFit(t *testing.T) {
	quiet := snap(12 * time.Second)
	quiet.Errors, quiet.Timeouts, quiet.Violations = 0, 0, 0
	tests := []struct {
		name  string
		s     Snapshot
		width int
		want  string
	}{
		{"wide enough for everything", snap(12 * time.Second), 200, snap(12 * time.Second).String()},
		{"80 columns: problems kept, p50, in flight, the target and answered/s left out", snap(12 * time.Second), 79,
			"12.0s/30.0s  sent 4999/s  p99 3.4ms  errors 1  timeouts 2  violations 3"},
		{"100 columns: answered/s fits", snap(12 * time.Second), 99,
			"12.0s/30.0s  sent 4999/s  answered 4998/s  p99 3.4ms  errors 1  timeouts 2  violations 3"},
		{"80 columns, no problems: the zero counts go before the rates", quiet, 79,
			"12.0s/30.0s  sent 4999/s (target 5000/s)  answered 4998/s  p99 3.4ms"},
		{"too narrow for what must stay: cut", snap(12 * time.Second), 30, "12.0s/30.0s  errors 1  timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.s.Fit(tt.width)
			if got != tt.want {
				t.Errorf("Fit(%d) =\n%q\nwant\n%q", tt.width, got, tt.want)
			}
			if n := utf8.RuneCountInString(got); n > tt.width {
				t.Errorf("Fit(%d) is %d wide", tt.width, n)
			}
		})
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 3, "abc"},
		{"abc", 2, "ab"},
		{"p50 850µs", 8, "p50 850µ"},
		{"p50 850µs", 7, "p50 850"},
		{"abc", 0, ""},
		{"abc", -1, ""},
	}
	for _, tt := range tests {
		if got := cut(tt.s, tt.n); got != tt.want {
			t.Errorf("cut(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// TestProgressNote: a note gets a line of its own, on a terminal below the
// line drawn in place (which the next update draws again on a new line),
// elsewhere between the plain lines.
func TestProgressNote(t *testing.T) {
	line := func(at time.Duration) string { return snap(at).String() }
	for _, tt := range []struct {
		terminal bool
		want     string
	}{
		{true, "\r" + line(0) + "\x1b[K\nnote\n\r" + line(time.Second) + "\x1b[K\n"},
		{false, line(0) + "\nnote\n" + line(time.Second) + "\n"},
	} {
		var buf bytes.Buffer
		clock := &fakeClock{t: epoch}
		p := NewProgress(&buf, tt.terminal, time.Second, clock.now)
		p.SetWidth(200)
		p.Update(snap(0))
		p.Note("note")
		clock.t = clock.t.Add(time.Second)
		p.Update(snap(time.Second))
		p.Done()
		if buf.String() != tt.want {
			t.Errorf("terminal %v: got\n%q\nwant\n%q", tt.terminal, buf.String(), tt.want)
		}
	}
}
