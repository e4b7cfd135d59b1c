package capacity

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/threshold"
)

// model is a server and load generator described by their limits: the
// server answers in 1 ms up to its capacity and falls behind past it; the
// generator keeps its schedule up to its own limit and lags past it.
type model struct {
	capacity  float64 // the server's
	generator float64 // the load generator's (0: none)
	// flaky fails the first confirming run at the answer (noise).
	flaky     bool
	confirms  int
	interrupt float64 // a step at this rate or above is interrupted (0: none)
	fail      error   // returned by the step at interrupt instead
	steps     []Step
}

func latency(p99us int64) stats.Latency {
	return stats.Latency{Count: 1000, P50us: p99us / 2, P90us: p99us, P99us: p99us, P999us: p99us, MaxUs: p99us}
}

func (m *model) run(_ context.Context, s Step) (Outcome, error) {
	m.steps = append(m.steps, s)
	sent := uint64(s.Rate * s.Duration.Seconds())
	res := &stats.Result{DurationS: s.Duration.Seconds(), Rate: stats.Rate{Target: s.Rate, Achieved: s.Rate},
		Requests: stats.Requests{Sent: sent, Messages: sent, Answered: sent, OK: sent}}
	svc, lag := int64(1000), int64(50)
	if s.Rate > m.capacity {
		svc = 500_000
	}
	o := Outcome{Result: res, ClientCPU: 0.2, MachineBusy: 0.3}
	if m.generator > 0 && s.Rate > m.generator {
		lag, o.ClientCPU = 300_000, 1.0
	}
	if s.Phase == PhaseConfirm {
		m.confirms++
		if m.flaky && m.confirms == 1 {
			svc = 40_000
		}
	}
	if m.interrupt > 0 && s.Rate >= m.interrupt {
		if m.fail != nil {
			return Outcome{}, m.fail
		}
		res.Interrupted = true
	}
	res.Latency = stats.LatencySet{Corrected: latency(svc + lag), Service: latency(svc), Lag: latency(lag)}
	return o, nil
}

func testConfig(t *testing.T) Config {
	t.Helper()
	slo, err := threshold.Parse("p99<20ms")
	if err != nil {
		t.Fatal(err)
	}
	return Config{SLO: []threshold.Threshold{slo}, MaxErrorRate: 0.001, Step: time.Second, Confirm: 3 * time.Second, Conns: 4, Multiplexed: true, CPUs: 2}
}

func TestSearch(t *testing.T) {
	tests := []struct {
		name      string
		m         model
		maxRate   float64
		rate      float64
		confirmed bool
		limitedBy string
		verdict   string
		err       bool
	}{
		{"server capacity", model{capacity: 2000}, 0, 2000, true, BlameServer,
			"sustains 2,000 req/s with p99<20ms, error_rate<=0.1% (confirmed 3s: p99 1.05ms); at 2,100 req/s the server broke it", false},
		{"start rate too high", model{capacity: 50}, 0, 0, false, BlameServer,
			"breaks the SLO (p99<20ms, error_rate<=0.1%) already at the start rate, 100 req/s: p99 was 500.05ms", false},
		{"generator limit", model{capacity: 5000, generator: 1000}, 0, 800, true, BlameLoadGenerator,
			"sustains at least 800 req/s with p99<20ms, error_rate<=0.1% (confirmed 3s: p99 1.05ms); above it the limit was not the server: p99 was 301ms, limit < 20ms (the service time alone was within it); the load generator, not the server", false},
		{"max rate", model{capacity: 1e9}, 1000, 1000, true, LimitedByMaxRate, "sustains at least 1,000 req/s", false},
		{"flaky confirm", model{capacity: 2000, flaky: true}, 0, 1900, true, BlameServer, "sustains 1,900 req/s", false},
		{"interrupted", model{capacity: 2000, interrupt: 1600}, 0, 800, false, LimitedByInterrupted, "sustains at least 800 req/s with p99<20ms, error_rate<=0.1%; the search was interrupted", false},
		{"runner error", model{capacity: 2000, interrupt: 1600, fail: errors.New("gone")}, 0, 800, false, "", "sustains at least 800 req/s", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testConfig(t)
			c.MaxRate = tt.maxRate
			var seen []stats.CapacityStep
			rep, body, err := Search(context.Background(), c, tt.m.run, func(s stats.CapacityStep) { seen = append(seen, s) })
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if rep.Rate != tt.rate || rep.Confirmed != tt.confirmed || rep.LimitedBy != tt.limitedBy {
				t.Errorf("rate %g confirmed %v limited by %q; want %g %v %q", rep.Rate, rep.Confirmed, rep.LimitedBy, tt.rate, tt.confirmed, tt.limitedBy)
			}
			if !strings.HasPrefix(rep.Verdict, tt.verdict) {
				t.Errorf("verdict %q\nwant prefix %q", rep.Verdict, tt.verdict)
			}
			if len(seen) != len(rep.Steps) {
				t.Errorf("onStep saw %d steps, the report has %d", len(seen), len(rep.Steps))
			}
			if body == nil {
				t.Fatal("no result to carry the report")
			}
			if tt.confirmed && body.Rate.Target != tt.rate {
				t.Errorf("the body is the run at %g/s, want the confirming run at %g", body.Rate.Target, tt.rate)
			}
			for _, s := range tt.m.steps {
				if tt.maxRate > 0 && s.Rate > tt.maxRate {
					t.Errorf("a step at %g/s, above --max-rate %g", s.Rate, tt.maxRate)
				}
			}
		})
	}
}

// TestSearchPrecision: the bisection ends with the answer and the first
// failing rate within the precision, for capacities all over the scale.
func TestSearchPrecision(t *testing.T) {
	for _, capacity := range []float64{150, 999, 2000, 4850, 123456} {
		m := model{capacity: capacity}
		c := testConfig(t)
		rep, _, err := Search(context.Background(), c, m.run, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Rate > capacity || rep.Rate < capacity*(1-DefaultPrecision) {
			t.Errorf("capacity %g: answer %g, want within %g%% below it", capacity, rep.Rate, 100*DefaultPrecision)
		}
		if n := len(rep.Steps); n > int(math.Log2(capacity/100))+12 {
			t.Errorf("capacity %g: %d steps", capacity, n)
		}
	}
}

func TestConditions(t *testing.T) {
	c := testConfig(t)
	c.MaxErrorRate = 0.003
	if got := strings.Join(c.Conditions(), " "); got != "p99<20ms error_rate<=0.3%" {
		t.Errorf("conditions %q", got)
	}
}
