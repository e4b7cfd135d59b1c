package soak

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
)

const mib = 1 << 20

// makeSeries builds n points 10 s apart, each answering 1,000 requests;
// fill sets the figures of point i. noise is a seeded source for the
// fillers that want one.
func makeSeries(n int, fill func(i int, p *stats.Point, noise *rand.Rand)) []stats.Point {
	noise := rand.New(rand.NewPCG(1, 2))
	s := make([]stats.Point, n)
	for i := range s {
		s[i].T = float64(10 * (i + 1))
		s[i].Answered, s[i].OK = 1000, 1000
		s[i].InFlight = 50 + int64(noise.IntN(11)) - 5
		s[i].OldestPendingUs = 5000 + int64(noise.IntN(2001)) - 1000
		if fill != nil {
			fill(i, &s[i], noise)
		}
	}
	return s
}

// rssAround is 100 MiB plus a steady part plus up to ±2 MiB of noise.
func rssAround(steady float64, noise *rand.Rand) int64 {
	return int64(100*mib + steady + (noise.Float64()*4-2)*mib)
}

func TestAnalyze(t *testing.T) {
	type grew struct{ rss, inflight, oldest, unanswered bool }
	tests := []struct {
		name       string
		series     []stats.Point
		grew       grew
		noRSS      bool
		rssPerHour float64 // checked when not 0, within 5%
		warmup     int
		finding    string
		verdict    []string // each must be in the verdict
	}{
		{
			name:    "flat with noise",
			series:  makeSeries(100, func(i int, p *stats.Point, n *rand.Rand) { p.ChildRSSBytes = rssAround(0, n) }),
			warmup:  10,
			finding: stats.VerdictNoGrowth,
			verdict: []string{"no steady growth: child_rss_bytes", "pending requests: flat: in flight, oldest pending, timed out unanswered", "first 10% of the load (10 of 100 points) left out as warm-up"},
		},
		{
			// 1 MiB per 10 s interval of 1,000 requests: 360 MiB an hour,
			// 1 KiB per request.
			name: "linear RSS growth",
			series: makeSeries(100, func(i int, p *stats.Point, n *rand.Rand) {
				p.ChildRSSBytes = rssAround(float64(i)*mib, n)
			}),
			grew:       grew{rss: true},
			rssPerHour: 360 * mib,
			warmup:     10,
			finding:    stats.VerdictSteadyGrowth,
			verdict: []string{"steady growth: child_rss_bytes +1.0 KiB per request (R² 1.00, +35", "MiB/h), no quiet phase to tell a leak from a backlog, a run of 1m3", "s (9,",
				"pending requests: flat: in flight, oldest pending, timed out unanswered"},
		},
		{
			// A perfect line, but 0.5 MiB over the whole run: under the floor.
			name: "growth under the noise floor",
			series: makeSeries(100, func(i int, p *stats.Point, n *rand.Rand) {
				p.ChildRSSBytes = 100*mib + int64(i)*mib/200
			}),
			warmup:  10,
			finding: stats.VerdictNoGrowth,
			verdict: []string{"no steady growth: child_rss_bytes"},
		},
		{
			// One step: a pool that grew once and held.
			name: "a step in the middle",
			series: makeSeries(100, func(i int, p *stats.Point, n *rand.Rand) {
				p.ChildRSSBytes = rssAround(0, n)
				if i >= 50 {
					p.ChildRSSBytes += 50 * mib
				}
			}),
			warmup:  10,
			finding: stats.VerdictBacklogCache,
			verdict: []string{"backlog/cache: child_rss_bytes", "then held while the load went on", "pending requests: flat: in flight"},
		},
		{
			// A step in the last third: no climb before it, so no plateau
			// after one either, and a poor line.
			name: "a late step",
			series: makeSeries(100, func(i int, p *stats.Point, n *rand.Rand) {
				p.ChildRSSBytes = rssAround(0, n)
				if i >= 72 {
					p.ChildRSSBytes += 20 * mib
				}
			}),
			warmup:  10,
			finding: stats.VerdictNoGrowth,
			verdict: []string{"no steady growth: child_rss_bytes", "not steadily"},
		},
		{
			// A collector at work: 40 MiB up over ten intervals, then back.
			name: "sawtooth",
			series: makeSeries(100, func(i int, p *stats.Point, n *rand.Rand) {
				p.ChildRSSBytes = rssAround(float64(i%10)*4*mib, n)
			}),
			warmup:  10,
			finding: stats.VerdictNoGrowth,
			verdict: []string{"no steady growth: child_rss_bytes"},
		},
		{
			// Memory fills during the first tenth of the run, then holds.
			name: "growth only during warm-up",
			series: makeSeries(100, func(i int, p *stats.Point, n *rand.Rand) {
				p.ChildRSSBytes = rssAround(float64(min(i, 10))*20*mib, n)
			}),
			warmup:  10,
			finding: stats.VerdictNoGrowth,
			verdict: []string{"no steady growth: child_rss_bytes"},
		},
		{
			name: "too short",
			series: makeSeries(4, func(i int, p *stats.Point, n *rand.Rand) {
				p.ChildRSSBytes = int64(100+10*i) * mib
				p.TimedOutUnanswered = int64(100 * i)
			}),
			noRSS:   true,
			finding: stats.VerdictTooShort,
			verdict: []string{"child_rss_bytes: too short to judge: 4 points after the warm-up, 5 needed", "pending requests: too short to judge: 4 points after the warm-up, 5 needed"},
		},
		{
			// 10 MiB more every 10 s over 200 s: per request, that is
			// plain; per hour, the pending figures need 5 minutes.
			name: "fast growth over a short run",
			series: makeSeries(20, func(i int, p *stats.Point, n *rand.Rand) {
				p.ChildRSSBytes = rssAround(float64(i)*10*mib, n)
				p.TimedOutUnanswered = int64(100 * i)
			}),
			grew:    grew{rss: true},
			warmup:  2,
			finding: stats.VerdictSteadyGrowth,
			verdict: []string{"steady growth: child_rss_bytes +10.2 KiB per request", "a run of 1m0s", "pending requests: too short to judge: 20 intervals over 3m20s, need a run of 5m0s (30 intervals of 10s)"},
		},
		{
			// No child process; requests that time out are never answered,
			// one more every interval, and one request is stuck for good.
			name: "no RSS, pending counts and age grow",
			series: makeSeries(60, func(i int, p *stats.Point, n *rand.Rand) {
				p.TimedOutUnanswered = int64(i)
				p.InFlight = 50 + int64(2*i) + int64(n.IntN(5))
				p.OldestPendingUs = int64(p.T * 1e6)
			}),
			noRSS:  true,
			grew:   grew{inflight: true, oldest: true, unanswered: true},
			warmup: 6,
			verdict: []string{
				"grew steadily: in flight +7", "oldest pending +3600.0s/h (R² 1.00, +530.0s over the run)", "timed out unanswered +360/h",
			},
		},
		{
			// The child's RSS is missing at some intervals (a restart): only
			// the measured points are fitted.
			name: "RSS missing at some points",
			series: makeSeries(100, func(i int, p *stats.Point, n *rand.Rand) {
				if i%3 != 0 {
					p.ChildRSSBytes = rssAround(float64(i)*mib, n)
				}
			}),
			grew:       grew{rss: true},
			rssPerHour: 360 * mib,
			warmup:     10,
			finding:    stats.VerdictSteadyGrowth,
			verdict:    []string{"steady growth: child_rss_bytes"},
		},
		{
			// Only the pending gauges grow, by fewer than 10 requests.
			name: "small pending growth",
			series: makeSeries(100, func(i int, p *stats.Point, n *rand.Rand) {
				p.TimedOutUnanswered = int64(i / 12)
			}),
			noRSS:   true,
			warmup:  10,
			verdict: []string{"pending requests: flat: in flight, oldest pending, timed out unanswered"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Analyze(tt.series, 10*time.Second, nil)
			if r.Points != len(tt.series) || r.IntervalS != 10 || r.WarmupPoints != tt.warmup {
				t.Errorf("points %d, interval %v s, warm-up %d; want %d, 10, %d", r.Points, r.IntervalS, r.WarmupPoints, len(tt.series), tt.warmup)
			}
			if (r.ChildRSS == nil) != tt.noRSS {
				t.Fatalf("ChildRSS = %+v, want nil: %v", r.ChildRSS, tt.noRSS)
			}
			if r.InFlight == nil || r.OldestPending == nil || r.TimedOutUnanswered == nil {
				t.Fatalf("a pending figure has no line: %+v", r)
			}
			got := grew{r.ChildRSS != nil && r.ChildRSS.Grew, r.InFlight.Grew, r.OldestPending.Grew, r.TimedOutUnanswered.Grew}
			if got != tt.grew {
				t.Errorf("grew %+v, want %+v", got, tt.grew)
			}
			if want := tt.grew != (grew{}); r.Grew != want {
				t.Errorf("Grew = %v, want %v", r.Grew, want)
			}
			if r.Finding != tt.finding {
				t.Errorf("finding %q, want %q", r.Finding, tt.finding)
			}
			if tt.rssPerHour != 0 && math.Abs(r.ChildRSS.PerHour-tt.rssPerHour) > 0.05*tt.rssPerHour {
				t.Errorf("RSS slope %.0f/h, want %.0f/h", r.ChildRSS.PerHour, tt.rssPerHour)
			}
			for _, want := range tt.verdict {
				if !strings.Contains(r.Verdict, want) {
					t.Errorf("verdict %q lacks %q", r.Verdict, want)
				}
			}
			if strings.Contains(r.Verdict, "\n") {
				t.Errorf("verdict spans lines: %q", r.Verdict)
			}
			// The report goes into the result file: no NaN or infinity.
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("report does not encode: %v", err)
			}
		})
	}
}

func TestAnalyzeEdgeCases(t *testing.T) {
	tests := []struct {
		name    string
		series  []stats.Point
		verdict string
	}{
		{"empty", nil, "no intervals recorded"},
		{"one point", makeSeries(1, nil), "too short to judge: 1 points"},
		// T not filled in: the interval places the points. (40 points of
		// 10 s: a run long enough for a verdict, MinDuration.)
		{"no timestamps", func() []stats.Point {
			s := makeSeries(40, func(i int, p *stats.Point, _ *rand.Rand) { p.TimedOutUnanswered = int64(10 * i) })
			for i := range s {
				s[i].T = 0
			}
			return s
		}(), "timed out unanswered +3600/h"},
		// A figure that never moves fits exactly and is flat.
		{"constant", func() []stats.Point {
			s := makeSeries(40, nil)
			for i := range s {
				s[i].InFlight, s[i].OldestPendingUs, s[i].ChildRSSBytes = 7, 9, 5*mib
			}
			return s
		}(), "no steady growth: child_rss_bytes; pending requests: flat: in flight, oldest pending, timed out unanswered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Analyze(tt.series, 10*time.Second, nil)
			if !strings.Contains(r.Verdict, tt.verdict) {
				t.Errorf("verdict %q lacks %q", r.Verdict, tt.verdict)
			}
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("report does not encode: %v", err)
			}
			for _, g := range []*stats.Growth{r.ChildRSS, r.InFlight, r.OldestPending, r.TimedOutUnanswered} {
				if g != nil && (math.IsNaN(g.R2) || g.R2 < 0 || g.R2 > 1+1e-9) {
					t.Errorf("R² %v out of [0, 1]", g.R2)
				}
			}
		})
	}
}

func TestFitLine(t *testing.T) {
	tests := []struct {
		name        string
		x, y        []float64
		slope, r2   float64
		first, last float64
		wantNoFit   bool
		r2AtMost    float64 // when not 0, R² must be at most this
	}{
		{name: "exact line", x: []float64{0, 1, 2, 3}, y: []float64{1, 3, 5, 7}, slope: 2, r2: 1, first: 1, last: 7},
		{name: "constant", x: []float64{0, 1, 2}, y: []float64{4, 4, 4}, slope: 0, r2: 1, first: 4, last: 4},
		{name: "one point", x: []float64{1}, y: []float64{1}, wantNoFit: true},
		{name: "same x", x: []float64{2, 2, 2}, y: []float64{1, 2, 3}, wantNoFit: true},
		// The claim behind MinR2: a step fits a line with R² <= 0.75.
		{name: "step at the middle", x: seq(100), y: step(100, 50), r2AtMost: 0.76},
		{name: "step at a third", x: seq(90), y: step(90, 30), r2AtMost: 0.76},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := fitLine(tt.x, tt.y)
			if tt.wantNoFit {
				if g != nil {
					t.Fatalf("fitted %+v, want no line", g)
				}
				return
			}
			if g == nil {
				t.Fatal("no line fitted")
			}
			if tt.r2AtMost != 0 {
				if g.R2 > tt.r2AtMost || g.R2 < 0.5 {
					t.Errorf("R² %v, want in [0.5, %v]", g.R2, tt.r2AtMost)
				}
				return
			}
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
			if !near(g.PerHour, tt.slope) || !near(g.R2, tt.r2) || !near(g.First, tt.first) || !near(g.Last, tt.last) {
				t.Errorf("fit %+v, want slope %v R² %v first %v last %v", g, tt.slope, tt.r2, tt.first, tt.last)
			}
		})
	}
}

func seq(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i)
	}
	return s
}

func step(n, at int) []float64 {
	s := make([]float64, n)
	for i := at; i < n; i++ {
		s[i] = 1
	}
	return s
}
