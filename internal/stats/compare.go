package stats

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// WriteComparison renders results side by side, per method and over all
// methods: throughput (answered per second of sending), corrected latency
// percentiles, error rate and violations, each with its ratio to the first
// result. names label the columns (the files' names).
func WriteComparison(w io.Writer, names []string, results []*Result) error {
	ew := &errWriter{w: w}
	methods := []string{}
	seen := map[string]bool{}
	for _, r := range results {
		for _, m := range SortedKeys(r.Methods) {
			if m != UnmatchedMethod && !seen[m] {
				seen[m] = true
				methods = append(methods, m)
			}
		}
	}
	block := func(title string, pick func(r *Result) (MethodResult, bool)) {
		fmt.Fprintf(ew, "\n%s\n", title)
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "\t")
		for _, n := range names {
			fmt.Fprintf(tw, "%s\t", n)
		}
		fmt.Fprintln(tw)
		type figure struct {
			label string
			value func(m MethodResult, r *Result) (float64, bool)
			show  func(float64) string
		}
		lat := func(get func(l Latency) int64) func(m MethodResult, r *Result) (float64, bool) {
			return func(m MethodResult, _ *Result) (float64, bool) {
				return float64(get(m.Latency.Corrected)), m.Latency.Corrected.Count > 0
			}
		}
		showUs := func(v float64) string { return us(int64(v)) }
		figures := []figure{
			{"answered/s", func(m MethodResult, r *Result) (float64, bool) {
				return float64(m.Requests.Answered) / r.DurationS, r.DurationS > 0
			}, func(v float64) string { return fmt.Sprintf("%.1f", v) }},
			{"p50", lat(func(l Latency) int64 { return l.P50us }), showUs},
			{"p90", lat(func(l Latency) int64 { return l.P90us }), showUs},
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
		for _, f := range figures {
			fmt.Fprintf(tw, "  %s\t", f.label)
			var base float64
			for i, r := range results {
				m, ok := pick(r)
				v, has := f.value(m, r)
				if !ok || !has {
					fmt.Fprint(tw, "-\t")
					continue
				}
				cell := f.show(v)
				if i == 0 {
					base = v
				} else if base > 0 && !math.IsInf(v/base, 0) {
					cell += fmt.Sprintf(" (%.2f×)", v/base)
				}
				fmt.Fprintf(tw, "%s\t", cell)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	block("all methods", func(r *Result) (MethodResult, bool) {
		return MethodResult{Requests: r.Requests, Violations: r.Violations, ErrorCodes: r.ErrorCodes, Latency: r.Latency}, true
	})
	for _, name := range methods {
		block("method "+oneLine(name, 80), func(r *Result) (MethodResult, bool) {
			m, ok := r.Methods[name]
			return m, ok
		})
	}
	fmt.Fprintln(ew, "\nratios are to the first file; latency is corrected (reply - intended send time)")
	return ew.err
}
