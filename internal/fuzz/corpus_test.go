package fuzz

import (
	"math"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/mutate"
)

// TestCorpusPicksByCost: an entry is picked in proportion to how cheap its
// inputs are to run, the dearest never left out; a charge to a slot that
// got another input since is dropped; without a cost above the floor, a
// pick is the uniform one draw it always was.
func TestCorpusPicksByCost(t *testing.T) {
	seeds := []mutate.Case{frames("cheap"), frames("slow"), frames("timeout"), frames("other")}
	costs := []time.Duration{500 * time.Microsecond, 300 * time.Millisecond, 2 * time.Second, 0}

	t.Run("uniform until a cost is known", func(t *testing.T) {
		w := newWorkCorpus(seeds, 8, 1<<20)
		a, b := mutate.NewRand(7), mutate.NewRand(7)
		for range 100 {
			p := w.pick(a)
			w.charge(p, costFloor) // (at the floor: still uniform)
			if want := b.Intn(len(seeds)); p.slot != want {
				t.Fatalf("picked slot %d; a uniform draw gives %d", p.slot, want)
			}
		}
	})

	t.Run("weighted by cost", func(t *testing.T) {
		w := newWorkCorpus(seeds, 8, 1<<20)
		for i, c := range costs {
			if c > 0 {
				w.charge(corpusPick{slot: i}, c)
			}
		}
		const draws = 200000
		got := make([]int, len(seeds))
		ch := mutate.NewRand(1)
		for range draws {
			got[w.pick(ch).slot]++
		}
		// weights: 1024 (at or under the floor, or unknown), 1024/300 = 3,
		// 1024/2000 = 0 -> 1, 1024
		weights := []float64{costUnit, 3, 1, costUnit}
		total := 0.0
		for _, x := range weights {
			total += x
		}
		for i, x := range weights {
			want := draws * x / total
			if math.Abs(float64(got[i])-want) > 5*math.Sqrt(want)+1 {
				t.Errorf("slot %d (cost %v) picked %d times; want about %.0f", i, costs[i], got[i], want)
			}
		}
		if got[2] == 0 {
			t.Error("the dearest entry was never picked")
		}
	})

	t.Run("a replaced slot's charge is dropped", func(t *testing.T) {
		w := newWorkCorpus(seeds[:1], 2, 1<<20)
		ch := mutate.NewRand(3)
		w.add(ch, frames("new"), 0)
		old := corpusPick{slot: 1, gen: w.entries[1].gen}
		w.add(ch, frames("newer"), 0) // full: replaces the one non-seed
		w.charge(old, time.Second)
		if w.entries[1].cost != 0 || w.weighted {
			t.Errorf("the replaced input's charge reached its successor: cost %v", w.entries[1].cost)
		}
		w.charge(corpusPick{slot: 1, gen: w.entries[1].gen}, 4*time.Millisecond)
		w.charge(corpusPick{slot: 1, gen: w.entries[1].gen}, 8*time.Millisecond)
		if want := 5 * time.Millisecond; w.entries[1].cost != want {
			t.Errorf("running mean %v, want %v", w.entries[1].cost, want)
		}
	})
}

// TestFenwickFind: every draw in [0, total) lands on the slot whose span
// holds it, zero weights included.
func TestFenwickFind(t *testing.T) {
	for _, weights := range [][]int{{1}, {3, 0, 2}, {0, 0, 5, 1, 0, 7, 2}, {1024, 3, 1, 1024, 0, 9, 9, 9, 9}} {
		var f fenwick
		f.reset(len(weights))
		var want []int
		for i, x := range weights {
			f.set(i, x)
			for range x {
				want = append(want, i)
			}
		}
		if f.total() != len(want) {
			t.Fatalf("%v: total %d, want %d", weights, f.total(), len(want))
		}
		for r, slot := range want {
			if got := f.find(r); got != slot {
				t.Errorf("%v: find(%d) = %d, want %d", weights, r, got, slot)
			}
		}
	}
}
