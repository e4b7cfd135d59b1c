package stats

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// Comparison is the side-by-side view of several results that rpcload
// compare prints and the HTML report shows: over all methods, then per
// method, each figure of each result with its ratio to the first.
type Comparison struct {
	Groups []ComparisonGroup
}

// ComparisonGroup is the block of one method ("all methods" first).
type ComparisonGroup struct {
	Name string
	Rows []ComparisonRow
}

// ComparisonRow is one figure across the results; a cell is "-" where the
// result does not have the figure (the method was not called, or got no
// reply to measure).
type ComparisonRow struct {
	Figure string
	Cells  []string
}

// AllMethods names the group of the figures over all methods.
const AllMethods = "all methods"

// comparisonFigure is one row of the comparison: how to read the figure
// off a method's result and how to show it.
type comparisonFigure struct {
	label string
	value func(m MethodResult, r *Result) (float64, bool)
	show  func(float64) string
}

func comparisonFigures() []comparisonFigure {
	lat := func(get func(l Latency) int64) func(m MethodResult, r *Result) (float64, bool) {
		return func(m MethodResult, _ *Result) (float64, bool) {
			return float64(get(m.Latency.Corrected)), m.Latency.Corrected.Count > 0
		}
	}
	showUs := func(v float64) string { return FormatMicros(int64(v)) }
	return []comparisonFigure{
		{"answered/s", func(m MethodResult, r *Result) (float64, bool) {
			return float64(m.Requests.Answered) / r.DurationS, r.DurationS > 0
		}, func(v float64) string { return fmt.Sprintf("%.1f", v) }},
		{"p50", lat(func(l Latency) int64 { return l.P50us }), showUs},
		{"p90", lat(func(l Latency) int64 { return l.P90us }), showUs},
		{"p95", lat(func(l Latency) int64 { return l.P95us }), showUs},
		{"p99", lat(func(l Latency) int64 { return l.P99us }), showUs},
		{"p99.9", lat(func(l Latency) int64 { return l.P999us }), showUs},
		{"error rate", func(m MethodResult, _ *Result) (float64, bool) {
			q := m.Requests
			bad := q.RPCErrors + q.InvalidReplies + q.TransportErrors + q.Timeouts + q.Leaked
			return 100 * float64(bad) / float64(q.Sent), q.Sent > 0
		}, func(v float64) string { return fmt.Sprintf("%.2f%%", v) }},
		{"violations", func(m MethodResult, _ *Result) (float64, bool) {
			var n uint64
			for _, c := range m.Violations {
				n += c
			}
			return float64(n), true
		}, func(v float64) string { return fmt.Sprintf("%.0f", v) }},
	}
}

// Compare builds the comparison of results: throughput (answered per
// second of sending), corrected latency percentiles, error rate and
// violations, each with its ratio to the first result.
func Compare(results []*Result) Comparison {
	figures := comparisonFigures()
	group := func(name string, pick func(r *Result) (MethodResult, bool)) ComparisonGroup {
		g := ComparisonGroup{Name: name}
		for _, f := range figures {
			row := ComparisonRow{Figure: f.label}
			var base float64
			for i, r := range results {
				m, ok := pick(r)
				v, has := f.value(m, r)
				if !ok || !has {
					row.Cells = append(row.Cells, "-")
					continue
				}
				cell := f.show(v)
				if i == 0 {
					base = v
				} else if base > 0 && !math.IsInf(v/base, 0) {
					cell += fmt.Sprintf(" (%.2f×)", v/base)
				}
				row.Cells = append(row.Cells, cell)
			}
			g.Rows = append(g.Rows, row)
		}
		return g
	}
	c := Comparison{Groups: []ComparisonGroup{group(AllMethods, func(r *Result) (MethodResult, bool) {
		return MethodResult{Requests: r.Requests, Violations: r.Violations, ErrorCodes: r.ErrorCodes, Latency: r.Latency}, true
	})}}
	seen := map[string]bool{}
	for _, r := range results {
		for _, name := range SortedKeys(r.Methods) {
			if name == UnmatchedMethod || seen[name] {
				continue
			}
			seen[name] = true
			c.Groups = append(c.Groups, group(name, func(r *Result) (MethodResult, bool) {
				m, ok := r.Methods[name]
				return m, ok
			}))
		}
	}
	return c
}

// WriteComparison renders Compare(results) as text. names label the
// columns (the files' names).
func WriteComparison(w io.Writer, names []string, results []*Result) error {
	ew := &ErrWriter{W: w}
	for _, g := range Compare(results).Groups {
		title := g.Name
		if title != AllMethods {
			title = "method " + OneLine(title, 80)
		}
		fmt.Fprintf(ew, "\n%s\n", title)
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "\t")
		for _, n := range names {
			fmt.Fprintf(tw, "%s\t", n)
		}
		fmt.Fprintln(tw)
		for _, row := range g.Rows {
			fmt.Fprintf(tw, "  %s\t", row.Figure)
			for _, c := range row.Cells {
				fmt.Fprintf(tw, "%s\t", c)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	fmt.Fprintln(ew, "\nratios are to the first file; latency is corrected (reply - intended send time)")
	return ew.Err()
}
