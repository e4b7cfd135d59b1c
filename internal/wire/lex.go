package wire

import "unicode/utf8"

// Lexing primitives shared by Scan, NextElement and Unquote. They return the
// offset just past what they consumed, or a negative value when the input is
// not JSON, so callers can chain them without error values.

const (
	bad      = -1 // not JSON
	needDeep = -2 // the small nesting stack overflowed; rescan with a big one
)

// String flags reported by str. They decide whether two member names can be
// compared as raw bytes or must be decoded first.
const (
	strEscape  = 1 << iota // contains a backslash escape
	strBadUTF8             // contains an invalid UTF-8 byte sequence
)

// plain marks string bytes that need no attention: printable ASCII other than
// '"' and '\\'. Everything else leaves the fast loop.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return c-'0' < 10 || (c|0x20)-'a' < 6
}

// str scans the string starting at the quote d[i] and returns the offset
// after the closing quote plus strEscape/strBadUTF8 flags.
func str(d []byte, i int) (int, uint8) {
	var fl uint8
	i++
	for {
		for i < len(d) && plain[d[i]] {
			i++
		}
		if i >= len(d) {
			return bad, fl
		}
		switch c := d[i]; {
		case c == '"':
			return i + 1, fl
		case c == '\\':
			fl |= strEscape
			if i+1 >= len(d) {
				return bad, fl
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) || !isHex(d[i+5]) {
					return bad, fl
				}
				i += 6
			default:
				return bad, fl
			}
		case c < 0x20:
			return bad, fl
		default: // c >= 0x80
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				fl |= strBadUTF8
			}
			i += size
		}
	}
}

// num scans a number per the JSON grammar starting at d[i] ('-' or a digit)
// and reports whether it had a fraction or exponent.
func num(d []byte, i int) (int, bool) {
	if d[i] == '-' {
		i++
	}
	if i >= len(d) {
		return bad, false
	}
	switch c := d[i]; {
	case c == '0':
		i++
	case c-'1' < 9:
		i++
		for i < len(d) && d[i]-'0' < 10 {
			i++
		}
	default:
		return bad, false
	}
	frac := false
	if i < len(d) && d[i] == '.' {
		frac = true
		i++
		s := i
		for i < len(d) && d[i]-'0' < 10 {
			i++
		}
		if i == s {
			return bad, frac
		}
	}
	if i < len(d) && d[i]|0x20 == 'e' {
		frac = true
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		s := i
		for i < len(d) && d[i]-'0' < 10 {
			i++
		}
		if i == s {
			return bad, frac
		}
	}
	return i, frac
}

// lit matches one of true, false, null at d[i].
func lit(d []byte, i int) int {
	var w string
	switch d[i] {
	case 't':
		w = "true"
	case 'f':
		w = "false"
	default:
		w = "null"
	}
	if len(d)-i < len(w) || string(d[i:i+len(w)]) != w {
		return bad
	}
	return i + len(w)
}

// scanner carries what a scan learns besides offsets.
type scanner struct {
	d     []byte
	flags uint8 // union of str flags seen anywhere
	fast  bool  // an envelope may take the reply path (scanner.reply)
}

// skip validates the value at d[i] (no leading whitespace) that sits inside
// depth containers and returns the offset after it. Nesting is tracked with
// a bit per level (1 = array) instead of recursion; the common shallow case
// uses a single word so no large stack array has to be zeroed per call.
func (s *scanner) skip(i, depth int) int {
	var small [1]uint64
	end := s.skipWith(i, depth, small[:])
	if end == needDeep {
		return s.skipDeep(i, depth)
	}
	return end
}

//go:noinline
func (s *scanner) skipDeep(i, depth int) int {
	var big [(DefaultMaxDepth + 63) / 64]uint64
	return s.skipWith(i, depth, big[:])
}

func (s *scanner) skipWith(i, depth int, stack []uint64) int {
	d := s.d
	lvl := 0 // containers opened by this call
	for {
		// A value is expected at d[i].
		if i >= len(d) {
			return bad
		}
		switch c := d[i]; c {
		case '"':
			var fl uint8
			i, fl = str(d, i)
			s.flags |= fl
		case '{', '[':
			depth++
			if depth > DefaultMaxDepth {
				return bad
			}
			if lvl == len(stack)*64 {
				return needDeep
			}
			w, b := lvl>>6, uint64(1)<<(lvl&63)
			lvl++
			i = SkipSpace(d, i+1)
			if c == '[' {
				stack[w] |= b
				if i < len(d) && d[i] == ']' {
					i++
					lvl--
					depth--
					break
				}
				continue
			}
			stack[w] &^= b
			if i < len(d) && d[i] == '}' {
				i++
				lvl--
				depth--
				break
			}
			if i = s.key(i); i < 0 {
				return bad
			}
			continue
		case 't', 'f', 'n':
			i = lit(d, i)
		default:
			if c != '-' && c-'0' >= 10 {
				return bad
			}
			i, _ = num(d, i)
		}
		// A value ended at i: close containers until one wants another value.
		for {
			if i < 0 || lvl == 0 {
				return i
			}
			i = SkipSpace(d, i)
			if i >= len(d) {
				return bad
			}
			arr := stack[(lvl-1)>>6]&(1<<((lvl-1)&63)) != 0
			c := d[i]
			if c == ',' {
				i = SkipSpace(d, i+1)
				if !arr {
					i = s.key(i)
				}
				if i < 0 {
					return bad
				}
				break
			}
			if arr && c == ']' || !arr && c == '}' {
				i++
				lvl--
				depth--
				continue
			}
			return bad
		}
	}
}

// key scans `"name" :` plus the whitespace after the colon, leaving i at the
// member value.
func (s *scanner) key(i int) int {
	d := s.d
	if i >= len(d) || d[i] != '"' {
		return bad
	}
	i, fl := str(d, i)
	s.flags |= fl
	if i < 0 {
		return bad
	}
	i = SkipSpace(d, i)
	if i >= len(d) || d[i] != ':' {
		return bad
	}
	return SkipSpace(d, i+1)
}
