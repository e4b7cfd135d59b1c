package stats

import (
	"strings"
	"testing"
)

// TestWriteComparison: per method and overall, each figure of the second
// result carries its ratio to the first; a method one result lacks shows
// "-".
func TestWriteComparison(t *testing.T) {
	mk := func(answered uint64, p99 int64, errs uint64, extra bool) *Result {
		m := MethodResult{Requests: Requests{Sent: answered + errs, Answered: answered + errs, RPCErrors: errs},
			Latency: LatencySet{Corrected: Latency{Count: int64(answered), P50us: p99 / 2, P90us: p99 / 2, P95us: p99 * 3 / 4, P99us: p99, P999us: p99}}}
		r := &Result{DurationS: 10, Requests: m.Requests, Latency: m.Latency, Methods: map[string]MethodResult{"echo": m}}
		if extra {
			r.Methods["only_b"] = m
		}
		return r
	}
	var b strings.Builder
	if err := WriteComparison(&b, []string{"a.json", "b.json"}, []*Result{mk(10000, 2000, 0, false), mk(20000, 1000, 200, true)}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"all methods", "method echo", "method only_b", "1000.0", "2020.0 (2.02×)", "2.00ms", "1.00ms (0.50×)", "p95", "1.50ms", "750µs (0.50×)", "0.99%", NoValue} {
		if !strings.Contains(out, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out)
		}
	}
}

// TestWriteComparisonHeadsAndLoads: the columns are headed by the target
// and the file; differing loads are warned of first, naming each file's
// value; a figure zero in the first result gives no ratio ("—", not
// "1.00×"), also when it only shows as zero.
func TestWriteComparisonHeadsAndLoads(t *testing.T) {
	mk := func(target string, settings map[string]any, errs, sent uint64) *Result {
		q := Requests{Sent: sent, Answered: sent, OK: sent - errs, RPCErrors: errs}
		return &Result{Target: target, Settings: settings, DurationS: 10, Requests: q,
			Methods: map[string]MethodResult{"echo": {Requests: q}}}
	}
	load := func(rate, conc float64, dur string) map[string]any {
		return map[string]any{"rate": rate, "concurrency": conc, "duration": dur, "method": "echo"}
	}
	tests := []struct {
		name      string
		a, b      *Result
		want      []string
		wantNot   []string
		firstLine string
	}{
		{"same load, zero errors in both",
			mk("tcp://127.0.0.1:9090", load(1000, 0, "10s"), 0, 10000), mk("http://127.0.0.1:8080/rpc", load(1000, 0, "10s"), 0, 10000),
			[]string{"tcp://127.0.0.1:9090", "http://127.0.0.1:8080/rpc", "a.json", "b.json", "0.00% (—)", "0 (—)"},
			[]string{"WARNING", "0.00% (1.00×)", " 0 (1.00×)"}, ""},
		{"errors too few to show",
			mk("tcp://a", load(1000, 0, "10s"), 1, 1_000_000), mk("tcp://b", load(1000, 0, "10s"), 1, 1_000_000),
			[]string{"0.00% (—)"}, []string{"0.00% (1.00×)"}, ""},
		{"loads differ",
			mk("tcp://a", load(1000, 0, "10s"), 0, 10), mk("tcp://b", load(2000, 8, "30s"), 0, 10),
			[]string{"WARNING: the loads differ: rate a.json 1000, b.json 2000\n", "WARNING: the loads differ: concurrency a.json 0, b.json 8\n",
				"WARNING: the loads differ: duration a.json 10s, b.json 30s\n"},
			nil, "WARNING: the loads differ: rate"},
		{"a result without settings is not a difference",
			mk("tcp://a", nil, 0, 10), mk("tcp://b", load(2000, 8, "30s"), 0, 10), nil, []string{"WARNING"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteComparison(&b, []string{"a.json", "b.json"}, []*Result{tt.a, tt.b}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("comparison lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(out, w) {
					t.Errorf("comparison has %q:\n%s", w, out)
				}
			}
			if tt.firstLine != "" && !strings.HasPrefix(out, tt.firstLine) {
				t.Errorf("comparison does not start with %q:\n%s", tt.firstLine, out)
			}
		})
	}
}

// TestCompareCapacity: results of capacity searches get a capacity row,
// first in the all-methods group and nowhere else; results without one
// get none.
func TestCompareCapacity(t *testing.T) {
	a, b := &Result{DurationS: 1}, &Result{DurationS: 1, Capacity: &CapacityReport{Rate: 4850}}
	a.Methods = map[string]MethodResult{"echo": {}}
	c := Compare([]string{"a", "b"}, []*Result{a, b})
	if got := c.Groups[0].Rows[0]; got.Figure != "capacity" || got.Cells[0] != NoValue || got.Cells[1] != "4,850 (—)" {
		t.Errorf("all methods' first row %+v, want capacity — and 4,850 (—)", got)
	}
	for _, g := range c.Groups[1:] {
		for _, r := range g.Rows {
			if r.Figure == "capacity" {
				t.Errorf("group %s has a capacity row", g.Name)
			}
		}
	}
	if c := Compare([]string{"a"}, []*Result{a}); c.Groups[0].Rows[0].Figure == "capacity" {
		t.Error("a result without a search got a capacity row")
	}
}
