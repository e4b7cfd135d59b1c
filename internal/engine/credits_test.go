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

// TestCreditsHandoff walks a slot of one credit through its hand-off: a
// parked writer's step runs in the goroutine that gives the credit back,
// unless that is the sweeper (giveWaking) or a stage's grant, which wake
// the writer; a step that could not use the credit wakes the writer too.
func TestCreditsHandoff(t *testing.T) {
	type step struct {
		op      string // park, unpark, give, giveWaking, grant, take
		want    bool   // park: parked; take: a credit taken
		steps   int    // hand-off steps run so far
		woken   bool   // a wake-up is pending after the step
		canSend bool   // give: the step uses the credit (false: cannot send)
	}
	tests := []struct {
		name  string
		start int
		steps []step
	}{
		{"the reader sends the next request itself", 0, []step{
			{op: "park", want: true},
			{op: "give", canSend: true, steps: 1},
			{op: "give", canSend: true, steps: 2}, // still parked
		}},
		{"the writer does not park on an idle credit", 1, []step{
			{op: "park", want: false},
			{op: "take", want: true},
			{op: "park", want: true},
		}},
		{"the sweeper wakes the writer", 0, []step{
			{op: "park", want: true},
			{op: "giveWaking", woken: true},
			{op: "unpark"},
			{op: "give"}, // the writer runs: nobody steps for it
		}},
		{"a step that cannot send wakes the writer", 0, []step{
			{op: "park", want: true},
			{op: "give", canSend: false, steps: 1, woken: true},
			{op: "unpark", steps: 1},
			{op: "take", want: true, steps: 1},
		}},
		{"a stage's grant wakes the writer", 0, []step{
			{op: "park", want: true},
			{op: "grant", woken: true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCredits(tc.start, 1, 0)
			steps, canSend := 0, false
			c.handoff = func() {
				steps++
				if canSend {
					c.take(nil, 1)
				}
				c.repark()
			}
			for i, s := range tc.steps {
				canSend = s.canSend
				switch s.op {
				case "park":
					if got := c.park(); got != s.want {
						t.Fatalf("step %d: park() = %v, want %v", i, got, s.want)
					}
				case "unpark":
					c.unpark()
				case "give":
					c.give(1, 5)
				case "giveWaking":
					c.giveWaking(1, 5)
				case "grant":
					c.grant(1, 5)
				case "take":
					if got := len(c.take(nil, 1)) == 1; got != s.want {
						t.Fatalf("step %d: took a credit %v, want %v", i, got, s.want)
					}
				}
				if steps != s.steps {
					t.Fatalf("step %d (%s): %d hand-off steps, want %d", i, s.op, steps, s.steps)
				}
				woken := false
				select {
				case <-c.wake:
					woken = true
				default:
				}
				if woken != s.woken {
					t.Fatalf("step %d (%s): woken %v, want %v", i, s.op, woken, s.woken)
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
