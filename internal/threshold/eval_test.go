package threshold

import (
	"os"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/stats"
)

// lat is a latency summary with the given figures (microseconds).
func lat(count, minUs int64, mean float64, p50, p90, p99, p999, maxUs int64) stats.Latency {
	return stats.Latency{Count: count, MinUs: minUs, MeanUs: mean, P50us: p50, P90us: p90, P99us: p99, P999us: p999, MaxUs: maxUs}
}

// sampleResult is an open-loop run of 10 s at 1,000/s over two methods, one
// of which never got a reply.
func sampleResult() *stats.Result {
	return &stats.Result{
		Schema: stats.Schema, StartedAt: "2026-03-01T12:00:00.5+01:00", DurationS: 10, DrainS: 0.25,
		Rate:        stats.Rate{Target: 1000, Achieved: 990},
		InFlightMax: 64,
		Requests: stats.Requests{Sent: 10000, Answered: 9990, OK: 9900, RPCErrors: 80, InvalidReplies: 10,
			TransportErrors: 2, Timeouts: 5, Late: 1, Leaked: 3, Dropped: 4, Messages: 9900},
		Violations: map[string]uint64{"unknown_id": 2, "mcp_legacy_code": 7},
		Latency: stats.LatencySet{
			Corrected: lat(9990, 90, 1234.5678, 1000, 2000, 5000, 9000, 250000),
			Service:   lat(9990, 80, 900, 800, 1500, 4000, 8000, 240000),
			Lag:       lat(10000, 0, 12.5, 10, 20, 100, 1000, 1500000),
		},
		Methods: map[string]stats.MethodResult{
			"eth_call": {
				Requests:   stats.Requests{Sent: 9995, Answered: 9990, OK: 9900, RPCErrors: 80, InvalidReplies: 10, Messages: 9895},
				Violations: map[string]uint64{"unknown_id": 2},
				Latency: stats.LatencySet{
					Corrected: lat(9990, 90, 1234.5678, 1000, 2000, 23100, 9000, 250000),
					Service:   lat(9990, 80, 900, 800, 1500, 4000, 8000, 240000),
					Lag:       lat(9995, 0, 12.5, 10, 20, 100, 1000, 1500000),
				},
			},
			"eth_silent": {
				Requests:   stats.Requests{Sent: 5, Timeouts: 5, Messages: 5},
				Violations: map[string]uint64{},
				Latency:    stats.LatencySet{Lag: lat(5, 1, 1, 1, 1, 1, 1, 1)},
			},
		},
	}
}

func TestEval(t *testing.T) {
	closedLoop := sampleResult()
	closedLoop.Rate.Target = 0
	noTime := sampleResult()
	noTime.DurationS = 0
	nothingSent := &stats.Result{}
	withP95 := sampleResult()
	withP95.Latency.Corrected.P95us, withP95.Latency.Lag.P95us = 3000, 50
	withCapacity := sampleResult()
	withCapacity.Capacity = &stats.CapacityReport{Rate: 4850}
	noCapacity := sampleResult()
	noCapacity.Capacity = &stats.CapacityReport{}
	tests := []struct {
		expr   string
		res    *stats.Result // nil: sampleResult
		pass   bool
		value  float64
		limit  float64
		detail string
	}{
		// Latencies in microseconds; at the limit < fails, <= and == pass.
		{"p99<5ms", nil, false, 5000, 5000, "p99 was 5ms, limit < 5ms"},
		{"p99<=5ms", nil, true, 5000, 5000, "p99 was 5ms, limit <= 5ms"},
		{"p99==5000us", nil, true, 5000, 5000, "p99 was 5ms, limit == 5000us"},
		{"p99==5000000ns", nil, true, 5000, 5000, "p99 was 5ms, limit == 5000000ns"},
		{"p99>5ms", nil, false, 5000, 5000, "p99 was 5ms, limit > 5ms"},
		{"p99>=5ms", nil, true, 5000, 5000, "p99 was 5ms, limit >= 5ms"},
		{"p99!=5ms", nil, false, 5000, 5000, "p99 was 5ms, limit != 5ms"},
		{"p99.9<10ms", nil, true, 9000, 10000, "p99.9 was 9ms, limit < 10ms"},
		{"p95<20ms", withP95, true, 3000, 20000, "p95 was 3ms, limit < 20ms"},
		{"lag_p95>=1ms", withP95, false, 50, 1000, "lag_p95 was 50µs, limit >= 1ms"},
		{"p50<1.5µs", nil, false, 1000, 1.5, "p50 was 1ms, limit < 1.5µs"},
		{"min<100us", nil, true, 90, 100, "min was 90µs, limit < 100us"},
		{"mean<1ms", nil, false, 1234.5678, 1000, "mean was 1.235ms, limit < 1ms"},
		{"max<1s", nil, true, 250000, 1e6, "max was 250ms, limit < 1s"},
		{"service_p99<5ms", nil, true, 4000, 5000, "service_p99 was 4ms, limit < 5ms"},
		{"lag_max<1m", nil, true, 1500000, 60e6, "lag_max was 1.5s, limit < 1m"},
		{"p99<2*p50", nil, false, 5000, 2000, "p99 was 5ms, limit < 2*p50 = 2ms"},
		// Per method; a method without replies or absent from the result
		// cannot be measured and fails.
		{"p99{method=eth_call}<20ms", nil, false, 23100, 20000, "p99 of eth_call was 23.1ms, limit < 20ms"},
		{"p99{method=eth_call}<1.5*p99", nil, false, 23100, 7500, "p99 of eth_call was 23.1ms, limit < 1.5*p99 = 7.5ms"},
		{"p99{method=eth_silent}<1s", nil, false, 0, 1e6, "p99 of eth_silent cannot be measured: eth_silent had no replies"},
		{"service_max{method=eth_silent}<1s", nil, false, 0, 1e6, "service_max of eth_silent cannot be measured: eth_silent had no replies"},
		{"lag_p99{method=eth_silent}<1s", nil, true, 1, 1e6, "lag_p99 of eth_silent was 1µs, limit < 1s"},
		{"p99{method=eth_nope}<1s", nil, false, 0, 1e6, "p99 of eth_nope cannot be measured: the result has no method eth_nope (it has eth_call, eth_silent)"},
		{"timeouts{method=eth_nope}==0", nil, false, 0, 0, "timeouts of eth_nope cannot be measured: the result has no method eth_nope (it has eth_call, eth_silent)"},
		{"timeouts{method=eth_silent}<=5", nil, true, 5, 5, "timeouts of eth_silent was 5, limit <= 5"},
		{"p99<1s", nothingSent, false, 0, 1e6, "p99 cannot be measured: the run had no replies"},
		{"lag_p99<1s", nothingSent, false, 0, 1e6, "lag_p99 cannot be measured: the run had no requests sent"},
		// Rates.
		{"error_rate<1%", nil, false, 0.01, 0.01, "error_rate was 1%, limit < 1%"},
		{"error_rate<=1%", nil, true, 0.01, 0.01, "error_rate was 1%, limit <= 1%"},
		{"error_rate==0.01", nil, true, 0.01, 0.01, "error_rate was 1%, limit == 0.01"},
		{"rpc_error_rate<0.5%", nil, false, 0.008, 0.005, "rpc_error_rate was 0.8%, limit < 0.5%"},
		{"error_rate{method=eth_silent}<1%", nil, false, 1, 0.01, "error_rate of eth_silent was 100%, limit < 1%"},
		{"error_rate<1%", nothingSent, false, 0, 0.01, "error_rate cannot be measured: no requests were sent"},
		{"rps>=999", nil, true, 999, 999, "rps was 999/s, limit >= 999"},
		{"answered_rate>999", nil, false, 999, 999, "answered_rate was 999/s, limit > 999"},
		{"rps{method=eth_call}>=999", nil, true, 999, 999, "rps of eth_call was 999/s, limit >= 999"},
		{"rps>0", noTime, false, 0, 0, "rps cannot be measured: the result has no sending time (duration_s is 0)"},
		{"achieved_rate>=0.99*target", nil, true, 990, 990, "achieved_rate was 990/s, limit >= 0.99*target = 990/s"},
		{"achieved_rate>0.99*target", nil, false, 990, 990, "achieved_rate was 990/s, limit > 0.99*target = 990/s"},
		{"achieved_rate{method=eth_call}>=target", nil, false, 989.5, 1000, "achieved_rate of eth_call was 989.5/s, limit >= target = 1000/s"},
		{"achieved_rate>=0.99*target", closedLoop, false, 990, 0, "achieved_rate was 990/s, but the limit's target cannot be measured: the run had no target rate (closed loop)"},
		// Counts; violations leave out the warnings unless a rule names one.
		{"violations==0", nil, false, 2, 0, "violations was 2, limit == 0"},
		{"violations<=2", nil, true, 2, 2, "violations was 2, limit <= 2"},
		{"violations{rule=unknown_id}==0", nil, false, 2, 0, "violations for rule unknown_id was 2, limit == 0"},
		{"violations{rule=mcp_legacy_code}==7", nil, true, 7, 7, "violations for rule mcp_legacy_code was 7, limit == 7"},
		{"violations{rule=duplicate_reply}==0", nil, true, 0, 0, "violations for rule duplicate_reply was 0, limit == 0"},
		{"violations{method=eth_call,rule=unknown_id}<3", nil, true, 2, 3, "violations of eth_call for rule unknown_id was 2, limit < 3"},
		{"violations{method=eth_silent}==0", nil, true, 0, 0, "violations of eth_silent was 0, limit == 0"},
		{"timeouts<=0.001*sent", nil, true, 5, 10, "timeouts was 5, limit <= 0.001*sent = 10"},
		{"leaked==0", nil, false, 3, 0, "leaked was 3, limit == 0"},
		{"sent==10000", nil, true, 10000, 10000, "sent was 10000, limit == 10000"},
		{"answered<10000", nil, true, 9990, 10000, "answered was 9990, limit < 10000"},
		{"ok>=9900", nil, true, 9900, 9900, "ok was 9900, limit >= 9900"},
		{"rpc_errors<80", nil, false, 80, 80, "rpc_errors was 80, limit < 80"},
		{"invalid_replies==10", nil, true, 10, 10, "invalid_replies was 10, limit == 10"},
		{"transport_errors==2", nil, true, 2, 2, "transport_errors was 2, limit == 2"},
		{"late<=1", nil, true, 1, 1, "late was 1, limit <= 1"},
		{"dropped==0", nil, false, 4, 0, "dropped was 4, limit == 0"},
		{"inflight_max<=64", nil, true, 64, 64, "inflight_max was 64, limit <= 64"},
		{"target==1000", nil, true, 1000, 1000, "target was 1000/s, limit == 1000"},
		{"capacity>=4000", withCapacity, true, 4850, 4000, "capacity was 4850/s, limit >= 4000"},
		{"capacity>=4000", noCapacity, false, 0, 4000, "capacity was 0/s, limit >= 4000"},
		{"capacity>=4000", nil, false, 0, 4000, "capacity cannot be measured: the result is not a capacity search (rpcload capacity)"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			th, err := Parse(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			res := tt.res
			if res == nil {
				res = sampleResult()
			}
			v := th.Eval(res)
			if v.Pass != tt.pass || v.Value != tt.value || v.Limit != tt.limit || v.Detail != tt.detail {
				t.Errorf("verdict pass=%v value=%v limit=%v detail %q\nwant    pass=%v value=%v limit=%v detail %q",
					v.Pass, v.Value, v.Limit, v.Detail, tt.pass, tt.value, tt.limit, tt.detail)
			}
			if v.Expr != tt.expr || v.Figure != th.left.figure || v.Method != th.left.method || v.Rule != th.left.rule {
				t.Errorf("verdict names %q %q %q %q", v.Expr, v.Figure, v.Method, v.Rule)
			}
		})
	}
}

// TestEvalZero: a Threshold that did not come from Parse fails rather
// than passes.
func TestEvalZero(t *testing.T) {
	if v := (Threshold{}).Eval(sampleResult()); v.Pass || v.Detail == "" {
		t.Errorf("zero threshold: %+v", v)
	}
	th, err := Parse("p99<1s")
	if err != nil {
		t.Fatal(err)
	}
	if v := th.Eval(nil); v.Pass || !strings.Contains(v.Detail, "no result") {
		t.Errorf("nil result: %+v", v)
	}
}

// TestFigures: the table has every figure the parser knows, each once,
// with a meaning and a unit; aliases are named in their figure's meaning.
func TestFigures(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range figureDefs {
		f := d.Figure
		if seen[f.Name] {
			t.Errorf("%s listed twice", f.Name)
		}
		seen[f.Name] = true
		if f.Meaning == "" || f.Unit == "" {
			t.Errorf("%s: empty meaning or unit: %+v", f.Name, f)
		}
		if _, err := Parse(f.Name + "!=0" + map[string]string{"duration": "s", "fraction": "%"}[f.Unit]); err != nil {
			t.Errorf("%s does not parse: %v", f.Name, err)
		}
	}
	for name, i := range figureIndex {
		canonical := figureDefs[i].Name
		if name != canonical && !strings.Contains(figureDefs[i].Meaning, "alias "+name) {
			t.Errorf("alias %s not mentioned in %s's meaning", name, canonical)
		}
	}
	// 8 figures of each of 3 histograms, 5 rates, 2 error rates, 12 counts.
	// ... and 4 of a server gauge, and soak_leaks.
	if len(seen) != 48 {
		t.Errorf("%d figures, want 48", len(seen))
	}
	for r := range check.NumRules {
		if _, err := Parse("violations{rule=" + r.String() + "}==0"); err != nil {
			t.Errorf("rule %s: %v", r, err)
		}
	}
}

// TestDocsListEveryFigure: docs/thresholds.md has a row for every figure,
// with its unit and per-method column, and no row for a figure that does
// not exist.
func TestDocsListEveryFigure(t *testing.T) {
	data, err := os.ReadFile("../../docs/thresholds.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Figures\n")
	if !ok {
		t.Fatal("docs/thresholds.md has no Figures section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]string{}
	for line := range strings.Lines(section) {
		if cells := strings.Split(line, "|"); len(cells) == 6 && strings.HasPrefix(cells[1], " `") {
			rows[strings.Trim(cells[1], " `")] = strings.TrimSpace(cells[2]) + "|" + strings.TrimSpace(cells[3])
		}
	}
	for _, d := range figureDefs {
		f := d.Figure
		perMethod := map[bool]string{true: "yes", false: "no"}[f.PerMethod]
		if got, want := rows[f.Name], f.Unit+"|"+perMethod; got != want {
			t.Errorf("docs row for %s: %q, want %q", f.Name, got, want)
		}
		delete(rows, f.Name)
	}
	for name := range rows {
		t.Errorf("docs list figure %s, which the parser does not know", name)
	}
}
