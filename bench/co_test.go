package main

import (
	"fmt"
	"testing"
	"time"
)

func TestStallModelKnownAnswers(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name  string
		m     stallModel
		q     float64
		want  time.Duration
		stall int64
	}{
		// 10,000 requests at 1,000/s meet a 1 s stall: 1,000 of them wait
		// 1 s, 999 ms, ..., 1 ms; the other 9,000 answer at once.
		{"p50 untouched", stallModel{Rate: 1000, N: 10000, Stall: time.Second}, 0.5, 0, 1000},
		{"p90 is the last request before the stalled ones", stallModel{Rate: 1000, N: 10000, Stall: time.Second}, 0.9, 0, 1000},
		{"p99 = stall - 0.01 N/rate", stallModel{Rate: 1000, N: 10000, Stall: time.Second}, 0.99, 900 * ms, 1000},
		{"p99.9 = stall - 0.001 N/rate", stallModel{Rate: 1000, N: 10000, Stall: time.Second}, 0.999, 990 * ms, 1000},
		{"max = stall", stallModel{Rate: 1000, N: 10000, Stall: time.Second}, 1, time.Second, 1000},
		{"phase and base shift every stalled latency", stallModel{Rate: 1000, N: 10000, Stall: time.Second, Phase: 300 * time.Microsecond, Base: 100 * time.Microsecond}, 0.99, 899800 * time.Microsecond, 1000},
		{"base alone outside the stall", stallModel{Rate: 1000, N: 10000, Stall: time.Second, Base: 100 * time.Microsecond}, 0.5, 100 * time.Microsecond, 1000},
		{"quick run: 3,000 at 1,000/s, 0.5 s stall", stallModel{Rate: 1000, N: 3000, Stall: 500 * ms}, 0.99, 470 * ms, 500},
		{"stall longer than p99's reach", stallModel{Rate: 100, N: 1000, Stall: 50 * ms}, 0.99, 0, 5},
		{"phase cuts one arrival off a whole-number stall", stallModel{Rate: 1000, N: 10000, Stall: time.Second, Phase: 999 * time.Microsecond}, 1, time.Second - 999*time.Microsecond, 1000},
		{"no requests", stallModel{Rate: 1000, N: 0, Stall: time.Second}, 0.99, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.quantile(tc.q); got != tc.want {
				t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
			}
			if got := tc.m.stalled(); got != tc.stall {
				t.Errorf("stalled() = %d, want %d", got, tc.stall)
			}
		})
	}
}

// TestStallModelMatchesBruteForce checks the closed form against every
// request's latency computed from the schedule and sorted, with
// HdrHistogram's ranking, for rates whose gaps are not whole microseconds
// and phases across [0, 1/rate).
func TestStallModelMatchesBruteForce(t *testing.T) {
	for _, tc := range []struct {
		rate  float64
		n     int64
		stall time.Duration
		phase float64 // fraction of the gap between arrivals
		base  time.Duration
	}{
		{1000, 10000, time.Second, 0, 0},
		{1000, 10000, time.Second, 0.5, 80 * time.Microsecond},
		{1000, 3000, 500 * time.Millisecond, 0.25, 0},
		{333, 5000, 700 * time.Millisecond, 0.9, 50 * time.Microsecond},
		{2500, 20000, 1500 * time.Millisecond, 0.1, 0},
		{50, 2000, 3 * time.Second, 0.7, time.Millisecond},
	} {
		t.Run(fmt.Sprintf("%g/s n=%d stall=%s phase=%g", tc.rate, tc.n, tc.stall, tc.phase), func(t *testing.T) {
			gap := float64(time.Second) / tc.rate
			phase := time.Duration(tc.phase * gap)
			m := stallModel{Rate: tc.rate, N: tc.n, Stall: tc.stall, Phase: phase, Base: tc.base}
			// Put the stall's start phase before arrival n/4.
			j0 := tc.n / 4
			start := time.Duration(float64(j0)*gap) - phase
			lat := m.latencies(start)
			var stalled int64
			for _, l := range lat {
				if l > tc.base {
					stalled++
				}
			}
			if stalled != m.stalled() {
				t.Fatalf("brute force has %d stalled requests, stalled() says %d", stalled, m.stalled())
			}
			sortDurations(lat)
			for _, q := range []float64{0, 0.5, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999, 1} {
				want := quantileOf(lat, q)
				got := m.quantile(q)
				// The brute force rounds each due time to the nanosecond.
				if d := got - want; d < -2 || d > 2 {
					t.Errorf("q=%v: closed form %v, brute force %v", q, got, want)
				}
			}
		})
	}
}

func TestExpectedStall(t *testing.T) {
	got := expectedStall(1000, 10000, time.Second, 100*time.Microsecond)
	want := coAnswer{
		P99:     time.Second - 500*time.Microsecond - 100*time.Millisecond + 100*time.Microsecond,
		P999:    time.Second - 500*time.Microsecond - 10*time.Millisecond + 100*time.Microsecond,
		Max:     time.Second - 500*time.Microsecond + 100*time.Microsecond,
		Stalled: 1000,
		Slack:   500 * time.Microsecond,
	}
	if got != want {
		t.Fatalf("expectedStall = %+v, want %+v", got, want)
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		got, want, frac float64
		ok              bool
	}{
		{1.04, 1, 0.05, true},
		{0.95, 1, 0.05, true},
		{1.06, 1, 0.05, false},
		{0.94, 1, 0.05, false},
		{0, 0, 0.05, true},
		{0.1, 0, 0.05, false},
	} {
		if ok := within(tc.got, tc.want, tc.frac); ok != tc.ok {
			t.Errorf("within(%v, %v, %v) = %v, want %v", tc.got, tc.want, tc.frac, ok, tc.ok)
		}
	}
}
