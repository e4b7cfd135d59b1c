package oracle

import (
	"bytes"
	"cmp"
	"slices"
	"sort"

	"github.com/rpcload/rpcload/internal/wire"
)

// candidates is a list of request indices consumed from the front as
// requests get matched, so that a batch of n requests with one id is
// matched in linear time.
type candidates struct {
	idx   []int32
	start *int32 // idx[:*start] are all matched
	// jump, when kept (the batch's own lists), has jump[k] > k when
	// idx[k:jump[k]] were all matched when last walked (0: not known), so
	// that a walk past a request that stays unmatched does not walk again
	// the run of matched ones behind it: a parse error whose -32700 had
	// not come left 692 refused notifications walked once per refusal,
	// and the budget ran out before the last refusals found theirs.
	jump  []int32
	jumps bool // jump is kept
}

func (c *candidates) add(i int) { c.idx = append(c.idx, int32(i)) }

// unmatched drops the matched prefix and returns the rest (which may still
// hold matched indices further on).
func (c *candidates) unmatched(reqs []request) []int32 {
	s := c.start
	for int(*s) < len(c.idx) && reqs[c.idx[*s]].matched {
		*s++
	}
	return c.idx[*s:]
}

// nextUnmatched returns the position in c.idx of the first request at or
// after position k that is not matched (len(c.idx): none), crossing runs
// of matched ones by c.jump and remembering the run it crossed.
func (c *candidates) nextUnmatched(k int, reqs []request) int {
	if !c.jumps {
		for k < len(c.idx) && reqs[c.idx[k]].matched {
			k++
		}
		return k
	}
	if len(c.jump) != len(c.idx) {
		// (New, or the list grew since: what was known is dropped.)
		c.jump = slices.Grow(c.jump[:0], len(c.idx))[:len(c.idx)]
		clear(c.jump)
	}
	from := k
	for k < len(c.idx) && reqs[c.idx[k]].matched {
		if j := int(c.jump[k]); j > k {
			k = j
		} else {
			k++
		}
	}
	if k > from+1 {
		c.jump[from] = int32(k)
	}
	return k
}

// first returns the first unmatched request of c, or -1.
func (c *candidates) first(reqs []request) int {
	if rest := c.unmatched(reqs); len(rest) > 0 {
		return int(rest[0])
	}
	return -1
}

// idIndex finds a batch's requests by id, in groups by category: keys
// sorted once, looked up by binary search, no map.
type idIndex struct {
	keys  []byte
	ents  []idEntry // sorted by key, category, request
	elems []int32   // the requests of ents, in order
	heads []int32   // per group (at its first entry): how many of its first requests are matched
	ends  []int32   // per group (at its first entry): where it ends
	// repeats is the sum over the keys of g*(g-1), g the number of
	// entries under the key: the pairs of requests that share an id.
	repeats int
}

type idEntry struct {
	off, end int // the key: keys[off:end]
	elem     int32
	cat      byte
}

func (x *idIndex) reset() {
	x.keys, x.ents, x.elems, x.heads, x.ends = x.keys[:0], x.ents[:0], x.elems[:0], x.heads[:0], x.ends[:0]
}

// add indexes request elem of category cat under its raw id, and a string
// id that reads as a number also under typeChangedKey of that number.
func (x *idIndex) add(cat byte, id []byte, elem int32) {
	off := len(x.keys)
	x.keys = wire.AppendIDKey(x.keys, id)
	x.ents = append(x.ents, idEntry{off, len(x.keys), elem, cat})
	if content := x.keys[off:]; content[0] == 's' && wire.IsNumber(content[1:]) {
		off = len(x.keys)
		x.keys = wire.AppendNumberKey(append(x.keys, typeChangedKey, 'n'), content[1:])
		x.ents = append(x.ents, idEntry{off, len(x.keys), elem, cat})
	}
}

func (x *idIndex) key(k int) []byte { return x.keys[x.ents[k].off:x.ents[k].end] }

func (x *idIndex) sort() {
	slices.SortFunc(x.ents, func(a, b idEntry) int {
		if c := bytes.Compare(x.keys[a.off:a.end], x.keys[b.off:b.end]); c != 0 {
			return c
		}
		if a.cat != b.cat {
			return cmp.Compare(a.cat, b.cat)
		}
		return cmp.Compare(a.elem, b.elem)
	})
	for _, e := range x.ents {
		x.elems = append(x.elems, e.elem)
		x.heads = append(x.heads, 0)
		x.ends = append(x.ends, 0)
	}
	x.repeats = 0
	same := 0 // entries before k with k's key
	for k := 0; k < len(x.ents); {
		end := k + 1
		for end < len(x.ents) && x.ents[end].cat == x.ents[k].cat && bytes.Equal(x.key(end), x.key(k)) {
			end++
		}
		x.ends[k] = int32(end)
		if k > 0 && !bytes.Equal(x.key(k-1), x.key(k)) {
			same = 0
		}
		for g := end - k; g > 0; g-- {
			x.repeats += 2 * same
			same++
		}
		k = end
	}
}

// find stores in gs the groups of requests indexed under key, one per
// category, each in batch order, and returns how many there are.
func (x *idIndex) find(key []byte, gs *[numCategories]idGroup) int {
	n := len(x.ents)
	k := sort.Search(n, func(k int) bool { return bytes.Compare(x.key(k), key) >= 0 })
	c := 0
	for ; k < n && c < numCategories && bytes.Equal(x.key(k), key); k = int(x.ends[k]) {
		gs[c] = idGroup{x.ents[k].cat, candidates{idx: x.elems[k:x.ends[k]], start: &x.heads[k]}}
		c++
	}
	return c
}

// idGroup is the requests of one category under one id.
type idGroup struct {
	cat  byte
	reqs candidates
}

// ordered returns the n groups of gs in the category order of rm, which
// it stores in out.
func ordered(rm *wire.Message, gs *[numCategories]idGroup, n int, out *[numCategories]candidates) []candidates {
	m := 0
	for _, cat := range categoryOrder(rm) {
		for _, g := range gs[:n] {
			if g.cat == cat {
				out[m] = g.reqs
				m++
			}
		}
	}
	return out[:m]
}
