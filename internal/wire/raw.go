package wire

import "bytes"

// The raw-JSON primitives every package that walks JSON without decoding it
// uses: skipping a value, skipping a string, iterating an object's members
// or an array's elements. They are written for text Scan accepted (a valid
// frame, or a part of one): strings and brackets are matched, scalars end
// at the next delimiter. On any other text they stay in bounds, never panic
// and end somewhere, so a caller may run them on hostile bytes and check the
// result instead of validating first. Validation itself is Scan's.

// rawStops are the bytes SkipValue looks at inside a container;
// rawDelimiters end a scalar.
var rawStops, rawDelimiters [256]bool

func init() {
	for _, c := range []byte(`"{}[]`) {
		rawStops[c] = true
	}
	for _, c := range []byte(",:}] \t\n\r") {
		rawDelimiters[c] = true
	}
}

// SkipSpace returns the offset of the first byte at or after i that is not
// JSON whitespace (space, tab, newline, carriage return). Compact JSON has
// none: one comparison tells (all four are at most ' '). Scan uses it too.
func SkipSpace(d []byte, i int) int {
	for i < len(d) && d[i] <= ' ' {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// TrimSpace returns d without leading and trailing JSON whitespace.
func TrimSpace(d []byte) []byte {
	i, j := SkipSpace(d, 0), len(d)
	for j > i {
		switch d[j-1] {
		case ' ', '\t', '\n', '\r':
			j--
			continue
		}
		break
	}
	return d[i:j]
}

// SkipString returns the offset after the string whose opening quote is
// d[i], or len(d) when the string does not end.
func SkipString(d []byte, i int) int {
	j := i + 1
	// A byte loop for the first bytes: most strings are short, and
	// IndexByte pays off only on long ones.
	for limit := min(len(d), j+32); j < limit; j++ {
		switch d[j] {
		case '"':
			return j + 1
		case '\\':
			j++
		}
	}
	for j < len(d) {
		k := bytes.IndexByte(d[j:], '"')
		if k < 0 {
			break
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && d[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
	return len(d)
}

// SkipValue returns the offset after the JSON value starting at d[i] (no
// leading whitespace): the closing quote or bracket that matches, or the
// delimiter that ends a scalar. It returns i when i is past the end and
// len(d) when a string or container does not end; a scalar position holding
// a delimiter gives i (an empty value).
func SkipValue(d []byte, i int) int {
	if i >= len(d) {
		return i
	}
	switch d[i] {
	case '"':
		return SkipString(d, i)
	case '{', '[':
	default:
		for i < len(d) && !rawDelimiters[d[i]] {
			i++
		}
		return i
	}
	depth := 0
	for i < len(d) {
		for i < len(d) && !rawStops[d[i]] {
			i++
		}
		if i >= len(d) {
			break
		}
		switch d[i] {
		case '"':
			i = SkipString(d, i)
			continue
		case '{', '[':
			depth++
		default:
			if depth--; depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return i
}

// Members walks the members of a JSON object without decoding it: every
// member is seen, duplicates included, in the order written.
//
//	it, ok := wire.ObjectMembers(obj)
//	for name, value, ok := it.Next(); ok; name, value, ok = it.Next() { … }
//
// The zero Members yields nothing.
type Members struct {
	d   []byte
	i   int
	bad bool
}

// ObjectMembers starts walking obj, an object with optional surrounding
// whitespace. ok is false when obj does not start with '{'.
func ObjectMembers(obj []byte) (it Members, ok bool) {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return Members{}, false
	}
	return Members{d: obj, i: i + 1}, true
}

// Next returns the raw name (quotes included, escapes as written) and the
// raw value of the next member. ok is false at the end of the object and on
// text that is not a member; Malformed then tells the two apart.
func (it *Members) Next() (name, value []byte, ok bool) {
	d := it.d
	i := SkipSpace(d, it.i)
	if i < len(d) && d[i] == ',' {
		i = SkipSpace(d, i+1)
	}
	if i >= len(d) || d[i] != '"' {
		it.bad = it.bad || i >= len(d) || d[i] != '}'
		it.i = len(d)
		return nil, nil, false
	}
	ne := SkipString(d, i)
	j := SkipSpace(d, ne)
	if j >= len(d) || d[j] != ':' {
		it.bad, it.i = true, len(d)
		return nil, nil, false
	}
	j = SkipSpace(d, j+1)
	ve := SkipValue(d, j)
	if ve <= j {
		it.bad, it.i = true, len(d)
		return nil, nil, false
	}
	it.i = ve
	return d[i:ne], d[j:ve], true
}

// Malformed reports whether the walk ended on text that is not an object's
// member list rather than on its closing brace.
func (it *Members) Malformed() bool { return it.bad }

// End returns the offset in obj just past the value the last Next
// returned, so the value starts at End()-len(value): for callers that
// splice text into obj around a member. It is len(obj) once the walk ended.
func (it *Members) End() int { return it.i }

// Elements walks the elements of a JSON array without decoding or
// validating them again (NextElement validates each), in the order written:
//
//	it, ok := wire.ArrayElements(arr)
//	for elem, ok := it.Next(); ok; elem, ok = it.Next() { … }
//
// The zero Elements yields nothing.
type Elements struct {
	d     []byte
	i     int
	first bool
	bad   bool
}

// ArrayElements starts walking arr, an array with optional surrounding
// whitespace. ok is false when arr does not start with '['.
func ArrayElements(arr []byte) (it Elements, ok bool) {
	i := SkipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return Elements{}, false
	}
	return Elements{d: arr, i: i + 1, first: true}, true
}

// Next returns the raw text of the next element. ok is false at the end of
// the array and on text that is not an element list; Malformed then tells
// the two apart.
func (it *Elements) Next() (elem []byte, ok bool) {
	d := it.d
	i := SkipSpace(d, it.i)
	if !it.first {
		if i < len(d) && d[i] == ']' {
			it.i = len(d)
			return nil, false
		}
		if i >= len(d) || d[i] != ',' {
			it.bad, it.i = true, len(d)
			return nil, false
		}
		i = SkipSpace(d, i+1)
	}
	afterComma := !it.first
	it.first = false
	if i >= len(d) || d[i] == ']' {
		it.bad = it.bad || i >= len(d) || afterComma // [1,] is not an element list
		it.i = len(d)
		return nil, false
	}
	end := SkipValue(d, i)
	if end <= i {
		it.bad, it.i = true, len(d)
		return nil, false
	}
	it.i = end
	return d[i:end], true
}

// Malformed reports whether the walk ended on text that is not an array's
// element list rather than on its closing bracket.
func (it *Elements) Malformed() bool { return it.bad }

// Member returns the raw value of the first member of obj whose raw name
// (quotes included) is name, such as `"id"`.
func Member(obj []byte, name string) (value []byte, ok bool) {
	it, ok := ObjectMembers(obj)
	if !ok {
		return nil, false
	}
	for n, v, ok := it.Next(); ok; n, v, ok = it.Next() {
		if string(n) == name {
			return v, true
		}
	}
	return nil, false
}

// StringEnd is SkipString that also tells whether the string ends: closed
// is false when no unescaped quote closes it (end is then len(d)). Nothing
// else is checked: a tolerant reader's notion of a string.
func StringEnd(d []byte, i int) (end int, closed bool) {
	for j := i + 1; j < len(d); j++ {
		switch d[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(d), false
}

// ValidStringEnd returns the offset after the string whose opening quote is
// d[i], and whether it is a JSON string: closed, with valid escapes and no
// control bytes. Bytes that are not UTF-8 are accepted, as Scan does.
func ValidStringEnd(d []byte, i int) (end int, ok bool) {
	end, _ = str(d, i)
	return end, end >= 0
}
