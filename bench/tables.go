package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// sample is one figure of one tool in one round of one case. Figures are
// kept per round so that ratios can be taken within a round, where the
// tools ran seconds apart and machine drift mostly cancels.
type sample struct {
	Comparison int     `json:"comparison"`
	Case       string  `json:"case"`   // e.g. "tcp, 1024 in flight, 4 conns"
	Tool       string  `json:"tool"`   // rpcload, wrk, vegeta, hey, minclient
	Metric     string  `json:"metric"` // req/s, p50 ms, ...
	Round      int     `json:"round"`  // 1-based
	Value      float64 `json:"value"`
}

// seriesKey names the rounds of one figure.
type seriesKey struct {
	Comparison int
	Case, Tool string
	Metric     string
}

// store keeps every sample in the order it was taken.
type store struct {
	samples []sample
}

func (s *store) add(x sample) { s.samples = append(s.samples, x) }

// values returns the figure's value per round (index round-1); rounds that
// have no value are NaN.
func (s *store) values(k seriesKey) []float64 {
	var out []float64
	for _, x := range s.samples {
		if x.Comparison != k.Comparison || x.Case != k.Case || x.Tool != k.Tool || x.Metric != k.Metric {
			continue
		}
		for len(out) < x.Round {
			out = append(out, math.NaN())
		}
		out[x.Round-1] = x.Value
	}
	return out
}

// median returns the median of the values that are not NaN (the mean of
// the middle two for an even count), or NaN when there are none.
func median(xs []float64) float64 {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// pairedRatio is the median over rounds of a[i]/b[i], using only rounds
// where both ran: the tools of one round ran back to back, so the ratio of
// a round is less exposed to drift than the ratio of two medians.
func pairedRatio(a, b []float64) float64 {
	var r []float64
	for i := 0; i < len(a) && i < len(b); i++ {
		if math.IsNaN(a[i]) || math.IsNaN(b[i]) || b[i] == 0 {
			continue
		}
		r = append(r, a[i]/b[i])
	}
	return median(r)
}

// spread is (max-min)/median of the values, a plain measure of how much the
// rounds disagree; NaN with fewer than two values.
func spread(xs []float64) float64 {
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, x := range xs {
		if math.IsNaN(x) {
			continue
		}
		lo, hi, n = math.Min(lo, x), math.Max(hi, x), n+1
	}
	m := median(xs)
	if n < 2 || m == 0 {
		return math.NaN()
	}
	return (hi - lo) / m
}

// table is a plain grid of strings rendered as Markdown or as aligned text.
type table struct {
	Head []string
	Rows [][]string
}

// markdown renders t as a GitHub table.
func (t table) markdown() string {
	var b strings.Builder
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + strings.ReplaceAll(c, "|", `\|`) + " |")
		}
		b.WriteString("\n")
	}
	row(t.Head)
	sep := make([]string, len(t.Head))
	for i := range sep {
		sep[i] = "---"
	}
	row(sep)
	for _, r := range t.Rows {
		row(r)
	}
	return b.String()
}

// text renders t with columns padded to their widest cell.
func (t table) text() string {
	w := make([]int, len(t.Head))
	all := append([][]string{t.Head}, t.Rows...)
	for _, r := range all {
		for i, c := range r {
			if i < len(w) && len(c) > w[i] {
				w[i] = len(c)
			}
		}
	}
	var b strings.Builder
	for _, r := range all {
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			if i == len(r)-1 {
				b.WriteString(c)
				continue
			}
			b.WriteString(c + strings.Repeat(" ", w[i]-len(c)))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// fmtNum prints a figure with about four significant digits, whole numbers
// without decimals and thousands grouped; NaN prints as "n/a".
func fmtNum(x float64) string {
	switch {
	case math.IsNaN(x):
		return "n/a"
	case math.IsInf(x, 0):
		return strconv.FormatFloat(x, 'f', 0, 64)
	case math.Abs(x) >= 1000 || x == math.Trunc(x):
		return groupThousands(strconv.FormatFloat(math.Round(x), 'f', 0, 64))
	case math.Abs(x) >= 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case math.Abs(x) >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

// fmtRatio prints a ratio as "1.23x".
func fmtRatio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(x, 'f', 2, 64) + "x"
}

func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// mediansTable lists, for one comparison, every case and tool with the
// median and the per-round values of each metric, in the order they were
// first measured.
func (s *store) mediansTable(comparison int) table {
	t := table{Head: []string{"case", "tool", "metric", "median", "rounds", "spread"}}
	seen := map[seriesKey]bool{}
	for _, x := range s.samples {
		k := seriesKey{x.Comparison, x.Case, x.Tool, x.Metric}
		if x.Comparison != comparison || seen[k] {
			continue
		}
		seen[k] = true
		v := s.values(k)
		rounds := make([]string, len(v))
		for i, y := range v {
			rounds[i] = fmtNum(y)
		}
		sp := "n/a"
		if f := spread(v); !math.IsNaN(f) {
			sp = fmt.Sprintf("%.1f%%", 100*f)
		}
		t.Rows = append(t.Rows, []string{k.Case, k.Tool, k.Metric, fmtNum(median(v)), strings.Join(rounds, ", "), sp})
	}
	return t
}

// ratioRow is one pairwise comparison of a metric between two tools.
type ratioRow struct {
	Case, Metric string
	A, B         string
	Paired       float64 // median of the per-round ratios A/B
	OfMedians    float64 // median(A)/median(B)
}

// ratios compares tool a with every other tool of each case of a
// comparison, on the given metric.
func (s *store) ratios(comparison int, metric, a string) []ratioRow {
	var out []ratioRow
	seen := map[seriesKey]bool{}
	for _, x := range s.samples {
		k := seriesKey{x.Comparison, x.Case, x.Tool, x.Metric}
		if x.Comparison != comparison || x.Metric != metric || x.Tool == a || seen[k] {
			continue
		}
		seen[k] = true
		va := s.values(seriesKey{comparison, x.Case, a, metric})
		if len(va) == 0 {
			continue
		}
		vb := s.values(k)
		out = append(out, ratioRow{
			Case: x.Case, Metric: metric, A: a, B: x.Tool,
			Paired: pairedRatio(va, vb), OfMedians: median(va) / median(vb),
		})
	}
	return out
}

// ratiosTable renders ratio rows.
func ratiosTable(rows []ratioRow) table {
	t := table{Head: []string{"case", "metric", "ratio", "median of per-round ratios", "ratio of medians"}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Case, r.Metric, r.A + " / " + r.B, fmtRatio(r.Paired), fmtRatio(r.OfMedians)})
	}
	return t
}
