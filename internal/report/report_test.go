package report

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/stats"
)

func render(t testing.TB, in ...Input) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, in); err != nil {
		t.Fatalf("WriteHTML: %v", err)
	}
	return b.String()
}

// tokens splits a page into tags and text. It relies on what html/template
// guarantees and the escaping tests check: every < and > in text and
// attribute values is escaped, so each <...> is a tag of the template.
var tagRE = regexp.MustCompile(`<[^<>]*>`)

// skeleton is the page's tags with attribute values blanked: what a
// string from a result must never be able to change.
func skeleton(page string) []string {
	quoted := regexp.MustCompile(`"[^"]*"`)
	var out []string
	for _, tag := range tagRE.FindAllString(page, -1) {
		out = append(out, quoted.ReplaceAllString(tag, `""`))
	}
	return out
}

// visibleText is the unescaped text between the tags of the body.
func visibleText(page string) string {
	_, body, _ := strings.Cut(page, "<body>")
	return html.UnescapeString(tagRE.ReplaceAllString(body, "\x00"))
}

func firstDifference(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return "tag " + a[i] + " became " + b[i]
		}
	}
	return "the number of tags changed"
}

// TestEscaping renders results whose every string is hostile markup and
// checks that the page's structure is exactly that of a page with a
// harmless string in the same places, that the string shows as text, and
// that no tag the template does not write appears.
func TestEscaping(t *testing.T) {
	cases := []struct {
		name, s string
	}{
		{"script", `<script>alert(1)</script>`},
		{"attribute breakout", `"><img src=x onerror=alert(1)>`},
		{"single quote breakout", `'><svg onload=alert(1)>`},
		{"svg end", `</svg><script>alert(1)</script>`},
		{"title end", `</title><script>alert(1)</script>`},
		{"pre and table end", `</pre></td></tr></table><iframe src=javascript:alert(1)>`},
		{"style end", `</style><style>body{display:none}</style>`},
		{"comment", `<!-- x --><!--`},
		{"cdata", `<![CDATA[ ]]>`},
		{"entity", `&lt;script&gt;alert(1)&lt;/script&gt;`},
		{"template action", `{{.Title}} {{template "plot"}}`},
		{"javascript url", `javascript:alert(1)`},
		{"newlines and tabs", "a\nb\tc\r\nd"},
		{"NUL and controls", "a\x00b\x1bc"},
		{"non-ASCII", "µs → ≥ 日本 \u202e"},
	}
	benign := render(t, Input{Name: "name-benign", Result: sampleResult(t, "benign", 200)}, Input{Name: "other-benign", Result: sampleResult(t, "benign", 400)})
	want := skeleton(benign)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page := render(t, Input{Name: "name" + c.s, Result: sampleResult(t, c.s, 200)}, Input{Name: "other" + c.s, Result: sampleResult(t, c.s, 400)})
			if got := skeleton(page); !equal(got, want) {
				t.Fatalf("the page's tags depend on a result's strings: %s", firstDifference(want, got))
			}
			lower := strings.ToLower(page)
			for _, bad := range []string{"<script", "<img", "<iframe", "<svg onload", "<!--", "<![cdata"} {
				if strings.Contains(lower, bad) {
					t.Errorf("page contains %q", bad)
				}
			}
			if !strings.Contains(c.s, "\x00") && !strings.Contains(c.s, "\r") {
				text := visibleText(page)
				for _, want := range []string{"name" + c.s, "e" + c.s, "f" + c.s, "te" + c.s, "w" + c.s, "m" + c.s} {
					if !strings.Contains(text, want) {
						t.Errorf("visible text lacks %q", want)
					}
				}
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPageIsSelfContained: the CSP forbids scripts and fetching, and the
// page references nothing outside itself.
func TestPageIsSelfContained(t *testing.T) {
	page := render(t, Input{Name: "a.json", Result: sampleResult(t, "x", 100)})
	for _, want := range []string{
		`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:`,
		`<!DOCTYPE html>`, `<meta charset="utf-8">`, `name="viewport"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Index(page, "Content-Security-Policy") > strings.Index(page, "<title>") {
		t.Error("the CSP must come before any other content of the head")
	}
	for _, bad := range []string{"http://", "https://", "src=", "@import", "url(", "<link", "<script"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must load nothing", bad)
		}
	}
}

// polylines maps each plot id of a page to the point counts of its lines.
func polylines(t *testing.T, page string) map[string][]int {
	t.Helper()
	figRE := regexp.MustCompile(`(?s)<figure id="([^"]+)">(.*?)</figure>`)
	lineRE := regexp.MustCompile(`<polyline points="([^"]*)"`)
	out := map[string][]int{}
	for _, m := range figRE.FindAllStringSubmatch(page, -1) {
		out[m[1]] = []int{}
		for _, l := range lineRE.FindAllStringSubmatch(m[2], -1) {
			out[m[1]] = append(out[m[1]], len(strings.Fields(l[1])))
		}
	}
	return out
}

// TestPlots: each plot draws every result's lines with their points, and
// only the plots whose figures a result has.
func TestPlots(t *testing.T) {
	bare := sampleResult(t, "x", 100)
	bare.Soak = nil
	for i := range bare.Series {
		bare.Series[i].ChildRSSBytes, bare.Series[i].OldestPendingUs, bare.Series[i].TimedOutUnanswered = 0, 0, 0
	}
	cases := []struct {
		name  string
		in    []Input
		lines map[string]int // plot id -> polylines expected
	}{
		{"one result with everything", []Input{{"a.json", sampleResult(t, "x", 100)}}, map[string]int{
			"plot-spectrum": 2, "plot-throughput": 3, "plot-inflight": 1, "plot-latency": 2, "plot-errors": 5, // dropped is optional and 0
			"plot-rss": 1, "plot-oldest": 1, "plot-unanswered": 1}},
		{"two results overlaid", []Input{{"a.json", sampleResult(t, "x", 100)}, {"b.json", sampleResult(t, "y", 300)}}, map[string]int{
			"plot-spectrum": 4, "plot-throughput": 6, "plot-inflight": 2, "plot-latency": 4, "plot-errors": 10,
			"plot-rss": 2, "plot-oldest": 2, "plot-unanswered": 2}},
		{"no memory and no soak figures", []Input{{"bare.json", bare}}, map[string]int{
			"plot-spectrum": 2, "plot-throughput": 3, "plot-inflight": 1, "plot-latency": 2, "plot-errors": 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := polylines(t, render(t, c.in...))
			if len(got) != len(c.lines) {
				t.Errorf("plots %v, want %v", got, c.lines)
			}
			for id, n := range c.lines {
				counts, ok := got[id]
				if !ok {
					t.Errorf("no plot %s", id)
					continue
				}
				if len(counts) != n {
					t.Errorf("%s: %d lines, want %d", id, len(counts), n)
				}
				for _, pts := range counts {
					if pts < 5 {
						t.Errorf("%s: a line of %d points, want at least 5 (5 intervals)", id, pts)
					}
				}
			}
		})
	}
}

// TestLegendAndColors: each result gets its own color, named in the
// header, the legends and the tables, in input order.
func TestLegendAndColors(t *testing.T) {
	pg := buildPage([]Input{{"a.json", sampleResult(t, "x", 100)}, {"b.json", sampleResult(t, "y", 300)}, {"c.json", sampleResult(t, "z", 300)}})
	seen := map[string]string{}
	for i, f := range pg.Files {
		if other, dup := seen[f.Color]; dup {
			t.Errorf("%s and %s share the color %s", other, f.Label, f.Color)
		}
		seen[f.Color] = f.Label
		if f.Color != palette[i] {
			t.Errorf("file %d colored %s, want %s", i, f.Color, palette[i])
		}
	}
	for _, p := range pg.Plots {
		var names []string
		for _, l := range p.Legend {
			names = append(names, l.Label)
		}
		if joined := strings.Join(names, ","); !strings.HasPrefix(joined, "a.json,b.json,c.json") {
			t.Errorf("%s legend %q: want the results first, in order", p.ID, joined)
		}
		for _, l := range p.Lines {
			if !strings.HasPrefix(l.Name, "a.json") && !strings.HasPrefix(l.Name, "b.json") && !strings.HasPrefix(l.Name, "c.json") {
				t.Errorf("%s: line %q names no result", p.ID, l.Name)
			}
		}
	}
}

// TestComparison: several inputs get the figures of rpcload compare with
// ratios to the first; one input gets none.
func TestComparison(t *testing.T) {
	a, b := sampleResult(t, "x", 100), sampleResult(t, "x", 100)
	b.DurationS = a.DurationS / 2 // the same answers in half the time: twice the throughput
	page := render(t, Input{"a.json", a}, Input{"b.json", b})
	text := visibleText(page)
	for _, want := range []string{"Comparison", "all methods", "answered/s", "396.0", "792.0 (2.00×)", "p99.9", "error rate", "violations"} {
		if !strings.Contains(text, want) {
			t.Errorf("comparison lacks %q", want)
		}
	}
	// The columns name the target, and differing loads are warned of.
	if want := "a.json (" + a.Target + ")"; !strings.Contains(text, want) {
		t.Errorf("comparison head lacks %q", want)
	}
	if strings.Contains(text, "Not the same load") {
		t.Error("the same load is warned of as different")
	}
	c := sampleResult(t, "x", 300)
	if text := visibleText(render(t, Input{"a.json", a}, Input{"c.json", c})); !strings.Contains(text, "Not the same load") ||
		!strings.Contains(text, "the loads differ: rate a.json 100, c.json 300") {
		t.Error("a comparison of different rates does not warn of it")
	}
	if single := render(t, Input{"a.json", a}); strings.Contains(single, `id="comparison"`) {
		t.Error("a single result has a comparison")
	}
	// The figures are those of stats.WriteComparison.
	var cmp bytes.Buffer
	if err := stats.WriteComparison(&cmp, []string{"a.json", "b.json"}, []*stats.Result{a, b}); err != nil {
		t.Fatal(err)
	}
	for _, fig := range []string{"792.0 (2.00×)", fmtUs(a.Latency.Corrected.P999us)} {
		if !strings.Contains(cmp.String(), fig) {
			t.Errorf("stats.WriteComparison has no %q: the page and compare disagree", fig)
		}
	}
}

// TestEmptyAndOldResults: results with nothing to plot, or from files
// without histograms, render without error and say what is missing.
func TestEmptyAndOldResults(t *testing.T) {
	noHDR := sampleResult(t, "x", 100)
	noHDR.Latency.Corrected.HDR, noHDR.Latency.Service.HDR = "", ""
	corrupt := sampleResult(t, "x", 100)
	corrupt.Latency.Corrected.HDR = "not a histogram"
	cases := []struct {
		name      string
		r         *stats.Result
		text      []string // visible text that must appear
		spectrum  int      // lines in the spectrum
		minPoints int      // of each spectrum line
	}{
		{"nothing at all", &stats.Result{Schema: stats.Schema}, []string{"No replies in any result", "No time series in these results"}, 0, 0},
		{"no series", func() *stats.Result { r := sampleResult(t, "x", 100); r.Series = nil; return r }(), []string{"No time series in these results"}, 2, spectrumSteps + 1},
		{"no histogram (an older file)", noHDR, []string{"the file has no histogram: the line joins min, p50, p90, p95, p99, p99.9 and max"}, 2, 7},
		{"histogram that does not decode", corrupt, []string{"a.json, corrected latency: its histogram does not decode"}, 2, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page := render(t, Input{"a.json", c.r})
			text := visibleText(page)
			for _, want := range c.text {
				if !strings.Contains(text, want) {
					t.Errorf("page lacks %q", want)
				}
			}
			lines := polylines(t, page)["plot-spectrum"]
			if len(lines) != c.spectrum {
				t.Fatalf("spectrum has %d lines, want %d", len(lines), c.spectrum)
			}
			for _, n := range lines {
				if n < c.minPoints {
					t.Errorf("spectrum line of %d points, want %d", n, c.minPoints)
				}
			}
		})
	}
}

// TestLatencyTablesHaveP95: every latency table of the page (summary,
// latency, per method, comparison) has a p95 column or row with the value.
func TestLatencyTablesHaveP95(t *testing.T) {
	a, b := sampleResult(t, "x", 100), sampleResult(t, "x", 100)
	pg := buildPage([]Input{{"a.json", a}, {"b.json", b}})
	p95 := fmtUs(a.Latency.Corrected.P95us)
	has := func(tb table) bool {
		for _, h := range tb.Head {
			if strings.Contains(h.Text, "p95") {
				return true
			}
		}
		for _, r := range tb.Rows {
			for _, c := range r {
				if c.Text == "p95" || strings.Contains(c.Text, "p95,") {
					return true
				}
			}
		}
		return false
	}
	found := map[string]bool{"summary": has(pg.Summary), "comparison": pg.Comparison != nil && has(*pg.Comparison)}
	for _, s := range pg.Details[0].Sections {
		for _, tb := range s.Tables {
			if has(tb) {
				found[s.Title] = true
			}
		}
	}
	for _, want := range []string{"summary", "comparison", "Latency", "Per method"} {
		if !found[want] {
			t.Errorf("the %s table has no p95", want)
		}
	}
	if text := visibleText(render(t, Input{"a.json", a})); !strings.Contains(text, p95) {
		t.Errorf("the page does not show p95 %s", p95)
	}
}

// TestMethodSectionFits: the per-method figures are two tables, counts and
// latency, each of at most 10 columns (one table of 17 was clipped on a
// 1400 px page; interop's TestReportInBrowser measures it), with names that
// may wrap; replies without a request have no latency row.
func TestMethodSectionFits(t *testing.T) {
	r := sampleResult(t, "x", 100)
	r.Methods[stats.UnmatchedMethod] = stats.MethodResult{Requests: stats.Requests{}, Violations: map[string]uint64{"unknown_id": 1}}
	sec := methodSection(r)
	if len(sec.Tables) != 2 {
		t.Fatalf("%d tables, want 2", len(sec.Tables))
	}
	for _, tb := range sec.Tables {
		if len(tb.Head) > 10 {
			t.Errorf("table %q has %d columns", tb.Caption, len(tb.Head))
		}
		for _, row := range tb.Rows {
			if !strings.Contains(row[0].Class, "name") {
				t.Errorf("table %q: the name cell %q cannot wrap (class %q)", tb.Caption, row[0].Text, row[0].Class)
			}
		}
	}
	if n, m := len(sec.Tables[0].Rows), len(sec.Tables[1].Rows); n != 3 || m != 2 {
		t.Errorf("%d count rows and %d latency rows, want 3 and 2 (no latency for %s)", n, m, stats.UnmatchedMethod)
	}
}

func TestWriteHTMLRefuses(t *testing.T) {
	cases := []struct {
		name string
		in   []Input
		want string
	}{
		{"no inputs", nil, "no results"},
		{"nil result", []Input{{"a.json", &stats.Result{}}, {"b.json", nil}}, `input 2 ("b.json") has no result`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			err := WriteHTML(&b, c.in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
			if b.Len() > 0 {
				t.Errorf("wrote %d bytes before refusing", b.Len())
			}
		})
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

var errDiskFull = &writeError{"disk full"}

type writeError struct{ s string }

func (e *writeError) Error() string { return e.s }

func TestWriteHTMLReportsWriteErrors(t *testing.T) {
	err := WriteHTML(failingWriter{}, []Input{{"a.json", sampleResult(t, "x", 1)}})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want the writer's error", err)
	}
}
