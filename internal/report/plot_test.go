package report

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcload/rpcload/internal/stats"
)

func TestIntervals(t *testing.T) {
	pt := func(t float64, sent uint64, p99 int64) stats.Point {
		return stats.Point{T: t, Sent: sent, Answered: sent, P99us: p99, InFlight: int64(sent)}
	}
	cases := []struct {
		name   string
		series []stats.Point
		want   []interval
	}{
		{"empty", nil, nil},
		{"steady", []stats.Point{pt(1, 10, 5), pt(2, 20, 6)},
			[]interval{{0, 1, pt(1, 10, 5)}, {1, 2, pt(2, 20, 6)}}},
		{"the sliver at the end joins the last interval", []stats.Point{pt(1, 10, 5), pt(2, 20, 6), pt(2.01, 1, 9)},
			[]interval{{0, 1, pt(1, 10, 5)}, {1, 2.01, stats.Point{T: 2.01, Sent: 21, Answered: 21, P99us: 6, InFlight: 1}}}},
		{"a repeated or earlier point is skipped", []stats.Point{pt(1, 10, 5), pt(1, 3, 5), pt(0.5, 3, 5), pt(2, 20, 6)},
			[]interval{{0, 1, pt(1, 10, 5)}, {1, 2, pt(2, 20, 6)}}},
		{"a short first interval stays (nothing before it)", []stats.Point{pt(0.1, 1, 5), pt(1.1, 10, 6), pt(2.1, 10, 6)},
			[]interval{{0, 0.1, pt(0.1, 1, 5)}, {0.1, 1.1, pt(1.1, 10, 6)}, {1.1, 2.1, pt(2.1, 10, 6)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := intervals(c.series); !reflect.DeepEqual(got, c.want) {
				t.Errorf("intervals =\n%+v\nwant\n%+v", got, c.want)
			}
		})
	}
}

func TestNiceTicks(t *testing.T) {
	cases := []struct {
		max, div float64
		want     []float64
	}{
		{0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}}, // nothing to show: a unit axis
		{5, 1, []float64{0, 1, 2, 3, 4, 5}},
		{4.2, 1, []float64{0, 1, 2, 3, 4, 5}},
		{992_000, 1000, []float64{0, 200_000, 400_000, 600_000, 800_000, 1_000_000}},
		{1234, 1, []float64{0, 250, 500, 750, 1000, 1250}},
		{math.Inf(1), 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
	}
	for _, c := range cases {
		got, _ := niceTicks(c.max, c.div, 5)
		if len(got) != len(c.want) {
			t.Errorf("niceTicks(%g, %g) = %v, want %v", c.max, c.div, got, c.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-9*math.Max(1, c.want[i]) {
				t.Errorf("niceTicks(%g, %g) = %v, want %v", c.max, c.div, got, c.want)
				break
			}
		}
	}
}

// TestUnits: ticks carry numbers (with k or M for large counts), and the
// axis label carries the unit chosen from the largest value.
func TestUnits(t *testing.T) {
	cases := []struct {
		name      string
		maxV      float64
		unitOf    func(float64) unit
		wantTop   string // the label of the top tick
		wantLabel string // the axis label
	}{
		{"microseconds", 800, latencyUnit, "800", "x (µs)"},
		{"milliseconds", 250_000, latencyUnit, "250", "x (ms)"},
		{"fractional ms", 1500, latencyUnit, "1.5", "x (ms)"},
		{"seconds", 2.2e6, latencyUnit, "2.5", "x (s)"},
		{"time in s", 10, timeUnit, "10", "x (s)"},
		{"time in min", 3600, timeUnit, "60", "x (min)"},
		{"time in h", 86400, timeUnit, "25", "x (h)"},
		{"count", 5000, countUnit, "5000", "x"},
		{"kilo count", 20000, countUnit, "20k", "x"},
		{"mega count", 2e7, countUnit, "20M", "x"},
		{"kilo count in steps of 2.5k", 11000, countUnit, "12.5k", "x"},
		{"time in steps of 2.5 s", 10.3, timeUnit, "12.5", "x (s)"},
		{"fractional ms in steps of 0.25", 1100, latencyUnit, "1.25", "x (ms)"},
		{"bytes", 100 << 20, bytesUnit, "100", "x (MiB)"},
	}
	for _, c := range cases {
		a := layoutAxis(axisSpec{Label: "x", UnitOf: c.unitOf}, extent{max: c.maxV})
		if got := a.ticks[len(a.ticks)-1].Label; got != c.wantTop || a.label != c.wantLabel {
			t.Errorf("%s: top tick %q, axis %q; want %q, %q", c.name, got, a.label, c.wantTop, c.wantLabel)
		}
		if a.top < c.maxV {
			t.Errorf("%s: the axis ends at %g, below the largest value %g", c.name, a.top, c.maxV)
		}
		if a.ticks[0].Label != "0" {
			t.Errorf("%s: the first tick is %q, want 0", c.name, a.ticks[0].Label)
		}
	}
}

func TestFormat(t *testing.T) {
	cases := []struct{ got, want string }{
		{fmtUs(999), "999µs"},
		{fmtUs(1500), "1.50ms"},
		{fmtUs(999_995), "1.000s"},
		{fmtCount(0), "0"},
		{fmtCount(999), "999"},
		{fmtCount(1000), "1,000"},
		{fmtCount(math.MaxUint64), "18,446,744,073,709,551,615"},
		{fmtInt(-1234567), "-1,234,567"},
		{fmtBytes(512), "512 B"},
		{fmtBytes(3 << 20), "3.0 MiB"},
		{fmtPercent(0.0123), "1.23%"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestTimeAxisEndsWithTheRun: the time axis of every plot over time ends
// at the end of the last interval (10.3 s here, not the 12 s a nice number
// would give), and no tick lies past it.
func TestTimeAxisEndsWithTheRun(t *testing.T) {
	r := sampleResult(t, "x", 100)
	r.Series = series(10, 100)
	r.Series = append(r.Series, stats.Point{T: 10.3, Sent: 30, Answered: 30, InFlight: 3, P50us: 300, P99us: 900})
	for _, c := range timeCharts([]entry{{0, "a.json", r}}) {
		p := c.render()
		if p.Empty != "" {
			continue
		}
		maxX := 0.0
		for _, l := range p.Lines {
			for _, seg := range l.Segments {
				for _, pt := range strings.Fields(seg) {
					x, _, _ := strings.Cut(pt, ",")
					v, err := strconv.ParseFloat(x, 64)
					if err != nil {
						t.Fatal(err)
					}
					maxX = math.Max(maxX, v)
				}
			}
		}
		if math.Abs(maxX-p.Right) > 0.1 {
			t.Errorf("%s: the data end at x=%g, the axis at %g: the axis runs past the run", p.ID, maxX, p.Right)
		}
		for _, tk := range p.XTicks {
			if tk.Pos > p.Right+0.1 {
				t.Errorf("%s: tick %q at %g, past the axis end %g", p.ID, tk.Label, tk.Pos, p.Right)
			}
		}
		if last := p.XTicks[len(p.XTicks)-1].Label; last != "10" && last != "10.0" { // 10.0 when the ticks are 2.5 s apart
			t.Errorf("%s: last tick %q, want 10", p.ID, last)
		}
	}
}

// TestInFlightPlot: the in-flight plot shows each interval's most in
// flight (163 in a burst that ended with 1 left), and for files of older
// versions without it, the count at the interval's end.
func TestInFlightPlot(t *testing.T) {
	pts := func(inflight, most int64) []stats.Point {
		return []stats.Point{{T: 1, Sent: 10, InFlight: 0, InFlightMax: 0}, {T: 2, Sent: 10, InFlight: inflight, InFlightMax: most}, {T: 3, Sent: 10}}
	}
	tests := []struct {
		name   string
		series []stats.Point
		want   float64
	}{
		{"the interval's maximum", pts(1, 163), 163},
		{"an older file: the end value", pts(7, 0), 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sampleResult(t, "x", 100)
			r.Series = tt.series
			var c chart
			for _, x := range timeCharts([]entry{{0, "a.json", r}}) {
				if x.ID == "plot-inflight" {
					c = x
				}
			}
			if len(c.Lines) != 1 {
				t.Fatalf("in-flight plot: %d lines", len(c.Lines))
			}
			top := 0.0
			for _, seg := range c.Lines[0].Segs {
				for _, p := range seg {
					top = math.Max(top, p.Y)
					if p.X > 1 && p.X < 2 {
						t.Errorf("a point inside the interval (%g): the maximum belongs to the whole interval", p.X)
					}
				}
			}
			if top != tt.want {
				t.Errorf("plot peaks at %g, want %g", top, tt.want)
			}
		})
	}
}

// TestThresholdValue: a threshold's value and limit are shown in the unit
// of the figure's kind: a rate per second is not a fraction (499.33/s was
// shown as 49933.33%), a count is a plain number.
func TestThresholdValue(t *testing.T) {
	cases := []struct {
		figure string
		v      float64
		want   string
	}{
		{"p99", 45000, "45ms"},
		{"service_p95", 1500, "1.5ms"},
		{"error_rate", 0.001, "0.1%"},
		{"rpc_error_rate", 0.25, "25%"},
		{"achieved_rate", 499.33, "499.33/s"},
		{"answered_rate", 499.33, "499.33/s"},
		{"rps", 1234.5, "1234.5/s"},
		{"target", 500, "500/s"},
		{"violations", 3, "3"},
		{"inflight_max", 163, "163"},
		{"a_figure_of_a_newer_rpcload", 0.5, "0.5"},
	}
	for _, c := range cases {
		if got := thresholdValue(c.figure, c.v); got != c.want {
			t.Errorf("thresholdValue(%q, %g) = %q, want %q", c.figure, c.v, got, c.want)
		}
	}
}

// TestSpectrumPoints: the x of each point is log10(1/(1-q)) and its y the
// histogram's value at q, so 90, 99 and 99.9% sit at 1, 2 and 3.
func TestSpectrumPoints(t *testing.T) {
	l := latencyOf(t, spread(10_000, 1, 10_000)...)
	h, err := hdr.Decode([]byte(l.HDR))
	if err != nil {
		t.Fatal(err)
	}
	pts, note := spectrumPoints(l)
	if note != "" || len(pts) != spectrumSteps+1 {
		t.Fatalf("%d points, note %q", len(pts), note)
	}
	for _, c := range []struct{ x, q float64 }{{0, 0}, {1, 90}, {2, 99}, {3, 99.9}, {5, 99.999}} {
		i := int(math.Round(c.x / spectrumMaxX * spectrumSteps))
		if math.Abs(pts[i].X-c.x) > 1e-9 {
			t.Errorf("point %d at x=%g, want %g", i, pts[i].X, c.x)
		}
		if want := float64(h.ValueAtQuantile(c.q)); pts[i].Y != want {
			t.Errorf("at %g%%: %g µs, want %g", c.q, pts[i].Y, want)
		}
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].Y < pts[i-1].Y {
			t.Fatalf("latency falls from %g to %g at x=%g: a spectrum never decreases", pts[i-1].Y, pts[i].Y, pts[i].X)
		}
	}
}

// TestRenderScales: data maps into the plot area, the axes end at a nice
// value above the data, and the labels carry the unit.
func TestRenderScales(t *testing.T) {
	c := chart{ID: "p", X: axisSpec{Label: "time since start", UnitOf: timeUnit}, Y: axisSpec{Label: "latency", UnitOf: latencyUnit},
		Lines: []dataLine{{lineStyle: resultStyle(0), Name: "a", Segs: [][]xy{{{0, 0}, {4, 250_000}}, {{5, 100_000}}}}}}
	p := c.render()
	if p.Empty != "" {
		t.Fatalf("empty: %s", p.Empty)
	}
	if p.XLabel != "time since start (s)" || p.YLabel != "latency (ms)" {
		t.Errorf("labels %q, %q", p.XLabel, p.YLabel)
	}
	if got := p.YTicks[len(p.YTicks)-1].Label; got != "250" {
		t.Errorf("top y tick %q, want 250", got)
	}
	if got := p.Lines[0].Segments; len(got) != 2 || got[0] != "70,254 561.2,14" || got[1] != "684,158" {
		t.Errorf("segments %q", got)
	}
	empty := chart{ID: "e", Empty: "nothing here"}
	if p := empty.render(); p.Empty != "nothing here" || len(p.Lines) != 0 {
		t.Errorf("empty chart rendered as %+v", p)
	}
}

// TestThin: a long line keeps at most a few points per pixel column, and
// keeps its extremes.
func TestThin(t *testing.T) {
	var pts []xy
	for i := range 100_000 {
		pts = append(pts, xy{float64(i) * 600 / 100_000, float64(i % 1000)})
	}
	pts[50_000].Y = 1e6
	out := thin(pts)
	if len(out) > 4*2*600+4 {
		t.Errorf("%d points after thinning, want at most 4 per half pixel", len(out))
	}
	found := false
	for i, p := range out {
		found = found || p.Y == 1e6
		if i > 0 && p.X < out[i-1].X {
			t.Fatalf("points out of order at %d", i)
		}
	}
	if !found {
		t.Error("thinning lost the spike")
	}
	if short := thin(pts[:10]); len(short) != 10 {
		t.Errorf("a short line was thinned to %d points", len(short))
	}
}

// TestStyles: one result colors its kinds; several color by result and
// dash by kind, so every line of a result shares its color.
func TestStyles(t *testing.T) {
	if a, b := styleOf(0, 0, 1), styleOf(0, 1, 1); a.Color == b.Color {
		t.Error("one result: two kinds share a color")
	}
	a, b := styleOf(1, 0, 2), styleOf(1, 1, 2)
	if a.Color != b.Color || a.Dash == b.Dash {
		t.Errorf("several results: kinds of one result are %+v and %+v", a, b)
	}
	for _, d := range dashes {
		if strings.TrimSpace(d) == "" {
			t.Error("an empty dash pattern is an invalid SVG attribute value")
		}
	}
}
