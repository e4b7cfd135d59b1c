package report

import (
	"sync"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcload/rpcload/internal/stats"
)

// latencyOf builds a Latency from values in microseconds, with its
// encoded histogram, as the aggregator writes it.
func latencyOf(t testing.TB, values ...int64) stats.Latency {
	t.Helper()
	h := hdr.New(1, 3_600_000_000, 3)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return stats.Latency{Count: h.TotalCount(), MinUs: h.Min(), MeanUs: h.Mean(), P50us: h.ValueAtQuantile(50),
		P90us: h.ValueAtQuantile(90), P95us: h.ValueAtQuantile(95), P99us: h.ValueAtQuantile(99), P999us: h.ValueAtQuantile(99.9), MaxUs: h.Max(), HDR: string(enc)}
}

// spread returns n latencies from lo to hi microseconds, evenly spaced.
func spread(n int, lo, hi int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = lo + (hi-lo)*int64(i)/int64(max(n-1, 1))
	}
	return out
}

// series returns n one-second points with counts that scale with rate.
func series(n int, rate uint64) []stats.Point {
	var ps []stats.Point
	for i := 1; i <= n; i++ {
		ps = append(ps, stats.Point{T: float64(i), Sent: rate, Answered: rate - 1, OK: rate - 2, RPCErrors: 1, Timeouts: uint64(i % 2),
			Violations: uint64(i % 3), Late: uint64(i % 2), InFlight: int64(10 * i), OldestPendingUs: int64(1000 * i), TimedOutUnanswered: int64(i / 2),
			TargetRate: float64(rate), ChildRSSBytes: int64(50<<20 + i<<20), P50us: 300 + int64(i), P99us: 900 + 10*int64(i)})
	}
	return ps
}

var (
	sampleSetOnce sync.Once
	sampleSet     stats.LatencySet
)

// sampleResult is a result with every section filled in, and s in every
// string a server, a user or a file name can set. Every keyed collection
// either holds s once or holds entries of one shape, so the page's tag
// structure does not depend on where s sorts.
func sampleResult(t testing.TB, s string, rate uint64) *stats.Result {
	t.Helper()
	// The histograms are the same in every sample: build them once, as
	// the fuzz target calls this for every input.
	sampleSetOnce.Do(func() {
		sampleSet = stats.LatencySet{Corrected: latencyOf(t, spread(2000, 100, 50_000)...),
			Service: latencyOf(t, spread(2000, 50, 20_000)...), Lag: latencyOf(t, spread(2000, 1, 900)...)}
	})
	set := sampleSet
	method := stats.MethodResult{
		Requests:   stats.Requests{Sent: 1000, Answered: 990, OK: 980, RPCErrors: 10, Timeouts: 10},
		Violations: map[string]uint64{"duplicate_reply": 3}, ErrorCodes: map[string]uint64{"-32000": 10}, Latency: set,
	}
	return &stats.Result{
		Schema: stats.Schema, Tool: "rpcload", Target: "tcp://127.0.0.1:9090/" + s, StartedAt: "2026-01-02T03:04:05Z",
		DurationS: 5, DrainS: 0.2, Rate: stats.Rate{Target: float64(rate), Achieved: float64(rate) * 0.98}, InFlightMax: 50,
		Settings: map[string]any{"method": "m" + s, "rate": float64(rate), "z" + s: "v" + s,
			"mix": []any{map[string]any{"name": "n" + s, "weight": 1.0}}, "opening_steps": []any{}},
		Requests:   stats.Requests{Sent: 2000, Answered: 1980, OK: 1960, RPCErrors: 20, Timeouts: 20, Late: 1},
		Violations: map[string]uint64{"duplicate_reply": 3, "r" + s: 2},
		ViolationSamples: map[string][]stats.FrameSample{
			"duplicate_reply": {{Method: "m" + s, Frame: `{"jsonrpc":"2.0","id":1,"result":"` + s + `"}`, Note: "n" + s}},
			"r" + s:           {{Method: "m" + s, Frame: "f" + s, Note: "n" + s}},
		},
		ErrorCodes:            map[string]uint64{"-32000": 20},
		ErrorMessages:         map[string][]string{"-32000": {"e" + s, "second " + s}},
		ServerMethods:         map[string]uint64{"s" + s: 4},
		Latency:               set,
		Methods:               map[string]stats.MethodResult{"m" + s: method, "get_time": method},
		Series:                series(5, rate),
		Warnings:              []string{"w" + s},
		Connections:           stats.Connections{Opened: 4, Lost: 1},
		Child:                 &stats.ChildReport{Command: "c" + s, Restarts: 1, Exits: []string{"x" + s}, StderrPath: "p" + s, StderrTail: []string{"t" + s}},
		Profile:               &stats.ProfileReport{Name: "mcp", Era: "e" + s, Version: "v" + s, Tools: []string{"t" + s}},
		IDReuse:               &stats.IDReuseReport{Probes: 3, ErrorCodes: map[string]int64{"-32600": 1}},
		TransportErrorSamples: []string{"te" + s},
		Thresholds: []stats.ThresholdVerdict{
			{Expr: "p99<" + s, Figure: "p99", Value: 45000, Limit: 40000, Detail: "d" + s},
			{Expr: "error_rate<0.01", Figure: "error_rate", Value: 0.001, Limit: 0.01, Pass: true, Detail: "d" + s},
		},
		Soak:       &stats.SoakReport{IntervalS: 1, Points: 5, ChildRSS: &stats.Growth{PerHour: 1 << 20, R2: 0.9}, Verdict: "v" + s, HlogPath: "h" + s},
		Shard:      &stats.ShardInfo{Index: 1, Count: 2},
		MergedFrom: []stats.MergedPart{{Path: "p" + s, Target: "t" + s, StartedAt: "s" + s, Shard: &stats.ShardInfo{Index: 1, Count: 2}}},
		Rounds: &stats.RoundsReport{Targets: []string{"a" + s, "b" + s}, Rounds: 1,
			Runs:   []stats.RoundRun{{Round: 1, Target: 0, AnsweredPS: 100}, {Round: 1, Target: 1, AnsweredPS: 90}},
			Ratios: []stats.RoundsRatio{{Target: 1, Figure: "f" + s, Median: 0.9, Verdict: "v" + s}}},
		API: &stats.APICoverage{Methods: []stats.MethodCoverage{{Name: "m" + s, Kind: "k" + s, Source: "o" + s, CallsValid: 3, CallsInvalid: 2,
			ErrorsByCode: map[string]uint64{"c" + s: 1}, Findings: []string{"f" + s}}}, NeverReached: []string{"m" + s}, Notes: []string{"no" + s}},
		Diff: &stats.DiffReport{Targets: []string{"a" + s, "b" + s}, IgnorePaths: []string{"i" + s}, Compared: 10, Mismatches: 1,
			Methods: map[string]stats.DiffMethod{"m" + s: {Compared: 10, Mismatches: 1}},
			Samples: []stats.DiffSample{{Method: "m" + s, Request: "q" + s, A: "a" + s, B: "b" + s, Paths: []string{"$.x" + s}}}},
	}
}
