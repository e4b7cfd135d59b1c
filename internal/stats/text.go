package stats

import (
	"fmt"
	"io"
	"math"
	"strconv"
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
	writeTextServerGauges(p, r.ServerGauges)
	writeTextLatency(ew, p, r)
	if s := r.Soak; s != nil {
		writeTextSoak(p, s)
	}
	if m := r.Malformed; m != nil {
		writeTextMalformed(p, m)
	}
	if c := r.API; c != nil {
		p("\n")
		WriteAPICoverage(ew, c)
	}
	writeTextTail(p, r)
	if c := r.Capacity; c != nil {
		writeTextCapacity(ew, p, c)
	}
	return ew.Err()
}

// pipelineDepth is the --pipeline a run's settings record (1 when absent):
// an int as the run made it, a float64 once read back from a result file.
func pipelineDepth(settings map[string]any) int {
	switch v := settings["pipeline"].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return 1
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
	if n := pipelineDepth(r.Settings); n > 1 {
		mode += fmt.Sprintf(", HTTP/1.1 pipelined %d deep", n)
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
	if wu := r.Warmup; wu != nil {
		p("warm-up     %.2fs before it, %d requests sent and not counted here\n", wu.DurationS, wu.Requests.Sent)
	}
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
		methods := SortedKeys(r.ServerMethods)
		w := nameWidth(methods, 32)
		for _, m := range methods {
			p("    %s %d\n", padName(m, w), r.ServerMethods[m])
		}
	}
	if len(r.ErrorCodes) > 0 {
		p("\nerror codes\n")
		codes := SortedKeys(r.ErrorCodes)
		w := nameWidth(codes, 8)
		for _, c := range codes {
			p("  %s %d\n", padName(c, w), r.ErrorCodes[c])
		}
	}
	if len(r.Violations) == 0 {
		p("\nviolations  none\n")
	} else {
		p("\nviolations\n")
		rules := SortedKeys(r.Violations)
		w := nameWidth(rules, 24)
		for _, rule := range rules {
			warn := ""
			if rule, ok := check.ParseRule(rule); ok && rule.Warning() {
				warn = "  (a warning: does not fail the run)"
			}
			p("  %s %d%s\n", padName(rule, w), r.Violations[rule], warn)
			if s := r.ViolationSamples[rule]; len(s) > 0 && s[0].Frame != "" {
				p("    e.g. %s\n", OneLine(s[0].Frame, 160))
			}
		}
	}
}

// nameWidth is the width of a column of names in a list: the longest name
// (cut at listCut), at least least, so the counts after them line up.
func nameWidth(names []string, least int) int {
	w := least
	for _, n := range names {
		w = max(w, utf8.RuneCountInString(OneLine(n, listCut)))
	}
	return w
}

// padName is name as one line cut as nameWidth cuts it (at listCut
// bytes), padded to width characters.
func padName(name string, width int) string {
	n := OneLine(name, listCut)
	return n + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(n)))
}

// listCut is where a name in a list of the text report is cut.
const listCut = 60

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

// writeTextLatency writes the latency table and the per-method table.
func writeTextLatency(ew io.Writer, p printf, r *Result) {
	p("\nlatency     (corrected: reply - intended send time; service: reply - actual write)\n")
	writeLatencyTable(ew, "count", []latencyRow{
		{"corrected", r.Latency.Corrected.Count, r.Latency.Corrected},
		{"service", r.Latency.Service.Count, r.Latency.Service},
		{"lag", r.Latency.Lag.Count, r.Latency.Lag},
	}, true)
	// Replies that matched no request are kept under their own name for
	// their violations; they have no latency to show here.
	var rows []latencyRow
	for _, name := range SortedKeys(r.Methods) {
		if name != UnmatchedMethod {
			m := r.Methods[name]
			rows = append(rows, latencyRow{name, int64(m.Requests.Answered), m.Latency.Corrected})
		}
	}
	if len(rows) > 1 {
		p("\nper method (corrected latency)\n")
		writeLatencyTable(ew, "answered", rows, false)
	}
}

// latencyRow is one row of a latency table: its name, the count shown and
// the histogram's figures.
type latencyRow struct {
	name  string
	count int64
	l     Latency
}

// maxNameWidth is where a row name of a latency table (a method name is
// the user's, and may be long) is cut, so the columns stay within reach.
const maxNameWidth = 40

// writeLatencyTable writes rows as a table with one unit per column (so a
// column reads down without converting), NoValue where a histogram is
// empty, and the names aligned however long they are. Names are
// right-aligned when right is set (the fixed names of the main table),
// else left-aligned.
func writeLatencyTable(w io.Writer, countHead string, rows []latencyRow, right bool) {
	figures := []func(l Latency) int64{
		func(l Latency) int64 { return l.P50us }, func(l Latency) int64 { return l.P90us },
		func(l Latency) int64 { return l.P95us }, func(l Latency) int64 { return l.P99us },
		func(l Latency) int64 { return l.P999us }, func(l Latency) int64 { return l.MaxUs },
	}
	cells := make([][]string, len(rows))
	for _, get := range figures {
		var col []int64
		for _, row := range rows {
			if row.l.Count > 0 {
				col = append(col, get(row.l))
			}
		}
		format := columnFormat(col)
		for i, row := range rows {
			c := NoValue
			if row.l.Count > 0 {
				c = format(get(row.l))
			}
			cells[i] = append(cells[i], c)
		}
	}
	width := 0
	names := make([]string, len(rows))
	for i, row := range rows {
		names[i] = OneLine(row.name, maxNameWidth)
		width = max(width, utf8.RuneCountInString(names[i]))
	}
	// Right-aligned cells get their padding on the left: the first column
	// is indented by it.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t%s\tp50\tp90\tp95\tp99\tp99.9\tmax\t\n", strings.Repeat(" ", width), countHead)
	for i, row := range rows {
		pad := strings.Repeat(" ", width-utf8.RuneCountInString(names[i]))
		name := names[i] + pad // the column is right-aligned: padded to its width, a name starts at its left
		if right {
			name = pad + names[i]
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t\n", name, row.count, strings.Join(cells[i], "\t"))
	}
	tw.Flush()
}

// columnFormat returns the formatter of a column of latencies: the unit
// FormatMicros would give its largest value, for every value, with enough
// decimals (down to the microsecond) that its smallest non-zero value keeps
// two significant digits.
func columnFormat(col []int64) func(int64) string {
	var top, low int64
	for _, v := range col {
		top = max(top, v)
		if v > 0 && (low == 0 || v < low) {
			low = v
		}
	}
	div, unit, decimals, most := 1.0, "µs", 0, 0
	switch {
	case top >= 999_995:
		div, unit, decimals, most = 1e6, "s", 3, 6
	case top >= 1000:
		div, unit, decimals, most = 1e3, "ms", 2, 3
	}
	for low > 0 && decimals < most && float64(low)/div*math.Pow10(decimals) < 10 {
		decimals++
	}
	return func(v int64) string { return strconv.FormatFloat(float64(v)/div, 'f', decimals, 64) + unit }
}

// writeTextSoak writes the soak fits and verdict.
func writeTextSoak(p printf, s *SoakReport) {
	p("\nsoak        %d points of %gs (%d left out as warm-up)\n", s.Points, s.IntervalS, s.WarmupPoints)
	writeTextGauges(p, s.Gauges)
	growth := func(name string, g *Growth, unit func(float64) string) {
		if g == nil {
			return
		}
		p("  %-22s %s per hour (R² %.2f), fitted %s → %s\n", name, unit(g.PerHour), g.R2, unit(g.First), unit(g.Last))
	}
	count := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	if len(s.Gauges) == 0 { // a file of an older version: child RSS was a figure of its own
		growth("child RSS", s.ChildRSS, func(v float64) string { return fmt.Sprintf("%.1fMiB", v/(1<<20)) })
	}
	growth("in flight", s.InFlight, count)
	growth("oldest pending", s.OldestPending, func(v float64) string { return FormatMicros(int64(v)) })
	growth("timed out, unanswered", s.TimedOutUnanswered, count)
	p("  verdict: %s\n", s.Verdict)
	if s.HlogPath != "" || s.SeriesPath != "" {
		p("  written as it ran: %s\n", strings.Trim(s.HlogPath+" "+s.SeriesPath, " "))
	}
}

// writeTextTail writes the shard, the merged parts (and what a partial
// merge lacks) and the warnings.
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
	if pt := r.Partial; pt != nil {
		p("\npartial     %s: the figures cover only the shards merged\n", OneLine(pt.Text(), 200))
		for _, why := range pt.Reasons {
			p("  %s\n", OneLine(why, 300))
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
