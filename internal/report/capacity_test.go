package report

import (
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/golden"
	"github.com/rpcload/rpcload/internal/stats"
)

// capStep is a step of a capacity search with latencies in milliseconds
// (p50, p90, p99, p99.9, max); a step without them had no reply.
func capStep(phase string, offered, achieved float64, pass bool, blame string, ms ...float64) stats.CapacityStep {
	s := stats.CapacityStep{Phase: phase, Offered: offered, Achieved: achieved, DurationS: 10, Sent: uint64(10 * achieved), Pass: pass, Blame: blame}
	if len(ms) == 5 {
		us := func(v float64) int64 { return int64(v * 1000) }
		s.Latency = stats.Latency{Count: int64(s.Sent), P50us: us(ms[0]), P90us: us(ms[1]), P95us: us(ms[2]), P99us: us(ms[2]), P999us: us(ms[3]), MaxUs: us(ms[4])}
		s.Answered = s.Sent
	}
	return s
}

// capacityFixture is the search of a server that sustains 4,850 req/s
// under p99 < 20 ms: it grows from 500 req/s until 8,000 breaks the SLO,
// bisects (one step failing for the load generator, not the server) and
// confirms.
func capacityFixture() *stats.CapacityReport {
	fail := func(s stats.CapacityStep, errRate float64, reasons ...string) stats.CapacityStep {
		s.ErrorRate, s.Errors, s.Reasons = errRate, uint64(errRate*float64(s.Sent)), reasons
		return s
	}
	steps := []stats.CapacityStep{
		capStep("grow", 500, 500, true, "", 1.2, 2.5, 5, 8, 12),
		capStep("grow", 1000, 999.8, true, "", 1.4, 3, 6.5, 11, 15),
		capStep("grow", 2000, 2000, true, "", 1.8, 4, 9, 14, 22),
		capStep("grow", 4000, 3999, true, "", 2.5, 6, 14, 19, 35),
		fail(capStep("grow", 8000, 7900, false, "server", 850, 1900, 2600, 2900, 3100), 0.023, "p99 2.6s > 20ms", "error_rate 2.3% > 1%"),
		fail(capStep("bisect", 6000, 5990, false, "server", 9, 40, 85, 120, 160), 0, "p99 85ms > 20ms"),
		fail(capStep("bisect", 5000, 4700, false, "load_generator", 3, 12, 40, 60, 75), 0, "p99 40ms > 20ms", "lag p99 35ms: rpcload fell behind"),
		capStep("bisect", 4500, 4500, true, "", 2.6, 7, 15, 19.5, 30),
		capStep("bisect", 4850, 4849, true, "", 2.8, 8, 17, 19.8, 31),
		capStep("confirm", 4850, 4850, true, "", 2.9, 8.5, 18, 21, 44),
	}
	steps[6].StoppedEarly = "p99 over twice the limit"
	steps[4].Violations = 3
	return &stats.CapacityReport{SLO: []string{"p99<20ms", "error_rate<1%"}, LatencyLimitUs: 20_000, StartRate: 500, Growth: 2, Precision: 0.05,
		StepS: 10, WarmupS: 2, ConfirmS: 30, Unit: "req/s", Steps: steps, Rate: 4850, Confirmed: true, LimitedBy: "server",
		Verdict: "Sustains 4,850 req/s under p99<20ms and error_rate<1%, confirmed over 30 s; 6,000 req/s broke the SLO."}
}

// capacityResult is the result a capacity run writes: that of its
// confirming run, with the search.
func capacityResult(c *stats.CapacityReport) *stats.Result {
	return &stats.Result{Schema: stats.Schema, Tool: "rpcload", Target: "http://127.0.0.1:8080/", StartedAt: "2026-01-02T03:04:05Z",
		DurationS: 30, Rate: stats.Rate{Target: 4850, Achieved: 4850}, Capacity: c}
}

// TestCapacityGolden: the page of a capacity run, byte for byte.
func TestCapacityGolden(t *testing.T) {
	page := render(t, Input{Name: "capacity.json", Result: capacityResult(capacityFixture())})
	golden.Check(t, "capacity.golden.html", []byte(page))
}

// figure is what one plot of a page draws.
type figure struct {
	lines, rules           int
	dots, rings            int // filled and hollow circles
	squares, hollowSquares int
	labels                 []string // of the reference lines
}

var (
	figRE   = regexp.MustCompile(`(?s)<figure id="([^"]+)">(.*?)</figure>`)
	labelRE = regexp.MustCompile(`<text class="ref"[^>]*>([^<]*)</text>`)
	markRE  = regexp.MustCompile(`<(circle|rect) [^>]*fill="([^"]*)"`)
)

// figures maps each plot id of a page to what its SVG draws (not its
// legend).
func figures(page string) map[string]figure {
	out := map[string]figure{}
	for _, m := range figRE.FindAllStringSubmatch(page, -1) {
		svg, _, _ := strings.Cut(m[2], `<div class="legend">`)
		f := figure{lines: strings.Count(svg, "<polyline"), rules: strings.Count(svg, "<line x1=")}
		for _, mk := range markRE.FindAllStringSubmatch(svg, -1) {
			hollow := mk[2] == "#fff"
			switch {
			case mk[1] == "circle" && hollow:
				f.rings++
			case mk[1] == "circle":
				f.dots++
			case hollow:
				f.hollowSquares++
			default:
				f.squares++
			}
		}
		for _, l := range labelRE.FindAllStringSubmatch(svg, -1) {
			f.labels = append(f.labels, l[1])
		}
		out[m[1]] = f
	}
	return out
}

// capacityHTML is the Capacity section of a page, "" when it has none.
func capacityHTML(page string) string {
	_, rest, ok := strings.Cut(page, `<section id="capacity">`)
	if !ok {
		return ""
	}
	sec, _, _ := strings.Cut(rest, "</section>")
	return sec
}

var verdictRE = regexp.MustCompile(`<p class="verdict">.*?<strong class="([^"]*)">`)

// TestCapacitySection: the section shows what the search found, and says
// so when it found little or nothing: no steps, no answer, steps without
// replies, no latency limit, an unconfirmed answer, a lower bound.
func TestCapacitySection(t *testing.T) {
	failAll := func(c *stats.CapacityReport) {
		for i := range c.Steps {
			c.Steps[i].Pass, c.Steps[i].Blame = false, "server"
		}
	}
	cases := []struct {
		name    string
		edit    func(c *stats.CapacityReport)
		class   string // of the verdict
		text    []string
		notText []string
		latency figure // the latency plot (labels compared, counts where not -1)
		rate    figure // the achieved rate plot
	}{
		{"a search with an answer", func(*stats.CapacityReport) {}, "pass",
			[]string{"Sustains 4,850 req/s under p99<20ms", "Search: from 500 req/s, ×2 per step until a step fails, then bisecting to within 5%",
				"SLO: p99<20ms, error_rate<1%.", "fail (load generator)", "fail (server)", "stopped early: p99 over twice the limit", "p99 2.6s > 20ms; error_rate 2.3% > 1%",
				"The search ended on the server"},
			nil,
			figure{lines: 4, rules: 2, dots: 6 * 4, rings: 3 * 4, squares: 4, labels: []string{"SLO 20ms", "sustains 4,850 req/s"}},
			figure{lines: 1, rules: 2, dots: 6, rings: 3, squares: 1, labels: []string{"sustains 4,850 req/s"}}},
		{"no steps", func(c *stats.CapacityReport) {
			c.Steps, c.Rate, c.Confirmed, c.Verdict, c.LimitedBy = nil, 0, false, "", "interrupted"
		}, "fail",
			[]string{"No step ran: the search has no answer.", "No step ran: there is nothing to plot.", "No step ran.", "The search was interrupted."},
			[]string{"offered (req/s)"}, figure{}, figure{}},
		{"no answer, in the file's words", func(c *stats.CapacityReport) {
			failAll(c)
			c.Rate, c.Confirmed, c.Verdict = 0, false, "No rate met the SLO: 500 req/s already broke p99<20ms."
		}, "fail",
			[]string{"No rate met the SLO: 500 req/s already broke p99<20ms."}, []string{"sustains"},
			figure{lines: 4, rules: 1, rings: 36, hollowSquares: 4, labels: []string{"SLO 20ms"}},
			figure{lines: 1, rules: 1, rings: 9, hollowSquares: 1}},
		{"no answer and no verdict", func(c *stats.CapacityReport) { failAll(c); c.Rate, c.Confirmed, c.Verdict = 0, false, "" }, "fail",
			[]string{"No rate met the SLO: even the first step, at 500 req/s, failed."}, []string{"sustains"},
			figure{lines: 4, rules: 1, rings: 36, hollowSquares: 4, labels: []string{"SLO 20ms"}},
			figure{lines: 1, rules: 1, rings: 9, hollowSquares: 1}},
		{"steps without replies", func(c *stats.CapacityReport) {
			c.Steps[4].Latency, c.Steps[5].Latency = stats.Latency{}, stats.Latency{}
		}, "pass",
			[]string{"Steps 5, 6 had no reply, hence no latency: the latency plot has no points for them."}, nil,
			figure{lines: 4, rules: 2, dots: 24, rings: 4, squares: 4, labels: []string{"SLO 20ms", "sustains 4,850 req/s"}},
			figure{lines: 1, rules: 2, dots: 6, rings: 3, squares: 1, labels: []string{"sustains 4,850 req/s"}}},
		{"no step with replies", func(c *stats.CapacityReport) {
			for i := range c.Steps {
				c.Steps[i].Latency = stats.Latency{}
			}
		}, "pass",
			[]string{"No step had a reply: there is no latency to show."}, nil,
			figure{},
			figure{lines: 1, rules: 2, dots: 6, rings: 3, squares: 1, labels: []string{"sustains 4,850 req/s"}}},
		{"no latency limit", func(c *stats.CapacityReport) { c.LatencyLimitUs, c.SLO = 0, []string{"error_rate<1%"} }, "pass",
			[]string{"SLO: error_rate<1%."}, []string{"SLO 20ms"},
			figure{lines: 4, rules: 1, dots: 24, rings: 12, squares: 4, labels: []string{"sustains 4,850 req/s"}},
			figure{lines: 1, rules: 2, dots: 6, rings: 3, squares: 1, labels: []string{"sustains 4,850 req/s"}}},
		{"unconfirmed", func(c *stats.CapacityReport) {
			c.Confirmed, c.Steps[9].Pass, c.Steps[9].Blame, c.Verdict = false, false, "server", ""
		}, "warn",
			[]string{"Sustains 4,850 req/s within the SLO."}, []string{", confirmed"},
			figure{lines: 4, rules: 2, dots: 24, rings: 12, hollowSquares: 4, labels: []string{"SLO 20ms", "sustains 4,850 req/s (unconfirmed)"}},
			figure{lines: 1, rules: 2, dots: 6, rings: 3, hollowSquares: 1, labels: []string{"sustains 4,850 req/s (unconfirmed)"}}},
		{"a lower bound", func(c *stats.CapacityReport) { c.LimitedBy = "load_generator" }, "warn",
			[]string{"The search ended on the load generator", "only a lower bound"}, nil,
			figure{lines: 4, rules: 2, dots: 24, rings: 12, squares: 4, labels: []string{"SLO 20ms", "sustains 4,850 req/s"}},
			figure{lines: 1, rules: 2, dots: 6, rings: 3, squares: 1, labels: []string{"sustains 4,850 req/s"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cr := capacityFixture()
			c.edit(cr)
			page := render(t, Input{Name: "a.json", Result: capacityResult(cr)})
			sec := capacityHTML(page)
			if sec == "" {
				t.Fatal("no capacity section")
			}
			if !strings.Contains(page, `<a href="#capacity">`) {
				t.Error("the navigation has no link to the capacity section")
			}
			if m := verdictRE.FindStringSubmatch(sec); m == nil || m[1] != c.class {
				t.Errorf("verdict class %v, want %q", m, c.class)
			}
			text := visibleText("<body>" + sec)
			for _, want := range c.text {
				if !strings.Contains(text, want) {
					t.Errorf("section lacks %q", want)
				}
			}
			for _, bad := range c.notText {
				if strings.Contains(text, bad) {
					t.Errorf("section has %q", bad)
				}
			}
			figs := figures(sec)
			for id, want := range map[string]figure{"plot-capacity-latency": c.latency, "plot-capacity-rate": c.rate} {
				got, ok := figs[id]
				if !ok {
					t.Errorf("no %s", id)
					continue
				}
				if strings.Join(got.labels, "|") != strings.Join(want.labels, "|") {
					t.Errorf("%s: labels %q, want %q", id, got.labels, want.labels)
				}
				got.labels, want.labels = nil, nil
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s draws %+v, want %+v", id, got, want)
				}
			}
		})
	}
}

// TestCapacityAbsent: a result without a capacity search has no section,
// and the rest of the page is as it was.
func TestCapacityAbsent(t *testing.T) {
	page := render(t, Input{Name: "a.json", Result: sampleResult(t, "x", 100)})
	if strings.Contains(page, `id="capacity"`) || strings.Contains(page, "#capacity") {
		t.Error("a page without a capacity search has a capacity section")
	}
}

// TestCapacityOverlay: the searches of several results share the plots,
// each in its result's color, the answers labelled with the names; a
// result without a search adds nothing to them but keeps its color.
func TestCapacityOverlay(t *testing.T) {
	b := capacityFixture()
	b.LatencyLimitUs, b.Rate = 50_000, 6000
	cases := []struct {
		name   string
		b      *stats.CapacityReport
		labels []string // of the latency plot's reference lines
	}{
		{"the same SLO", capacityFixture(), []string{"SLO 20ms", "a.json: 4,850 req/s", "c.json: 4,850 req/s"}},
		{"different SLOs", b, []string{"SLO 20ms (a.json)", "SLO 50ms (c.json)", "a.json: 4,850 req/s", "c.json: 6,000 req/s"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pg := buildPage([]Input{{"a.json", capacityResult(capacityFixture())}, {"b.json", sampleResult(t, "x", 100)}, {"c.json", capacityResult(c.b)}})
			if pg.Capacity == nil || len(pg.Capacity.Plots) != 2 || len(pg.Capacity.Verdicts) != 2 || len(pg.Capacity.Results) != 2 {
				t.Fatalf("capacity view %+v", pg.Capacity)
			}
			lat := pg.Capacity.Plots[0]
			var labels []string
			for _, r := range lat.Rules {
				labels = append(labels, r.Label)
			}
			if strings.Join(labels, "|") != strings.Join(c.labels, "|") {
				t.Errorf("labels %q, want %q", labels, c.labels)
			}
			for _, p := range pg.Capacity.Plots {
				if len(p.Legend) < 2 || p.Legend[0].Label != "a.json" || p.Legend[1].Label != "c.json" {
					t.Errorf("%s legend %+v: want the results with a search first, in order", p.ID, p.Legend)
				}
				for _, l := range p.Lines {
					want := palette[0]
					if strings.HasPrefix(l.Name, "c.json") {
						want = palette[2]
					} else if !strings.HasPrefix(l.Name, "a.json") {
						t.Errorf("%s: line %q names no result with a search", p.ID, l.Name)
					}
					if l.Color != want {
						t.Errorf("%s: line %q colored %s, want %s", p.ID, l.Name, l.Color, want)
					}
				}
			}
			if n := len(lat.Lines); n != 8 {
				t.Errorf("latency plot: %d lines, want 4 per search", n)
			}
			if v := pg.Capacity.Verdicts[1]; v.Name != "c.json" || v.Style == nil || v.Style.Color != palette[2] {
				t.Errorf("second verdict %+v: want c.json in its color", v)
			}
		})
	}
}

// TestCapacityGeometry: the answer's line passes through the points of
// the steps at its rate, the SLO line lies between the latencies just
// under and just over it, and every point lies inside the plot.
func TestCapacityGeometry(t *testing.T) {
	pg := buildPage([]Input{{"a.json", capacityResult(capacityFixture())}})
	lat := pg.Capacity.Plots[0]
	var knee, slo rule
	for _, r := range lat.Rules {
		switch {
		case r.X1 == r.X2:
			knee = r
		case r.Y1 == r.Y2:
			slo = r
		}
	}
	y := map[string]float64{}
	for _, m := range lat.Marks {
		if m.X < lat.Left || m.X > lat.Right || m.Y < lat.Top || m.Y > lat.Bottom {
			t.Errorf("mark %q at (%g, %g), outside the plot", m.Title, m.X, m.Y)
		}
		if strings.Contains(m.Title, "at 4,850 req/s offered") && m.X != knee.X1 {
			t.Errorf("mark %q at x=%g, the answer's line at %g", m.Title, m.X, knee.X1)
		}
		y[m.Title] = m.Y
	}
	under := y["a.json, step 9 (bisect, pass): p99.9 19.80ms at 4,850 req/s offered"]
	over := y["a.json, step 10 (confirm, pass): p99.9 21.00ms at 4,850 req/s offered"]
	if under == 0 || over == 0 || !(over < slo.Y1 && slo.Y1 < under) {
		t.Errorf("SLO line at y=%g, want between %g (21ms) and %g (19.8ms)", slo.Y1, over, under)
	}
	for i := 1; i < len(lat.YTicks); i++ {
		if lat.YTicks[i].Pos >= lat.YTicks[i-1].Pos {
			t.Errorf("y ticks %+v do not rise", lat.YTicks)
		}
	}
}

// TestLogAxis: a log axis runs between 1-2-5 values around the data, with
// a tick at each of them, or at each power of ten past three decades, and
// each tick in its own unit.
func TestLogAxis(t *testing.T) {
	cases := []struct {
		name         string
		lo, hi       float64
		bottom, top  float64
		ticks        string
		mid, midFrac float64
	}{
		{"milliseconds to seconds", 1200, 3.1e6, 1000, 5e6, "1ms 10ms 100ms 1s 5s", 1e4, math.Log10(10) / math.Log10(5000)},
		{"an end close to a power is not labelled", 600, 3.1e6, 500, 5e6, "1ms 10ms 100ms 1s 5s", 5e4, 0.5},
		{"one and a half decades", 1200, 35_000, 1000, 50_000, "1ms 2ms 5ms 10ms 20ms 50ms", 10_000, 1 / math.Log10(50)},
		{"below a millisecond", 300, 800, 200, 1000, "200µs 500µs 1ms", 200, 0},
		{"one value", 1000, 1000, 1000, 2000, "1ms 2ms", 2000, 1},
		{"nothing positive", 0, 0, 1, 10, "1µs 2µs 5µs 10µs", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := layoutAxis(axisSpec{Label: "latency", UnitOf: latencyUnit, Log: true}, extent{minPos: c.lo, max: c.hi})
			var labels []string
			for _, tk := range a.ticks {
				labels = append(labels, tk.Label)
			}
			if a.bottom != c.bottom || a.top != c.top || strings.Join(labels, " ") != c.ticks || a.label != "latency" {
				t.Errorf("axis %g..%g, ticks %q, label %q; want %g..%g, %q", a.bottom, a.top, labels, a.label, c.bottom, c.top, c.ticks)
			}
			if got := a.frac(c.mid); math.Abs(got-c.midFrac) > 1e-9 {
				t.Errorf("frac(%g) = %g, want %g", c.mid, got, c.midFrac)
			}
			if a.frac(0) != 0 || a.frac(-1) != 0 || a.frac(a.top*10) != 1 {
				t.Error("values off the axis are not pinned to its ends")
			}
		})
	}
}

// TestCapacityEscaping: every string of a capacity search is text on the
// page, never markup.
func TestCapacityEscaping(t *testing.T) {
	hostile := func(s string) *stats.Result {
		c := capacityFixture()
		c.SLO = []string{"p99<" + s}
		c.Unit, c.Verdict, c.LimitedBy = "u"+s, "v"+s, "l"+s
		for i := range c.Steps {
			c.Steps[i].Phase = "ph" + s
			c.Steps[i].StoppedEarly = "st" + s
			c.Steps[i].Reasons = []string{"re" + s}
			if !c.Steps[i].Pass {
				c.Steps[i].Blame = "bl" + s
			}
		}
		return capacityResult(c)
	}
	want := skeleton(render(t, Input{Name: "n-benign", Result: hostile("benign")}, Input{Name: "o-benign", Result: hostile("benign")}))
	for _, s := range []string{`<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `</svg><script>alert(1)</script>`, `</title><svg onload=alert(1)>`, "a\nb"} {
		page := render(t, Input{Name: "n" + s, Result: hostile(s)}, Input{Name: "o" + s, Result: hostile(s)})
		if got := skeleton(page); !equal(got, want) {
			t.Errorf("%q: the page's tags depend on the search's strings: %s", s, firstDifference(want, got))
		}
		text := visibleText(page)
		for _, w := range []string{"V" + s, "l" + s, "ph" + s, "re" + s, "st" + s, "p99<" + s, "(u" + s + ")", "bl" + s, "n" + s + ": 4,850 u" + s} {
			if !strings.Contains(text, w) {
				t.Errorf("visible text lacks %q", w)
			}
		}
	}
}

// TestStepVerdict: a failed step names whose failure it was, and its
// reasons say once that the stop rule ended it.
func TestStepVerdict(t *testing.T) {
	cases := []struct {
		name         string
		s            stats.CapacityStep
		verdict, why string
	}{
		{"pass", stats.CapacityStep{Pass: true}, "pass", ""},
		{"the server's", stats.CapacityStep{Blame: "server", Reasons: []string{"p99 was 40ms, limit < 20ms"}}, "fail (server)", "p99 was 40ms, limit < 20ms"},
		{"the load generator's", stats.CapacityStep{Blame: "load_generator", Reasons: []string{"a", "b"}}, "fail (load generator)", "a; b"},
		{"no blame", stats.CapacityStep{Reasons: []string{"a"}}, "fail", "a"},
		{"stopped, said by the reasons", stats.CapacityStep{Blame: "server", StoppedEarly: "the backlog grew", Reasons: []string{"p99 was 1s", "stopped early: the backlog grew (0 left)"}},
			"fail (server)", "p99 was 1s; stopped early: the backlog grew (0 left)"},
		{"stopped, not said", stats.CapacityStep{Blame: "server", StoppedEarly: "the backlog grew", Reasons: []string{"p99 was 1s"}}, "fail (server)", "p99 was 1s; stopped early: the backlog grew"},
		{"stopped, no reasons", stats.CapacityStep{StoppedEarly: "the backlog grew"}, "fail", "stopped early: the backlog grew"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, why := stepVerdict(c.s)
			if v.Text != c.verdict || why != c.why {
				t.Errorf("verdict %q, why %q; want %q, %q", v.Text, why, c.verdict, c.why)
			}
		})
	}
}
