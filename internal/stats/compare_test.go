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
	for _, want := range []string{"all methods", "method echo", "method only_b", "1000.0", "2020.0 (2.02×)", "2.00ms", "1.00ms (0.50×)", "p95", "1.50ms", "750µs (0.50×)", "0.99%", "-"} {
		if !strings.Contains(out, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out)
		}
	}
}
