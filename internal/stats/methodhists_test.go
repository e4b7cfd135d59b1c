package stats

import (
	"slices"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// TestMethodHists: MethodHists visits the methods the result holds, in
// the run's order, with the histograms the result file carries; warm-up
// replies and methods without a sample are left out, as Fill leaves them.
func TestMethodHists(t *testing.T) {
	agg := NewAggregator([]string{"a", "b", "c"})
	rec := agg.NewRecorder()
	for i := range 300 {
		rec.Record(Sample{Kind: OK, Method: 2, A: int64(1000 + i*997), B: int64(900 + i*991)})
		rec.Record(Sample{Kind: RPCError, Method: 0, A: int64(5_000_000 + i), B: 4_000_000, Code: -32601})
		rec.Record(Sample{Kind: OK, Method: 1, A: 1_000_000, B: 1_000_000, Warmup: true})
	}
	rec.Record(Sample{Kind: Sent, Method: 2, A: 1000})
	// Not merged yet: a visit sees what has been.
	var before int64
	agg.MethodHists(func(_ string, corrected, _ *hdr.Histogram) { before += corrected.TotalCount() })
	agg.Flush()
	var res Result
	if err := agg.Fill(&res); err != nil {
		t.Fatal(err)
	}
	var visited []string
	agg.MethodHists(func(method string, corrected, service *hdr.Histogram) {
		visited = append(visited, method)
		m, ok := res.Methods[method]
		if !ok {
			t.Fatalf("visited %s, which the result does not hold", method)
		}
		for _, x := range []struct {
			name string
			h    *hdr.Histogram
			l    Latency
		}{{"corrected", corrected, m.Latency.Corrected}, {"service", service, m.Latency.Service}} {
			want, err := hdr.Decode([]byte(x.l.HDR))
			if err != nil {
				t.Fatal(err)
			}
			if !x.h.Equals(want) || x.h.TotalCount() != 300 {
				t.Errorf("%s %s: %d values, not the result's %d", method, x.name, x.h.TotalCount(), want.TotalCount())
			}
		}
	})
	if want := []string{"a", "c"}; !slices.Equal(visited, want) || len(res.Methods) != 2 {
		t.Errorf("visited %v, want %v (the result holds %d methods)", visited, want, len(res.Methods))
	}
	if before >= 600 {
		t.Errorf("before the flush a visit saw %d values; some were still in the recorder's buffer", before)
	}
}
