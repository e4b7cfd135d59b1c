package soak

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
)

// The verdict's thresholds.
const (
	// MinR2 is how well a line must fit before its slope counts as steady
	// growth. A single step anywhere in a run (a cache filling, a pool
	// growing once) fits a straight line with R² of at most 0.75, so 0.8
	// tells a steady climb from a one-off jump; a sawtooth (a garbage
	// collector at work) fits far worse than either.
	MinR2 = 0.8
	// MinPoints is the fewest points, after the warm-up, a verdict is
	// given on.
	MinPoints = 5
	// MinDuration is the shortest run a verdict is given on, whatever its
	// interval: a process fills its caches and pools over its first
	// minutes, and a line fitted to seconds of that, extrapolated to an
	// hour, reads as a leak of hundreds of MiB/h.
	MinDuration = 5 * time.Minute
	// WarmupFraction of the run's duration at its start is left out of the
	// fits: a server's memory and queues fill up first, which is no leak.
	WarmupFraction = 0.1
)

// A figure's growth over the judged part of the run counts only if it is at
// least the larger of an absolute floor and a fraction of the figure's mean:
// RSS wanders by a few percent with the allocator and the collector, and
// pending counts by a few requests with every scheduling hiccup.
const (
	rssFloorBytes   = 1 << 20 // 1 MiB
	rssFloorOfMean  = 0.05
	countFloor      = 10 // requests
	countFloorMean  = 0.10
	ageFloorUs      = 100_000 // 100 ms: a slower reply is not a stuck one
	ageFloorOfMean  = 0.10
	warmupTimesTen  = 10 // 1/WarmupFraction, for an exact comparison
	secondsPerHour  = 3600.0
	bytesPerMiB     = 1 << 20
	microsPerSecond = 1e6
)

// figure is one quantity of the series that Analyze fits a line to.
type figure struct {
	name  string
	value func(stats.Point) (v float64, measured bool)
	floor func(mean float64) float64
	// format prints an amount of the figure (a slope per hour or a growth).
	format func(v float64) string
	into   func(r *stats.SoakReport, g *stats.Growth)
}

var figures = []figure{
	{
		name:   "in flight",
		value:  func(p stats.Point) (float64, bool) { return float64(p.InFlight), true },
		floor:  countFloorFor,
		format: formatCount,
		into:   func(r *stats.SoakReport, g *stats.Growth) { r.InFlight = g },
	},
	{
		name:   "oldest pending",
		value:  func(p stats.Point) (float64, bool) { return float64(p.OldestPendingUs), true },
		floor:  func(mean float64) float64 { return max(ageFloorUs, ageFloorOfMean*mean) },
		format: formatAge,
		into:   func(r *stats.SoakReport, g *stats.Growth) { r.OldestPending = g },
	},
	{
		name:   "timed out unanswered",
		value:  func(p stats.Point) (float64, bool) { return float64(p.TimedOutUnanswered), true },
		floor:  countFloorFor,
		format: formatCount,
		into:   func(r *stats.SoakReport, g *stats.Growth) { r.TimedOutUnanswered = g },
	},
}

func countFloorFor(mean float64) float64 { return max(countFloor, countFloorMean*mean) }

func formatCount(v float64) string {
	if math.Abs(v) >= 100 {
		return fmt.Sprintf("%+.0f", v)
	}
	return fmt.Sprintf("%+.1f", v)
}

func formatAge(us float64) string {
	if math.Abs(us) >= microsPerSecond {
		return fmt.Sprintf("%+.1fs", us/microsPerSecond)
	}
	return fmt.Sprintf("%+.0fms", us/1000)
}

// Analyze judges a soak's series in two parts.
//
// The server's gauges (its children's RSS, threads and open files, and
// what --server-pid and --server-metrics read) are each fitted against
// the requests the server settled so far (answered, timed out or lost) and
// against time, over the load's points after the warm-up, and judged:
//
//   - no steady growth: the line rises over those points by less than a
//     noise floor (bytes: the larger of 1 MiB and 5% of the mean; anything
//     else: the larger of 10 and 10%), or rises along a poor line
//     (R² < MinR2);
//   - backlog/cache: it rose, but stopped rising while the load went on
//     (the last third of the points grew at under PlateauPace of the
//     whole's pace: a cache that filled), or came back down in the quiet
//     phase (kept under CameDown of its growth: a backlog that drained);
//   - leak: it rose steadily and stayed up in the quiet phase; steady
//     growth when the run had no quiet phase to tell;
//   - too short: fewer than MinPoints points after the warm-up.
//
// The growth per request is split by the requests' fates where the run
// can tell them apart (splitFates), and a gauge that grew steadily is
// given the shortest run at this rate that would have shown it. No
// minimum duration applies: a growth per request shows as soon as enough
// requests were served.
//
// The requests in flight, the age of the oldest pending request and the
// requests that timed out unanswered are judged as before, per hour: a
// steady climb (R² >= MinR2) above a floor (counts: 10 and 10% of the
// mean; oldest pending: 100 ms and 10%) grew; a rise along a poor line
// is reported as not steady; the rest are flat. They need MinDuration.
//
// The points of the first WarmupFraction of the load are left out; the
// points after quiet.StartS are the quiet phase (nil: none). Points are
// placed by their T (so a series whose older points were merged still
// fits on the right time axis), or every interval apart when T is not
// filled in.
func Analyze(series []stats.Point, interval time.Duration, quiet *stats.QuietPhase) *stats.SoakReport {
	r := &stats.SoakReport{IntervalS: interval.Seconds(), Points: len(series)}
	if len(series) == 0 {
		r.Verdict = "no intervals recorded: nothing to judge"
		return r
	}
	xs := timeAxis(series, interval)
	load := len(series)
	var quietIdx []int
	quietLen := 0.0
	if quiet != nil {
		for load > 1 && xs[load-1] > quiet.StartS {
			load--
		}
		for i := load; i < len(series); i++ {
			quietIdx = append(quietIdx, i)
		}
		quietLen = quiet.DurationS
	}
	last := xs[load-1]
	for r.WarmupPoints < load-1 && xs[r.WarmupPoints]*warmupTimesTen <= last {
		r.WarmupPoints++
	}
	judged, judgedX := series[r.WarmupPoints:load], xs[r.WarmupPoints:load]
	warmup := fmt.Sprintf("the first %.0f%% of the load (%d of %d points) left out as warm-up",
		WarmupFraction*100, r.WarmupPoints, load)
	if len(quietIdx) > 0 {
		warmup += fmt.Sprintf(", %d points of quiet after it", len(quietIdx))
	}

	var judgedIdx []int
	for i := r.WarmupPoints; i < load; i++ {
		judgedIdx = append(judgedIdx, i)
	}
	parts := analyzeGauges(r, newPhases(series, xs, judgedIdx, quietIdx, quietLen, interval))
	pending := analyzePending(r, judged, judgedX, shortness(load, len(judged), last, interval))
	if pending != "" {
		parts = append(parts, "pending requests: "+pending)
	}
	parts = append(parts, warmup)
	r.Verdict = strings.Join(parts, "; ")
	return r
}

// analyzeGauges judges every server gauge of the series into r and returns
// the verdict's parts for them: the leaks and other growth with their
// lines, then the gauges that did not grow, by name.
func analyzeGauges(r *stats.SoakReport, ph *phases) []string {
	byVerdict := map[string][]string{}
	for _, g := range seriesGauges(ph.series) {
		gg := ph.judgeGauge(g)
		r.Gauges = append(r.Gauges, gg)
		if g.name == "child_rss_bytes" && gg.PerHour != nil {
			c := *gg.PerHour
			c.Grew = gg.Verdict == stats.VerdictLeak || gg.Verdict == stats.VerdictSteadyGrowth
			r.ChildRSS = &c
		}
		switch gg.Verdict {
		case stats.VerdictLeak:
			r.Leaks++
			r.Grew = true
		case stats.VerdictSteadyGrowth:
			r.Grew = true
		}
		entry := gg.Line
		if gg.Verdict == stats.VerdictNoGrowth && !strings.Contains(gg.Line, "rose") {
			entry = gg.Name
		}
		byVerdict[gg.Verdict] = append(byVerdict[gg.Verdict], entry)
	}
	var parts []string
	for _, v := range []string{stats.VerdictLeak, stats.VerdictSteadyGrowth, stats.VerdictBacklogCache, stats.VerdictNoGrowth, stats.VerdictTooShort} {
		if len(byVerdict[v]) == 0 {
			continue
		}
		if r.Finding == "" || r.Finding == stats.VerdictTooShort {
			r.Finding = v
		}
		switch v {
		case stats.VerdictNoGrowth:
			parts = append(parts, v+": "+strings.Join(byVerdict[v], ", "))
		case stats.VerdictTooShort:
			parts = append(parts, byVerdict[v]...)
		default:
			for _, line := range byVerdict[v] {
				parts = append(parts, v+": "+line)
			}
		}
	}
	return parts
}

// analyzePending judges the pending figures over the judged points (see
// Analyze) into r and returns their part of the verdict.
func analyzePending(r *stats.SoakReport, judged []stats.Point, judgedX []float64, tooShort string) string {
	var grew, unsteady, flat, few []string
	for _, f := range figures {
		x, y := pick(judged, judgedX, f.value)
		g := fitLine(x, y)
		if g == nil {
			few = append(few, f.name)
			continue
		}
		f.into(r, g)
		rise := g.Last - g.First
		g.Grew = tooShort == "" && len(x) >= MinPoints && g.R2 >= MinR2 && rise > 0 && rise >= f.floor(mean(y))
		switch {
		case g.Grew:
			grew = append(grew, fmt.Sprintf("%s %s/h (R² %.2f, %s over the run)", f.name, f.format(g.PerHour), g.R2, f.format(rise)))
			r.Grew = true
		case len(x) < MinPoints:
			few = append(few, f.name)
		case rise > 0 && rise >= f.floor(mean(y)):
			unsteady = append(unsteady, fmt.Sprintf("%s (R² %.2f)", f.name, g.R2))
		default:
			flat = append(flat, f.name)
		}
	}
	if tooShort != "" {
		return tooShort
	}
	var parts []string
	if len(grew) > 0 {
		parts = append(parts, "grew steadily: "+strings.Join(grew, ", "))
	}
	if len(unsteady) > 0 {
		parts = append(parts, "rose, but not steadily: "+strings.Join(unsteady, ", "))
	}
	if len(flat) > 0 {
		parts = append(parts, "flat: "+strings.Join(flat, ", "))
	}
	if len(few) > 0 {
		parts = append(parts, "too few samples to judge: "+strings.Join(few, ", "))
	}
	return strings.Join(parts, ", ")
}

// shortness says why a run of points intervals (judged of them after the
// warm-up) lasting lastS seconds is too short for a verdict, or "" when it
// is long enough.
func shortness(points, judged int, lastS float64, interval time.Duration) string {
	if judged < MinPoints {
		return fmt.Sprintf("too short to judge: %d points after the warm-up, %d needed", judged, MinPoints)
	}
	if lastS >= MinDuration.Seconds() {
		return ""
	}
	ran := time.Duration(lastS * float64(time.Second)).Round(time.Millisecond)
	need := ""
	if interval > 0 {
		need = fmt.Sprintf(" (%d intervals of %s)", int(math.Ceil(MinDuration.Seconds()/interval.Seconds())), interval)
	}
	return fmt.Sprintf("too short to judge: %d intervals over %s, need a run of %s%s", points, ran, MinDuration, need)
}

// timeAxis places each point at the end of its interval, in seconds since
// the run started: its T, or (when T does not advance, as in a series built
// by hand) its index times the interval.
func timeAxis(series []stats.Point, interval time.Duration) []float64 {
	xs := make([]float64, len(series))
	useT := series[len(series)-1].T > series[0].T
	for i, p := range series {
		if useT {
			xs[i] = p.T
		} else {
			xs[i] = float64(i+1) * interval.Seconds()
		}
	}
	return xs
}

// pick returns the points at which value was measured, x in hours.
func pick(series []stats.Point, xs []float64, value func(stats.Point) (float64, bool)) (x, y []float64) {
	for i, p := range series {
		if v, ok := value(p); ok {
			x = append(x, xs[i]/secondsPerHour)
			y = append(y, v)
		}
	}
	return x, y
}
