package workload

import (
	"fmt"
	"slices"
)

// Shard is one part of a load split over several rpcload instances
// (--shard i/n). Shard i of n sends the ticks whose sequence numbers are
// i, i+n, i+2n, ... of the whole run, at the times the whole run would send
// them: evenly spaced arrivals are phase-shifted by (i-1)/n of the shard's
// own spacing (see NewSchedule), so the union of the shards is the whole run's schedule, and
// since calls and params are drawn from (seed, sequence number), the union
// sends the very requests one instance would have sent. Each shard hands out
// request ids from its own range, (i-1)·2^40 + 1 on.
type Shard struct {
	Index int // 1-based
	Count int // 0: not sharded
}

// MaxShards bounds n so that each shard's id range (2^40 ids) stays below
// 2^53, the integers every JSON parser reads exactly.
const MaxShards = 8192

// shardIDSpan is the id range each shard hands out from.
const shardIDSpan = 1 << 40

// Sharded reports whether the run is one shard of several.
func (s Shard) Sharded() bool { return s.Count > 1 }

// IDBase is the first request id of the shard's range.
func (s Shard) IDBase() uint64 {
	if !s.Sharded() {
		return 1
	}
	return uint64(s.Index-1)*shardIDSpan + 1
}

// Seq maps the shard's k-th tick (k = 1, 2, ...) to the whole run's
// sequence number.
func (s Shard) Seq(k uint64) uint64 {
	if !s.Sharded() {
		return k
	}
	return (k-1)*uint64(s.Count) + uint64(s.Index)
}

// Share is the shard's part of n slots (closed-loop concurrency): n/count,
// with the remainder going to the first shards, so the parts add up to n.
func (s Shard) Share(n int) int {
	if !s.Sharded() {
		return n
	}
	part := n / s.Count
	if s.Index <= n%s.Count {
		part++
	}
	return part
}

// WholeLoad is the load of the whole run a shard is part of, as given.
type WholeLoad struct {
	Rate             float64
	Concurrency      int
	MaxRate          float64
	StartRate        float64
	StartConcurrency int
	Stages           []Stage
}

// Whole returns the load of the whole run: for a shard, what it was before
// Validate divided it; otherwise the Plan's own.
func (c *Plan) Whole() WholeLoad {
	if c.whole != nil {
		return *c.whole
	}
	return WholeLoad{Rate: c.Rate, Concurrency: c.Concurrency, MaxRate: c.MaxRate, StartRate: c.StartRate, StartConcurrency: c.StartConcurrency, Stages: c.Stages}
}

// applyShard turns the whole run's load into this shard's part.
func (c *Plan) applyShard() error {
	s := c.Shard
	switch {
	case s.Count == 0 && s.Index == 0:
		return nil
	case s.Count < 1 || s.Count > MaxShards:
		return fmt.Errorf("%s i/n: n must be between 1 and %d (got %d)", c.Name(keyShard), MaxShards, s.Count)
	case s.Index < 1 || s.Index > s.Count:
		return fmt.Errorf("%s i/n: i must be between 1 and n=%d (got %d)", c.Name(keyShard), s.Count, s.Index)
	}
	if !s.Sharded() {
		return nil
	}
	c.whole = &WholeLoad{Rate: c.Rate, Concurrency: c.Concurrency, MaxRate: c.MaxRate, StartRate: c.StartRate,
		StartConcurrency: c.StartConcurrency, Stages: slices.Clone(c.Stages)}
	n := float64(s.Count)
	c.Stages = slices.Clone(c.Stages) // the caller's slice stays the whole run's
	c.Rate /= n
	c.MaxRate /= n
	c.StartRate /= n
	for i := range c.Stages {
		c.Stages[i].Rate /= n
		if c.Stages[i].Concurrency > 0 {
			c.Stages[i].Concurrency = max(1, s.Share(c.Stages[i].Concurrency))
		}
	}
	if c.StartConcurrency > 0 {
		c.StartConcurrency = s.Share(c.StartConcurrency)
	}
	if c.Concurrency > 0 {
		part := s.Share(c.Concurrency)
		if part == 0 {
			return fmt.Errorf("%s %d cannot be split over %d shards: each needs at least 1", c.Name(keyConcurrency), c.Concurrency, s.Count)
		}
		c.Concurrency = part
	}
	return nil
}
