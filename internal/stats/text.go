package stats

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/check"
)

// WriteText renders r as the human-readable report. It returns the first
// write error.
func WriteText(w io.Writer, r *Result) error {
	ew := &ErrWriter{W: w}
	p := func(format string, a ...any) { fmt.Fprintf(ew, format, a...) }
	writeTextHeader(p, r)
	writeTextCounts(p, r)
	writeTextDiagnostics(p, r)
	writeTextLatency(ew, p, r)
	if s := r.Soak; s != nil {
		writeTextSoak(p, s)
	}
	writeTextTail(p, r)
	return ew.Err()
}

// printf is the formatted print of the report's writer.
type printf func(format string, a ...any)

// writeTextHeader writes the run's target, mode, rate and profile.
func writeTextHeader(p printf, r *Result) {
	p("target      %s\n", r.Target)
	mode := "closed loop"
	if r.Rate.Target > 0 {
		mode = "open loop"
	}
	p("mode        %s, sending %.2fs, drain %.2fs%s\n", mode, r.DurationS, r.DrainS, map[bool]string{true: " (interrupted)"}[r.Interrupted])
	// The schedule counts messages: with batches, the requests they carry
	// are a rate of their own.
	unit := RateUnit(r.Requests.Messages, r.Requests.Batches)
	if r.Rate.Target > 0 {
		p("rate        target %.1f %s, achieved %.1f %s (%.2f%%)", r.Rate.Target, unit, r.Rate.Achieved, unit, 100*r.Rate.Achieved/r.Rate.Target)
	} else {
		p("rate        achieved %.1f %s", r.Rate.Achieved, unit)
	}
	if r.Requests.Batches > 0 {
		p(", %.1f req/s", r.Rate.Requests)
	}
	p("\n")
	p("in flight   max %d\n", r.InFlightMax)
	if pr := r.Profile; pr != nil && pr.Name != "jsonrpc" {
		p("profile     %s", pr.Name)
		if pr.Era != "" {
			p(", era %s (%s)", pr.Era, pr.Version)
		}
		p(", %d connections ready, %d server requests answered, %d cancellations sent\n", pr.Handshakes, pr.ServerRequestsAnswered, pr.CancelsSent)
	}
}

// writeTextCounts writes the request counts, error codes and violations.
func writeTextCounts(p printf, r *Result) {
	q := r.Requests
	p("\nrequests    sent %d", q.Sent)
	if q.Notifications > 0 {
		p(" (+%d notifications)", q.Notifications)
	}
	if q.Batches > 0 {
		p(" in %d messages, %d of them batches", q.Messages, q.Batches)
	}
	p("\n  answered %d: ok %d, rpc errors %d, invalid replies %d\n", q.Answered, q.OK, q.RPCErrors, q.InvalidReplies)
	p("  transport errors %d, timeouts %d, late %d, leaked %d, dropped %d\n", q.TransportErrors, q.Timeouts, q.Late, q.Leaked, q.Dropped)
	if q.ServerMessages > 0 {
		p("  messages sent by the server %d\n", q.ServerMessages)
		for _, m := range SortedKeys(r.ServerMethods) {
			p("    %-32s %d\n", OneLine(m, 60), r.ServerMethods[m])
		}
	}
	if len(r.ErrorCodes) > 0 {
		p("\nerror codes\n")
		for _, c := range SortedKeys(r.ErrorCodes) {
			p("  %-8s %d\n", c, r.ErrorCodes[c])
		}
	}
	if len(r.Violations) == 0 {
		p("\nviolations  none\n")
	} else {
		p("\nviolations\n")
		for _, rule := range SortedKeys(r.Violations) {
			warn := ""
			if rule, ok := check.ParseRule(rule); ok && rule.Warning() {
				warn = "  (a warning: does not fail the run)"
			}
			p("  %-24s %d%s\n", rule, r.Violations[rule], warn)
			if s := r.ViolationSamples[rule]; len(s) > 0 && s[0].Frame != "" {
				p("    e.g. %s\n", OneLine(s[0].Frame, 160))
			}
		}
	}
}

// writeTextDiagnostics writes the id-reuse probe, transport errors, lost
// connections and the child process.
func writeTextDiagnostics(p printf, r *Result) {
	if u := r.IDReuse; u != nil {
		p("\nid reuse probe (not counted in the load)\n  sent %d with the id of a request in flight (%d not sent: none in flight)\n", u.Probes, u.NoIDInFlight)
		p("  the id got two replies %d, one reply %d, none %d\n", u.BothAnswered, u.OneReply, u.NoReply)
		for _, c := range SortedKeys(u.ErrorCodes) {
			p("  error %s drawn %d times\n", c, u.ErrorCodes[c])
		}
	}
	if len(r.TransportErrorSamples) > 0 {
		p("\ntransport errors seen\n")
		for _, e := range r.TransportErrorSamples {
			p("  %s\n", OneLine(e, 160))
		}
	}
	if c := r.Connections; c.Lost > 0 {
		p("\nconnections opened %d, lost %d\n", c.Opened, c.Lost)
	}
	if ch := r.Child; ch != nil {
		p("\nchild process  %s\n  restarts %d\n", OneLine(ch.Command, 160), ch.Restarts)
		for _, e := range ch.Exits {
			p("  exited: %s\n", OneLine(e, 200))
		}
		if len(ch.StderrTail) > 0 {
			p("  last stderr lines:\n")
			for _, l := range ch.StderrTail {
				p("    %s\n", OneLine(l, 200))
			}
		}
		if ch.StderrPath != "" {
			p("  stderr written to %s\n", ch.StderrPath)
		}
	}
}

// writeTextLatency writes the latency table and the per-method line.
func writeTextLatency(ew io.Writer, p printf, r *Result) {
	p("\nlatency     (corrected: reply - intended send time; service: reply - actual write)\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tcount\tp50\tp90\tp99\tp99.9\tmax\t\n")
	row := func(name string, l Latency) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", name, l.Count, FormatMicros(l.P50us), FormatMicros(l.P90us), FormatMicros(l.P99us), FormatMicros(l.P999us), FormatMicros(l.MaxUs))
	}
	row("corrected", r.Latency.Corrected)
	row("service", r.Latency.Service)
	row("lag", r.Latency.Lag)
	tw.Flush()
	// Replies that matched no request are kept under their own name for
	// their violations; they have no latency to show here.
	var called []string
	for _, name := range SortedKeys(r.Methods) {
		if name != UnmatchedMethod {
			called = append(called, name)
		}
	}
	if len(called) > 1 {
		p("\nper method (corrected latency)\n")
		for _, name := range called {
			m := r.Methods[name]
			p("  %-24s answered %d, p50 %s, p99 %s\n", name, m.Requests.Answered, FormatMicros(m.Latency.Corrected.P50us), FormatMicros(m.Latency.Corrected.P99us))
		}
	}
}

// writeTextSoak writes the soak fits and verdict.
func writeTextSoak(p printf, s *SoakReport) {
	p("\nsoak        %d points of %gs (%d left out as warm-up)\n", s.Points, s.IntervalS, s.WarmupPoints)
	growth := func(name string, g *Growth, unit func(float64) string) {
		if g == nil {
			return
		}
		p("  %-22s %s per hour (R² %.2f), fitted %s → %s\n", name, unit(g.PerHour), g.R2, unit(g.First), unit(g.Last))
	}
	count := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	growth("child RSS", s.ChildRSS, func(v float64) string { return fmt.Sprintf("%.1fMiB", v/(1<<20)) })
	growth("in flight", s.InFlight, count)
	growth("oldest pending", s.OldestPending, func(v float64) string { return FormatMicros(int64(v)) })
	growth("timed out, unanswered", s.TimedOutUnanswered, count)
	p("  verdict: %s\n", s.Verdict)
	if s.HlogPath != "" || s.SeriesPath != "" {
		p("  written as it ran: %s\n", strings.Trim(s.HlogPath+" "+s.SeriesPath, " "))
	}
}

// writeTextTail writes the shard, the merged parts and the warnings.
func writeTextTail(p printf, r *Result) {
	if sh := r.Shard; sh != nil {
		p("\nshard       %d of %d: this result holds 1/%d of the load; merge the shards' results with rpcload merge\n", sh.Index, sh.Count, sh.Count)
	}
	if len(r.MergedFrom) > 0 {
		p("\nmerged from %d results\n", len(r.MergedFrom))
		for _, m := range r.MergedFrom {
			p("  %s (%s, started %s)\n", OneLine(m.Path, 120), OneLine(m.Target, 120), m.StartedAt)
		}
	}
	for _, w := range r.Warnings {
		p("\nWARNING: %s\n", w)
	}
}

// FormatMicros formats microseconds with a unit that keeps three to four significant
// digits; the thresholds sit where rounding would carry into the next unit.
func FormatMicros(v int64) string {
	switch {
	case v < 1000:
		return fmt.Sprintf("%dµs", v)
	case v < 999_995:
		return fmt.Sprintf("%.2fms", float64(v)/1e3)
	default:
		return fmt.Sprintf("%.3fs", float64(v)/1e6)
	}
}

// OneLine is s as one printable line of at most n bytes (plus "…" when
// cut): control characters become '·', and a cut never splits a UTF-8
// sequence. Every text report (results, comparisons, diffs, fuzz
// summaries) writes server-controlled text through it.
func OneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '·'
		}
		return r
	}, s)
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n-- // cut before a character, not inside it
		}
		s = s[:n] + "…"
	}
	return s
}

// ErrWriter is a writer that keeps the first error of w and writes nothing
// after it, so a renderer makes many writes and checks once (Err).
type ErrWriter struct {
	W   io.Writer
	err error
}

// Err is the first error a write returned, or nil.
func (e *ErrWriter) Err() error { return e.err }

// Write writes p to W unless an earlier write failed.
func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.W.Write(p)
	e.err = err
	return n, err
}
