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
				e |= edgeDeep
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
			end := wire.SkipString(v, i)
			s := v[i:end]
			esc := bytes.IndexByte(s, '\\') >= 0
			if esc && wire.HasLoneSurrogate(s) {
				e |= edgeSurrogate
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
				e |= edgeHugeNumber
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
