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
		name:   "child RSS",
		value:  func(p stats.Point) (float64, bool) { return float64(p.ChildRSSBytes), p.ChildRSSBytes > 0 },
		floor:  func(mean float64) float64 { return max(rssFloorBytes, rssFloorOfMean*mean) },
		format: func(v float64) string { return fmt.Sprintf("%+.1f MiB", v/bytesPerMiB) },
		into:   func(r *stats.SoakReport, g *stats.Growth) { r.ChildRSS = g },
	},
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

// Analyze fits a least-squares line (per hour, with R²) to the child's RSS
// (over the points that measured it; nil when none did), the requests in
// flight, the age of the oldest pending request and the requests that timed
// out unanswered, and judges each: it grew steadily when the line fits
// (R² >= MinR2) and rises over the judged part of the run by at least a
// noise floor (RSS: the larger of 1 MiB and 5% of its mean; counts: the
// larger of 10 and 10% of the mean; oldest pending: the larger of 100 ms and
// 10% of the mean). A figure that rose that much along a poor line (a
// step, a burst) is reported as rising, but not steadily; the rest are
// flat. The points of the first WarmupFraction of the run are left out;
// fewer than MinPoints points after that, or a run shorter than
// MinDuration, are too short to judge, and the verdict says which. Points
// are placed by their T (so a series whose older points were merged still
// fits on the right time axis), or every interval apart when T is not
// filled in.
func Analyze(series []stats.Point, interval time.Duration) *stats.SoakReport {
	r := &stats.SoakReport{IntervalS: interval.Seconds(), Points: len(series)}
	if len(series) == 0 {
		r.Verdict = "no intervals recorded: nothing to judge"
		return r
	}
	xs := timeAxis(series, interval)
	last := xs[len(xs)-1]
	for r.WarmupPoints < len(series)-1 && xs[r.WarmupPoints]*warmupTimesTen <= last {
		r.WarmupPoints++
	}
	judged, judgedX := series[r.WarmupPoints:], xs[r.WarmupPoints:]
	warmup := fmt.Sprintf("the first %.0f%% of the run (%d of %d points) left out as warm-up",
		WarmupFraction*100, r.WarmupPoints, len(series))
	tooShort := shortness(len(series), len(judged), last, interval)

	var grew, unsteady, flat, unmeasured, few []string
	for _, f := range figures {
		x, y := pick(judged, judgedX, f.value)
		if len(x) == 0 {
			unmeasured = append(unmeasured, f.name)
			continue
		}
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

	var parts []string
	if tooShort != "" {
		parts = append(parts, tooShort)
	} else {
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
	}
	if len(unmeasured) > 0 {
		parts = append(parts, "not measured: "+strings.Join(unmeasured, ", "))
	}
	parts = append(parts, warmup)
	r.Verdict = strings.Join(parts, "; ")
	return r
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

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// fitLine fits y = a + b·x by least squares. It returns nil when no line is
// defined: fewer than two points, or all at the same x. A figure that never
// moves fits its line exactly and gets R² = 1 (the textbook formula would
// divide zero by zero).
func fitLine(x, y []float64) *stats.Growth {
	if len(x) < 2 {
		return nil
	}
	mx, my := mean(x), mean(y)
	var sxx, sxy, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return nil
	}
	slope := sxy / sxx
	r2 := 1.0
	if syy > 0 {
		r2 = sxy * sxy / (sxx * syy)
	}
	at := func(v float64) float64 { return my + slope*(v-mx) }
	return &stats.Growth{PerHour: slope, R2: r2, First: at(x[0]), Last: at(x[len(x)-1])}
}
