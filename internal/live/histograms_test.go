package live

import (
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/rpcload/rpcload/internal/stats"
)

// newHist is a histogram as rpcload records them (stats' bounds).
func newHist(values ...int64) *hdr.Histogram {
	h := hdr.New(1, 3_600_000_000, 3)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			panic(err)
		}
	}
	return h
}

func TestClassicIndex(t *testing.T) {
	last := len(ClassicBoundsUs)
	tests := []struct {
		us   int64
		want int
	}{
		{0, 0}, {1, 0}, {100, 0}, {101, 1}, {250, 1}, {251, 2},
		{4_999, 5}, {5_000, 5}, {5_001, 6},
		{59_999_999, last - 1}, {60_000_000, last - 1}, {60_000_001, last},
		{3_600_000_000, last},
	}
	for _, tt := range tests {
		if got := ClassicIndex(tt.us); got != tt.want {
			t.Errorf("ClassicIndex(%d) = %d, want %d", tt.us, got, tt.want)
		}
	}
}

func TestNativeIndex(t *testing.T) {
	tests := []struct {
		us   int64
		want int
	}{
		{1_000_000, 0},      // 1 s: the upper bound of bucket 0
		{1_000_001, 1},      // just above it
		{2_000_000, 8},      // 2 s = 2^(8/8)
		{500_000, -8},       // 0.5 s = 2^(-8/8)
		{500_001, -7},       // just above it
		{1, -159},           // 1 µs: 2^(-159/8) ≈ 1.03e-6 ≥ 1e-6 > 2^(-160/8) ≈ 0.95e-6
		{1_090_507, 1},      // 2^(1/8) s ≈ 1.0905077 s, rounded down to a µs: still in bucket 1
		{1_090_508, 2},      // rounded up: above 2^(1/8)
		{3_600_000_000, 95}, // an hour: 2^(94/8) ≈ 3444 s < 3600 ≤ 2^(95/8) ≈ 3756 s
	}
	for _, tt := range tests {
		if got := NativeIndex(tt.us); got != tt.want {
			t.Errorf("NativeIndex(%d) = %d, want %d", tt.us, got, tt.want)
		}
	}
	// Every value lies in its bucket's range (within float rounding of the
	// bounds, which the table above checks exactly where it matters).
	for us := int64(1); us < 3_600_000_000; us = us*21/20 + 1 {
		i := NativeIndex(us)
		v := float64(us) / 1e6
		if lo, hi := math.Exp2(float64(i-1)/8), math.Exp2(float64(i)/8); !(v > lo*(1-1e-12) && v <= hi*(1+1e-12)) {
			t.Fatalf("NativeIndex(%d) = %d: %g s is not in (%g, %g]", us, i, v, lo, hi)
		}
	}
}

func TestBucketsOf(t *testing.T) {
	last := len(ClassicBoundsUs)
	tests := []struct {
		name    string
		values  []int64
		classic map[int]uint64 // range index -> count; the others 0
		zero    uint64
		sumUs   uint64
	}{
		{"empty", nil, nil, 0, 0},
		{"zero goes to the first range and the zero bucket", []int64{0, 0}, map[int]uint64{0: 2}, 2, 0},
		{"exact below 2048 µs: a bound is inclusive", []int64{100, 101, 250}, map[int]uint64{0: 1, 1: 2}, 0, 451},
		// Above 2,048 µs an HDR bucket spans several values: 5,000 µs is
		// in [5000, 5003], whose highest value is above the 5 ms bound,
		// so it counts above it; 4,999 µs is in [4996, 4999], below.
		{"an HDR bucket straddling a bound goes by its highest value", []int64{4_999, 5_000}, map[int]uint64{5: 1, 6: 1}, 0, 4_998 + 5_002},
		// 60 s is in the HDR bucket [59,998,208, 60,030,975].
		{"at the last bound", []int64{60_000_000}, map[int]uint64{last: 1}, 0, 59_998_208 + 16_384},
		{"above the last bound: +Inf", []int64{61_000_000, 3_600_000_000}, map[int]uint64{last: 2}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHist(tt.values...)
			b := BucketsOf(h)
			if b.Count != uint64(len(tt.values)) || b.Zero != tt.zero {
				t.Errorf("count %d zero %d, want %d and %d", b.Count, b.Zero, len(tt.values), tt.zero)
			}
			for i, n := range b.Classic {
				if n != tt.classic[i] {
					t.Errorf("classic range %d holds %d, want %d", i, n, tt.classic[i])
				}
			}
			var native uint64
			for _, n := range b.Native {
				native += uint64(n)
			}
			if native+b.Zero != b.Count {
				t.Errorf("native buckets hold %d and the zero bucket %d of %d", native, b.Zero, b.Count)
			}
			if tt.sumUs != 0 && b.SumUs != tt.sumUs {
				t.Errorf("sum %d µs, want %d", b.SumUs, tt.sumUs)
			}
			if mean := h.Mean(); b.Count > 0 && math.Abs(float64(b.SumUs)/float64(b.Count)-mean) > 1e-6*mean {
				t.Errorf("sum/count %g µs, HDR's mean %g", float64(b.SumUs)/float64(b.Count), mean)
			}
		})
	}
}

// TestHDRLayout: the value range of every counts index is the one hdr-go
// itself gives (Distribution), in rpcload's geometry and another.
func TestHDRLayout(t *testing.T) {
	for _, g := range []struct {
		lowest, highest int64
		digits          int
	}{{1, 3_600_000_000, 3}, {1000, 1_000_000_000, 3}, {16, 100_000_000, 2}, {1, 100_000, 5}} {
		h := hdr.New(g.lowest, g.highest, g.digits)
		if err := h.RecordValue(g.highest); err != nil { // so that Distribution walks every index
			t.Fatal(err)
		}
		s := h.Export()
		bars := h.Distribution()
		if len(bars) < 1000 || len(bars) > len(s.Counts) {
			t.Fatalf("%+v: %d bars, %d counts", g, len(bars), len(s.Counts))
		}
		layout := layoutOf(s)
		for i, bar := range bars {
			if lo, hi := layout.rangeAt(i); lo != bar.From || hi != bar.To {
				t.Fatalf("%+v: index %d holds %d to %d, hdr-go says %d to %d", g, i, lo, hi, bar.From, bar.To)
			}
		}
	}
}

// TestBucketsOfMergedIsTheSum: the buckets of two histograms merged are
// the two histograms' buckets added up, what summing two pods' scrapes
// relies on.
func TestBucketsOfMergedIsTheSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := newHist(), newHist()
	for range 20_000 {
		for _, h := range []*hdr.Histogram{a, b} {
			// log-uniform over 1 µs to 100 s, and some zeros
			_ = h.RecordValue(int64(math.Exp(rng.Float64()*math.Log(1e8))) - 1)
		}
	}
	sum := BucketsOf(a)
	bb := BucketsOf(b)
	sum.Add(&bb)
	merged := newHist()
	merged.Merge(a)
	merged.Merge(b)
	if got := BucketsOf(merged); !reflect.DeepEqual(got, sum) {
		t.Errorf("buckets of the merged histogram\n%+v\nthe two added\n%+v", got, sum)
	}
	if sum.Count != 40_000 || len(sum.Native) < 100 {
		t.Errorf("count %d, %d native buckets: the values did not spread", sum.Count, len(sum.Native))
	}
}

// TestHistogramMetricIsClientGolangs: the metric served for an HDR
// histogram is the one client_golang's own histogram (schema 3, the
// classic bounds) gives for the values BucketsOf puts each count at.
func TestHistogramMetricIsClientGolangs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	h := newHist(0, 100, 5_000, 60_000_000, 3_600_000_000)
	for range 5_000 {
		_ = h.RecordValue(int64(math.Exp(rng.Float64() * math.Log(1e7))))
	}
	bounds := make([]float64, len(ClassicBoundsUs))
	for i, us := range ClassicBoundsUs {
		bounds[i] = float64(us) / 1e6
	}
	ref := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ref", Buckets: bounds,
		NativeHistogramBucketFactor: 1.1, NativeHistogramZeroThreshold: prometheus.DefNativeHistogramZeroThreshold})
	for _, bar := range h.Distribution() {
		for range bar.Count {
			ref.Observe(float64(bar.To) / 1e6)
		}
	}
	var want, got dto.Metric
	if err := ref.Write(&want); err != nil {
		t.Fatal(err)
	}
	b := BucketsOf(h)
	m, err := b.metric(prometheus.NewDesc("rpcload_x", "x", []string{"method"}, nil), time.Unix(0, 0), "m")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Write(&got); err != nil {
		t.Fatal(err)
	}
	w, g := want.GetHistogram(), got.GetHistogram()
	if g.GetSchema() != w.GetSchema() || g.GetZeroThreshold() != w.GetZeroThreshold() {
		t.Errorf("schema %d zero threshold %g; client_golang's %d %g", g.GetSchema(), g.GetZeroThreshold(), w.GetSchema(), w.GetZeroThreshold())
	}
	wb, werr := ScrapedBuckets(w)
	gb, gerr := ScrapedBuckets(g)
	if werr != nil || gerr != nil {
		t.Fatalf("reading the buckets back: %v, %v", gerr, werr)
	}
	if gb.SumUs != b.SumUs {
		t.Errorf("sum read back %d µs, served %d", gb.SumUs, b.SumUs)
	}
	wb.SumUs, gb.SumUs = 0, 0 // client_golang's is of the highest values, ours of the middle ones
	if !reflect.DeepEqual(gb, wb) || !reflect.DeepEqual(gb.Native, b.Native) || gb.Classic != b.Classic {
		t.Errorf("served\n%+v\nclient_golang's\n%+v", gb, wb)
	}
	if len(wb.Native) < 20 || wb.Zero != 1 || wb.Classic[len(ClassicBoundsUs)] != 2 {
		t.Errorf("the values did not spread: %+v", wb)
	}
}

func TestScrapedBucketsRefuses(t *testing.T) {
	good := func() *dto.Histogram {
		var m dto.Metric
		b := BucketsOf(newHist(10, 2_000, 30_000))
		mt, err := b.metric(prometheus.NewDesc("rpcload_x", "x", []string{"method"}, nil), time.Unix(0, 0), "m")
		if err != nil {
			t.Fatal(err)
		}
		if err := mt.Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetHistogram()
	}
	tests := []struct {
		name   string
		change func(h *dto.Histogram)
		want   string
	}{
		{"as served", func(*dto.Histogram) {}, ""},
		{"other bounds", func(h *dto.Histogram) { h.Bucket[3].UpperBound = new(0.002) }, "classic bucket 3 has le=0.002, want 0.001"},
		{"fewer buckets", func(h *dto.Histogram) { h.Bucket = h.Bucket[1:] }, "17 classic buckets, want 18"},
		{"counts falling", func(h *dto.Histogram) { h.Bucket[5].CumulativeCount = new(uint64(0)) }, "below the 2 of the one before"},
		{"more than the count", func(h *dto.Histogram) { h.SampleCount = new(uint64(2)) }, "classic buckets count 3 of 2 values"},
		{"other schema", func(h *dto.Histogram) { h.Schema = new(int32(2)) }, "native schema 2, want 3"},
		{"spans past the deltas", func(h *dto.Histogram) { h.PositiveDelta = h.PositiveDelta[:1] }, "more buckets than there are deltas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := good()
			tt.change(h)
			b, err := ScrapedBuckets(h)
			if tt.want == "" {
				if err != nil || b.Count != 3 || len(b.Native) != 3 {
					t.Errorf("read %+v, %v", b, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// scrapeProto GETs /metrics from m in the protobuf format, which carries
// the native buckets.
func scrapeProto(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+m.Addr()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := expfmt.ResponseFormat(resp.Header); got.FormatType() != expfmt.TypeProtoDelim {
		t.Fatalf("asked for protobuf, got %q", got)
	}
	families := map[string]*dto.MetricFamily{}
	dec := expfmt.NewDecoder(resp.Body, expfmt.NewFormat(expfmt.TypeProtoDelim))
	for range 1000 {
		var f dto.MetricFamily
		if err := dec.Decode(&f); err == io.EOF {
			return families
		} else if err != nil {
			t.Fatalf("decoding the protobuf scrape: %v", err)
		}
		families[f.GetName()] = &f
	}
	t.Fatal("more than 1000 metric families")
	return nil
}

// TestMetricsServesHistograms: Update's histograms are served per method,
// with classic and native buckets over protobuf and the classic ones in
// the text format, and the buckets of two endpoints' scrapes add up to
// those of the two runs' histograms merged.
func TestMetricsServesHistograms(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	type run struct{ echo, echoSvc, sleep, sleepSvc *hdr.Histogram }
	newRun := func() run { return run{newHist(), newHist(), newHist(), newHist()} }
	merged := newRun()
	sum := map[string]map[string]*Buckets{} // metric -> method -> the scrapes added up
	for range 2 {
		r := newRun()
		for range 1_000 {
			_ = r.echo.RecordValue(50 + rng.Int64N(400))
			_ = r.echoSvc.RecordValue(40 + rng.Int64N(300))
			_ = r.sleep.RecordValue(1_000 + rng.Int64N(60_000))
			_ = r.sleepSvc.RecordValue(900 + rng.Int64N(50_000))
		}
		merged.echo.Merge(r.echo)
		merged.echoSvc.Merge(r.echoSvc)
		merged.sleep.Merge(r.sleep)
		merged.sleepSvc.Merge(r.sleepSvc)
		m, err := NewMetrics("127.0.0.1:0", false)
		if err != nil {
			t.Fatal(err)
		}
		m.Update(stats.Point{}, stats.Requests{}, 0, func(visit func(string, *hdr.Histogram, *hdr.Histogram)) {
			visit("echo", r.echo, r.echoSvc)
			visit("sleep", r.sleep, r.sleepSvc)
		})
		proto, text := scrapeProto(t, m), scrape(t, m)
		m.Close()
		for _, name := range []string{"rpcload_corrected_latency_seconds", "rpcload_service_time_seconds"} {
			f, tf := proto[name], text[name]
			if f == nil || tf == nil || f.GetType() != dto.MetricType_HISTOGRAM || tf.GetType() != dto.MetricType_HISTOGRAM || len(f.GetMetric()) != 2 {
				t.Fatalf("%s: not served as a histogram of two methods in both formats", name)
			}
			if sum[name] == nil {
				sum[name] = map[string]*Buckets{}
			}
			for j, mt := range f.GetMetric() {
				method := mt.GetLabel()[0].GetValue()
				pb, perr := ScrapedBuckets(mt.GetHistogram())
				tb, terr := ScrapedBuckets(tf.GetMetric()[j].GetHistogram())
				if perr != nil || terr != nil {
					t.Fatalf("%s{method=%s}: %v, %v", name, method, perr, terr)
				}
				if mt.GetHistogram().GetSchema() != NativeSchema || len(pb.Native) == 0 || tb.Classic != pb.Classic || tb.Count != pb.Count {
					t.Errorf("%s{method=%s}: protobuf %+v, text %+v", name, method, pb, tb)
				}
				if sum[name][method] == nil {
					sum[name][method] = &Buckets{}
				}
				sum[name][method].Add(&pb)
			}
		}
	}
	for name, byMethod := range map[string]map[string]*hdr.Histogram{
		"rpcload_corrected_latency_seconds": {"echo": merged.echo, "sleep": merged.sleep},
		"rpcload_service_time_seconds":      {"echo": merged.echoSvc, "sleep": merged.sleepSvc},
	} {
		for method, h := range byMethod {
			want, got := BucketsOf(h), sum[name][method]
			if got == nil || !reflect.DeepEqual(*got, want) {
				t.Errorf("%s{method=%s}: the scrapes add up to\n%+v\nthe merged histogram gives\n%+v", name, method, got, want)
			}
		}
	}
}

// BenchmarkBucketsOf is what an Update costs per histogram while it holds
// the aggregator's lock: a method whose replies took 100 µs to 1 s.
func BenchmarkBucketsOf(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	h := newHist()
	for range 100_000 {
		_ = h.RecordValue(int64(math.Exp(math.Log(100) + rng.Float64()*math.Log(1e4))))
	}
	b.ReportAllocs()
	for b.Loop() {
		BucketsOf(h)
	}
}
