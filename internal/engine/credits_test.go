package engine

import (
	"slices"
	"testing"
)

func TestShares(t *testing.T) {
	tests := []struct {
		total, conns, weight int
		want                 []int
	}{
		{1024, 4, 1, []int{256, 256, 256, 256}},
		{10, 4, 1, []int{3, 3, 2, 2}},
		{1, 4, 1, []int{1, 0, 0, 0}},
		{0, 2, 1, []int{0, 0}},
		// Every slot that gets credits can hold one message of the heaviest
		// call: 10 over 4 slots in batches of 5 is two slots of 5.
		{10, 4, 5, []int{5, 5, 0, 0}},
		{11, 4, 5, []int{6, 5, 0, 0}},
		// Whole batches per slot, the remainder one a slot from the first:
		// 32 in batches of 5 is 6 batches over 4 slots, 30 requests usable.
		{32, 4, 5, []int{11, 11, 5, 5}},
		{34, 2, 5, []int{17, 17}},
		// Less than one batch in all (a stage ramping up): the first slot.
		{3, 4, 5, []int{3, 0, 0, 0}},
	}
	for _, tc := range tests {
		got := shares(tc.total, tc.conns, tc.weight)
		if !slices.Equal(got, tc.want) {
			t.Errorf("shares(%d, %d, %d) = %v, want %v", tc.total, tc.conns, tc.weight, got, tc.want)
		}
	}
}

// TestCredits walks one slot's pool through what a writer, its reader and
// the stage controller do to it; each step checks the times the writer
// would take next and whether a wake-up is owed.
func TestCredits(t *testing.T) {
	type step struct {
		op        string // give, take, grant, revoke
		k         int    // credits (take: the most to take)
		at        int64
		want      []int64 // take: the return times taken
		wantWaked bool    // a wake-up is pending after the step
	}
	tests := []struct {
		name  string
		start int
		steps []step
	}{
		{"start credits come back at zero", 2, []step{
			{op: "take", k: 10, want: []int64{0, 0}},
			{op: "take", k: 10, want: nil},
		}},
		{"times in the order they came back", 0, []step{
			{op: "give", k: 1, at: 5, wantWaked: false}, // nobody waits yet
			{op: "give", k: 2, at: 7},
			{op: "take", k: 2, want: []int64{5, 7}},
			{op: "take", k: 2, want: []int64{7}},
		}},
		{"a writer that emptied the pool is woken by the next credit", 1, []step{
			{op: "take", k: 1, want: []int64{0}},
			{op: "give", k: 1, at: 9, wantWaked: true},
			{op: "take", k: 1, want: []int64{9}},
		}},
		{"revoke takes idle credits first, then returning ones", 2, []step{
			{op: "revoke", k: 3},
			{op: "take", k: 10, want: nil},
			{op: "give", k: 1, at: 4}, // retired: nothing to wake for
			{op: "give", k: 1, at: 5, wantWaked: true},
			{op: "take", k: 10, want: []int64{5}},
		}},
		{"grant cancels a retirement before adding", 0, []step{
			{op: "revoke", k: 2},
			{op: "grant", k: 3, at: 8}, // two cancel the retirements: one is added
			{op: "take", k: 10, want: []int64{8}},
			{op: "give", k: 1, at: 9, wantWaked: true}, // no retirement left
			{op: "take", k: 10, want: []int64{9}},
		}},
		{"the ring grows past its first size", 1, []step{
			{op: "give", k: 5, at: 3},
			{op: "take", k: 10, want: []int64{0, 3, 3, 3, 3, 3}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCredits(tc.start, 1, 0)
			for i, s := range tc.steps {
				switch s.op {
				case "give":
					c.give(s.k, s.at)
				case "take":
					if got := c.take(nil, s.k); !slices.Equal(got, s.want) {
						t.Fatalf("step %d: take(%d) = %v, want %v", i, s.k, got, s.want)
					}
				case "grant":
					c.grant(s.k, s.at)
				case "revoke":
					c.revoke(s.k)
				}
				if s.op == "give" {
					waked := false
					select {
					case <-c.wake:
						waked = true
					default:
					}
					if waked != s.wantWaked {
						t.Fatalf("step %d: woken %v, want %v", i, waked, s.wantWaked)
					}
				}
			}
		})
	}
}

// BenchmarkCredits is one credit's round trip as in closed loop over a
// stream: the reader gives it back, the writer takes it (64 at a time).
func BenchmarkCredits(b *testing.B) {
	c := newCredits(0, 1024, 0)
	times := make([]int64, 0, 64)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.give(1, int64(i))
		if i%64 == 63 {
			times = c.take(times[:0], 64)
		}
	}
}
