package fuzztarget

// A walker over text the parser already accepted: it only finds boundaries.
// It still never reads out of bounds, so a parser bug cannot turn into an
// index panic that would pass for a planted crash.

// member is one member of an object (key decoded) or element of an array
// (key empty); val is its raw value.
type member struct {
	key string
	val []byte
}

// kind returns the JSON type of m's value.
func (m *member) kind() kind {
	if len(m.val) == 0 {
		return kindInvalid
	}
	return kindOf(m.val[0])
}

// items lists the members of the object or the elements of the array that
// starts at raw[0] (raw is valid JSON, leading whitespace trimmed).
func items(raw []byte) []member {
	var out []member
	i := skipWS(raw, 1)
	for i < len(raw) && raw[i] != '}' && raw[i] != ']' {
		var m member
		if raw[0] == '{' {
			end := skipValue(raw, i)
			m.key = unquote(raw[i:end])
			i = skipWS(raw, end)
			i = skipWS(raw, i+1) // the colon
		}
		end := skipValue(raw, i)
		if end <= i {
			break // not reached on parsed text; guards against looping
		}
		m.val = raw[i:end]
		out = append(out, m)
		i = skipWS(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
	return out
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the value that starts at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
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
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the end of the string token at b[i].
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
