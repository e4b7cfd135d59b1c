package stats

import (
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"

	"github.com/rpcload/rpcload/internal/check"
)

// sampleFor is the i-th sample of goroutine g in TestConcurrentRecordExactlyOnce:
// every kind, every method index (including "no method known"), a few error
// codes and every rule, so that a lost or doubled sample shows up in some
// counter.
func sampleFor(g, i int) Sample {
	s := Sample{
		Kind:   Kind((g + i) % int(numKinds)),
		Method: uint16(i % 4), // 3 methods + unmatched
		A:      int64(1+i%5000) * 1000,
		B:      int64(1+i%700) * 1000,
	}
	switch s.Kind {
	case RPCError:
		s.Code = int64(-32600 - i%3)
	case Violation:
		s.Rule = check.Rule(i % int(check.NumRules))
	}
	return s
}

// TestConcurrentRecordExactlyOnce records from several goroutines, each with
// its own Recorder, while another goroutine flushes and ticks as fast as it
// can. Every sample must be counted once: in the totals, per method, and in
// the sum of the time series. Odd goroutines record with RecordAll, in runs
// of several lengths that end inside and beyond a buffer.
func TestConcurrentRecordExactlyOnce(t *testing.T) {
	const goroutines, perG = 6, 20000
	methods := []string{"a", "b", "c"}
	agg := NewAggregator(methods)
	// (No halving: the flusher ticks as often as it can, past
	// MaxSeriesPoints on a busy machine, and the test compares every
	// point Tick returned with the result's.)
	agg.seriesCap = math.MaxInt

	done := make(chan struct{})
	var series []Point
	var flusher sync.WaitGroup
	flusher.Go(func() {
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			default:
			}
			if n%2 == 0 {
				agg.Flush()
			} else {
				series = append(series, agg.Tick(float64(n), int64(n)))
			}
		}
	})

	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rec := agg.NewRecorder() // created while the flusher runs, too
			if g%2 == 0 {
				for i := range perG {
					rec.Record(sampleFor(g, i))
				}
				return
			}
			run := make([]Sample, 0, 2*batchSize)
			for i := range perG {
				run = append(run, sampleFor(g, i))
				if len(run) == 1+(i*37+g)%(2*batchSize-1) || i == perG-1 {
					rec.RecordAll(run)
					run = run[:0]
				}
			}
		})
	}
	wg.Wait()
	close(done)
	flusher.Wait()
	series = append(series, agg.Tick(-1, 0)) // the rest of the last interval

	// What was recorded, counted the simple way.
	type tally struct {
		kinds [numKinds]uint64
		rules [check.NumRules]uint64
		codes map[string]uint64
	}
	newTally := func() *tally { return &tally{codes: map[string]uint64{}} }
	total, per := newTally(), map[string]*tally{}
	for _, m := range append(methods, UnmatchedMethod) {
		per[m] = newTally()
	}
	for g := range goroutines {
		for i := range perG {
			s := sampleFor(g, i)
			name := UnmatchedMethod
			if int(s.Method) < len(methods) {
				name = methods[s.Method]
			}
			for _, t := range []*tally{total, per[name]} {
				t.kinds[s.Kind]++
				if s.Kind == Violation {
					t.rules[s.Rule]++
				}
				if s.Kind == RPCError {
					t.codes[fmt.Sprint(s.Code)]++
				}
			}
		}
	}
	wantReq := func(t *tally) Requests {
		k := &t.kinds
		return Requests{Sent: k[Sent], Notifications: k[NotifySent], Answered: k[OK] + k[RPCError] + k[InvalidReply],
			OK: k[OK], RPCErrors: k[RPCError], InvalidReplies: k[InvalidReply], TransportErrors: k[TransportError],
			Timeouts: k[Timeout], Late: k[Late], Leaked: k[Leaked], Dropped: k[Dropped], ServerMessages: k[ServerMessage],
			Messages: k[MessageSent], Batches: k[BatchSent]}
	}
	wantRules := func(t *tally) map[string]uint64 {
		m := map[string]uint64{}
		for r, n := range t.rules {
			if n > 0 {
				m[check.Rule(r).String()] = n
			}
		}
		return m
	}

	var res Result
	if err := agg.Fill(&res); err != nil {
		t.Fatal(err)
	}
	if got, want := res.Requests, wantReq(total); got != want {
		t.Errorf("totals\n got %+v\nwant %+v", got, want)
	}
	if fmt.Sprint(res.Violations) != fmt.Sprint(wantRules(total)) || fmt.Sprint(res.ErrorCodes) != fmt.Sprint(total.codes) {
		t.Errorf("violations %v, codes %v; want %v, %v", res.Violations, res.ErrorCodes, wantRules(total), total.codes)
	}
	if got, want := uint64(res.Latency.Corrected.Count), res.Requests.Answered; got != want {
		t.Errorf("corrected latency count %d; want one per answer, %d", got, want)
	}
	if got, want := uint64(res.Latency.Lag.Count), res.Requests.Sent; got != want {
		t.Errorf("lag count %d; want one per request sent, %d", got, want)
	}
	for name, want := range per {
		got := res.Methods[name]
		if got.Requests != wantReq(want) || fmt.Sprint(got.Violations) != fmt.Sprint(wantRules(want)) || fmt.Sprint(got.ErrorCodes) != fmt.Sprint(want.codes) {
			t.Errorf("method %s\n got %+v %v %v\nwant %+v %v %v", name, got.Requests, got.Violations, got.ErrorCodes,
				wantReq(want), wantRules(want), want.codes)
		}
	}

	// Each sample lands in exactly one interval.
	var sum Point
	for _, p := range series {
		sum.Sent += p.Sent
		sum.Answered += p.Answered
		sum.OK += p.OK
		sum.RPCErrors += p.RPCErrors
		sum.TransportErrors += p.TransportErrors
		sum.Timeouts += p.Timeouts
		sum.Dropped += p.Dropped
		sum.Violations += p.Violations
	}
	k := &total.kinds
	want := Point{Sent: k[Sent] + k[NotifySent], Answered: k[OK] + k[RPCError] + k[InvalidReply], OK: k[OK], RPCErrors: k[RPCError],
		TransportErrors: k[TransportError], Timeouts: k[Timeout], Dropped: k[Dropped], Violations: k[Violation]}
	if !reflect.DeepEqual(sum, want) {
		t.Errorf("sum of %d intervals\n got %+v\nwant %+v", len(series), sum, want)
	}
	if len(res.Series) != len(series) {
		t.Errorf("result holds %d points; Tick returned %d", len(res.Series), len(series))
	}
}

// TestRecordAllocs checks the hot path promise: Record allocates nothing,
// including the call that fills the buffer and merges it into the
// Aggregator. Each run records exactly one buffer's worth, so one merge per
// run is inside the measurement and any allocation in it would show.
func TestRecordAllocs(t *testing.T) {
	agg := NewAggregator([]string{"m"})
	rec := agg.NewRecorder()
	mix := []Sample{
		{Kind: Sent, A: 1500},
		{Kind: OK, A: 2_000_000, B: 1_000_000},
		{Kind: RPCError, A: 3_000_000, B: 2_000_000, Code: -32000},
		{Kind: InvalidReply, A: 1000, B: 1000},
		{Kind: Violation, Rule: check.UnknownID, Method: 1},
		{Kind: Timeout},
		{Kind: OK, A: 1 << 62, B: -5}, // clamped and negative values
		{Kind: NotifySent, Method: 500},
	}
	rec1 := func() {
		for i := range batchSize {
			rec.Record(mix[i%len(mix)])
		}
	}
	rec1() // warm up: the error code's map entry is created once
	agg.Flush()
	if n := testing.AllocsPerRun(20, rec1); n != 0 {
		t.Errorf("recording %d samples (one merge) allocates %v times; want 0", batchSize, n)
	}
}

// TestRecordAllAllocs: RecordAll allocates nothing either, across merges.
func TestRecordAllAllocs(t *testing.T) {
	agg := NewAggregator([]string{"m"})
	rec := agg.NewRecorder()
	run := make([]Sample, 300)
	for i := range run {
		run[i] = Sample{Kind: Kind(i % 2), A: int64(i) * 1000, B: 500} // Sent and OK
	}
	rec.RecordAll(run) // warm up
	if n := testing.AllocsPerRun(20, func() { rec.RecordAll(run) }); n != 0 {
		t.Errorf("RecordAll of %d samples allocates %v times; want 0", len(run), n)
	}
}

// BenchmarkRecordAll is BenchmarkRecord through RecordAll, 64 samples a
// call (a writer's batch); ns/op is per sample.
func BenchmarkRecordAll(b *testing.B) {
	agg := NewAggregator([]string{"m"})
	rec := agg.NewRecorder()
	run := make([]Sample, 64)
	for i := range run {
		run[i] = Sample{Kind: OK, A: 1_234_567, B: 987_654}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%len(run) == 0 {
			rec.RecordAll(run)
		}
	}
}

func BenchmarkRecord(b *testing.B) {
	agg := NewAggregator([]string{"m"})
	rec := agg.NewRecorder()
	s := Sample{Kind: OK, A: 1_234_567, B: 987_654}
	b.ReportAllocs()
	for b.Loop() {
		rec.Record(s)
	}
}

// BenchmarkHistogramRecord measures the Aggregator's merge of one full
// buffer and reports its cost per sample: each reply sample goes into three
// histograms per method and overall.
func BenchmarkHistogramRecord(b *testing.B) {
	agg := NewAggregator([]string{"m"})
	var bt batch
	for i := range bt.s {
		bt.s[i] = Sample{Kind: OK, A: int64(i+1) * 10_000, B: int64(i+1) * 5_000}
	}
	b.ReportAllocs()
	for b.Loop() {
		bt.n = batchSize
		agg.mu.Lock()
		agg.mergeLocked(&bt)
		agg.mu.Unlock()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batchSize), "ns/sample")
}
