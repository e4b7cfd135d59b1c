package stats

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Comparison is the side-by-side view of several results that rpcload
// compare prints and the HTML report shows: over all methods, then per
// method, each figure of each result with its ratio to the first.
type Comparison struct {
	Groups []ComparisonGroup
	// LoadDifferences says, one line per setting, where the results were
	// not run under the same load (rate, concurrency, duration, stages):
	// their figures then differ for that reason too.
	LoadDifferences []string
}

// ComparisonGroup is the block of one method ("all methods" first).
type ComparisonGroup struct {
	Name string
	Rows []ComparisonRow
}

// ComparisonRow is one figure across the results; a cell is NoValue where
// the result does not have the figure (the method was not called, or got no
// reply to measure).
type ComparisonRow struct {
	Figure string
	Cells  []string
}

// NoValue stands in a report's cell for a figure there is nothing to
// measure for (an empty histogram, a method not called) and for a ratio of
// two zeros: 0 would read as a measurement.
const NoValue = "—"

// AllMethods names the group of the figures over all methods.
const AllMethods = "all methods"

// comparisonFigure is one row of the comparison: how to read the figure
// off a method's result and how to show it.
type comparisonFigure struct {
	label string
	value func(m MethodResult, r *Result) (float64, bool)
	show  func(float64) string
	// whole: a figure of the whole run, shown in the all-methods group
	// only, and only when a result has it.
	whole bool
}

func comparisonFigures() []comparisonFigure {
	lat := func(get func(l Latency) int64) func(m MethodResult, r *Result) (float64, bool) {
		return func(m MethodResult, _ *Result) (float64, bool) {
			return float64(get(m.Latency.Corrected)), m.Latency.Corrected.Count > 0
		}
	}
	showUs := func(v float64) string { return FormatMicros(int64(v)) }
	return []comparisonFigure{
		{label: "capacity", whole: true, value: func(_ MethodResult, r *Result) (float64, bool) {
			if r.Capacity == nil {
				return 0, false
			}
			return r.Capacity.Rate, true
		}, show: FormatRate},
		{"answered/s", func(m MethodResult, r *Result) (float64, bool) {
			return float64(m.Requests.Answered) / r.DurationS, r.DurationS > 0
		}, func(v float64) string { return fmt.Sprintf("%.1f", v) }, false},
		{"p50", lat(func(l Latency) int64 { return l.P50us }), showUs, false},
		{"p90", lat(func(l Latency) int64 { return l.P90us }), showUs, false},
		{"p95", lat(func(l Latency) int64 { return l.P95us }), showUs, false},
		{"p99", lat(func(l Latency) int64 { return l.P99us }), showUs, false},
		{"p99.9", lat(func(l Latency) int64 { return l.P999us }), showUs, false},
		{"error rate", func(m MethodResult, _ *Result) (float64, bool) {
			q := m.Requests
			bad := q.RPCErrors + q.InvalidReplies + q.TransportErrors + q.Timeouts + q.Leaked
			return 100 * float64(bad) / float64(q.Sent), q.Sent > 0
		}, func(v float64) string { return fmt.Sprintf("%.2f%%", v) }, false},
		{"violations", func(m MethodResult, _ *Result) (float64, bool) {
			var n uint64
			for _, c := range m.Violations {
				n += c
			}
			return float64(n), true
		}, func(v float64) string { return fmt.Sprintf("%.0f", v) }, false},
	}
}

// Compare builds the comparison of results: throughput (answered per
// second of sending), corrected latency percentiles, error rate and
// violations, each with its ratio to the first result; names (one per
// result) label them in LoadDifferences. A figure the first result shows
// as zero gives no ratio: NoValue stands for it.
func Compare(names []string, results []*Result) Comparison {
	figures := comparisonFigures()
	group := func(name string, pick func(r *Result) (MethodResult, bool)) ComparisonGroup {
		g := ComparisonGroup{Name: name}
		for _, f := range figures {
			if f.whole && (name != AllMethods || !slices.ContainsFunc(results, func(r *Result) bool { return r.Capacity != nil })) {
				continue
			}
			row := ComparisonRow{Figure: f.label}
			var base float64
			for i, r := range results {
				m, ok := pick(r)
				v, has := f.value(m, r)
				if !ok || !has {
					row.Cells = append(row.Cells, NoValue)
					continue
				}
				cell := f.show(v)
				switch {
				case i == 0:
					base = v
				case f.show(base) == f.show(0) || math.IsInf(v/base, 0):
					// 0 against 0 is no evidence of "the same" (1.00×),
					// and x against 0 has no ratio; what is shown as 0
					// (0.00%) counts as 0.
					cell += " (" + NoValue + ")"
				default:
					cell += fmt.Sprintf(" (%.2f×)", v/base)
				}
				row.Cells = append(row.Cells, cell)
			}
			g.Rows = append(g.Rows, row)
		}
		return g
	}
	c := Comparison{LoadDifferences: loadDifferences(names, results), Groups: []ComparisonGroup{group(AllMethods, func(r *Result) (MethodResult, bool) {
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

// loadSettings are the settings of a result (as run records them) that
// make up its load, with the name a message gives each.
var loadSettings = []struct{ key, name string }{
	{"rate", "rate"}, {"concurrency", "concurrency"}, {"duration", "duration"}, {"stages", "stages"},
}

// loadDifferences says which load settings differ between the results, one
// line per setting, each result's value named, and which results are
// partial merges (which offered less load than their settings say). A result without the
// setting (a merge, an older file) is left out of that setting's check.
func loadDifferences(names []string, results []*Result) []string {
	var out []string
	for _, ls := range loadSettings {
		var vals []string
		first, differ := "", false
		for i, r := range results {
			v, ok := r.Settings[ls.key]
			if !ok {
				continue
			}
			text := settingText(v)
			if len(vals) == 0 {
				first = text
			} else if text != first {
				differ = true
			}
			vals = append(vals, columnName(names, i)+" "+text)
		}
		if differ {
			out = append(out, fmt.Sprintf("the loads differ: %s %s", ls.name, strings.Join(vals, ", ")))
		}
	}
	for i, r := range results {
		if r.Partial != nil {
			out = append(out, fmt.Sprintf("%s is a partial merge (%s): it holds only part of its run's load", columnName(names, i), OneLine(r.Partial.Text(), 120)))
		}
	}
	return out
}

// settingText is a setting's value as one word, for comparing and showing.
func settingText(v any) string {
	if s, ok := v.(string); ok {
		return OneLine(s, 120)
	}
	if b, err := json.Marshal(v); err == nil {
		return OneLine(strings.ReplaceAll(string(b), " ", ""), 120)
	}
	return fmt.Sprint(v)
}

func columnName(names []string, i int) string {
	if i < len(names) {
		return OneLine(names[i], 80)
	}
	return fmt.Sprintf("result %d", i+1)
}

// ComparisonHeads are the column heads of the results: the target each
// result ran against, and the file it came from (names).
func ComparisonHeads(names []string, results []*Result) (targets, files []string) {
	for i, r := range results {
		t := r.Target
		if t == "" {
			t = NoValue
		}
		targets = append(targets, OneLine(t, 60))
		files = append(files, columnName(names, i))
	}
	return targets, files
}

// WriteComparison renders Compare(names, results) as text. Each column is
// headed by its result's target and, under it, names (the files' names);
// differing loads are warned of first.
func WriteComparison(w io.Writer, names []string, results []*Result) error {
	ew := &ErrWriter{W: w}
	c := Compare(names, results)
	for _, d := range c.LoadDifferences {
		fmt.Fprintf(ew, "WARNING: %s\n", d)
	}
	if len(c.LoadDifferences) > 0 {
		fmt.Fprintln(ew, "  the figures below differ for that reason too: compare runs made under the same load")
	}
	targets, files := ComparisonHeads(names, results)
	for _, g := range c.Groups {
		title := g.Name
		if title != AllMethods {
			title = "method " + OneLine(title, 80)
		}
		fmt.Fprintf(ew, "\n%s\n", title)
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		for _, head := range [][]string{targets, files} {
			fmt.Fprint(tw, "\t")
			for _, h := range head {
				fmt.Fprintf(tw, "%s\t", h)
			}
			fmt.Fprintln(tw)
		}
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
