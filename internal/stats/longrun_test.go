package stats

import (
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/rpcload/rpcload/internal/check"
)

// feedIntervals runs intervals [from, to) of a made-up run through a: each
// recorder records samplesPerRecorder requests with their replies (latencies
// spread over 1 µs to 5 ms, two methods), now and then an error reply and a
// broken rule, and every interval closes with a Tick.
func feedIntervals(a *Aggregator, recs []*Recorder, from, to, samplesPerRecorder int) {
	for i := from; i < to; i++ {
		for j, r := range recs {
			for k := range samplesPerRecorder {
				lat := int64((i*7+j*13+k*31)%5000+1) * 1000
				r.Record(Sample{Kind: Sent, A: 1000, Method: uint16(k % 2)})
				r.Record(Sample{Kind: OK, A: lat, B: lat / 2, Method: uint16(k % 2)})
			}
			if i%50 == j%50 {
				// A handful of error codes: their counts are a map, bounded by
				// the codes a server uses, not by the run's length.
				r.Record(Sample{Kind: RPCError, A: 2000, B: 1000, Code: int64(-32000 - i%5)})
				r.Record(Sample{Kind: Violation, Rule: check.Rule(1)})
			}
		}
		a.Tick(float64(i+1), int64(len(recs)))
	}
}

// heapInUse is the heap still reachable after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC() // a second cycle frees what the first one's finalizers released
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// An hours-long soak closes tens of thousands of intervals: the aggregator's
// memory must not grow with their number. The series is the only thing it
// keeps per interval, and it is capped (merged in pairs past the cap), so
// from half the cap to six times the cap the heap may grow by at most the
// cap's worth of points (plus slack for the allocator and GC noise); an
// unbounded series would grow by 5.5 caps' worth.
func TestAggregatorMemoryFlatOverManyIntervals(t *testing.T) {
	const (
		recorders          = 4
		samplesPerRecorder = 8
	)
	// A lower cap than MaxSeriesPoints keeps the test short under the race
	// detector; the bound it proves is the same, relative to the cap.
	const seriesCap = 512
	early, late := seriesCap/2, 6*seriesCap
	allowedGrowth := int64(seriesCap*unsafe.Sizeof(Point{})) + 256<<10
	a := NewAggregator([]string{"echo", "sum"})
	a.seriesCap = seriesCap
	recs := make([]*Recorder, recorders)
	for i := range recs {
		recs[i] = a.NewRecorder()
	}
	feedIntervals(a, recs, 0, early, samplesPerRecorder)
	heapEarly := heapInUse()
	feedIntervals(a, recs, early, late, samplesPerRecorder)
	heapLate := heapInUse()

	var res Result
	if err := a.Fill(&res); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(recs)
	growth := int64(heapLate) - int64(heapEarly)
	t.Logf("heap after %d intervals %d bytes, after %d %d bytes (%+d); %d points kept", early, heapEarly, late, heapLate, growth, len(res.Series))
	if growth > allowedGrowth {
		t.Errorf("the heap grew by %d bytes from interval %d to %d (allowed %d): something the aggregator keeps grows with the run's length",
			growth, early, late, allowedGrowth)
	}

	// The run was really recorded, and however the series was thinned, its
	// points still add up to the whole run and stay in time order.
	wantSent := uint64(late * recorders * samplesPerRecorder)
	if res.Requests.Sent != wantSent {
		t.Fatalf("%d requests counted, want %d", res.Requests.Sent, wantSent)
	}
	var sent, answered, violations uint64
	for i, p := range res.Series {
		sent += p.Sent
		answered += p.Answered
		violations += p.Violations
		if i > 0 && p.T <= res.Series[i-1].T {
			t.Fatalf("series point %d at t=%v follows one at t=%v", i, p.T, res.Series[i-1].T)
		}
	}
	if sent != res.Requests.Sent+res.Requests.Notifications || answered != res.Requests.Answered {
		t.Errorf("the series adds up to %d sent and %d answered; the run counted %d and %d",
			sent, answered, res.Requests.Sent+res.Requests.Notifications, res.Requests.Answered)
	}
	var totalViolations uint64
	for _, n := range res.Violations {
		totalViolations += n
	}
	if violations != totalViolations || violations == 0 {
		t.Errorf("the series adds up to %d violations; the run counted %d", violations, totalViolations)
	}
	if last := res.Series[len(res.Series)-1].T; last != float64(late) {
		t.Errorf("the last point ends at t=%v, want %d", last, late)
	}
}

// BenchmarkTick measures closing one interval with N recorders, each of
// which recorded 8 requests and their replies during it (the recording is
// part of each op).
func BenchmarkTick(b *testing.B) {
	for _, n := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("recorders=%d", n), func(b *testing.B) {
			a := NewAggregator([]string{"echo", "sum"})
			recs := make([]*Recorder, n)
			for i := range recs {
				recs[i] = a.NewRecorder()
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				feedIntervals(a, recs, i, i+1, 8)
				i++
			}
		})
	}
}
