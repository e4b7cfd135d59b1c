package gen

import (
	"math"
	"math/rand/v2"
	"strconv"
)

type opKind uint8

const (
	opLit       opKind = iota // copy lit
	opInt                     // i0 + uniform [0, u1] (u1 == MaxUint64: any)
	opFloat                   // f0 + Float64()*f1, kept below f2
	opString                  // length uniform in [u0, u1], chars from alpha or chars
	opChoice                  // jump to targets[IntN] or, weighted, to the first cum > draw
	opChoiceLit               // copy one of lits (a $choice among constants)
	opJump                    // continue at target (the end of a $choice branch)
	opSeq                     // i0 + (seq-1)*i1
	opUUID                    // random v4 UUID
	opHex                     // "0x" and u0 random bytes in hex
	opHexInt                  // "0x" and hex of u0 + uniform [0, u1]
	opNow                     // clock, formatted per now
	opFeedCell                // column col of the row of feeder feed
	opFeedRow                 // the row of feeder feed as an object
)

// Formats of $now.
const (
	nowUnix uint8 = iota
	nowUnixMS
	nowUnixNS
	nowRFC3339
)

// op is one step of a compiled template. Append runs the steps in order; a
// $choice jumps to the branch it draws, and each branch but the last ends
// with a jump past the others. One flat list (rather than a tree of
// interface values) keeps Append a loop over a slice with all its state in
// locals, which is what lets it run without allocating.
type op struct {
	kind    opKind
	now     uint8
	lit     []byte
	i0, i1  int64
	u0, u1  uint64
	f0, f1  float64
	f2      float64
	alpha   []byte   // $string alphabet when every character is a plain ASCII byte
	chars   []string // otherwise each character, JSON-escaped
	targets []int    // $choice branch starts
	lits    [][]byte // $choice constants
	cum     []float64
	target  int // opJump
	feed    int // index in Template.feeders
	col     int
}

// Append appends the JSON for the request with sequence number seq (1, 2, 3,
// ... across the run), drawing every random choice from r, which the caller
// has seeded for this request alone. r must not be nil unless the template is
// static. ok is false, and dst is returned unchanged, when a feeder in mode
// "once" that the template reads (anywhere, even in a $choice branch this
// request does not take) has no row left for this seq, or seq is 0: the
// caller ends the run.
func (t *Template) Append(dst []byte, r *rand.Rand, seq uint64) (out []byte, ok bool) {
	if t.static != nil {
		return append(dst, t.static...), true
	}
	// One row per feeder, drawn before any generator, so every $feed of a
	// feeder reads the same row and the draws keep a fixed order.
	var rowBuf [8]int
	rows := rowBuf[:0]
	if len(t.feeders) > len(rowBuf) {
		rows = make([]int, 0, len(t.feeders))
	}
	for _, f := range t.feeders {
		row, ok := f.pick(r, seq)
		if !ok {
			return dst, false
		}
		rows = append(rows, row)
	}
	for pc := 0; pc < len(t.ops); {
		o := &t.ops[pc]
		pc++
		switch o.kind {
		case opLit:
			dst = append(dst, o.lit...)
		case opInt:
			dst = strconv.AppendInt(dst, o.i0+int64(uniform(r, o.u1)), 10)
		case opFloat:
			f := o.f0 + r.Float64()*o.f1
			if f >= o.f2 && o.f1 > 0 {
				f = math.Nextafter(o.f2, math.Inf(-1)) // rounding reached max: keep [min, max)
			}
			dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
		case opString:
			dst = o.appendString(dst, r)
		case opChoice:
			pc = o.targets[o.draw(r)]
		case opChoiceLit:
			dst = append(dst, o.lits[o.draw(r)]...)
		case opJump:
			pc = o.target
		case opSeq:
			dst = strconv.AppendInt(dst, o.i0+int64(seq-1)*o.i1, 10)
		case opUUID:
			dst = appendUUID(dst, r)
		case opHex:
			dst = appendHex(dst, r, o.u0)
		case opHexInt:
			dst = append(dst, '"', '0', 'x')
			dst = strconv.AppendUint(dst, o.u0+uniform(r, o.u1), 16)
			dst = append(dst, '"')
		case opNow:
			dst = t.appendNow(dst, o.now)
		case opFeedCell:
			dst = t.feeders[o.feed].appendCell(dst, rows[o.feed], o.col)
		case opFeedRow:
			dst = t.feeders[o.feed].appendRow(dst, rows[o.feed])
		}
	}
	return dst, true
}

// uniform draws from [0, span]; span MaxUint64 means the whole range, which
// Uint64N cannot express as span+1.
func uniform(r *rand.Rand, span uint64) uint64 {
	if span == math.MaxUint64 {
		return r.Uint64()
	}
	return r.Uint64N(span + 1)
}

// draw picks a $choice branch: uniform, or by cumulative weight.
func (o *op) draw(r *rand.Rand) int {
	if o.cum == nil {
		n := len(o.targets)
		if o.kind == opChoiceLit {
			n = len(o.lits)
		}
		return r.IntN(n)
	}
	x := r.Float64() * o.cum[len(o.cum)-1]
	lo, hi := 0, len(o.cum)-1
	for lo < hi { // the first branch whose cumulative weight exceeds x
		mid := int(uint(lo+hi) >> 1)
		if o.cum[mid] > x {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	// Rounding can make x reach the total; the search then ends on the last
	// branch, which must not be a zero-weight one.
	for lo > 0 && o.cum[lo] == o.cum[lo-1] {
		lo--
	}
	return lo
}

func (o *op) appendString(dst []byte, r *rand.Rand) []byte {
	n := o.u0
	if o.u1 > o.u0 {
		n += r.Uint64N(o.u1 - o.u0 + 1)
	}
	dst = append(dst, '"')
	if o.alpha != nil {
		k := uint64(len(o.alpha))
		for range n {
			dst = append(dst, o.alpha[r.Uint64N(k)])
		}
	} else {
		k := uint64(len(o.chars))
		for range n {
			dst = append(dst, o.chars[r.Uint64N(k)]...)
		}
	}
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

func appendUUID(dst []byte, r *rand.Rand) []byte {
	var b [16]byte
	hi, lo := r.Uint64(), r.Uint64()
	for i := range 8 {
		b[i] = byte(hi >> (56 - 8*i))
		b[8+i] = byte(lo >> (56 - 8*i))
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant RFC 4122
	dst = append(dst, '"')
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return append(dst, '"')
}

// appendHex writes n random bytes, eight per draw. (Growing dst once and
// writing by index measured no faster than these appends.)
func appendHex(dst []byte, r *rand.Rand, n uint64) []byte {
	dst = append(dst, '"', '0', 'x')
	for n > 0 {
		x := r.Uint64()
		k := min(n, 8)
		for range k {
			dst = append(dst, hexDigits[x>>4&0xf], hexDigits[x&0xf])
			x >>= 8
		}
		n -= k
	}
	return append(dst, '"')
}

func (t *Template) appendNow(dst []byte, format uint8) []byte {
	now := t.clock()
	switch format {
	case nowUnix:
		return strconv.AppendInt(dst, now.Unix(), 10)
	case nowUnixMS:
		return strconv.AppendInt(dst, now.UnixMilli(), 10)
	case nowUnixNS:
		return strconv.AppendInt(dst, now.UnixNano(), 10)
	}
	// Fixed nine fraction digits: the width never changes between requests.
	dst = append(dst, '"')
	dst = now.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000000000Z07:00")
	return append(dst, '"')
}

// appendCell writes column col of row: a copy, since cells are stored as
// JSON.
func (f *Feeder) appendCell(dst []byte, row, col int) []byte {
	base := int(f.rowBase[row])
	if col >= int(f.rowBase[row+1])-base-1 {
		return append(dst, "null"...) // a JSONL row that ends before this column
	}
	s, e := f.bounds[base+col], f.bounds[base+col+1]
	if s == e {
		return append(dst, "null"...) // a JSONL row without this key
	}
	return append(dst, f.data[s:e]...)
}

// appendRow writes row as an object in column order, leaving out the keys a
// JSONL row does not have.
func (f *Feeder) appendRow(dst []byte, row int) []byte {
	base := int(f.rowBase[row])
	n := int(f.rowBase[row+1]) - base - 1
	dst = append(dst, '{')
	first := true
	for col := range n {
		s, e := f.bounds[base+col], f.bounds[base+col+1]
		if s == e {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, f.keys[col]...)
		dst = append(dst, f.data[s:e]...)
	}
	return append(dst, '}')
}
