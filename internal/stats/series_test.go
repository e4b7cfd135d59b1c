package stats

import (
	"fmt"
	"testing"
)

// TestSeriesStaysBounded: past MaxSeriesPoints the series is halved, its
// counts conserved, its intervals still tiling the run, and its gauges the
// larger of each merged pair.
func TestSeriesStaysBounded(t *testing.T) {
	agg := NewAggregator([]string{"m"})
	agg.seriesCap = 64 // MaxSeriesPoints works alike, only slower under -race
	rec := agg.NewRecorder()
	const n = 3*64 + 17
	var sent uint64
	for i := 1; i <= n; i++ {
		rec.Record(Sample{Kind: Sent})
		sent++
		p := agg.TickWith(float64(i), Gauges{InFlight: int64(i % 7), OldestPendingUs: int64(i)}, nil)
		if p.Sent != 1 || p.OldestPendingUs != int64(i) {
			t.Fatalf("tick %d returned %+v", i, p)
		}
	}
	var r Result
	if err := agg.Fill(&r); err != nil {
		t.Fatal(err)
	}
	if len(r.Series) > agg.seriesCap {
		t.Fatalf("%d points kept, more than %d", len(r.Series), agg.seriesCap)
	}
	var total uint64
	prev := 0.0
	for i, p := range r.Series {
		total += p.Sent
		if p.T <= prev {
			t.Fatalf("point %d ends at %g, not after %g", i, p.T, prev)
		}
		if p.OldestPendingUs != int64(p.T) {
			t.Errorf("point %d (to %gs) keeps oldest pending %d, want the later one's %d", i, p.T, p.OldestPendingUs, int64(p.T))
		}
		prev = p.T
	}
	if total != sent || prev != n {
		t.Errorf("series counts %d sent up to %gs, want %d up to %d", total, prev, sent, n)
	}
}

// TestErrorMessagesKept: a few distinct messages per code, bounded in
// number, count of codes and length.
func TestErrorMessagesKept(t *testing.T) {
	agg := NewAggregator([]string{"m"})
	for i := range 10 {
		agg.KeepErrorMessage(-32000, fmt.Sprintf("busy %d", i%5))
		agg.KeepErrorMessage(-32000, "busy 0")
	}
	for code := range int64(100) {
		agg.KeepErrorMessage(code, "x")
	}
	long := make([]byte, 2000)
	for i := range long {
		long[i] = 'a'
	}
	agg.KeepErrorMessage(-32001, string(long))
	var r Result
	if err := agg.Fill(&r); err != nil {
		t.Fatal(err)
	}
	if got := r.ErrorMessages["-32000"]; len(got) != MaxMessagesPerCode || got[0] != "busy 0" || got[1] != "busy 1" {
		t.Errorf("-32000 keeps %q", got)
	}
	if len(r.ErrorMessages) != maxMessageCodes {
		t.Errorf("%d codes keep messages, want %d", len(r.ErrorMessages), maxMessageCodes)
	}
	if _, ok := r.ErrorMessages["-32001"]; ok {
		t.Errorf("a code past the bound kept its message")
	}
}
