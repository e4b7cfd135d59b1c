package wire

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// Comparing ids the way a client pairs a response with its request: a
// reply's id answers a request's when it is the same JSON type and value,
// however a server's decoder and encoder respelled it. Servers respell ids
// in three ways the JSON text allows (RFC 8259 §6, §8.2): a number by its
// value (1e2 for 100), a number float64 cannot hold exactly rounded to the
// nearest float64 (JavaScript and many typed decoders), and a string with
// invalid UTF-8 or lone surrogate escapes with U+FFFD in their place (one
// per byte, as Go decodes, or one per bad stretch, as WHATWG decoders do).
// The fuzz oracle (internal/oracle) and the black-box fuzzer's pairing of
// stream replies (internal/fuzz) both compare ids with these functions.

// IDMatch is how a reply's id compares with a request's (CompareIDs).
type IDMatch uint8

// The outcomes of CompareIDs.
const (
	IDDifferent   IDMatch = iota // the reply's id is not the request's
	IDEqual                      // the same id, as the request's JSON type
	IDTypeChanged                // the same value as the other JSON type: 7 for "7"
)

// CompareIDs compares a request id with a reply id, both raw JSON strings
// or numbers: strings by decoded content, numbers by exact decimal value
// (so 1e2 echoes 100), or as float64 when loose. A request string with
// invalid UTF-8 or a lone surrogate escape also matches the text a decoder
// reads from it, each bad stretch replaced by U+FFFD (raw or escaped; one
// per byte as Go does, or one per stretch as WHATWG decoders do). A string
// and a number of the same value are IDTypeChanged. It allocates only for
// ids longer than a few dozen bytes.
func CompareIDs(req, rep []byte, loose bool) IDMatch {
	reqStr, repStr := len(req) > 0 && req[0] == '"', len(rep) > 0 && rep[0] == '"'
	var bufA, bufB, bufC [64]byte
	switch {
	case reqStr && repStr:
		a, okA := StringContent(bufA[:0], req)
		b, okB := StringContent(bufB[:0], rep)
		if okA && okB && (bytes.Equal(a, b) || replacedText(req) && equalReplaced(a, b)) {
			return IDEqual
		}
		return IDDifferent
	case !reqStr && !repStr:
		if bytes.Equal(req, rep) || bytes.Equal(AppendNumberKey(bufA[:0], req), AppendNumberKey(bufB[:0], rep)) {
			return IDEqual
		}
		if loose {
			a, errA := strconv.ParseFloat(string(req), 64)
			b, errB := strconv.ParseFloat(string(rep), 64)
			if errA == nil && errB == nil && a == b {
				return IDEqual
			}
		}
		return IDDifferent
	}
	str, number := req, rep
	if repStr {
		str, number = rep, req
	}
	content, ok := StringContent(bufA[:0], str)
	if ok && IsNumber(content) && bytes.Equal(AppendNumberKey(bufB[:0], content), AppendNumberKey(bufC[:0], number)) {
		return IDTypeChanged
	}
	return IDDifferent
}

// AppendIDKey appends an index key for a raw string or number id: 's' and
// the decoded content, 'n' and AppendNumberKey, or 'r' and the raw text of
// a string that does not decode. Decoding replaces invalid UTF-8 and lone
// surrogates with U+FFFD, and a run of U+FFFD keys as one, so that an id
// and its echo through any decoder share a key; numbers key by exact value,
// so a float64 echo of a number float64 cannot hold does not (CompareIDs
// with loose then judges the pair).
func AppendIDKey(dst, id []byte) []byte {
	if len(id) > 0 && id[0] == '"' {
		start := len(dst) + 1
		if content, ok := Unquote(append(dst, 's'), id); ok {
			if bytes.Contains(content[start:], replacementChar) {
				content = collapseReplacements(content, start)
			}
			return content
		}
		return append(append(dst, 'r'), id...)
	}
	return AppendNumberKey(append(dst, 'n'), id)
}

// replacementChar is U+FFFD in UTF-8, what decoders put in place of text
// they cannot read.
var replacementChar = []byte("\uFFFD")

// replacedText reports whether the raw JSON string s holds text a decoder
// replaces with U+FFFD: invalid UTF-8 or a lone surrogate escape.
func replacedText(s []byte) bool {
	return !utf8.Valid(s) || bytes.Contains(s, []byte(`\u`)) && HasLoneSurrogate(s)
}

// equalReplaced reports whether the decoded strings a and b are equal when
// every run of U+FFFD or invalid UTF-8 in either counts as one character:
// decoders replace a bad byte sequence with one U+FFFD per byte (Go) or
// one per maximal bad stretch (WHATWG, Python).
func equalReplaced(a, b []byte) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ra, na := utf8.DecodeRune(a[i:])
		rb, nb := utf8.DecodeRune(b[j:])
		if ra != rb {
			return false
		}
		if ra == utf8.RuneError {
			i, j = skipReplaced(a, i), skipReplaced(b, j)
			continue
		}
		i, j = i+na, j+nb
	}
	return i == len(a) && j == len(b)
}

// skipReplaced returns the offset after the run of U+FFFD and invalid
// UTF-8 starting at s[i].
func skipReplaced(s []byte, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRune(s[i:])
		if r != utf8.RuneError {
			break
		}
		i += n
	}
	return i
}

// collapseReplacements shortens every run of U+FFFD in key[from:] to one,
// in place.
func collapseReplacements(key []byte, from int) []byte {
	out := from
	prev := false
	for i := from; i < len(key); {
		if bytes.HasPrefix(key[i:], replacementChar) {
			if !prev {
				out += copy(key[out:], replacementChar)
			}
			prev = true
			i += len(replacementChar)
			continue
		}
		prev = false
		key[out] = key[i]
		out++
		i++
	}
	return key[:out]
}

// EchoesID reports whether reply, the raw id of a response (a JSON string
// or number), carries the raw request id req as the fuzz oracle judges ids:
// an equal value of the same JSON type, the float64 nearest to a number id
// float64 cannot hold exactly, or the text a decoder reads from a string
// with invalid UTF-8 or lone surrogates. It is for pairing replies with
// requests the way the oracle would, and does not allocate
// for ids up to a few dozen bytes.
func EchoesID(req, reply []byte) bool {
	loose := len(req) > 0 && req[0] != '"' && !SafeInteger(req)
	return CompareIDs(req, reply, loose) == IDEqual
}

// AppendNumberKey appends a canonical spelling of the JSON number raw: sign,
// significant digits without leading or trailing zeros, 'e', the decimal
// exponent of the point before them. Equal values spell the same (1, 1.0,
// 10e-1, -0 and 0); exponents past ±10^15 saturate, which only merges
// values no float64 holds anyway. Raw that is not a number is kept as is.
func AppendNumberKey(dst, raw []byte) []byte {
	if k, ok := appendIntegerKey(dst, raw); ok {
		return k
	}
	if !IsNumber(raw) {
		return append(append(dst, '?'), raw...)
	}
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	mant, exp := raw, int64(0)
	if i := bytes.IndexAny(raw, "eE"); i >= 0 {
		mant, exp = raw[:i], parseExponent(raw[i+1:])
	}
	intPart, frac := mant, []byte(nil)
	if i := bytes.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	digit := func(i int) byte {
		if i < len(intPart) {
			return intPart[i]
		}
		return frac[i-len(intPart)]
	}
	n := len(intPart) + len(frac)
	lead := 0
	for lead < n && digit(lead) == '0' {
		lead++
	}
	if lead == n {
		return append(dst, '0')
	}
	end := n
	for digit(end-1) == '0' {
		end--
	}
	if neg {
		dst = append(dst, '-')
	}
	for i := lead; i < end; i++ {
		dst = append(dst, digit(i))
	}
	point := clampExp(int64(len(intPart)-lead) + exp)
	return strconv.AppendInt(append(dst, 'e'), point, 10)
}

// appendIntegerKey is AppendNumberKey for plain integers (no fraction, no
// exponent, no leading zero), the ids of most requests, without its general
// walk; false for other text.
func appendIntegerKey(dst, raw []byte) ([]byte, bool) {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || digits[0] == '0' && len(digits) > 1 {
		return dst, false
	}
	end := len(digits)
	for _, c := range digits {
		if c < '0' || c > '9' {
			return dst, false
		}
	}
	if digits[0] == '0' {
		return append(dst, '0'), true
	}
	for digits[end-1] == '0' {
		end--
	}
	if len(digits) < len(raw) {
		dst = append(dst, '-')
	}
	dst = append(dst, digits[:end]...)
	return strconv.AppendInt(append(dst, 'e'), int64(len(digits)), 10), true
}

const expClamp = 1_000_000_000_000_000

func clampExp(e int64) int64 {
	return max(-expClamp, min(expClamp, e))
}

// parseExponent reads an exponent's optional sign and digits, saturating.
func parseExponent(b []byte) int64 {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg, b = b[0] == '-', b[1:]
	}
	var e int64
	for _, c := range b {
		if e < expClamp {
			e = e*10 + int64(c-'0')
		}
	}
	if neg {
		e = -e
	}
	return clampExp(e)
}

// SafeInteger reports whether the raw JSON number is an integer float64
// holds exactly: no fraction or exponent, magnitude at most 2^53.
func SafeInteger(raw []byte) bool {
	digits := bytes.TrimPrefix(raw, []byte("-"))
	if len(digits) == 0 || len(digits) > 16 {
		return false
	}
	var n uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + uint64(c-'0')
	}
	return n <= 1<<53
}

// StringContent returns the content of the raw JSON string s without its
// quotes: s's own bytes when it has no escapes (invalid UTF-8 left as it
// is), else s decoded as Unquote does, appended to dst. ok is false when s
// is not a quoted string or does not decode.
func StringContent(dst, s []byte) (content []byte, ok bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return dst, false
	}
	if bytes.IndexByte(s, '\\') < 0 {
		return s[1 : len(s)-1], true
	}
	return Unquote(dst, s)
}

// HasLoneSurrogate reports whether the raw JSON string s has a \u escape
// of a UTF-16 surrogate that is not part of a high-low pair: text a decoder
// replaces with U+FFFD (RFC 8259 §8.2 leaves the outcome open).
func HasLoneSurrogate(s []byte) bool {
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
