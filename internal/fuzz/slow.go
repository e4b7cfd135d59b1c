package fuzz

import (
	"math/bits"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Bounds of slow_input's medians.
const (
	sizeBuckets = 32 // log2 of the input size: a 1-byte input and a 1 MiB batch are not compared
	slowWarmup  = 64 // latencies seen in a size bucket before slow_input is judged in it
	medianEvery = 32 // how often a bucket's median is recomputed
	latencyMax  = 3_600_000_000
)

// medians keeps, per input size (log2 of bytes), the latencies of clean
// exchanges and their median: an input is slow against the median of
// inputs its size, since a big batch takes longer than a ping by nature.
type medians struct {
	hist [sizeBuckets]*hdr.Histogram
	n    [sizeBuckets]int
	med  [sizeBuckets]time.Duration
}

func sizeBucket(size int) int { return min(bits.Len(uint(size)), sizeBuckets-1) }

// observe records the latency of a clean exchange of an input of size bytes.
func (m *medians) observe(size int, d time.Duration) {
	b := sizeBucket(size)
	if m.hist[b] == nil {
		m.hist[b] = hdr.New(1, latencyMax, 2)
	}
	m.hist[b].RecordValue(min(max(d.Microseconds(), 1), latencyMax))
	if m.n[b]++; m.n[b]%medianEvery == 0 {
		m.med[b] = time.Duration(m.hist[b].ValueAtQuantile(50)) * time.Microsecond
	}
}

// median returns the median latency of inputs of this size, once enough
// were seen.
func (m *medians) median(size int) (time.Duration, bool) {
	b := sizeBucket(size)
	return m.med[b], m.n[b] >= slowWarmup
}
