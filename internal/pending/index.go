package pending

// index maps a pending id to its slot: open addressing with linear probing
// and backward-shift deletion, so there are no tombstones and nothing is ever
// allocated outside rebuild. Key 0 marks an empty bucket (ids start at 1).
type index struct {
	keys  []uint64
	vals  []int32
	mask  uint64
	count int
}

func (x *index) rebuild(size int, slots []slot) {
	n := 16
	for n < size {
		n <<= 1
	}
	x.keys = make([]uint64, n)
	x.vals = make([]int32, n)
	x.mask = uint64(n - 1)
	x.count = 0
	for i := range slots {
		if slots[i].ID != 0 {
			x.put(slots[i].ID, int32(i))
		}
	}
}

// hash spreads sequential ids over the buckets (Fibonacci hashing).
func (x *index) home(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> 32 & x.mask }

func (x *index) put(k uint64, v int32) {
	i := x.home(k)
	for x.keys[i] != 0 {
		if x.keys[i] == k {
			x.vals[i] = v
			return
		}
		i = (i + 1) & x.mask
	}
	x.keys[i] = k
	x.vals[i] = v
	x.count++
}

func (x *index) get(k uint64) (int32, bool) {
	for i := x.home(k); x.keys[i] != 0; i = (i + 1) & x.mask {
		if x.keys[i] == k {
			return x.vals[i], true
		}
	}
	return 0, false
}

func (x *index) del(k uint64) {
	i := x.home(k)
	for x.keys[i] != k {
		if x.keys[i] == 0 {
			return
		}
		i = (i + 1) & x.mask
	}
	// Shift later members of the probe run back so lookups never stop early.
	j := i
	for {
		j = (j + 1) & x.mask
		if x.keys[j] == 0 {
			break
		}
		h := x.home(x.keys[j])
		// Move keys[j] into the hole at i unless its home lies cyclically in (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			x.keys[i], x.vals[i] = x.keys[j], x.vals[j]
			i = j
		}
	}
	x.keys[i] = 0
	x.count--
}

// bitmap is a sparse set of ids, 64 Ki ids to a page, a page allocated only
// when an id in its range is set and freed when its last bit clears. It holds
// the ids that timed out, so its memory follows the number of unanswered
// timeouts, not the number of requests sent.
type bitmap struct {
	pages map[uint64]*page
	count int
}

type page struct {
	bits [1024]uint64
	n    int
}

func (b *bitmap) set(id uint64) {
	p := b.pages[id>>16]
	if p == nil {
		p = new(page)
		b.pages[id>>16] = p
	}
	w, bit := (id>>6)&1023, uint64(1)<<(id&63)
	if p.bits[w]&bit == 0 {
		p.bits[w] |= bit
		p.n++
		b.count++
	}
}

// clear removes id and reports whether it was present.
func (b *bitmap) clear(id uint64) bool {
	p := b.pages[id>>16]
	if p == nil {
		return false
	}
	w, bit := (id>>6)&1023, uint64(1)<<(id&63)
	if p.bits[w]&bit == 0 {
		return false
	}
	p.bits[w] &^= bit
	b.count--
	if p.n--; p.n == 0 {
		delete(b.pages, id>>16)
	}
	return true
}
