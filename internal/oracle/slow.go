package oracle

import (
	"math/bits"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcload/rpcload/internal/mutate"
)

// Bounds of slow_input's medians.
const (
	// SlowWarmup is how many clean exchanges of inputs of one size (log2 of
	// bytes) SlowRule sees before it judges an input of that size.
	SlowWarmup = 64

	slowBuckets = 32 // log2 of the input size: a 1-byte input and a 1 MiB batch are not compared
	medianEvery = 32 // how often a bucket's median is recomputed
	latencyMax  = 3_600_000_000
)

// SlowRule is the rule slow_input, one for both fuzzers (the black-box
// engine keeps one per worker, the public rpcfuzz package one per
// harness): an input is slow when its clean exchange took more than Factor
// times the median latency of the clean exchanges of inputs its size
// before it, and more than Floor. Inputs are compared by size (log2 of
// their bytes) because a big batch takes longer than a ping by nature,
// and only once SlowWarmup of a size were seen. The median is over the
// whole run, not a recent window: a server that slowed down twentyfold
// since its first inputs is what the rule is for. Floor is the caller's,
// as timing noise differs: 10 ms in-process (the public package), --slow-min
// (100 ms) against a server over a network. A SlowRule is not safe for
// concurrent use.
type SlowRule struct {
	Factor float64
	Floor  time.Duration

	hist [slowBuckets]*hdr.Histogram
	n    [slowBuckets]int
	med  [slowBuckets]time.Duration
}

// InputSize is the size slow_input compares inputs by: the bytes of all
// the input's messages, and of its raw wire bytes.
func InputSize(c mutate.Case) int {
	n := len(c.Wire)
	for _, f := range c.Frames {
		n += len(f)
	}
	return n
}

func slowBucket(size int) int { return min(bits.Len(uint(size)), slowBuckets-1) }

// Judge reports whether the clean exchange of input c that took d was
// slow, and records d when it was not: a slow latency would raise the
// median later inputs are judged against.
func (s *SlowRule) Judge(c mutate.Case, d time.Duration) bool {
	size := InputSize(c)
	if limit := s.Limit(size); limit > 0 && d > limit {
		return true
	}
	b := slowBucket(size)
	if s.hist[b] == nil {
		s.hist[b] = hdr.New(1, latencyMax, 2)
	}
	s.hist[b].RecordValue(min(max(d.Microseconds(), 1), latencyMax))
	if s.n[b]++; s.n[b]%medianEvery == 0 {
		s.med[b] = time.Duration(s.hist[b].ValueAtQuantile(50)) * time.Microsecond
	}
	return false
}

// Limit is the latency above which an input of size bytes (InputSize) is
// slow, or 0 before SlowWarmup inputs its size were seen.
func (s *SlowRule) Limit(size int) time.Duration {
	med, ok := s.Median(size)
	if !ok {
		return 0
	}
	return max(time.Duration(float64(med)*s.Factor), s.Floor)
}

// Median returns the median latency of the clean exchanges of inputs of
// size bytes, and whether SlowWarmup of them were seen.
func (s *SlowRule) Median(size int) (time.Duration, bool) {
	b := slowBucket(size)
	return s.med[b], s.n[b] >= SlowWarmup
}
