package profile

import (
	"bytes"

	"github.com/rpcload/rpcload/internal/wire"
)

// The readers below walk raw JSON without decoding it into Go values (which
// would let a duplicated key silently win) and without allocating. They are
// meant for JSON that wire.Scan already found valid (params checked by
// validJSON, or parts of a scanned frame); on anything else they stop
// early, never panic, and never read out of bounds.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func trimSpace(b []byte) []byte {
	i, j := skipSpace(b, 0), len(b)
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// validJSON reports whether b is one JSON value per encoding/json.Valid.
func validJSON(b []byte) bool {
	var m wire.Message
	wire.Scan(b, &m)
	return !m.Problems.Has(wire.ProblemInvalidJSON)
}

// skipString returns the index just past the string starting at b[i] == '"',
// or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index just past the value starting at b[i] (no
// leading space), or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	j := i
	for j < len(b) && !isSpace(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ':' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// members iterates the members of a JSON object.
type members struct {
	b   []byte
	i   int
	err bool // the object was malformed (never for validated input)
}

// objectMembers starts iterating obj, which must be an object with no
// leading space; ok is false when it is not an object.
func objectMembers(obj []byte) (it members, ok bool) {
	if len(obj) == 0 || obj[0] != '{' {
		return members{}, false
	}
	return members{b: obj, i: 1}, true
}

// next returns the next member's raw key (with quotes) and raw value, and
// the offset of the value in the object. ok is false at the end.
func (it *members) next() (key, val []byte, valOff int, ok bool) {
	b := it.b
	i := skipSpace(b, it.i)
	if i < len(b) && b[i] == ',' {
		i = skipSpace(b, i+1)
	}
	if i >= len(b) || b[i] != '"' {
		it.err = i >= len(b) || b[i] != '}'
		it.i = len(b)
		return nil, nil, 0, false
	}
	k := skipString(b, i)
	if k < 0 {
		it.err, it.i = true, len(b)
		return nil, nil, 0, false
	}
	key = b[i:k]
	i = skipSpace(b, k)
	if i >= len(b) || b[i] != ':' {
		it.err, it.i = true, len(b)
		return nil, nil, 0, false
	}
	v := skipSpace(b, i+1)
	e := skipValue(b, v)
	if e < 0 {
		it.err, it.i = true, len(b)
		return nil, nil, 0, false
	}
	it.i = e
	return key, b[v:e], v, true
}

// stringIs reports whether raw is a JSON string whose decoded value is s.
// It does not allocate for strings without escapes, nor for escaped strings
// up to 64 bytes decoded.
func stringIs(raw []byte, s string) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == s
	}
	var buf [64]byte
	d, ok := wire.Unquote(buf[:0], raw)
	return ok && string(d) == s
}

// member returns the value of the member of obj named name; of the last
// one when the name is repeated, as encoding/json and JavaScript's
// JSON.parse (and so most servers) read it.
func member(obj []byte, name string) (val []byte, found bool) {
	it, ok := objectMembers(obj)
	if !ok {
		return nil, false
	}
	for {
		k, v, _, ok := it.next()
		if !ok {
			return val, found
		}
		if stringIs(k, name) {
			val, found = v, true
		}
	}
}

// stringMember returns the decoded string value of member name of obj.
func stringMember(obj []byte, name string) (string, bool) {
	v, ok := member(obj, name)
	if !ok {
		return "", false
	}
	d, ok := wire.Unquote(nil, v)
	return string(d), ok
}
