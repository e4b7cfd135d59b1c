package testsrv

// A tiny walker over params. The frame was already validated by wire.Scan, so
// it only needs to find boundaries, not to check syntax; it still never reads
// out of bounds, so a scanner bug cannot turn into a panic here.

// members iterates the elements of a JSON array or the members of an object.
type members struct {
	b   []byte
	i   int
	obj bool
}

// open starts iterating raw, which must be an array or an object.
func open(raw []byte) (members, bool) {
	i := skipWS(raw, 0)
	if i >= len(raw) || (raw[i] != '[' && raw[i] != '{') {
		return members{}, false
	}
	return members{b: raw, i: i + 1, obj: raw[i] == '{'}, true
}

// next returns the next member (key is the raw quoted name, nil for arrays).
func (it *members) next() (key, val []byte, ok bool) {
	b := it.b
	i := skipWS(b, it.i)
	if i < len(b) && b[i] == ',' {
		i = skipWS(b, i+1)
	}
	if i >= len(b) || b[i] == ']' || b[i] == '}' {
		it.i = len(b)
		return nil, nil, false
	}
	if it.obj {
		if b[i] != '"' {
			it.i = len(b)
			return nil, nil, false
		}
		ke := skipString(b, i)
		key = b[i:ke]
		if i = skipWS(b, ke); i >= len(b) || b[i] != ':' {
			it.i = len(b)
			return nil, nil, false
		}
		i = skipWS(b, i+1)
	}
	ve := skipValue(b, i)
	if ve <= i {
		it.i = len(b)
		return nil, nil, false
	}
	it.i = ve
	return key, b[i:ve], true
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
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
		return len(b)
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}
