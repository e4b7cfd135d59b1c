package main

import (
	"math"
	"time"
)

// stallModel is the known answer of the coordinated-omission test: an
// open-loop schedule of evenly spaced arrivals at Rate meets a full stop of
// the server of length Stall. Every request scheduled inside the stall is
// answered when it ends, so measured from its intended send time it waits
// for the rest of the stall; every request scheduled before or after it is
// answered in Base. Arrival j is due at j/Rate (j = 0..N-1) and the stall
// starts Phase before the first arrival inside it (0 <= Phase < 1/Rate), so
// the k-th request inside it (k = 0, 1, ...) is due at Phase + k/Rate into
// the stall and waits Stall - Phase - k/Rate + Base.
//
// Where the stall falls in the run does not matter as long as it lies wholly
// inside the sending phase, which is why the answer can be computed without
// knowing exactly when the load generator started.
type stallModel struct {
	Rate  float64       // arrivals per second
	N     int64         // requests sent in the run
	Stall time.Duration // length of the full stop
	Phase time.Duration // from the stall's start to the first arrival inside it
	Base  time.Duration // latency of a request the stall does not touch
}

// stalled returns how many requests are scheduled inside the stall: the k
// with Phase + k/Rate < Stall.
func (m stallModel) stalled() int64 {
	room := (m.Stall - m.Phase).Seconds() * m.Rate
	if room <= 0 {
		return 0
	}
	// Arrival k is inside when k < room; a float room that is a whole
	// number up to rounding must not count its boundary arrival.
	k := int64(math.Ceil(room - 1e-9))
	if k > m.N {
		k = m.N
	}
	return k
}

// wait is the latency of the k-th request scheduled inside the stall.
func (m stallModel) wait(k int64) time.Duration {
	return m.Stall - m.Phase - time.Duration(float64(k)/m.Rate*float64(time.Second)) + m.Base
}

// quantile returns the latency at quantile q (0..1) of the whole run, with
// HdrHistogram's ranking (the value of rank round(q*N), at least 1), which is
// how rpcload reads percentiles from its histograms. q = 1 is the maximum.
func (m stallModel) quantile(q float64) time.Duration {
	if m.N <= 0 {
		return 0
	}
	rank := int64(q*float64(m.N) + 0.5)
	rank = max(rank, 1)
	rank = min(rank, m.N)
	// Ranks count up from the fastest; the stalled requests are the
	// slowest, the earliest of them (k = 0) the slowest of all.
	fromTop := m.N - rank
	if fromTop < m.stalled() {
		return m.wait(fromTop)
	}
	return m.Base
}

// latencies lists every request's latency in schedule order, with the stall
// starting at start seconds into the run: the brute-force form of the model,
// for checking quantile.
func (m stallModel) latencies(start time.Duration) []time.Duration {
	out := make([]time.Duration, m.N)
	end := start + m.Stall
	for j := range m.N {
		due := time.Duration(float64(j) / m.Rate * float64(time.Second))
		if due >= start && due < end {
			out[j] = end - due + m.Base
		} else {
			out[j] = m.Base
		}
	}
	return out
}

// coAnswer is what the stall test compares rpcload with.
type coAnswer struct {
	P99, P999, Max time.Duration
	Stalled        int64
	// Slack is how far the unknown phase can move any figure: the answer
	// takes the middle of [0, 1/Rate), so it is off by at most half of that.
	Slack time.Duration
}

// expectedStall computes the answer for a run of n requests at rate with a
// stall, taking the phase in the middle of its range.
func expectedStall(rate float64, n int64, stall, base time.Duration) coAnswer {
	gap := time.Duration(float64(time.Second) / rate)
	m := stallModel{Rate: rate, N: n, Stall: stall, Phase: gap / 2, Base: base}
	return coAnswer{
		P99: m.quantile(0.99), P999: m.quantile(0.999), Max: m.quantile(1),
		Stalled: m.stalled(), Slack: gap / 2,
	}
}

// within reports whether got is within frac of want (relative); a hair of
// slack keeps a value exactly on the bound (0.95 of 1) inside despite
// floating-point rounding.
func within(got, want, frac float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(got-want) <= (frac+1e-12)*math.Abs(want)
}
