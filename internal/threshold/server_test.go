package threshold

import (
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/stats"
)

// soakResult is a result whose soak judged three gauges: a goroutine leak
// split by fate, a flat memory gauge with labels, and one too short.
func soakResult() *stats.Result {
	kept := 0.98
	return &stats.Result{Soak: &stats.SoakReport{Leaks: 1, Gauges: []stats.GaugeGrowth{
		{Name: "go_goroutines", Verdict: stats.VerdictLeak, PerHour: &stats.Growth{PerHour: 180000, R2: 0.99},
			PerRequest: &stats.RequestGrowth{Slope: 0.1, R2: 0.995, Fates: []stats.FateGrowth{{Fate: "ok", Slope: 0.0001}, {Fate: "timed_out", Slope: 1}}},
			Quiet:      &stats.QuietChange{Kept: &kept}},
		{Name: `http_conns{handler="/rpc"}`, Verdict: stats.VerdictNoGrowth, PerHour: &stats.Growth{}, PerRequest: &stats.RequestGrowth{Slope: 2e-6, R2: 0.01, FateNote: "every request settled ended ok: no split"}},
		{Name: "proc_threads", Verdict: stats.VerdictTooShort, Line: "proc_threads: too short to judge: 3 points after the warm-up, 5 needed"},
	}}}
}

func TestServerFigures(t *testing.T) {
	tests := []struct {
		expr   string
		canon  string // "" = expr
		pass   bool
		detail string
	}{
		{expr: "server.go_goroutines.per_request < 0.001", canon: "server.go_goroutines.per_request<0.001", detail: "server.go_goroutines.per_request was 0.1, limit < 0.001"},
		{expr: "server.go_goroutines.per_request{fate=timed_out}>=1", pass: true, detail: "of the requests that ended timed_out was 1"},
		{expr: "server.go_goroutines.per_request{fate=ok}<0.001", pass: true},
		{expr: "server.go_goroutines.per_hour<1000", detail: "was 180000"},
		{expr: "server.go_goroutines.r2>=99%", pass: true},
		{expr: "server.go_goroutines.quiet_kept<0.5", detail: "was 98%"},
		{expr: `server."http_conns{handler=\"/rpc\"}".per_request<0.001`, pass: true},
		{expr: "soak_leaks==0", detail: "soak_leaks was 1"},
		{expr: "server.go_goroutines.per_request<0.5*server.go_goroutines.per_request{fate=timed_out}", pass: true},
		// Cannot be measured: fails, and says why.
		{expr: "server.nope.per_request<1", detail: "the soak has no gauge nope (it has go_goroutines, http_conns{handler=\"/rpc\"}, proc_threads)"},
		{expr: "server.proc_threads.per_request<1", detail: "too short to judge: 3 points"},
		{expr: `server."http_conns{handler=\"/rpc\"}".per_request{fate=timed_out}<1`, detail: "no split by fate: every request settled ended ok"},
		{expr: `server."http_conns{handler=\"/rpc\"}".quiet_kept<1`, detail: "no quiet phase"},
	}
	res := soakResult()
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			th, err := Parse(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			canon := th.String()
			if tt.canon != "" && canon != tt.canon {
				t.Errorf("String() = %s, want %s", canon, tt.canon)
			}
			again, err := Parse(canon)
			if err != nil || again.String() != canon {
				t.Errorf("canonical form %q reads back as %q, %v", canon, again.String(), err)
			}
			v := th.Eval(res)
			if v.Pass != tt.pass || !strings.Contains(v.Detail, tt.detail) {
				t.Errorf("verdict %v %q; want %v and %q", v.Pass, v.Detail, tt.pass, tt.detail)
			}
		})
	}
	if v := mustParse(t, "soak_leaks==0").Eval(&stats.Result{}); v.Pass || !strings.Contains(v.Detail, "no soak") {
		t.Errorf("no soak: %+v", v)
	}
}

func mustParse(t *testing.T, expr string) Threshold {
	t.Helper()
	th, err := Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func TestServerFigureErrors(t *testing.T) {
	for expr, want := range map[string]string{
		"server.go_goroutines<1":                     "column 21: expected .per_request, .per_hour, .r2 or .quiet_kept after the gauge go_goroutines",
		"server.go_goroutines.slope<1":               `column 22: unknown figure of a server gauge "slope"`,
		"server..per_request<1":                      "column 8: expected a gauge after server.",
		`server."x.per_request<1`:                    "malformed quoted gauge name",
		"server.x.per_hour{fate=ok}<1":               "the fate label applies to server.NAME.per_request only",
		"server.x.per_request{fate=cancelled}<1":     `unknown fate "cancelled"; fates are ok, error, timed_out, lost`,
		"server.x.per_request{method=a}<1":           "has no per-method value",
		"server.x.per_request<5ms":                   `server.NAME.per_request is a number: write a plain number, not "ms"`,
		"server.x.per_request{fate=ok,fate=error}<1": "label fate given twice",
		"p99<server.x.per_request":                   "p99 is a duration but server.NAME.per_request is a number",
		"server.x.r2<150":                            "is a fraction",
	} {
		_, err := Parse(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", expr, err, want)
		}
	}
}
