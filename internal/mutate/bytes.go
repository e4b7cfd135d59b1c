package mutate

// Every op builds a new frame: inputs come from the shared corpus and must
// never be written to.

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// splice returns b with b[start:end] replaced by the pieces.
func splice(b []byte, start, end int, pieces ...[]byte) []byte {
	n := len(b) - (end - start)
	for _, p := range pieces {
		n += len(p)
	}
	out := make([]byte, 0, n)
	out = append(out, b[:start]...)
	for _, p := range pieces {
		out = append(out, p...)
	}
	return append(out, b[end:]...)
}

func insert(b []byte, at int, pieces ...[]byte) []byte { return splice(b, at, at, pieces...) }

// appendRepeat appends unit n times.
func appendRepeat(dst, unit []byte, n int) []byte {
	for range n {
		dst = append(dst, unit...)
	}
	return dst
}

// repeatBytes is n copies of one byte.
func repeatBytes(ch byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = ch
	}
	return b
}

// appendQuoted appends s as a JSON string. Invalid UTF-8 is kept as is: it is
// what a dictionary entry from a broken server may hold, and the fuzzer has
// no reason to repair it.
func appendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '"' || ch == '\\':
			dst = append(dst, '\\', ch)
		case ch < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[ch>>4], hex[ch&15])
		default:
			dst = append(dst, ch)
		}
	}
	return append(dst, '"')
}

func quoted(s string) []byte { return appendQuoted(nil, s) }

// cheapBytes is the output size up to which an op costs about what any
// other op does. Bigger rungs of a size ladder are made less often, in
// proportion: a rung producing N bytes is kept with probability about
// cheapBytes/N and otherwise a cheap rung is picked instead. Every size stays
// reachable (a 1 MiB string about once in 256 picks of its rung) while
// Mutate stays fast on average, which the native harness's execs/s depends
// on.
const cheapBytes = 4 << 10

// pickSize picks a count from an ascending ladder, clamped to limit, where
// each unit of the count costs unit output bytes; it reports false when the
// count is below floor (no room left for the op to mean anything).
func pickSize(c Chooser, ladder []int, unit, limit, floor int) (int, bool) {
	unit = max(unit, 1)
	n := min(ladder[c.Intn(len(ladder))], limit)
	if cost := n * unit; cost > cheapBytes && c.Intn(cost/cheapBytes) != 0 {
		cheap := 0 // the ladder is ascending: its cheap rungs come first
		for cheap < len(ladder) && ladder[cheap]*unit <= cheapBytes {
			cheap++
		}
		if cheap == 0 {
			return 0, false
		}
		n = min(ladder[c.Intn(cheap)], limit)
	}
	return n, n >= floor
}

// lits turns raw JSON texts into byte slices once, at start-up.
func lits(texts ...string) [][]byte {
	out := make([][]byte, len(texts))
	for i, s := range texts {
		out[i] = []byte(s)
	}
	return out
}
