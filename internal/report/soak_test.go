package report

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/soak"
	"github.com/rpcload/rpcload/internal/stats"
)

// soakResult is a result whose series reads a leaking goroutine count from
// the server for 60 s of load and 10 s of quiet, judged by soak.Analyze.
func soakResult(t *testing.T) *stats.Result {
	t.Helper()
	r := sampleResult(t, "x", 100)
	r.Series = nil
	settled := 0.0
	for i := range 70 {
		p := stats.Point{T: float64(i + 1)}
		if i < 60 {
			p.Answered, p.OK = 500, 500
			settled += 500
		}
		p.Server = map[string]float64{"go_goroutines": 10 + settled/10}
		if i%7 != 3 { // a read failed now and then
			p.Server["process_resident_memory_bytes"] = 20<<20 + 400*settled
		} else {
			p.ServerReadFailures = 1
		}
		r.Series = append(r.Series, p)
	}
	r.Quiet = &stats.QuietPhase{StartS: 60.01, DurationS: 10}
	r.Soak = soak.Analyze(r.Series, time.Second, r.Quiet)
	r.ServerGauges = &stats.ServerGauges{Sources: []string{"http://127.0.0.1:1/metrics"}, Gauges: []string{"go_goroutines", "process_resident_memory_bytes"},
		Reads: 70, Failures: 10, Errors: []string{"http://127.0.0.1:1/metrics: no exposition within 500ms"}}
	return r
}

// TestSoakReport: the server's gauges get a plot over time each, and each
// gauge a soak judged a plot against requests with its fitted line and
// the quiet phase's points; the soak section tabulates the verdicts, and
// the server gauges' section the failed reads.
func TestSoakReport(t *testing.T) {
	page := render(t, Input{"soak.json", soakResult(t)})
	lines := polylines(t, page)
	// A failed read is a gap: the memory's line breaks at every seventh
	// interval.
	for id, n := range map[string]int{"plot-server-1": 1, "plot-server-2": 11, "plot-soak-1-1": 2, "plot-soak-1-2": 2} {
		if got := len(lines[id]); got != n {
			t.Errorf("%s: %d lines, want %d (plots %v)", id, got, n, lines)
		}
	}
	// The fitted line is two points; the measured one every load point.
	if l := lines["plot-soak-1-1"]; len(l) == 2 && (l[0] < 50 || l[1] != 2) {
		t.Errorf("plot-soak-1-1 lines of %v points", l)
	}
	fig := regexp.MustCompile(`(?s)<figure id="plot-soak-1-1">(.*?)</figure>`).FindStringSubmatch(page)
	if fig == nil || strings.Count(fig[1], "<circle") < 10 {
		t.Errorf("the quiet phase's ten points are not marked")
	}
	for _, want := range []string{"go_goroutines against requests: leak", "requests settled", "0.100 goroutines per request", "quiet phase",
		"Server gauges", "70 reads, 10 failed", "no exposition within 500ms", "leak: go_goroutines &#43;0.100 goroutines per request"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
