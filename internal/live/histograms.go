package live

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The latency histograms served on /metrics are not observed beside the
// HDR histograms the run keeps: they are computed from them at each
// Update, so the hot path does no more work with --metrics-addr, and the
// same HDR histogram always gives the same buckets. A merged result's HDR
// histograms therefore give the same buckets as the shards' scrapes
// added up.
//
// An HDR histogram (whole microseconds, three significant digits) cannot
// tell apart the values of one of its buckets: below 2,048 µs each bucket
// is one microsecond, above it a bucket spans 1/1024 to 1/2048 of its
// values (4 µs around 5 ms, 512 µs around 1 s). Each HDR bucket goes
// whole into the Prometheus bucket of its highest value: an HDR bucket
// counts as at most le only when every value it may hold is. So a
// histogram never shows a reply faster than it was, and a quantile read
// from it errs the way the report's percentiles do (HDR's value at a
// quantile is its bucket's highest value as well).

// ClassicBoundsUs are the upper bounds (le) of the classic buckets, in
// microseconds: 100 µs to 60 s in steps of 1, 2.5, 5 per decade. They
// hold client_golang's default buckets (5 ms to 10 s), so dashboards
// built on those line up, and reach down to the 100 µs a server on the
// same network answers in and up to a minute, past the 10 s --timeout
// (a reply after its timeout is late, not timed). Above the last bound
// is the +Inf bucket.
var ClassicBoundsUs = [...]int64{
	100, 250, 500,
	1_000, 2_500, 5_000,
	10_000, 25_000, 50_000,
	100_000, 250_000, 500_000,
	1_000_000, 2_500_000, 5_000_000,
	10_000_000, 25_000_000, 60_000_000,
}

// NativeSchema is the schema of the native buckets: 3, eight buckets per
// power of two, each bound 2^(1/8) ≈ 1.09 times the last, so a quantile
// read from them is within about 4.5% of the value (the classic buckets'
// steps of 2 to 2.5 times leave it anywhere in its bucket). A decade of
// latency fills 27 buckets, so a run's histogram stays small (the whole
// range rpcload records, 1 µs to an hour, would be 254 buckets; a scrape
// config's native_histogram_bucket_limit coarsens any that outgrow it).
// It is the schema client_golang picks for its usual bucket factor, 1.1.
const NativeSchema = 3

// nativeFracBounds are schema 3's bucket bounds within one power of two,
// as the fractions math.Frexp returns: client_golang's own table, so a
// value lands in the bucket client_golang would put it in.
var nativeFracBounds = [...]float64{
	0.5, 0.5452538663326288, 0.5946035575013605, 0.6484197773255048,
	0.7071067811865475, 0.7711054127039704, 0.8408964152537144, 0.9170040432046711,
}

// Buckets is one HDR latency histogram as the buckets of a Prometheus
// histogram.
type Buckets struct {
	Count uint64 // values in the histogram
	// SumUs is the sum of the values, each taken as the middle of its HDR
	// bucket, as HDR's mean is: SumUs/Count is the report's mean_us.
	SumUs uint64
	// Classic[i] counts the values in (ClassicBoundsUs[i-1],
	// ClassicBoundsUs[i]], from 0 for i = 0; the last counts those above
	// the last bound (the +Inf bucket's own).
	Classic [len(ClassicBoundsUs) + 1]uint64
	// Zero counts the values of 0 µs: the native zero bucket.
	Zero uint64
	// Native counts the other values by the index of their native bucket
	// of NativeSchema; bucket i holds (2^((i-1)/8), 2^(i/8)] seconds.
	Native map[int]int64
}

// BucketsOf maps h (microseconds) onto Prometheus buckets, each of h's
// buckets by its highest value (see above).
func BucketsOf(h *hdr.Histogram) Buckets { return bucketsOfSnapshot(h.Export()) }

// bucketsOfSnapshot is BucketsOf of an exported histogram: Update copies
// the run's histograms under the aggregator's lock (a copy of their counts)
// and maps them after, so the lock is held for the copy alone (0.15 to
// 0.4 ms for rpcload's 23,552 counts on a busy 2-core machine). It walks
// the counts in order, so the classic and native buckets only go up.
func bucketsOfSnapshot(s *hdr.Snapshot) Buckets {
	b := Buckets{Native: map[int]int64{}}
	layout := layoutOf(s)
	classic, key, run := 0, 0, int64(0)
	for i, n := range s.Counts {
		if n <= 0 {
			continue
		}
		lo, hi := layout.rangeAt(i)
		b.Count += uint64(n)
		b.SumUs += uint64(n) * uint64(lo+(hi-lo+1)/2) // the middle, as HDR's mean takes it
		for classic < len(ClassicBoundsUs) && hi > ClassicBoundsUs[classic] {
			classic++
		}
		b.Classic[classic] += uint64(n)
		if hi == 0 {
			b.Zero += uint64(n)
			continue
		}
		if k := NativeIndex(hi); k != key {
			if run > 0 {
				b.Native[key] += run
			}
			key, run = k, 0
		}
		run += n
	}
	if run > 0 {
		b.Native[key] += run
	}
	return b
}

// hdrLayout is where an HDR histogram keeps the count of a value: the
// HdrHistogram format's layout of the counts array, which a Snapshot holds
// and every implementation shares. Counts index i holds the values
// rangeAt(i) returns; TestHDRLayout holds it to hdr-go's own Distribution.
type hdrLayout struct {
	unit    int // log2 of the lowest value's unit
	halfMag int // log2 of half the sub-buckets of a bucket
}

func layoutOf(s *hdr.Snapshot) hdrLayout {
	unit := bits.Len64(uint64(max(s.LowestTrackableValue, 1))) - 1
	largestExact := uint64(2)
	for range s.SignificantFigures {
		largestExact *= 10
	}
	subMag := bits.Len64(largestExact - 1) // ceil(log2): the sub-buckets that keep every value below largestExact exact
	return hdrLayout{unit: unit, halfMag: max(subMag, 1) - 1}
}

// rangeAt is the range of values counts index i holds: bucket 0 holds
// 2·half values one unit apart, each later bucket half values twice as far
// apart as the one before.
func (l hdrLayout) rangeAt(i int) (lo, hi int64) {
	half := 1 << l.halfMag
	bucket, sub := i>>l.halfMag-1, i&(half-1)+half
	if bucket < 0 {
		bucket, sub = 0, i
	}
	shift := bucket + l.unit
	lo = int64(sub) << shift
	return lo, lo + int64(1)<<shift - 1
}

// ClassicIndex is the classic bucket range of a value of us microseconds:
// the index of the first bound at or above it, len(ClassicBoundsUs) if
// none is (+Inf).
func ClassicIndex(us int64) int {
	return sort.Search(len(ClassicBoundsUs), func(i int) bool { return ClassicBoundsUs[i] >= us })
}

// NativeIndex is the native bucket of NativeSchema of a value of us
// microseconds (above 0), taken in seconds as the float64 us/10⁶: bucket
// i holds (2^((i-1)/8), 2^(i/8)]. It is client_golang's computation.
func NativeIndex(us int64) int {
	frac, exp := math.Frexp(float64(us) / 1e6)
	return sort.SearchFloat64s(nativeFracBounds[:], frac) + (exp-1)*len(nativeFracBounds)
}

// Add adds c's counts to b's: the buckets of two histograms added up are
// those of the two histograms merged.
func (b *Buckets) Add(c *Buckets) {
	b.Count += c.Count
	b.SumUs += c.SumUs
	for i := range b.Classic {
		b.Classic[i] += c.Classic[i]
	}
	b.Zero += c.Zero
	if b.Native == nil {
		b.Native = map[int]int64{}
	}
	for k, n := range c.Native {
		b.Native[k] += n
	}
}

// metric is b as one Prometheus histogram of the method: native buckets
// and classic ones in the same metric, as Prometheus takes them over
// protobuf (the text format carries the classic ones only). created is
// when counting began.
func (b *Buckets) metric(desc *prometheus.Desc, created time.Time, method string) (prometheus.Metric, error) {
	native, err := prometheus.NewConstNativeHistogram(desc, b.Count, float64(b.SumUs)/1e6, b.Native, nil, b.Zero,
		NativeSchema, prometheus.DefNativeHistogramZeroThreshold, created, method)
	if err != nil {
		return nil, err
	}
	classic := make([]*dto.Bucket, len(ClassicBoundsUs))
	var below uint64
	for i, le := range ClassicBoundsUs {
		below += b.Classic[i]
		classic[i] = &dto.Bucket{CumulativeCount: new(below), UpperBound: new(float64(le) / 1e6)}
	}
	return withClassic{native, classic}, nil
}

// withClassic is a native histogram with classic buckets as well.
type withClassic struct {
	prometheus.Metric
	classic []*dto.Bucket
}

func (w withClassic) Write(out *dto.Metric) error {
	if err := w.Metric.Write(out); err != nil {
		return err
	}
	out.Histogram.Bucket = w.classic
	return nil
}

// ScrapedBuckets reads a histogram as Metrics serves it back into Buckets:
// the classic buckets from their cumulative counts, the native ones from
// their spans (present only in a protobuf scrape; a text scrape leaves
// Native empty and Zero 0). Adding up two pods' scrapes this way gives the
// buckets of their results merged.
func ScrapedBuckets(h *dto.Histogram) (Buckets, error) {
	b := Buckets{Count: h.GetSampleCount(), SumUs: uint64(math.Round(h.GetSampleSum() * 1e6)), Zero: h.GetZeroCount(), Native: map[int]int64{}}
	classic := h.GetBucket()
	if n := len(classic); n > 0 && math.IsInf(classic[n-1].GetUpperBound(), 1) {
		// The text format's +Inf bucket, which protobuf leaves implied.
		if classic[n-1].GetCumulativeCount() != b.Count {
			return Buckets{}, fmt.Errorf("the +Inf bucket counts %d of %d values", classic[n-1].GetCumulativeCount(), b.Count)
		}
		classic = classic[:n-1]
	}
	if len(classic) != len(ClassicBoundsUs) {
		return Buckets{}, fmt.Errorf("%d classic buckets, want %d", len(classic), len(ClassicBoundsUs))
	}
	var below uint64
	for i, c := range classic {
		if want := float64(ClassicBoundsUs[i]) / 1e6; c.GetUpperBound() != want {
			return Buckets{}, fmt.Errorf("classic bucket %d has le=%g, want %g", i, c.GetUpperBound(), want)
		}
		if c.GetCumulativeCount() < below {
			return Buckets{}, fmt.Errorf("classic bucket le=%g counts %d, below the %d of the one before", c.GetUpperBound(), c.GetCumulativeCount(), below)
		}
		b.Classic[i] = c.GetCumulativeCount() - below
		below = c.GetCumulativeCount()
	}
	if below > b.Count {
		return Buckets{}, fmt.Errorf("classic buckets count %d of %d values", below, b.Count)
	}
	b.Classic[len(ClassicBoundsUs)] = b.Count - below
	if len(h.GetPositiveSpan()) == 0 {
		return b, nil
	}
	if h.GetSchema() != NativeSchema {
		return Buckets{}, fmt.Errorf("native schema %d, want %d", h.GetSchema(), NativeSchema)
	}
	i, count := 0, int64(0)
	deltas := h.GetPositiveDelta()
	for _, s := range h.GetPositiveSpan() {
		i += int(s.GetOffset())
		for range s.GetLength() {
			if len(deltas) == 0 {
				return Buckets{}, errors.New("native spans hold more buckets than there are deltas")
			}
			count += deltas[0]
			deltas = deltas[1:]
			if count != 0 {
				b.Native[i] = count
			}
			i++
		}
	}
	return b, nil
}
