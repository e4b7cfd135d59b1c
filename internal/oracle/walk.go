package oracle

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/rpcload/rpcload/internal/wire"
)

// nameSpan is a member name in a walked frame: v[s:e], quotes included.
type nameSpan struct {
	s, e int32
	esc  bool // the name has escapes, so it compares decoded
}

// walkEdges walks valid JSON v, nested depth containers deep, and returns
// the edges only a full walk finds: lone surrogate escapes, nesting beyond
// depthEdge, numbers beyond float64, repeated member names (edgeDupID when
// the repeated name is the envelope's "id"). It allocates only for frames
// nested deeper than 64 or with more than 32 member names open at once.
func walkEdges(v []byte, depth int) edge {
	var e edge
	var objBuf [64]bool
	var startBuf [64]int32
	var nameBuf [32]nameSpan
	isObj, starts, names := objBuf[:0], startBuf[:0], nameBuf[:0]
	expectKey := false
	base := depth
	ids := 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '{' || c == '[':
			depth++
			if depth > depthEdge {
				e |= edgeLimit
			}
			isObj = append(isObj, c == '{')
			starts = append(starts, int32(len(names)))
			expectKey = c == '{'
		case c == '}' || c == ']':
			depth--
			if n := len(isObj); n > 0 {
				if isObj[n-1] && hasDuplicateName(v, names[starts[n-1]:]) {
					e |= edgeDupKey
				}
				names = names[:starts[n-1]]
				isObj, starts = isObj[:n-1], starts[:n-1]
			}
			expectKey = false
		case c == ',':
			expectKey = len(isObj) > 0 && isObj[len(isObj)-1]
		case c == '"':
			end := skipString(v, i)
			s := v[i:end]
			esc := bytes.IndexByte(s, '\\') >= 0
			if esc && loneSurrogate(s) {
				e |= edgeLimit
			}
			if expectKey && len(isObj) > 0 {
				names = append(names, nameSpan{int32(i), int32(end), esc})
				if depth == base+1 && memberOf(s) == memID {
					if ids++; ids == 2 {
						e |= edgeDupID | edgeDupKey
					}
				}
				expectKey = false
			}
			i = end - 1
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(v) && (v[j] >= '0' && v[j] <= '9' || v[j] == '.' || v[j] == 'e' || v[j] == 'E' || v[j] == '+' || v[j] == '-') {
				j++
			}
			if beyondFloat64(v[i:j]) {
				e |= edgeLimit
			}
			i = j - 1
		}
	}
	return e
}

// beyondFloat64 reports whether the number text n does not parse as a
// float64 (out of range). Short plain numbers always do.
func beyondFloat64(n []byte) bool {
	if len(n) <= 16 && !bytes.ContainsAny(n, "eE") {
		return false
	}
	_, err := strconv.ParseFloat(string(n), 64)
	return err != nil
}

// hasDuplicateName reports whether two of one object's member names are
// equal once decoded: pairwise for small objects, after sorting for wide
// ones (which sorts names in place).
func hasDuplicateName(v []byte, names []nameSpan) bool {
	if len(names) <= 8 {
		for i := 1; i < len(names); i++ {
			for j := range i {
				if compareNames(v, names[i], names[j]) == 0 {
					return true
				}
			}
		}
		return false
	}
	slices.SortFunc(names, func(a, b nameSpan) int { return compareNames(v, a, b) })
	for i := 1; i < len(names); i++ {
		if compareNames(v, names[i-1], names[i]) == 0 {
			return true
		}
	}
	return false
}

// compareNames orders member names by their decoded content.
func compareNames(v []byte, a, b nameSpan) int {
	ra, rb := v[a.s+1:a.e-1], v[b.s+1:b.e-1]
	if !a.esc && !b.esc {
		return bytes.Compare(ra, rb)
	}
	var bufA, bufB [64]byte
	if a.esc {
		ra, _ = wire.Unquote(bufA[:0], v[a.s:a.e])
	}
	if b.esc {
		rb, _ = wire.Unquote(bufB[:0], v[b.s:b.e])
	}
	return bytes.Compare(ra, rb)
}

// skipString returns the offset after the string starting at the quote
// d[i], or len(d) when it does not end.
func skipString(d []byte, i int) int {
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

// stops are the bytes skipValue looks at inside a container; delimiters
// end a scalar.
var stops, delimiters [256]bool

func init() {
	for _, c := range []byte(`"{}[]`) {
		stops[c] = true
	}
	for _, c := range []byte(",:}] \t\n\r") {
		delimiters[c] = true
	}
}

// skipValue returns the offset after the JSON value starting at d[i], for
// text Scan accepted: strings and brackets are matched, scalars end at the
// next delimiter. On other text it stays in bounds and ends somewhere.
func skipValue(d []byte, i int) int {
	if i >= len(d) {
		return i
	}
	switch d[i] {
	case '"':
		return skipString(d, i)
	case '{', '[':
	default:
		for i < len(d) && !delimiters[d[i]] {
			i++
		}
		return i
	}
	depth := 0
	for i < len(d) {
		for i < len(d) && !stops[d[i]] {
			i++
		}
		if i >= len(d) {
			break
		}
		switch d[i] {
		case '"':
			i = skipString(d, i)
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

// loneSurrogate reports whether the JSON string s has a \u escape of a
// UTF-16 surrogate that is not part of a high-low pair.
func loneSurrogate(s []byte) bool {
	for i := 0; i+5 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if s[i+1] != 'u' {
			i++
			continue
		}
		r := hex4(s[i+2:])
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			if i+11 >= len(s) || s[i+6] != '\\' || s[i+7] != 'u' {
				return true
			}
			if lo := hex4(s[i+8:]); lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

// hex4 decodes four hex digits, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			c = (c | 0x20) - 'a' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
