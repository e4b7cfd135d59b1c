package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcload/rpcload/internal/stats"
)

// serverGauge is one of the server's gauges in a series: its children's
// threads and open files, or a gauge read with --server-metrics or
// --server-pid (the children's RSS has the Server memory plot).
type serverGauge struct {
	name  string
	value func(p *stats.Point) (float64, bool)
}

func (g serverGauge) unitOf() func(float64) unit {
	if strings.HasSuffix(g.name, "_bytes") {
		return bytesUnit
	}
	return countUnit
}

// serverGauges lists the gauges the results' series hold, in a fixed
// order: the children's, then the rest by name.
func serverGauges(es []entry) []serverGauge {
	var gs []serverGauge
	for _, g := range []serverGauge{
		{"child_threads", func(p *stats.Point) (float64, bool) { return float64(p.ChildThreads), p.ChildThreads > 0 }},
		{"child_open_fds", func(p *stats.Point) (float64, bool) { return float64(p.ChildOpenFDs), p.ChildOpenFDs > 0 }},
	} {
		if anyPoint(es, func(p stats.Point) bool { _, ok := g.value(&p); return ok }) {
			gs = append(gs, g)
		}
	}
	names := map[string]bool{}
	for _, e := range es {
		for _, p := range e.R.Series {
			for k := range p.Server {
				names[k] = true
			}
		}
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		gs = append(gs, serverGauge{k, func(p *stats.Point) (float64, bool) {
			v, ok := p.Server[k]
			return v, ok && !math.IsNaN(v) && !math.IsInf(v, 0)
		}})
	}
	return gs
}

// serverGaugeCharts plot each server gauge over time, one plot each:
// their units differ.
func serverGaugeCharts(es []entry) []chart {
	var charts []chart
	for i, g := range serverGauges(es) {
		charts = append(charts, seriesChart(chart{ID: "plot-server-" + strconv.Itoa(i+1), Title: "Server: " + g.name,
			Note:  "Read from the server at the end of each interval (--server-metrics, --server-pid, or its child processes); a gap is an interval whose read failed.",
			Empty: "No reading of this gauge.", Y: axisSpec{Label: g.name, UnitOf: g.unitOf()}}, es, []seriesKind{
			{Label: g.name, Value: func(iv interval) (float64, bool) { return g.value(&iv.P) }},
		}))
	}
	return charts
}

// soakCharts plot each gauge a soak judged against the requests the
// server had settled (answered, timed out or lost) when it was read, with
// the line fitted to the load's points after the warm-up and, at the
// right edge, the quiet phase's points, where no more requests came.
func soakCharts(es []entry) []chart {
	var charts []chart
	for _, e := range es {
		s := e.R.Soak
		if s == nil {
			continue
		}
		gauges := map[string]serverGauge{"child_rss_bytes": {"child_rss_bytes", func(p *stats.Point) (float64, bool) {
			return float64(p.ChildRSSBytes), p.ChildRSSBytes > 0
		}}}
		for _, g := range serverGauges([]entry{e}) {
			gauges[g.name] = g
		}
		for k, gg := range s.Gauges {
			g, ok := gauges[gg.Name]
			if !ok || gg.PerRequest == nil {
				continue
			}
			c := soakChart(e, s, gg, g)
			c.ID = fmt.Sprintf("plot-soak-%d-%d", e.Index+1, k+1)
			charts = append(charts, c)
		}
	}
	return charts
}

// soakChart is one gauge of one result against requests.
func soakChart(e entry, s *stats.SoakReport, gg stats.GaugeGrowth, g serverGauge) chart {
	pr := gg.PerRequest
	c := chart{Title: e.Name + ": " + gg.Name + " against requests: " + gg.Verdict,
		Note: "Each point is the gauge at the end of an interval, placed at the requests the server had settled by then; the dashed line is the fit over the load after its warm-up, and the hollow points the quiet phase's. " +
			gg.Line,
		Empty: "No reading of this gauge.",
		X:     axisSpec{Label: "requests settled", UnitOf: countUnit},
		Y:     axisSpec{Label: gg.Name, UnitOf: g.unitOf()}}
	quietFrom := math.Inf(1)
	if q := e.R.Quiet; q != nil {
		quietFrom = q.StartS
	}
	color := palette[e.Index%len(palette)]
	var load []xy
	var fitted []float64 // x of the judged points
	settled := 0.0
	for i := range e.R.Series {
		p := &e.R.Series[i]
		settled += float64(p.Answered + p.Timeouts + p.TransportErrors)
		v, ok := g.value(p)
		if !ok {
			continue
		}
		if p.T > quietFrom {
			c.Marks = append(c.Marks, dataMark{X: settled, Y: v, Color: color, Hollow: true,
				Title: fmt.Sprintf("quiet phase, %.0fs: %s", p.T, strconv.FormatFloat(v, 'f', -1, 64))})
			continue
		}
		load = append(load, xy{settled, v})
		if i >= s.WarmupPoints {
			fitted = append(fitted, settled)
		}
	}
	if len(load) > 0 {
		c.Lines = append(c.Lines, dataLine{lineStyle: lineStyle{color, "none"}, Name: e.Name + ": measured", Segs: [][]xy{load}})
	}
	if len(fitted) > 0 {
		x0, x1 := fitted[0], fitted[len(fitted)-1]
		c.Lines = append(c.Lines, dataLine{lineStyle: lineStyle{neutral, dashes[1]}, Name: e.Name + ": fitted",
			Segs: [][]xy{{{x0, pr.First}, {x1, pr.Last}}}})
	}
	c.Legend = []legendEntry{{lineStyle{color, "none"}, e.Name}, {lineStyle{neutral, dashes[1]}, "fitted"}}
	if len(c.Marks) > 0 {
		c.MarkLegend = []markKey{{newMark(7, 5, dataMark{Color: color, Hollow: true}), "quiet phase"}}
	}
	return c
}

// gaugeTable is a soak's table of the server's gauges, with the split by
// fate under each gauge that has one.
func gaugeTable(gs []stats.GaugeGrowth) table {
	t := table{Head: []cell{txt("server gauge"), txt("verdict"), txt("per request"), txt("R²"), txt("per hour"), txt("quiet phase kept"), txt("shortest run")}}
	for _, g := range gs {
		row := []cell{{Text: g.Name, Class: "key"}, verdictCell(g.Verdict), dash(), dash(), dash(), dash(), dash()}
		if pr := g.PerRequest; pr != nil {
			row[2], row[3] = num(stats.GaugeAmount(g.Unit, pr.Slope)), num(strconv.FormatFloat(pr.R2, 'f', 3, 64))
		}
		if g.PerHour != nil {
			row[4] = num(stats.GaugeAmount(g.Unit, g.PerHour.PerHour))
		}
		if q := g.Quiet; q != nil && q.Kept != nil {
			row[5] = num(fmt.Sprintf("%.0f%%", 100*math.Max(0, *q.Kept)))
		}
		if g.ShortestRunS > 0 {
			row[6] = num(fmt.Sprintf("%s (%s requests)", fmtSeconds(g.ShortestRunS), strconv.FormatFloat(g.ShortestRequests, 'f', 0, 64)))
		}
		t.Rows = append(t.Rows, row)
		if pr := g.PerRequest; pr != nil {
			for _, f := range pr.Fates {
				t.Rows = append(t.Rows, []cell{txt("  per " + f.Fate + " request"), txt(""),
					num(stats.GaugeAmount(g.Unit, f.Slope) + " ± " + strings.TrimPrefix(stats.GaugeAmount(g.Unit, f.StdErr), "+")), dash(), dash(), dash(), dash()})
			}
		}
	}
	return t
}

func verdictCell(v string) cell {
	switch v {
	case stats.VerdictLeak, stats.VerdictSteadyGrowth:
		return cell{Text: v, Class: "fail"}
	case stats.VerdictBacklogCache:
		return cell{Text: v, Class: "warn"}
	}
	return txt(v)
}

// serverGaugesSection says where the server's gauges were read from and
// what failed.
func serverGaugesSection(g *stats.ServerGauges) section {
	sec := section{Title: "Server gauges", Paras: []string{fmt.Sprintf("Read from %s: %d reads, %d failed.", strings.Join(g.Sources, ", "), g.Reads, g.Failures)}}
	if len(g.Gauges) > 0 {
		sec.Paras = append(sec.Paras, "Gauges: "+strings.Join(g.Gauges, ", ")+".")
	}
	if len(g.Missing) > 0 {
		sec.Paras = append(sec.Paras, "Never found: "+strings.Join(g.Missing, ", ")+".")
	}
	if len(g.Errors) > 0 {
		sec.Tables = append(sec.Tables, samplesTable(g.Errors))
	}
	return sec
}
