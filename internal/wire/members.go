package wire

import (
	"math"
	"unicode/utf16"
	"unicode/utf8"
)

// topMember maps an envelope member name (string contents without quotes)
// to its member bit. Names without escapes or bad UTF-8 (fl == 0) are their
// own decoding, so the common case is a plain byte comparison.
func topMember(name []byte, fl uint8) uint8 {
	if fl == 0 {
		switch string(name) {
		case "jsonrpc":
			return mJSONRPC
		case "id":
			return mID
		case "method":
			return mMethod
		case "params":
			return mParams
		case "result":
			return mResult
		case "error":
			return mError
		}
		return mExtra
	}
	if fl&strEscape == 0 {
		// Invalid UTF-8 decodes to U+FFFD, which no recognised name holds.
		return mExtra
	}
	switch {
	case equalsASCII(name, "jsonrpc"):
		return mJSONRPC
	case equalsASCII(name, "id"):
		return mID
	case equalsASCII(name, "method"):
		return mMethod
	case equalsASCII(name, "params"):
		return mParams
	case equalsASCII(name, "result"):
		return mResult
	case equalsASCII(name, "error"):
		return mError
	}
	return mExtra
}

// Error object member bits.
const (
	eCode uint8 = 1 << iota
	eMessage
	eData
	eExtra
)

func errMember(name []byte, fl uint8) uint8 {
	if fl == 0 {
		switch string(name) {
		case "code":
			return eCode
		case "message":
			return eMessage
		case "data":
			return eData
		}
		return eExtra
	}
	switch {
	case fl&strEscape == 0:
	case equalsASCII(name, "code"):
		return eCode
	case equalsASCII(name, "message"):
		return eMessage
	case equalsASCII(name, "data"):
		return eData
	}
	return eExtra
}

// isVersion reports whether the raw JSON string v (quotes included) holds
// exactly "2.0", allowing escaped spellings since they decode the same.
func isVersion(v []byte, fl uint8) bool {
	if fl == 0 {
		return string(v) == `"2.0"`
	}
	return fl&strEscape != 0 && equalsASCII(v[1:len(v)-1], "2.0")
}

// errorObject scans the error object at d[i] (depth 2) and fills the error
// fields of m.
func (s *scanner) errorObject(i int, m *Message) int {
	d := s.d
	var seen uint8
	var extra nameSet
	i = SkipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		i++
	} else {
		for {
			ks := i
			if i >= len(d) || d[i] != '"' {
				return bad
			}
			ke, fl := str(d, i)
			s.flags |= fl
			if ke < 0 {
				return bad
			}
			if i = SkipSpace(d, ke); i >= len(d) || d[i] != ':' {
				return bad
			}
			if i = SkipSpace(d, i+1); i >= len(d) {
				return bad
			}
			mem := errMember(d[ks+1:ke-1], fl)
			if seen&mem != 0 && mem != eExtra {
				m.Problems |= ProblemDuplicateKey
			}
			seen |= mem
			vs, c := i, d[i]
			switch mem {
			case eCode:
				m.Code, m.HasCode = 0, false
				if c != '-' && c-'0' >= 10 {
					m.Problems |= ProblemBadErrorObject
					i = s.skip(i, 2)
					break
				}
				var frac bool
				if i, frac = num(d, i); frac {
					m.Problems |= ProblemBadErrorObject
				} else if i >= 0 {
					// Integers beyond int64 are still integers, so they are
					// not a protocol problem; HasCode stays false.
					m.Code, m.HasCode = parseInt64(d[vs:i])
				}
			case eMessage:
				i = s.skip(i, 2)
				m.ErrMsg = nil
				if c != '"' {
					m.Problems |= ProblemBadErrorObject
				} else if i >= 0 {
					m.ErrMsg = d[vs:i]
				}
			case eData:
				if i = s.skip(i, 2); i >= 0 {
					m.ErrData = d[vs:i]
				}
			default:
				m.Problems |= ProblemBadErrorObject
				if i = s.skip(i, 2); i >= 0 && extra.repeat(d, ks, ke) {
					m.Problems |= ProblemDuplicateKey
				}
			}
			if i < 0 {
				return bad
			}
			if i = SkipSpace(d, i); i >= len(d) {
				return bad
			}
			if d[i] == '}' {
				i++
				break
			}
			if d[i] != ',' {
				return bad
			}
			i = SkipSpace(d, i+1)
		}
	}
	if seen&(eCode|eMessage) != eCode|eMessage {
		m.Problems |= ProblemBadErrorObject
	}
	return i
}

// parseInt64 parses a JSON integer that num already validated.
func parseInt64(b []byte) (int64, bool) {
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n uint64
	for _, c := range b {
		if n > (math.MaxUint64-9)/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// maxExtraNames bounds how many distinct unrecognised member names per object
// are remembered for duplicate detection; see the package documentation.
const maxExtraNames = 16

// nameSet remembers unrecognised member names as offsets into the frame, so
// that duplicate detection needs no allocation.
type nameSet struct {
	n    int
	span [maxExtraNames][2]uint32
}

// repeat reports whether the quoted name d[ks:ke] equals a remembered name,
// and remembers it otherwise while there is room.
func (ns *nameSet) repeat(d []byte, ks, ke int) bool {
	name := d[ks+1 : ke-1]
	for _, sp := range ns.span[:ns.n] {
		if sameName(d[sp[0]+1:sp[1]-1], name) {
			return true
		}
	}
	if ns.n < maxExtraNames && uint64(ke) <= math.MaxUint32 {
		ns.span[ns.n] = [2]uint32{uint32(ks), uint32(ke)}
		ns.n++
	}
	return false
}

// sameName reports whether two valid JSON string contents decode to the same
// text, the way encoding/json would decode them (invalid UTF-8 bytes and lone
// surrogates become U+FFFD), without materialising either.
func sameName(a, b []byte) bool {
	if string(a) == string(b) {
		return true
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		var ra, rb rune
		ra, i = nextRune(a, i)
		rb, j = nextRune(b, j)
		if ra != rb {
			return false
		}
	}
	return i == len(a) && j == len(b)
}

// equalsASCII reports whether valid JSON string contents decode to the ASCII
// text want.
func equalsASCII(a []byte, want string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(want) {
		var r rune
		r, i = nextRune(a, i)
		if r != rune(want[j]) {
			return false
		}
		j++
	}
	return i == len(a) && j == len(want)
}

// nextRune decodes one character of valid JSON string contents s at i.
func nextRune(s []byte, i int) (rune, int) {
	c := s[i]
	if c != '\\' {
		if c < utf8.RuneSelf {
			return rune(c), i + 1
		}
		r, n := utf8.DecodeRune(s[i:])
		return r, i + n
	}
	switch c = s[i+1]; c {
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	case 'u':
	default:
		return rune(c), i + 2
	}
	r := hex4(s[i+2:])
	i += 6
	if !utf16.IsSurrogate(r) {
		return r, i
	}
	if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
		if dec := utf16.DecodeRune(r, hex4(s[i+2:])); dec != utf8.RuneError {
			return dec, i + 6
		}
	}
	return utf8.RuneError, i
}

// hex4 decodes four hex digits that the lexer already validated; invalid
// input yields a value no caller treats as a surrogate pair half.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c-'0' < 10:
			c -= '0'
		case (c|0x20)-'a' < 6:
			c = (c | 0x20) - 'a' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
