package report

import (
	"fmt"
	"math"
	"sort"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcload/rpcload/internal/stats"
)

// entry is one input with its place in the page: its index picks its color.
type entry struct {
	Index int
	Name  string
	R     *stats.Result
}

// Percentile spectrum: x = log10(1/(1-q)), so 0, 90, 99, 99.9, ... are
// equally spaced; the axis ends at 99.999%.
const (
	spectrumMaxX  = 5
	spectrumSteps = 250
)

var spectrumTicks = []fixedTick{{0, "0%"}, {1, "90%"}, {2, "99%"}, {3, "99.9%"}, {4, "99.99%"}, {5, "99.999%"}}

// spectrumPoints returns the latency at each percentile of l, read off its
// histogram. A result without one (older files, or one that does not
// decode) falls back to the summary percentiles, and note says so.
func spectrumPoints(l stats.Latency) (pts []xy, note string) {
	if l.Count == 0 {
		return nil, ""
	}
	if l.HDR != "" {
		h, err := hdr.Decode([]byte(l.HDR))
		if err == nil && h.TotalCount() > 0 {
			qs := make([]float64, spectrumSteps+1)
			for i := range qs {
				qs[i] = 100 * (1 - math.Pow(10, -spectrumMaxX*float64(i)/spectrumSteps))
			}
			// One pass over the counts for all percentiles, not one each.
			for i, v := range h.ValueAtPercentilesSlice(qs) {
				pts = append(pts, xy{spectrumMaxX * float64(i) / spectrumSteps, float64(v)})
			}
			return pts, ""
		}
		if err != nil {
			note = fmt.Sprintf("its histogram does not decode (%v)", err)
		} else {
			note = "its histogram is empty"
		}
	} else {
		note = "the file has no histogram"
	}
	return []xy{{0, float64(l.MinUs)}, {math.Log10(2), float64(l.P50us)}, {1, float64(l.P90us)},
		{math.Log10(20), float64(l.P95us)}, {2, float64(l.P99us)}, {3, float64(l.P999us)}, {spectrumMaxX, float64(l.MaxUs)}}, note + ": the line joins min, p50, p90, p95, p99, p99.9 and max (at the right edge)"
}

// spectrumChart is the HdrHistogram-style percentile plot of every input:
// corrected latency solid, service time dashed.
func spectrumChart(es []entry) (chart, []string) {
	c := chart{ID: "plot-spectrum", Title: "Latency by percentile",
		Note:  "Each reply's latency, sorted: corrected = reply − intended send time (solid), service = reply − actual write (dashed). The percentile axis is logarithmic in 1/(1−q); the right edge is the 99.999th percentile.",
		Empty: "No replies in any result: there is no latency to show.",
		X:     axisSpec{Label: "percentile", Max: spectrumMaxX, Ticks: spectrumTicks},
		Y:     axisSpec{Label: "latency", UnitOf: latencyUnit},
	}
	var notes []string
	kinds := []struct {
		name string
		get  func(r *stats.Result) stats.Latency
	}{
		{"corrected", func(r *stats.Result) stats.Latency { return r.Latency.Corrected }},
		{"service", func(r *stats.Result) stats.Latency { return r.Latency.Service }},
	}
	for _, e := range es {
		for k, kind := range kinds {
			pts, note := spectrumPoints(kind.get(e.R))
			if note != "" {
				notes = append(notes, fmt.Sprintf("%s, %s latency: %s.", e.Name, kind.name, note))
			}
			if len(pts) == 0 {
				continue
			}
			st := lineStyle{palette[e.Index%len(palette)], dashes[k]}
			c.Lines = append(c.Lines, dataLine{lineStyle: st, Name: e.Name + " " + kind.name, Segs: [][]xy{pts}})
		}
	}
	if len(es) == 1 {
		c.Legend = []legendEntry{{resultStyle(es[0].Index), "corrected"}, {lineStyle{palette[es[0].Index%len(palette)], dashes[1]}, "service"}}
	} else {
		c.Legend = resultLegend(es)
		c.Legend = append(c.Legend, legendEntry{lineStyle{neutral, dashes[0]}, "corrected"}, legendEntry{lineStyle{neutral, dashes[1]}, "service"})
	}
	return c, notes
}

func resultLegend(es []entry) []legendEntry {
	var l []legendEntry
	for _, e := range es {
		l = append(l, legendEntry{resultStyle(e.Index), e.Name})
	}
	return l
}

// interval is one point of a series with its start: Point.T is the end of
// the interval, and the start is the previous point's end (0 for the first).
type interval struct {
	T0, T1 float64
	P      stats.Point
}

// intervals turns a series into intervals. A sliver (shorter than a
// quarter of the usual interval: the part-interval closed when the run
// ended) is merged into the interval before it, so its few requests do not
// show as a spike of requests per second; counts add up, gauges are the
// later ones, and the latency is that of the part with more replies.
func intervals(series []stats.Point) []interval {
	var lengths []float64
	prev := 0.0
	for _, p := range series {
		if d := p.T - prev; d > 0 {
			lengths = append(lengths, d)
		}
		prev = math.Max(prev, p.T)
	}
	if len(lengths) == 0 {
		return nil
	}
	sort.Float64s(lengths)
	usual := lengths[len(lengths)/2]
	var out []interval
	prev = 0
	for _, p := range series {
		d := p.T - prev
		if d <= 0 {
			continue // a clock that went backwards or a repeated point: nothing to draw
		}
		if d < usual/4 && len(out) > 0 {
			last := &out[len(out)-1]
			last.T1 = p.T
			last.P = mergePoints(last.P, p)
		} else {
			out = append(out, interval{T0: prev, T1: p.T, P: p})
		}
		prev = p.T
	}
	return out
}

func mergePoints(a, b stats.Point) stats.Point {
	m := b
	m.Sent += a.Sent
	m.Messages += a.Messages
	m.Batches += a.Batches
	m.Answered += a.Answered
	m.OK += a.OK
	m.RPCErrors += a.RPCErrors
	m.TransportErrors += a.TransportErrors
	m.Timeouts += a.Timeouts
	m.Dropped += a.Dropped
	m.Violations += a.Violations
	m.Late += a.Late
	m.InFlightMax = max(a.InFlightMax, b.InFlightMax)
	if a.Answered >= b.Answered {
		m.P50us, m.P99us = a.P50us, a.P99us
	}
	return m
}

// seriesKind is one kind of line of a time-series plot.
type seriesKind struct {
	Label string
	// Value is the figure of one interval; ok = false leaves a gap.
	Value func(iv interval) (v float64, ok bool)
	// Step: the figure belongs to the whole interval (a count or a rate)
	// and is drawn flat across it; otherwise it is a gauge read at the
	// interval's end and drawn as a point there.
	Step bool
	// Optional kinds are drawn only when some result has a non-zero value
	// (or a fallback line).
	Optional bool
	// Fallback draws a line for a result whose series has no value of this
	// kind (a target rate from an older file); nil = none.
	Fallback func(r *stats.Result) []xy
	// Dash, when set, is this kind's dash pattern whatever the number of
	// results: a reference line (the target rate) drawn over the data it
	// often coincides with stays visible.
	Dash string
}

// seriesChart draws every kind for every input against time.
func seriesChart(c chart, es []entry, kinds []seriesKind) chart {
	c.X = axisSpec{Label: "time since start", UnitOf: timeUnit, Exact: true}
	ivs := make([][]interval, len(es))
	for i, e := range es {
		ivs[i] = intervals(e.R.Series)
	}
	var shown []seriesKind
	for _, k := range kinds {
		if !k.Optional || anyNonZero(ivs, k) || hasFallback(es, k) {
			shown = append(shown, k)
		}
	}
	style := func(i, k int) lineStyle {
		st := styleOf(i, k, len(es))
		if d := shown[k].Dash; d != "" {
			st.Dash = d
		}
		return st
	}
	for i, e := range es {
		for k, kind := range shown {
			l := dataLine{lineStyle: style(e.Index, k), Name: e.Name + ": " + kind.Label}
			var seg []xy
			for _, iv := range ivs[i] {
				v, ok := kind.Value(iv)
				if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
					if len(seg) > 0 {
						l.Segs = append(l.Segs, seg)
					}
					seg = nil
					continue
				}
				if kind.Step {
					seg = append(seg, xy{iv.T0, v}, xy{iv.T1, v})
				} else {
					seg = append(seg, xy{iv.T1, v})
				}
			}
			if len(seg) > 0 {
				l.Segs = append(l.Segs, seg)
			}
			if len(l.Segs) == 0 && kind.Fallback != nil {
				if pts := kind.Fallback(e.R); len(pts) > 0 {
					l.Segs = [][]xy{pts}
					l.Name += " (average)"
				}
			}
			if len(l.Segs) > 0 {
				c.Lines = append(c.Lines, l)
			}
		}
	}
	switch {
	case len(es) == 1:
		for k, kind := range shown {
			c.Legend = append(c.Legend, legendEntry{style(es[0].Index, k), kind.Label})
		}
	default:
		c.Legend = resultLegend(es)
		if len(shown) > 1 {
			for k, kind := range shown {
				c.Legend = append(c.Legend, legendEntry{lineStyle{neutral, style(0, k).Dash}, kind.Label})
			}
		}
	}
	return c
}

func anyNonZero(ivs [][]interval, k seriesKind) bool {
	for _, list := range ivs {
		for _, iv := range list {
			if v, ok := k.Value(iv); ok && v != 0 {
				return true
			}
		}
	}
	return false
}

func hasFallback(es []entry, k seriesKind) bool {
	if k.Fallback == nil {
		return false
	}
	for _, e := range es {
		if len(k.Fallback(e.R)) > 0 {
			return true
		}
	}
	return false
}

func perSecond(n uint64, iv interval) float64 { return float64(n) / (iv.T1 - iv.T0) }

// timeCharts are the plots over time, each present when its figure is.
func timeCharts(es []entry) []chart {
	noSeries := "No time series in these results (the run ended before its first interval)."
	count := func(get func(p stats.Point) uint64) func(iv interval) (float64, bool) {
		return func(iv interval) (float64, bool) { return float64(get(iv.P)), true }
	}
	charts := []chart{
		seriesChart(chart{ID: "plot-throughput", Title: "Throughput",
			Note:  "Per interval: requests and notifications written per second (sent/s), replies matched to a request per second (answered/s), with batches the messages written per second (messages/s, a batch counting once), and the rate the schedule asked for in messages per second (open loop only).",
			Empty: noSeries, Y: axisSpec{Label: "per second", UnitOf: countUnit}}, es, []seriesKind{
			{Label: "sent/s", Step: true, Value: func(iv interval) (float64, bool) { return perSecond(iv.P.Sent, iv), true }},
			{Label: "answered/s", Step: true, Value: func(iv interval) (float64, bool) { return perSecond(iv.P.Answered, iv), true }},
			// The schedule counts messages: with batches, this is the line
			// the target rate is to be read against.
			{Label: "messages/s", Step: true, Optional: true, Value: func(iv interval) (float64, bool) {
				return perSecond(iv.P.Messages, iv), iv.P.Batches > 0
			}},
			{Label: "target rate", Optional: true, Dash: "2 3", Value: func(iv interval) (float64, bool) { return iv.P.TargetRate, iv.P.TargetRate > 0 },
				Fallback: func(r *stats.Result) []xy {
					if r.Rate.Target <= 0 || r.DurationS <= 0 {
						return nil
					}
					return []xy{{0, r.Rate.Target}, {r.DurationS, r.Rate.Target}}
				}},
		}),
		seriesChart(chart{ID: "plot-inflight", Title: "In flight",
			Note: "Requests scheduled and not yet resolved: the most at once in each interval " +
				"(result files of older versions, which did not record it: the number at the interval's end).",
			Empty: noSeries, Y: axisSpec{Label: "requests", UnitOf: countUnit}}, es, []seriesKind{
			{Label: "in flight, most", Step: true, Value: func(iv interval) (float64, bool) {
				return float64(max(iv.P.InFlightMax, iv.P.InFlight)), true
			}},
		}),
		seriesChart(chart{ID: "plot-latency", Title: "Latency per interval",
			Note:  "p50 and p99 of the corrected latency (reply − intended send time) of the replies that came in each interval; a gap is an interval without replies.",
			Empty: noSeries, Y: axisSpec{Label: "corrected latency", UnitOf: latencyUnit}}, es, []seriesKind{
			{Label: "p50", Step: true, Value: func(iv interval) (float64, bool) { return float64(iv.P.P50us), iv.P.Answered > 0 }},
			{Label: "p99", Step: true, Value: func(iv interval) (float64, bool) { return float64(iv.P.P99us), iv.P.Answered > 0 }},
		}),
		seriesChart(chart{ID: "plot-errors", Title: "Errors, timeouts and violations",
			Note:  "Counts per interval: error replies, transport errors, requests that timed out, broken rules; dropped ticks and late replies when there were any.",
			Empty: noSeries, Y: axisSpec{Label: "count per interval", UnitOf: countUnit}}, es, []seriesKind{
			{Label: "rpc errors", Step: true, Value: count(func(p stats.Point) uint64 { return p.RPCErrors })},
			{Label: "transport errors", Step: true, Value: count(func(p stats.Point) uint64 { return p.TransportErrors })},
			{Label: "timeouts", Step: true, Value: count(func(p stats.Point) uint64 { return p.Timeouts })},
			{Label: "violations", Step: true, Value: count(func(p stats.Point) uint64 { return p.Violations })},
			{Label: "dropped", Step: true, Optional: true, Value: count(func(p stats.Point) uint64 { return p.Dropped })},
			{Label: "late", Step: true, Optional: true, Value: count(func(p stats.Point) uint64 { return p.Late })},
		}),
	}
	if anyPoint(es, func(p stats.Point) bool { return p.ChildRSSBytes > 0 }) {
		charts = append(charts, seriesChart(chart{ID: "plot-rss", Title: "Server memory",
			Note:  "Resident memory of the server's child processes (the ones rpcload started), sampled at the end of each interval.",
			Empty: noSeries, Y: axisSpec{Label: "resident memory", UnitOf: bytesUnit}}, es, []seriesKind{
			{Label: "child RSS", Value: func(iv interval) (float64, bool) {
				return float64(iv.P.ChildRSSBytes), iv.P.ChildRSSBytes > 0
			}},
		}))
	}
	soak := false
	for _, e := range es {
		soak = soak || e.R.Soak != nil
	}
	if soak || anyPoint(es, func(p stats.Point) bool { return p.OldestPendingUs > 0 }) {
		charts = append(charts, seriesChart(chart{ID: "plot-oldest", Title: "Oldest pending request",
			Note:  "Age of the oldest request still waiting for its reply at the end of each interval (0 when none was). A line that keeps rising is a request the server never answers.",
			Empty: noSeries, Y: axisSpec{Label: "age", UnitOf: latencyUnit}}, es, []seriesKind{
			{Label: "oldest pending", Value: func(iv interval) (float64, bool) { return float64(iv.P.OldestPendingUs), true }},
		}))
	}
	if soak || anyPoint(es, func(p stats.Point) bool { return p.TimedOutUnanswered > 0 }) {
		charts = append(charts, seriesChart(chart{ID: "plot-unanswered", Title: "Timed out, still unanswered",
			Note:  "Requests that timed out and have had no late reply since, at the end of each interval: the leak suspects of a soak.",
			Empty: noSeries, Y: axisSpec{Label: "requests", UnitOf: countUnit}}, es, []seriesKind{
			{Label: "timed out unanswered", Value: func(iv interval) (float64, bool) { return float64(iv.P.TimedOutUnanswered), true }},
		}))
	}
	return charts
}

func anyPoint(es []entry, f func(p stats.Point) bool) bool {
	for _, e := range es {
		for _, p := range e.R.Series {
			if f(p) {
				return true
			}
		}
	}
	return false
}
