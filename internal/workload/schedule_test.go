package workload

import (
	"math"
	"strings"
	"testing"
	"time"
)

// arrivals runs a schedule to its end and returns the intended times.
func arrivals(t *testing.T, c Plan) []time.Duration {
	t.Helper()
	if err := c.validateStages(); err != nil {
		t.Fatal(err)
	}
	sc := NewSchedule(&c)
	var out []time.Duration
	for len(out) < 10_000_000 {
		at, ok := sc.Next()
		if !ok {
			return out
		}
		out = append(out, time.Duration(at))
	}
	t.Fatal("the schedule does not end")
	return nil
}

// TestScheduleShape: the open-loop schedule's arrivals, counted per 100 ms
// of schedule time (no clock involved), follow the rate the stages ask for:
// steady, ramped linearly up and down, and held at zero.
func TestScheduleShape(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		cfg  Plan
		rate func(sec float64) float64 // the rate asked for at time sec
	}{
		{"steady", Plan{Rate: 1000, Duration: 2 * s}, func(float64) float64 { return 1000 }},
		{"ramp up from 0, hold, ramp down", Plan{Stages: []Stage{{Duration: s, Rate: 2000}, {Duration: s, Rate: 2000}, {Duration: s, Rate: 0}}},
			func(x float64) float64 {
				switch {
				case x < 1:
					return 2000 * x
				case x < 2:
					return 2000
				}
				return 2000 * (3 - x)
			}},
		{"from zero: a pause, then a ramp", Plan{Stages: []Stage{{Duration: s, Rate: 0}, {Duration: s, Rate: 1000}}},
			func(x float64) float64 {
				if x < 1 {
					return 0
				}
				return 1000 * (x - 1)
			}},
		{"start rate, step down, pause at zero", Plan{StartRate: 500, Stages: []Stage{{Duration: s, Rate: 500}, {Duration: s, Rate: 0}, {Duration: s, Rate: 0}, {Duration: s, Rate: 1000}}},
			func(x float64) float64 {
				switch {
				case x < 1:
					return 500
				case x < 2:
					return 500 * (2 - x)
				case x < 3:
					return 0
				}
				return 1000 * (x - 3)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := arrivals(t, tc.cfg)
			const bucket = 100 * time.Millisecond
			counts := map[int]int{}
			for _, at := range got {
				counts[int(at/bucket)]++
			}
			end := tc.cfg.Duration
			if len(tc.cfg.Stages) > 0 {
				end = 0
				for _, st := range tc.cfg.Stages {
					end += st.Duration
				}
			}
			for b := range int(end / bucket) {
				// The expected count is the integral of the rate over the
				// bucket (trapezoids are exact for linear pieces).
				x0, x1 := float64(b)*bucket.Seconds(), float64(b+1)*bucket.Seconds()
				want := (tc.rate(x0) + tc.rate(math.Nextafter(x1, 0))) / 2 * bucket.Seconds()
				if d := math.Abs(float64(counts[b]) - want); d > 1.01 {
					t.Errorf("bucket %v..%v: %d arrivals, want %.1f", time.Duration(b)*bucket, time.Duration(b+1)*bucket, counts[b], want)
				}
			}
			for i := 1; i < len(got); i++ {
				if got[i] < got[i-1] {
					t.Fatalf("arrival %d at %v comes before arrival %d at %v", i, got[i], i-1, got[i-1])
				}
			}
		})
	}
}

// TestScheduleSteadyIsExact: a steady rate puts arrival n at exactly
// (n-1)/rate, as the rate.Limiter-driven dispatcher did before it.
func TestScheduleSteadyIsExact(t *testing.T) {
	got := arrivals(t, Plan{Rate: 3, Duration: 2 * time.Second})
	want := []time.Duration{0, 333333333, 666666666, time.Second, 1333333333, 1666666666}
	if len(got) != len(want) {
		t.Fatalf("arrivals %v, want %v", got, want)
	}
	for i := range want {
		if d := got[i] - want[i]; d < -1 || d > 1 {
			t.Errorf("arrival %d at %v, want %v", i, got[i], want[i])
		}
	}
}

// TestSchedulePoisson: Poisson arrivals keep the mean rate (within five
// standard deviations), are not evenly spaced, and repeat exactly for the
// same seed.
func TestSchedulePoisson(t *testing.T) {
	cfg := Plan{Rate: 10000, Duration: 2 * time.Second, Poisson: true, Seed: 7}
	a, b := arrivals(t, cfg), arrivals(t, cfg)
	const mean = 20000.0
	if d := math.Abs(float64(len(a)) - mean); d > 5*math.Sqrt(mean) {
		t.Errorf("%d arrivals, want about %.0f", len(a), mean)
	}
	if len(a) != len(b) || a[100] != b[100] || a[len(a)-1] != b[len(b)-1] {
		t.Error("the same seed gave another schedule")
	}
	cfg.Seed = 8
	if c := arrivals(t, cfg); len(c) > 100 && c[100] == a[100] {
		t.Error("another seed gave the same schedule")
	}
	// Exponential gaps: their standard deviation is close to their mean.
	var sum, sq float64
	for i := 1; i < len(a); i++ {
		g := (a[i] - a[i-1]).Seconds()
		sum += g
		sq += g * g
	}
	n := float64(len(a) - 1)
	m := sum / n
	sd := math.Sqrt(sq/n - m*m)
	if sd < 0.9*m || sd > 1.1*m {
		t.Errorf("gap mean %.3gs, sd %.3gs: not exponential", m, sd)
	}
}

// TestConcurrencyAt: the closed-loop target ramps linearly between stages.
func TestConcurrencyAt(t *testing.T) {
	s := time.Second
	c := &Plan{StartConcurrency: 10, Stages: []Stage{{Duration: s, Concurrency: 30}, {Duration: 2 * s, Concurrency: 30}, {Duration: s, Concurrency: 0}}}
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{0, 10}, {s / 2, 20}, {s, 30}, {2 * s, 30}, {3 * s, 30}, {3*s + s/4, 23}, {4 * s, 0}, {10 * s, 0}} {
		if got := ConcurrencyAt(c, tc.at); got != tc.want {
			t.Errorf("ConcurrencyAt(%v) = %d, want %d", tc.at, got, tc.want)
		}
	}
}

// TestStageValidation: stages are all rate or all concurrency, positive,
// and not given together with a steady rate.
func TestStageValidation(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		cfg  Plan
		want string
	}{
		{"mixed kinds", Plan{Stages: []Stage{{Duration: s, Rate: 10}, {Duration: s, Concurrency: 4}}}, "all rate"},
		{"zero duration", Plan{Stages: []Stage{{Rate: 10}}}, "duration"},
		{"with a steady rate", Plan{Rate: 5, Stages: []Stage{{Duration: s, Rate: 10}}}, "not both"},
		{"all zero", Plan{Stages: []Stage{{Duration: s}, {Duration: s}}}, "nothing would be sent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.validateStages()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("validateStages() = %v, want an error about %q", err, tc.want)
			}
		})
	}
}
