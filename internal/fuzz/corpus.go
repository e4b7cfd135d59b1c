package fuzz

import (
	"math/bits"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/mutate"
)

// workCorpus is the inputs mutation starts from: the seeds, and every input
// that produced a new feedback tuple. It is bounded in entries and bytes;
// when full, a new input replaces a random one that is not a seed.
//
// An entry is picked in proportion to how cheap its inputs are to run
// (see costWeight): the cost of an entry is what the exchanges of the
// inputs mutated from it took, so that a seed calling a method that sleeps
// 300 ms, or an input whose replies never satisfy the wait and run out the
// timeout, is picked hundreds of times less often than a millisecond's
// input, and spends about as much of the run as it. Nothing is ever left
// out: the dearest entry keeps weight 1. Until some entry proves dearer
// than costFloor (a run with a fixed clock never does) every entry weighs
// the same and a pick is one draw, as a uniform pick would be.
type workCorpus struct {
	mu       sync.RWMutex
	entries  []corpusEntry
	seeds    int // entries[:seeds] are never replaced
	bytes    int
	max      int
	maxBytes int
	weights  fenwick // of entries' costWeight, when weighted
	weighted bool    // some entry costs more than costFloor
}

// corpusEntry is an input of the corpus and what its mutations cost.
type corpusEntry struct {
	c    mutate.Case
	cost time.Duration // the running mean of its inputs' exchanges; 0 while unknown
	gen  uint32        // bumped when the slot gets another input, so a late charge misses
}

// corpusPick is an entry chosen to mutate: its input, and the slot and
// generation a charge of what its mutation cost goes to.
type corpusPick struct {
	c    mutate.Case
	slot int
	gen  uint32
}

// costFloor is the cost below which inputs count as equally cheap: under a
// millisecond the exchange is mostly the fuzzer's own work and the
// loopback, which the schedule cannot save.
const costFloor = time.Millisecond

// costUnit is the weight of an entry that costs costFloor or less; an
// entry that costs n times that weighs costUnit/n, and never less than 1.
const costUnit = 1024

func costWeight(cost time.Duration) int {
	if cost <= costFloor {
		return costUnit
	}
	return max(1, int(costUnit*costFloor/cost))
}

// caseSize is the size of an input as it is written: its Wire bytes when
// it has them (the frames they were made from are not sent), else its
// frames' (without the framing). finding.json's input_bytes and
// minimized_bytes are this.
func caseSize(c mutate.Case) int {
	if c.Wire != nil {
		return len(c.Wire)
	}
	n := 0
	for _, f := range c.Frames {
		n += len(f)
	}
	return n
}

func newWorkCorpus(seeds []mutate.Case, maxEntries, maxBytes int) *workCorpus {
	w := &workCorpus{max: maxEntries, maxBytes: maxBytes}
	for _, s := range seeds {
		if len(w.entries) == maxEntries || w.bytes+caseSize(s) > maxBytes {
			break
		}
		w.entries = append(w.entries, corpusEntry{c: s})
		w.bytes += caseSize(s)
	}
	w.seeds = len(w.entries)
	return w
}

// pick chooses an entry, by weight once costs differ.
func (w *workCorpus) pick(ch mutate.Chooser) corpusPick {
	w.mu.RLock()
	defer w.mu.RUnlock()
	i := 0
	if w.weighted {
		i = w.weights.find(ch.Intn(w.weights.total()))
	} else {
		i = ch.Intn(len(w.entries))
	}
	e := &w.entries[i]
	return corpusPick{c: e.c, slot: i, gen: e.gen}
}

func (w *workCorpus) len() int {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return len(w.entries)
}

// charge adds cost, what an input mutated from p took, to p's entry, if
// the slot still holds it.
func (w *workCorpus) charge(p corpusPick, cost time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p.slot < 0 || p.slot >= len(w.entries) || w.entries[p.slot].gen != p.gen {
		return
	}
	e := &w.entries[p.slot]
	if e.cost == 0 {
		e.cost = max(cost, 1)
	} else {
		e.cost += (cost - e.cost) / 4 // (a mean of about the last four: an entry's mutations vary)
	}
	w.reweigh(p.slot)
}

// reweigh brings slot i's weight up to date, and starts weighing every
// entry the first time one costs more than costFloor.
func (w *workCorpus) reweigh(i int) {
	if !w.weighted {
		if w.entries[i].cost <= costFloor {
			return
		}
		w.weighted = true
		w.weights.reset(w.max)
		for k := range w.entries {
			w.weights.set(k, costWeight(w.entries[k].cost))
		}
		return
	}
	w.weights.set(i, costWeight(w.entries[i].cost))
}

// add keeps c, which cost cost to run, replacing a random non-seed entry
// when the corpus is full.
func (w *workCorpus) add(ch mutate.Chooser, c mutate.Case, cost time.Duration) {
	size := caseSize(c)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.entries) < w.max && w.bytes+size <= w.maxBytes {
		w.entries = append(w.entries, corpusEntry{c: c, cost: cost})
		w.bytes += size
		w.reweigh(len(w.entries) - 1)
		return
	}
	if len(w.entries) == w.seeds {
		return
	}
	i := w.seeds + ch.Intn(len(w.entries)-w.seeds)
	if w.bytes-caseSize(w.entries[i].c)+size > w.maxBytes {
		return
	}
	w.bytes += size - caseSize(w.entries[i].c)
	w.entries[i] = corpusEntry{c: c, cost: cost, gen: w.entries[i].gen + 1}
	w.reweigh(i)
}

// fenwick is a binary indexed tree of non-negative weights: set and find
// by a draw in O(log n), so that a weighted pick among 2,048 entries costs
// a few dozen steps, not a walk over all of them.
type fenwick struct {
	tree []int // 1-based partial sums
	at   []int // each slot's weight
	sum  int
}

func (f *fenwick) reset(n int) {
	f.tree, f.at, f.sum = make([]int, n+1), make([]int, n), 0
}

func (f *fenwick) total() int { return f.sum }

// set makes slot i weigh v.
func (f *fenwick) set(i, v int) {
	d := v - f.at[i]
	f.at[i], f.sum = v, f.sum+d
	for k := i + 1; k < len(f.tree); k += k & -k {
		f.tree[k] += d
	}
}

// find returns the slot whose span of the cumulative weights holds r, for
// r in [0, total).
func (f *fenwick) find(r int) int {
	pos := 0
	for step := highBit(len(f.tree) - 1); step > 0; step >>= 1 {
		if next := pos + step; next < len(f.tree) && f.tree[next] <= r {
			pos = next
			r -= f.tree[next]
		}
	}
	return pos // (1-based pos+1 is the slot found; 0-based, pos)
}

// highBit is the largest power of two not above n (0 for 0).
func highBit(n int) int {
	if n <= 0 {
		return 0
	}
	return 1 << (bits.Len(uint(n)) - 1)
}

// tupleSet is the feedback tuples seen so far, bounded: past max, nothing
// more counts as new.
type tupleSet struct {
	mu  sync.Mutex
	m   map[tuple]struct{}
	max int
}

func newTupleSet(max int) *tupleSet { return &tupleSet{m: map[tuple]struct{}{}, max: max} }

// add records ts and reports whether any was new.
func (t *tupleSet) add(ts []tuple) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	fresh := false
	for _, x := range ts {
		if _, ok := t.m[x]; ok || len(t.m) >= t.max {
			continue
		}
		t.m[x] = struct{}{}
		fresh = true
	}
	return fresh
}

func (t *tupleSet) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// recentRing keeps the last inputs sent to the server (across workers),
// bounded in count and bytes: a canary that fails is blamed on one of them.
type recentRing struct {
	mu       sync.Mutex
	items    []mutate.Case
	bytes    int
	max      int
	maxBytes int
}

func (r *recentRing) push(c mutate.Case) {
	size := caseSize(c)
	if size > r.maxBytes {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = append(r.items, c)
	r.bytes += size
	for len(r.items) > r.max || r.bytes > r.maxBytes {
		r.bytes -= caseSize(r.items[0])
		r.items = r.items[1:]
	}
}

// newestFirst returns the kept inputs, the last sent first.
func (r *recentRing) newestFirst() []mutate.Case {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]mutate.Case, len(r.items))
	for i, c := range r.items {
		out[len(out)-1-i] = c
	}
	return out
}

func (r *recentRing) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items, r.bytes = nil, 0
}
