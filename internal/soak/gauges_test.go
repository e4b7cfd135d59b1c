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

// soakSeries is a run of load points one second apart, each settling 500
// requests, then quiet points with none; gauge gives the server gauge
// "g" at point i from the requests settled so far (x).
func soakSeries(load, quiet int, gauge func(i int, x float64, quiet bool, noise *rand.Rand) float64) ([]stats.Point, *stats.QuietPhase) {
	noise := rand.New(rand.NewPCG(3, 4))
	var s []stats.Point
	x := 0.0
	for i := range load + quiet {
		p := stats.Point{T: float64(i + 1)}
		if i < load {
			p.Answered, p.OK = 500, 500
			x += 500
		}
		p.Server = map[string]float64{"g": gauge(i, x, i >= load, noise), "g_bytes": gauge(i, x, i >= load, noise)}
		s = append(s, p)
	}
	var q *stats.QuietPhase
	if quiet > 0 {
		q = &stats.QuietPhase{StartS: float64(load) + 0.01, DurationS: float64(quiet)}
	}
	return s, q
}

func gaugeOf(t *testing.T, r *stats.SoakReport, name string) stats.GaugeGrowth {
	t.Helper()
	for _, g := range r.Gauges {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no gauge %s in %+v", name, r.Gauges)
	return stats.GaugeGrowth{}
}

func TestGaugeVerdicts(t *testing.T) {
	const mb = 1 << 20
	tests := []struct {
		name      string
		load      int
		quiet     int
		gauge     func(i int, x float64, quiet bool, n *rand.Rand) float64
		verdict   string
		slope     float64 // per request, checked within 10% when not 0
		plateau   bool
		line      []string
		noLine    []string
		shortest  bool // a shortest run is given
		keptAbove float64
		bytes     bool // judge the gauge as bytes (g_bytes)
	}{
		{
			name: "goroutine leak", load: 60, quiet: 30,
			gauge:   func(i int, x float64, q bool, n *rand.Rand) float64 { return 12 + math.Floor(x/10) },
			verdict: stats.VerdictLeak, slope: 0.1, shortest: true, keptAbove: 0.99,
			line: []string{"g +0.100 per request (R² 1.00, +180000/h), stayed up in the 30s quiet phase (kept 100% of its growth), a run of 6s (", "requests) would have shown it"},
		},
		{
			// RSS of a leaking process: 410 B per request under a
			// collector's sawtooth of up to 2 MiB.
			name: "noisy memory leak", load: 60, quiet: 30,
			gauge: func(i int, x float64, q bool, n *rand.Rand) float64 {
				if q {
					x = 30000
				}
				return 20*mb + 410*x + n.Float64()*2*mb
			},
			verdict: stats.VerdictLeak, slope: 410, shortest: true, keptAbove: 0.8,
			bytes: true,
			line:  []string{"g_bytes +4", "B per request (R² 0.9", "MiB/h), stayed up"},
		},
		{
			name: "backlog that drains", load: 60, quiet: 30,
			gauge: func(i int, x float64, q bool, n *rand.Rand) float64 {
				if q {
					return 12
				}
				return 12 + x/10
			},
			verdict: stats.VerdictBacklogCache, slope: 0.1,
			line:   []string{"came back down in the 30s quiet phase (kept 0% of its growth)"},
			noLine: []string{"would have shown"},
		},
		{
			// A cache of 12,000 entries of 400 B fills over the first 24 s,
			// then holds, in the quiet phase too.
			name: "bounded cache", load: 60, quiet: 30, bytes: true,
			gauge: func(i int, x float64, q bool, n *rand.Rand) float64 {
				return 20*mb + 400*min(x, 12000) + n.Float64()*(64<<10)
			},
			verdict: stats.VerdictBacklogCache, plateau: true,
			line: []string{"then held while the load went on (a cache or pool that filled), stayed up in the 30s quiet phase"},
		},
		{
			name: "flat", load: 60, quiet: 30,
			gauge:   func(i int, x float64, q bool, n *rand.Rand) float64 { return 50 + float64(n.IntN(3)) },
			verdict: stats.VerdictNoGrowth,
		},
		{
			name: "growth without a quiet phase", load: 60,
			gauge:   func(i int, x float64, q bool, n *rand.Rand) float64 { return x / 100 },
			verdict: stats.VerdictSteadyGrowth, slope: 0.01, shortest: true,
			line: []string{"no quiet phase to tell a leak from a backlog"},
		},
		{
			name: "too few points", load: 4, quiet: 2,
			gauge:   func(i int, x float64, q bool, n *rand.Rand) float64 { return x },
			verdict: stats.VerdictTooShort,
			line:    []string{"too short to judge: 4 points after the warm-up, 5 needed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, q := soakSeries(tt.load, tt.quiet, tt.gauge)
			name, other := "g", "g_bytes"
			if tt.bytes {
				name, other = other, name
			}
			for i := range s {
				delete(s[i].Server, other)
			}
			r := Analyze(s, time.Second, q)
			g := gaugeOf(t, r, name)
			if g.Verdict != tt.verdict || r.Finding != tt.verdict {
				t.Fatalf("verdict %q, finding %q; want %q\n%s", g.Verdict, r.Finding, tt.verdict, g.Line)
			}
			if (r.Leaks == 1) != (tt.verdict == stats.VerdictLeak) {
				t.Errorf("leaks %d", r.Leaks)
			}
			if tt.slope != 0 && math.Abs(g.PerRequest.Slope-tt.slope) > 0.1*tt.slope {
				t.Errorf("slope %g per request, want %g", g.PerRequest.Slope, tt.slope)
			}
			if g.Plateau != tt.plateau {
				t.Errorf("plateau %v, want %v", g.Plateau, tt.plateau)
			}
			if (g.ShortestRunS > 0) != tt.shortest {
				t.Errorf("shortest run %gs, want one: %v", g.ShortestRunS, tt.shortest)
			}
			if tt.keptAbove > 0 && (g.Quiet == nil || g.Quiet.Kept == nil || *g.Quiet.Kept < tt.keptAbove) {
				t.Errorf("quiet %+v, want kept over %g", g.Quiet, tt.keptAbove)
			}
			for _, want := range tt.line {
				if !strings.Contains(g.Line, want) {
					t.Errorf("line %q lacks %q", g.Line, want)
				}
			}
			for _, not := range tt.noLine {
				if strings.Contains(g.Line, not) {
					t.Errorf("line %q has %q", g.Line, not)
				}
			}
			if tt.verdict != stats.VerdictNoGrowth && !strings.Contains(r.Verdict, g.Line) {
				t.Errorf("verdict %q lacks the gauge's line", r.Verdict)
			}
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("report does not encode: %v", err)
			}
		})
	}
}

// TestShortestRun: the run the verdict names as the shortest that would
// have shown a growth does show it, and a run of a third of it does not.
func TestShortestRun(t *testing.T) {
	const mb = 1 << 20
	leak := func(i int, x float64, q bool, n *rand.Rand) float64 {
		if q {
			x = 500 * 240
		}
		return 20*mb + 200*x + n.Float64()*mb
	}
	s, q := soakSeries(240, 30, leak)
	g := gaugeOf(t, Analyze(s, time.Second, q), "g_bytes")
	if g.Verdict != stats.VerdictLeak || g.ShortestRunS <= 0 {
		t.Fatalf("%s", g.Line)
	}
	secs := int(math.Ceil(g.ShortestRunS))
	verdictAt := func(load int) string {
		s, q := soakSeries(load, 30, func(i int, x float64, quiet bool, n *rand.Rand) float64 {
			if quiet {
				x = 500 * float64(load)
			}
			return 20*mb + 200*x + n.Float64()*mb
		})
		return gaugeOf(t, Analyze(s, time.Second, q), "g_bytes").Verdict
	}
	if v := verdictAt(secs + secs/5); v != stats.VerdictLeak {
		t.Errorf("a run of %ds (shortest %s, +20%%): %s", secs+secs/5, g.Line, v)
	}
	if v := verdictAt(max(6, secs/3)); v == stats.VerdictLeak {
		t.Errorf("a run of %ds, a third of the shortest (%s): still a leak", secs/3, g.Line)
	}
}

// TestFateSplit: a gauge that grows with timeouts alone is told apart
// from the ok replies when the timeouts come and go; with a fixed mix the
// split is refused, and said why.
func TestFateSplit(t *testing.T) {
	series := func(timeouts func(i int, n *rand.Rand) uint64) []stats.Point {
		n := rand.New(rand.NewPCG(5, 6))
		var s []stats.Point
		var ok, to float64
		for i := range 60 {
			p := stats.Point{T: float64(i + 1), Answered: 500, OK: 500, Timeouts: timeouts(i, n)}
			ok += float64(p.OK)
			to += float64(p.Timeouts)
			p.Server = map[string]float64{"g": 10 + 0.001*ok + 1*to + n.Float64()}
			s = append(s, p)
		}
		return s
	}
	t.Run("timeouts in bursts", func(t *testing.T) {
		g := gaugeOf(t, Analyze(series(func(i int, n *rand.Rand) uint64 {
			if i >= 20 && i < 40 {
				return 50
			}
			return 0
		}), time.Second, nil), "g")
		fates := map[string]stats.FateGrowth{}
		for _, f := range g.PerRequest.Fates {
			fates[f.Fate] = f
		}
		if len(fates) != 2 || math.Abs(fates["timed_out"].Slope-1) > 0.05 || math.Abs(fates["ok"].Slope-0.001) > 0.0005 {
			t.Fatalf("fates %+v (note %q), want timed_out +1, ok +0.001", g.PerRequest.Fates, g.PerRequest.FateNote)
		}
		if !strings.Contains(g.Line, "by fate: ok +0.001") || !strings.Contains(g.Line, "timed_out +1") {
			t.Errorf("line %q", g.Line)
		}
	})
	t.Run("a fixed mix", func(t *testing.T) {
		g := gaugeOf(t, Analyze(series(func(i int, n *rand.Rand) uint64 { return 10 + uint64(n.IntN(2)) }), time.Second, nil), "g")
		if len(g.PerRequest.Fates) != 0 || !strings.Contains(g.PerRequest.FateNote, "variance inflation") {
			t.Errorf("fates %+v, note %q; want none, and why", g.PerRequest.Fates, g.PerRequest.FateNote)
		}
	})
	t.Run("all ok", func(t *testing.T) {
		g := gaugeOf(t, Analyze(series(func(int, *rand.Rand) uint64 { return 0 }), time.Second, nil), "g")
		if len(g.PerRequest.Fates) != 0 || g.PerRequest.FateNote != "every request settled ended ok: no split" {
			t.Errorf("fates %+v, note %q", g.PerRequest.Fates, g.PerRequest.FateNote)
		}
	})
}

func TestMultiFit(t *testing.T) {
	x1 := []float64{1, 2, 3, 4, 5, 6}
	x2 := []float64{0, 1, 0, 1, 0, 3}
	y := make([]float64, len(x1))
	for i := range y {
		y[i] = 2 + 3*x1[i] - 0.5*x2[i]
	}
	b, se, vif, ok := multiFit([][]float64{x1, x2}, y)
	if !ok || math.Abs(b[0]-3) > 1e-9 || math.Abs(b[1]+0.5) > 1e-9 || se[0] > 1e-6 || vif[0] < 1 || vif[1] < 1 {
		t.Errorf("b %v se %v vif %v ok %v; want 3, -0.5, exact", b, se, vif, ok)
	}
	twice := make([]float64, len(x1))
	for i := range x1 {
		twice[i] = 2 * x1[i]
	}
	if _, _, _, ok := multiFit([][]float64{x1, twice}, y); ok {
		t.Error("collinear columns: fitted")
	}
	if _, _, _, ok := multiFit([][]float64{x1, x2}, y[:3]); ok {
		t.Error("three points for two columns and an intercept: fitted")
	}
}
