package fuzz

import (
	"sync"

	"github.com/rpcload/rpcload/internal/mutate"
)

// workCorpus is the inputs mutation starts from: the seeds, and every input
// that produced a new feedback tuple. It is bounded in entries and bytes;
// when full, a new input replaces a random one that is not a seed.
type workCorpus struct {
	mu       sync.RWMutex
	entries  []mutate.Case
	seeds    int // entries[:seeds] are never replaced
	bytes    int
	max      int
	maxBytes int
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
		w.entries = append(w.entries, s)
		w.bytes += caseSize(s)
	}
	w.seeds = len(w.entries)
	return w
}

func (w *workCorpus) pick(ch mutate.Chooser) mutate.Case {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.entries[ch.Intn(len(w.entries))]
}

func (w *workCorpus) len() int {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return len(w.entries)
}

// add keeps c, replacing a random non-seed entry when the corpus is full.
func (w *workCorpus) add(ch mutate.Chooser, c mutate.Case) {
	size := caseSize(c)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.entries) < w.max && w.bytes+size <= w.maxBytes {
		w.entries = append(w.entries, c)
		w.bytes += size
		return
	}
	if len(w.entries) == w.seeds {
		return
	}
	i := w.seeds + ch.Intn(len(w.entries)-w.seeds)
	if w.bytes-caseSize(w.entries[i])+size > w.maxBytes {
		return
	}
	w.bytes += size - caseSize(w.entries[i])
	w.entries[i] = c
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
