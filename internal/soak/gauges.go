package soak

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
)

// The rules of a gauge's verdict (see Analyze).
const (
	// PlateauPace: a gauge whose growth over the last third of the load
	// ran at less than this share of its pace over the whole load has
	// stopped growing (a cache that filled, a pool that reached its size).
	PlateauPace = 0.25
	// CameDown: a gauge that kept less than this share of its growth in
	// the quiet phase came back down (a backlog that drained).
	CameDown = 0.5
	// plateauPoints is the fewest points the last third needs for its
	// own line.
	plateauPoints = 3
	// r2Factor is √48: with n points spread evenly over N requests, a
	// line of slope b in noise of deviation σ fits with R² = b²N²/12 /
	// (b²N²/12 + σ²), which reaches MinR2 = 0.8 at N = √48·σ/b.
	r2Factor = 6.928203230275509
)

// gauge is one of the server's gauges in a series.
type gauge struct {
	name  string
	value func(p *stats.Point) (float64, bool)
}

// seriesGauges lists the server's gauges a series holds: the children's
// (when any point measured them), then the server's own, by name.
func seriesGauges(series []stats.Point) []gauge {
	var gs []gauge
	child := []gauge{
		{"child_rss_bytes", func(p *stats.Point) (float64, bool) { return float64(p.ChildRSSBytes), p.ChildRSSBytes > 0 }},
		{"child_threads", func(p *stats.Point) (float64, bool) { return float64(p.ChildThreads), p.ChildThreads > 0 }},
		{"child_open_fds", func(p *stats.Point) (float64, bool) { return float64(p.ChildOpenFDs), p.ChildOpenFDs > 0 }},
	}
	for _, g := range child {
		if slices.ContainsFunc(series, func(p stats.Point) bool { _, ok := g.value(&p); return ok }) {
			gs = append(gs, g)
		}
	}
	names := map[string]bool{}
	for _, p := range series {
		for k := range p.Server {
			names[k] = true
		}
	}
	for _, k := range sortedKeys(names) {
		gs = append(gs, gauge{k, func(p *stats.Point) (float64, bool) {
			v, ok := p.Server[k]
			return v, ok && !math.IsNaN(v) && !math.IsInf(v, 0)
		}})
	}
	return gs
}

func sortedKeys(m map[string]bool) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// fates are the ways a request can end that the series counts, for the
// split of a gauge's growth by fate. A request that timed out is the one a
// server sees cancelled, where the transport or profile tells it (HTTP
// closes the connection, MCP and LSP send a cancellation).
var fates = []struct {
	name  string
	count func(p *stats.Point) uint64
}{
	{"ok", func(p *stats.Point) uint64 { return p.OK }},
	{"error", func(p *stats.Point) uint64 { return p.Answered - min(p.OK, p.Answered) }},
	{"timed_out", func(p *stats.Point) uint64 { return p.Timeouts }},
	{"lost", func(p *stats.Point) uint64 { return p.TransportErrors }},
}

// phases is a series cut into the parts a gauge's verdict reads.
type phases struct {
	series   []stats.Point
	t        []float64   // the time axis, seconds
	settled  []float64   // requests answered, timed out or lost, cumulative
	byFate   [][]float64 // the same per fate (fates' order), cumulative
	judged   []int       // the load's points after the warm-up
	quiet    []int       // the quiet phase's points
	quietLen float64     // seconds
	interval time.Duration
}

func newPhases(series []stats.Point, t []float64, judged, quiet []int, quietLen float64, interval time.Duration) *phases {
	ph := &phases{series: series, t: t, judged: judged, quiet: quiet, quietLen: quietLen, interval: interval,
		settled: make([]float64, len(series)), byFate: make([][]float64, len(fates))}
	for f := range fates {
		ph.byFate[f] = make([]float64, len(series))
	}
	var sum float64
	sums := make([]float64, len(fates))
	for i := range series {
		p := &series[i]
		sum += float64(p.Answered + p.Timeouts + p.TransportErrors)
		ph.settled[i] = sum
		for f, fate := range fates {
			sums[f] += float64(fate.count(p))
			ph.byFate[f][i] = sums[f]
		}
	}
	return ph
}

// judgeGauge fits one gauge and gives its verdict.
func (ph *phases) judgeGauge(g gauge) stats.GaugeGrowth {
	out := stats.GaugeGrowth{Name: g.name}
	if strings.HasSuffix(g.name, "_bytes") {
		out.Unit = "bytes"
	}
	var idx []int
	var x, t, y []float64
	for _, i := range ph.judged {
		if v, ok := g.value(&ph.series[i]); ok {
			idx = append(idx, i)
			x, t, y = append(x, ph.settled[i]), append(t, ph.t[i]/secondsPerHour), append(y, v)
		}
	}
	out.Points = len(y)
	if len(y) < MinPoints {
		out.Verdict = stats.VerdictTooShort
		out.Line = fmt.Sprintf("%s: too short to judge: %d points after the warm-up, %d needed", g.name, len(y), MinPoints)
		return out
	}
	if tl, ok := fit(t, y); ok {
		out.PerHour = &stats.Growth{PerHour: tl.b, R2: tl.r2, First: tl.at(tl.x0), Last: tl.at(tl.x1)}
	}
	rl, ok := fit(x, y)
	if !ok {
		out.Verdict = stats.VerdictTooShort
		out.Line = g.name + ": too short to judge: no request was settled while it was read"
		return out
	}
	span := x[len(x)-1] - x[0]
	out.PerRequest = &stats.RequestGrowth{Slope: rl.b, StdErr: rl.se, R2: rl.r2, Requests: span, First: rl.at(x[0]), Last: rl.at(x[len(x)-1])}
	rise := rl.b * span
	floor := floorOf(out.Unit, mean(y))
	grew := rise > 0 && rise >= floor
	out.Plateau = grew && plateau(x, y, rl, floor)
	out.Quiet = ph.quietChange(g, rl.at(x[0]), rl.at(x[len(x)-1]), grew)
	out.PerRequest.Fates, out.PerRequest.FateNote = ph.splitFates(idx, y)
	steady := grew && rl.r2 >= MinR2
	cameDown := out.Quiet != nil && out.Quiet.Kept != nil && *out.Quiet.Kept < CameDown
	switch {
	case !grew:
		out.Verdict = stats.VerdictNoGrowth
	case out.Plateau || cameDown:
		out.Verdict = stats.VerdictBacklogCache
	case !steady:
		out.Verdict = stats.VerdictNoGrowth
	case out.Quiet == nil:
		out.Verdict = stats.VerdictSteadyGrowth
	default:
		out.Verdict = stats.VerdictLeak
	}
	if out.Verdict == stats.VerdictLeak || out.Verdict == stats.VerdictSteadyGrowth {
		ph.shortest(&out, rl, floor, x, t)
	}
	out.Line = gaugeLine(&out, rise, ph.quietLen)
	return out
}

// plateau reports whether a gauge that rose along the line l (over x, y)
// climbed and then stopped: the first two thirds of its points rise by the
// noise floor at least, along a line of their own, and the last third
// grows at under PlateauPace of the whole's pace. Both parts count, so
// noise that happens to fall at the end of a flat run is no plateau.
func plateau(x, y []float64, l line, floor float64) bool {
	if len(y) < 3*plateauPoints {
		return false
	}
	from := len(y) - len(y)/3
	head, ok1 := fit(x[:from], y[:from])
	tail, ok2 := fit(x[from:], y[from:])
	return ok1 && ok2 && head.b*(x[from-1]-x[0]) >= floor && tail.b < PlateauPace*l.b
}

// quietChange is what the gauge did in the quiet phase: its level there
// (the median of its points after the first, which may still see the
// last replies go out; the last point when there are fewer than three)
// against the load's fitted start and end.
func (ph *phases) quietChange(g gauge, start, end float64, grew bool) *stats.QuietChange {
	var qy []float64
	for _, i := range ph.quiet {
		if v, ok := g.value(&ph.series[i]); ok {
			qy = append(qy, v)
		}
	}
	if len(qy) == 0 {
		return nil
	}
	level := qy[len(qy)-1]
	if len(qy) >= 3 {
		level = median(qy[1:])
	}
	q := &stats.QuietChange{Points: len(qy), End: end, Level: level}
	if grew && end > start {
		kept := (level - start) / (end - start)
		q.Kept = &kept
	}
	return q
}

// splitFates regresses the gauge on the cumulative count of each fate that
// moved over the fitted points. The counts of a steady load grow in fixed
// proportions, which leaves the split undetermined: it is reported only
// when no fate's slope has a variance inflation over MaxVIF, that is when
// the mix of fates changed enough during the run to tell them apart.
func (ph *phases) splitFates(idx []int, y []float64) ([]stats.FateGrowth, string) {
	var cols [][]float64
	var names []string
	var counts []float64
	for f, fate := range fates {
		first, last := ph.byFate[f][idx[0]], ph.byFate[f][idx[len(idx)-1]]
		if last == first {
			continue
		}
		col := make([]float64, len(idx))
		for j, i := range idx {
			col[j] = ph.byFate[f][i]
		}
		cols, names, counts = append(cols, col), append(names, fate.name), append(counts, last-first)
	}
	switch len(cols) {
	case 0:
		return nil, ""
	case 1:
		return nil, fmt.Sprintf("every request settled ended %s: no split", names[0])
	}
	b, se, vif, ok := multiFit(cols, y)
	if !ok {
		return nil, "the fates (" + strings.Join(names, ", ") + ") grew in fixed proportions: the split cannot be told"
	}
	worst := slices.Max(vif)
	if worst > MaxVIF {
		return nil, fmt.Sprintf("the fates (%s) kept nearly one mix through the run (variance inflation %.0f, over %d): the split cannot be told; a run whose errors or timeouts come and go (stages, a fault) can split it",
			strings.Join(names, ", "), worst, MaxVIF)
	}
	out := make([]stats.FateGrowth, len(cols))
	for j := range cols {
		out[j] = stats.FateGrowth{Fate: names[j], Requests: counts[j], Slope: b[j], StdErr: se[j]}
	}
	return out, ""
}

// shortest sets the shortest run that would have shown the growth at this
// rate: the requests after which the line rises above the noise floor and
// fits with R² >= MinR2 (given its residuals' spread), with the warm-up
// added back, and at least enough intervals for MinPoints points after
// the warm-up.
func (ph *phases) shortest(out *stats.GaugeGrowth, rl line, floor float64, x, t []float64) {
	n := max(floor/rl.b, r2Factor*rl.sigma/rl.b) / (1 - WarmupFraction)
	secs := (t[len(t)-1] - t[0]) * secondsPerHour
	if secs <= 0 || x[len(x)-1] <= x[0] {
		return
	}
	rate := (x[len(x)-1] - x[0]) / secs
	minRun := math.Ceil(MinPoints/(1-WarmupFraction)) * ph.interval.Seconds()
	out.ShortestRequests = math.Ceil(n)
	out.ShortestRunS = max(n/rate, minRun)
}

// floorOf is the least rise over the judged part of the run that counts
// as growth for a gauge of this unit and mean (see Analyze): bytes as RSS,
// anything else as a count.
func floorOf(unit string, m float64) float64 {
	if unit == "bytes" {
		return max(rssFloorBytes, rssFloorOfMean*math.Abs(m))
	}
	return max(countFloor, countFloorMean*math.Abs(m))
}

// gaugeLine is a gauge's verdict for people, one line: the gauge, its
// slope per request and fit, the growth per hour at this rate, what the
// quiet phase showed, and the shortest run that would have shown it.
func gaugeLine(g *stats.GaugeGrowth, rise float64, quietLen float64) string {
	pr := g.PerRequest
	amount := func(v float64) string { return stats.GaugeAmount(g.Unit, v) }
	var b strings.Builder
	noun := ""
	if n := stats.GaugeNoun(g.Name); n != "" && g.Unit == "" {
		noun = " " + n
	}
	fmt.Fprintf(&b, "%s %s%s per request (R² %.2f", g.Name, amount(pr.Slope), noun, pr.R2)
	if g.PerHour != nil {
		fmt.Fprintf(&b, ", %s/h", amount(g.PerHour.PerHour))
	}
	b.WriteString(")")
	switch g.Verdict {
	case stats.VerdictNoGrowth:
		if rise > 0 && rise >= floorOf(g.Unit, (pr.First+pr.Last)/2) {
			fmt.Fprintf(&b, ": rose %s over the run, not steadily", amount(rise))
		}
	case stats.VerdictBacklogCache:
		if g.Plateau {
			fmt.Fprintf(&b, ": rose %s, then held while the load went on (a cache or pool that filled)", amount(rise))
		}
	}
	if q := g.Quiet; q != nil && q.Kept != nil {
		way := "stayed up"
		if *q.Kept < CameDown {
			way = "came back down"
		}
		fmt.Fprintf(&b, ", %s in the %s quiet phase (kept %.0f%% of its growth)", way, fmtSeconds(quietLen), 100*max(0, *q.Kept))
	} else if q == nil && (g.Verdict == stats.VerdictSteadyGrowth) {
		b.WriteString(", no quiet phase to tell a leak from a backlog")
	}
	if g.ShortestRunS > 0 {
		fmt.Fprintf(&b, ", a run of %s (%s requests) would have shown it", fmtSeconds(g.ShortestRunS), groupDigits(g.ShortestRequests))
	}
	if len(pr.Fates) > 0 {
		var fs []string
		for _, f := range pr.Fates {
			fs = append(fs, fmt.Sprintf("%s %s ± %s", f.Fate, amount(f.Slope), strings.TrimPrefix(amount(f.StdErr), "+")))
		}
		b.WriteString(", by fate: " + strings.Join(fs, ", "))
	}
	return b.String()
}

// fmtSeconds writes a duration in seconds as time.Duration does, to the
// second past a minute and to the tenth below.
func fmtSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d >= time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// groupDigits writes a whole number with thousands separated by commas.
func groupDigits(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
