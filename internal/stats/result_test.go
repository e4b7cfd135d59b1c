package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcload/rpcload/internal/check"
)

const ms = int64(time.Millisecond)

func fill(t *testing.T, agg *Aggregator) *Result {
	t.Helper()
	var r Result
	if err := agg.Fill(&r); err != nil {
		t.Fatal(err)
	}
	if r.Schema != Schema {
		t.Errorf("Fill set schema %q; want %q", r.Schema, Schema)
	}
	return &r
}

// near reports whether got is within the relative error of a 3-digit HDR
// histogram (one part in a thousand, plus a unit) of want.
func near(got, want int64) bool {
	return math.Abs(float64(got-want)) <= float64(want)/1000+1
}

func TestFillCounts(t *testing.T) {
	agg := NewAggregator([]string{"eth_call", "eth_getBalance", "unused"})
	rec := agg.NewRecorder()
	for _, s := range []Sample{
		{Kind: Sent, Method: 0}, {Kind: Sent, Method: 0}, {Kind: Sent, Method: 0}, {Kind: Sent, Method: 1},
		{Kind: NotifySent, Method: 1},
		{Kind: OK, Method: 0, A: 2 * ms, B: ms},
		{Kind: RPCError, Method: 0, Code: -32601, A: ms, B: ms},
		{Kind: RPCError, Method: 0, Code: -32601, A: ms, B: ms},
		{Kind: RPCError, Method: 1, Code: 3, A: ms, B: ms},
		{Kind: InvalidReply, Method: 1, A: ms, B: ms},
		{Kind: TransportError, Method: 1},
		{Kind: Timeout, Method: 0},
		{Kind: Late, Method: 3},
		{Kind: Leaked, Method: 0},
		{Kind: Dropped, Method: 3},
		{Kind: ServerMessage, Method: 3},
		{Kind: Violation, Method: 0, Rule: check.BothResultAndError},
		{Kind: Violation, Method: 3, Rule: check.UnknownID},
		{Kind: Violation, Method: 999, Rule: check.UnknownID}, // out of range counts as unmatched
	} {
		rec.Record(s)
	}
	r := fill(t, agg)

	want := Requests{Sent: 4, Notifications: 1, Answered: 5, OK: 1, RPCErrors: 3, InvalidReplies: 1, TransportErrors: 1,
		Timeouts: 1, Late: 1, Leaked: 1, Dropped: 1, ServerMessages: 1}
	if r.Requests != want {
		t.Errorf("totals\n got %+v\nwant %+v", r.Requests, want)
	}
	if got := r.ErrorCodes; len(got) != 2 || got["-32601"] != 2 || got["3"] != 1 {
		t.Errorf("error codes %v; want -32601:2 3:1", got)
	}
	if got := r.Violations; len(got) != 2 || got["both_result_and_error"] != 1 || got["unknown_id"] != 2 {
		t.Errorf("violations %v; want both_result_and_error:1 unknown_id:2", got)
	}
	if len(r.Methods) != 3 {
		t.Errorf("methods %v; want eth_call, eth_getBalance and (unmatched), not the unused one", SortedKeys(r.Methods))
	}
	call := r.Methods["eth_call"]
	if q := call.Requests; q.Sent != 3 || q.Answered != 3 || q.OK != 1 || q.RPCErrors != 2 || q.Timeouts != 1 || q.Leaked != 1 {
		t.Errorf("eth_call %+v", q)
	}
	if call.ErrorCodes["-32601"] != 2 || len(call.ErrorCodes) != 1 || call.Violations["both_result_and_error"] != 1 {
		t.Errorf("eth_call codes %v violations %v", call.ErrorCodes, call.Violations)
	}
	bal := r.Methods["eth_getBalance"]
	if q := bal.Requests; q.Sent != 1 || q.Notifications != 1 || q.Answered != 2 || q.InvalidReplies != 1 || q.TransportErrors != 1 {
		t.Errorf("eth_getBalance %+v", q)
	}
	un := r.Methods[UnmatchedMethod]
	if q := un.Requests; q.Late != 1 || q.Dropped != 1 || q.ServerMessages != 1 || un.Violations["unknown_id"] != 2 {
		t.Errorf("(unmatched) %+v %v", q, un.Violations)
	}
	if call.Latency.Corrected.Count != 3 || call.Latency.Lag.Count != 3 || r.Latency.Service.Count != 5 {
		t.Errorf("latency counts: eth_call corrected %d lag %d, total service %d; want 3, 3, 5",
			call.Latency.Corrected.Count, call.Latency.Lag.Count, r.Latency.Service.Count)
	}
}

// TestFillPercentiles records 1..1000 ms and reads the percentiles back
// within HDR's three significant digits, and checks the histogram carried in
// the result decodes to the same distribution.
func TestFillPercentiles(t *testing.T) {
	agg := NewAggregator([]string{"m"})
	rec := agg.NewRecorder()
	for i := int64(1); i <= 1000; i++ {
		rec.Record(Sample{Kind: OK, A: i * ms, B: i * ms / 2})
		rec.Record(Sample{Kind: Sent, A: i * 1000}) // lag 1..1000 µs
	}
	r := fill(t, agg)
	c := r.Latency.Corrected
	for _, tc := range []struct {
		name      string
		got, want int64
	}{
		{"min", c.MinUs, 1000}, {"p50", c.P50us, 500_000}, {"p90", c.P90us, 900_000}, {"p95", c.P95us, 950_000}, {"p99", c.P99us, 990_000},
		{"p99.9", c.P999us, 999_000}, {"max", c.MaxUs, 1_000_000},
		{"service p50", r.Latency.Service.P50us, 250_000}, {"lag p99", r.Latency.Lag.P99us, 990},
	} {
		if !near(tc.got, tc.want) {
			t.Errorf("%s = %dµs; want %dµs within 0.1%%", tc.name, tc.got, tc.want)
		}
	}
	if c.Count != 1000 || math.Abs(c.MeanUs-500_500) > 500 {
		t.Errorf("count %d mean %.1f; want 1000 and 500500", c.Count, c.MeanUs)
	}
	for name, l := range map[string]Latency{"corrected": c, "method corrected": r.Methods["m"].Latency.Corrected, "lag": r.Latency.Lag} {
		h, err := hdr.Decode([]byte(l.HDR))
		if err != nil {
			t.Fatalf("%s: decoding hdr: %v", name, err)
		}
		if h.TotalCount() != l.Count || h.ValueAtQuantile(50) != l.P50us || h.Max() != l.MaxUs {
			t.Errorf("%s: decoded count %d p50 %d max %d; result says %d %d %d", name, h.TotalCount(), h.ValueAtQuantile(50), h.Max(), l.Count, l.P50us, l.MaxUs)
		}
	}
}

// TestRecordRounding checks the nanosecond to microsecond conversion:
// rounded to nearest, negative (a clock step back) is zero, and values past
// the histogram's top are clamped and counted once per value.
func TestRecordRounding(t *testing.T) {
	const top = histHighest * 1000 // ns
	for _, tc := range []struct {
		name    string
		s       Sample
		corr    int64 // µs, highest equivalent value as reported
		clamped uint64
	}{
		{"rounds down", Sample{Kind: OK, A: 1499, B: 1499}, 1, 0},
		{"rounds up", Sample{Kind: OK, A: 1500, B: 1500}, 2, 0},
		{"negative", Sample{Kind: OK, A: -7 * ms, B: -1}, 0, 0},
		{"top", Sample{Kind: OK, A: top, B: 1}, histHighest, 0},
		{"over the top", Sample{Kind: OK, A: 2 * top, B: 1}, histHighest, 1},
		{"both over the top", Sample{Kind: RPCError, A: 2 * top, B: 2 * top, Code: 1}, histHighest, 2},
		{"largest duration", Sample{Kind: OK, A: math.MaxInt64, B: 1}, histHighest, 1},
		{"lag over the top", Sample{Kind: Sent, A: 2 * top}, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agg := NewAggregator([]string{"m"})
			agg.NewRecorder().Record(tc.s)
			agg.Tick(1, 0) // the interval histogram sees the value too
			r := fill(t, agg)
			if got := r.Latency.Corrected.MaxUs; tc.s.Kind != Sent && !near(got, tc.corr) {
				t.Errorf("max %dµs; want %dµs", got, tc.corr)
			}
			if r.ClampedValues != tc.clamped {
				t.Errorf("clamped_values %d; want %d (each clamped value once, however many histograms hold it)", r.ClampedValues, tc.clamped)
			}
		})
	}
}

func TestKeepSample(t *testing.T) {
	agg := NewAggregator([]string{"a", "b"})
	frame := []byte(`{"jsonrpc":"2.0","id":7,"result":1}`)
	for i := range MaxSamplesPerRule + 3 {
		agg.KeepSample(check.UnknownID, 0, frame, "n")
		if i < 2 {
			agg.KeepSample(check.UnknownID, 1, frame, "")
		}
	}
	agg.KeepSample(check.UnknownID, 42, frame, "") // unknown method index
	long := []byte(strings.Repeat("x", 5000))
	agg.KeepSample(check.InvalidJSON, 1, long, "big")
	frame[0] = '!' // KeepSample must have copied it
	r := fill(t, agg)

	var perMethod = map[string]int{}
	for _, s := range r.ViolationSamples["unknown_id"] {
		perMethod[s.Method]++
		if s.Frame != `{"jsonrpc":"2.0","id":7,"result":1}` {
			t.Errorf("sample frame %q; want the frame as it was passed", s.Frame)
		}
	}
	if perMethod["a"] != MaxSamplesPerRule || perMethod["b"] != 2 || perMethod[UnmatchedMethod] != 1 {
		t.Errorf("samples per method %v; want a:%d b:2 (unmatched):1", perMethod, MaxSamplesPerRule)
	}
	big := r.ViolationSamples["invalid_json"]
	if len(big) != 1 || len(big[0].Frame) != maxSampleBytes || !strings.HasPrefix(big[0].Note, "big") || !strings.Contains(big[0].Note, "cut") {
		t.Errorf("long frame sample: %d bytes, note %q; want %d bytes and a note saying it was cut", len(big[0].Frame), big[0].Note, maxSampleBytes)
	}
	if len(r.Violations) != 0 {
		t.Errorf("KeepSample counted violations %v; counting is Record's job", r.Violations)
	}
}

// TestTick checks that each point covers only its own interval: counters and
// the interval histogram are reset by every tick.
func TestTick(t *testing.T) {
	agg := NewAggregator([]string{"m"})
	rec := agg.NewRecorder()

	for i := int64(1); i <= 100; i++ {
		rec.Record(Sample{Kind: Sent})
		rec.Record(Sample{Kind: OK, A: i * ms, B: ms})
	}
	p1 := agg.Tick(1, 3)
	if p1.T != 1 || p1.Sent != 100 || p1.Answered != 100 || p1.OK != 100 || p1.InFlight != 3 ||
		!near(p1.P50us, 50_000) || !near(p1.P99us, 99_000) {
		t.Errorf("interval 1: %+v; want 100 sent and answered, p50 50ms, p99 99ms", p1)
	}

	for range 3 {
		rec.Record(Sample{Kind: Sent})
		rec.Record(Sample{Kind: OK, A: 500 * ms})
	}
	rec.Record(Sample{Kind: NotifySent})
	rec.Record(Sample{Kind: RPCError, A: 500 * ms, Code: 1})
	rec.Record(Sample{Kind: InvalidReply, A: 500 * ms})
	rec.Record(Sample{Kind: TransportError})
	rec.Record(Sample{Kind: Timeout})
	rec.Record(Sample{Kind: Dropped})
	rec.Record(Sample{Kind: Violation, Rule: check.UnknownID})
	rec.Record(Sample{Kind: Violation, Rule: check.InvalidJSON})
	p2 := agg.Tick(2, 0)
	want2 := Point{T: 2, Sent: 4, Answered: 5, OK: 3, RPCErrors: 1, TransportErrors: 1, Timeouts: 1, Dropped: 1, Violations: 2}
	if p2.P50us, p2.P99us = 0, 0; !reflect.DeepEqual(p2, want2) {
		t.Errorf("interval 2 counts\n got %+v\nwant %+v", p2, want2)
	}
	if p := agg.series[1]; !near(p.P50us, 500_000) || !near(p.P99us, 500_000) {
		t.Errorf("interval 2 p50 %d p99 %d; want 500ms from this interval only", p.P50us, p.P99us)
	}

	p3 := agg.Tick(3, 1)
	if !reflect.DeepEqual(p3, Point{T: 3, InFlight: 1, InFlightMax: 1}) {
		t.Errorf("empty interval: %+v; want zeros", p3)
	}
	r := fill(t, agg)
	if len(r.Series) != 3 || !reflect.DeepEqual(r.Series[0], p1) || !reflect.DeepEqual(r.Series[2], p3) {
		t.Errorf("series %+v; want the three points Tick returned", r.Series)
	}
	if r.Requests.Sent != 103 || r.Requests.Answered != 105 {
		t.Errorf("totals %+v; ticks must not reset the run's totals", r.Requests)
	}
}

// TestTickInFlightMax: a point keeps the most in flight during its interval
// (the gauge read at its end is not it: a burst that came and went would be
// lost), in the result file's series too; a caller that does not keep it
// gets the end value.
func TestTickInFlightMax(t *testing.T) {
	tests := []struct {
		name string
		g    Gauges
		want int64
	}{
		{"a burst within the interval", Gauges{InFlight: 1, InFlightMax: 163}, 163},
		{"not kept: the end value", Gauges{InFlight: 5}, 5},
		{"idle", Gauges{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agg := NewAggregator([]string{"m"})
			p := agg.TickWith(1, tt.g, nil)
			if p.InFlightMax != tt.want || p.InFlight != tt.g.InFlight {
				t.Errorf("point in flight %d, max %d; want %d, %d", p.InFlight, p.InFlightMax, tt.g.InFlight, tt.want)
			}
			b, err := json.Marshal(fill(t, agg).Series[0])
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf(`"inflight_max":%d`, tt.want); !strings.Contains(string(b), want) {
				t.Errorf("series point %s lacks %s", b, want)
			}
		})
	}
}

// TestFillTwice checks Fill is a read: calling it again gives the same
// figures, not doubled ones.
func TestFillTwice(t *testing.T) {
	agg := NewAggregator([]string{"m"})
	rec := agg.NewRecorder()
	rec.Record(Sample{Kind: OK, A: ms})
	rec.Record(Sample{Kind: Violation, Rule: check.UnknownID})
	agg.KeepSample(check.UnknownID, 0, []byte("{}"), "")
	a, b := fill(t, agg), fill(t, agg)
	if a.Requests != b.Requests || a.Violations["unknown_id"] != b.Violations["unknown_id"] ||
		len(b.ViolationSamples["unknown_id"]) != 1 || a.Latency.Corrected.Count != b.Latency.Corrected.Count {
		t.Errorf("second Fill differs: %+v vs %+v", a.Requests, b.Requests)
	}
}

// TestTotalsAreMethodsAddedUp checks that the run's total latencies, built
// from the per-method histograms at Fill, equal histograms that recorded every
// value directly, down to the encoded counts, for values spread over methods
// (and the "no method known" slot) and across the histogram's range.
func TestTotalsAreMethodsAddedUp(t *testing.T) {
	agg := NewAggregator([]string{"a", "b", "c"})
	rec := agg.NewRecorder()
	direct := map[string]*hdr.Histogram{"corrected": newHist(), "service": newHist(), "lag": newHist()}
	x := uint64(88172645463325252) // xorshift: deterministic spread of values
	next := func() int64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int64(x%uint64(3600*time.Second)) >> (x % 24)
	}
	for i := range 20000 {
		m := uint16(i % 4) // 3 = no method known
		a, b := next(), next()
		rec.Record(Sample{Kind: OK, Method: m, A: a, B: b})
		lag := next()
		rec.Record(Sample{Kind: Sent, Method: m, A: lag})
		agg.record(direct["corrected"], a)
		agg.record(direct["service"], b)
		agg.record(direct["lag"], lag)
	}
	r := fill(t, agg)
	for name, got := range map[string]Latency{"corrected": r.Latency.Corrected, "service": r.Latency.Service, "lag": r.Latency.Lag} {
		want, err := summarize(direct[name])
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s total: %+v\nrecorded directly: %+v", name, got, want)
		}
	}
	if r.Latency.Corrected.Count != 20000 {
		t.Errorf("corrected count %d; want 20000", r.Latency.Corrected.Count)
	}
}
