package oracle

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/wire"
)

// ID comparison outcomes.
const (
	idDifferent = iota
	idEqual
	idTypeChanged
)

// compareIDs compares a request id with a reply id, both raw JSON strings
// or numbers: strings by decoded content, numbers by exact decimal value
// (so 1e2 echoes 100), or as float64 when loose. A request string with
// invalid UTF-8 or a lone surrogate escape also matches the text a decoder
// reads from it, each bad stretch replaced by U+FFFD (raw or escaped; one
// per byte as Go does, or one per stretch as WHATWG decoders do). A string
// and a number of the same value are idTypeChanged. It allocates only for
// ids longer than a few dozen bytes.
func compareIDs(req, rep []byte, loose bool) int {
	reqStr, repStr := len(req) > 0 && req[0] == '"', len(rep) > 0 && rep[0] == '"'
	var bufA, bufB [64]byte
	switch {
	case reqStr && repStr:
		a, okA := unquoteName(bufA[:0], req)
		b, okB := unquoteName(bufB[:0], rep)
		if okA && okB && (bytes.Equal(a, b) || replacedText(req) && equalReplaced(a, b)) {
			return idEqual
		}
		return idDifferent
	case !reqStr && !repStr:
		if bytes.Equal(req, rep) || bytes.Equal(appendNumberKey(bufA[:0], req), appendNumberKey(bufB[:0], rep)) {
			return idEqual
		}
		if loose {
			a, errA := strconv.ParseFloat(string(req), 64)
			b, errB := strconv.ParseFloat(string(rep), 64)
			if errA == nil && errB == nil && a == b {
				return idEqual
			}
		}
		return idDifferent
	}
	str, number := req, rep
	if repStr {
		str, number = rep, req
	}
	content, ok := unquoteName(bufA[:0], str)
	if ok && wire.IsNumber(content) && bytes.Equal(appendNumberKey(bufB[:0], content), appendNumberKey(nil, number)) {
		return idTypeChanged
	}
	return idDifferent
}

// appendIDKey appends an index key for a raw string or number id: 's' and the
// decoded content, or 'n' and appendNumberKey. Decoding replaces invalid
// UTF-8 and lone surrogates with U+FFFD, and a run of U+FFFD keys as one,
// so that an id and its echo through any decoder share a key (compareIDs
// then judges the pair).
func appendIDKey(dst, id []byte) []byte {
	if len(id) > 0 && id[0] == '"' {
		start := len(dst) + 1
		if content, ok := wire.Unquote(append(dst, 's'), id); ok {
			if bytes.Contains(content[start:], replacementChar) {
				content = collapseReplacements(content, start)
			}
			return content
		}
		return append(append(dst, 'r'), id...)
	}
	return appendNumberKey(append(dst, 'n'), id)
}

// replacementChar is U+FFFD in UTF-8, what decoders put in place of text
// they cannot read.
var replacementChar = []byte("\uFFFD")

// replacedText reports whether the raw JSON string s holds text a decoder
// replaces with U+FFFD: invalid UTF-8 or a lone surrogate escape.
func replacedText(s []byte) bool {
	return !utf8.Valid(s) || bytes.Contains(s, []byte(`\u`)) && loneSurrogate(s)
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
// or number), carries the raw request id req as JudgeFuzzReply judges ids:
// an equal value of the same JSON type, the float64 nearest to a number id
// float64 cannot hold exactly, or the text a decoder reads from a string
// with invalid UTF-8 or lone surrogates. It is for pairing replies with
// the frames of a stream the way the oracle would, and does not allocate
// for ids up to a few dozen bytes.
func EchoesID(req, reply []byte) bool {
	loose := len(req) > 0 && req[0] != '"' && !safeInteger(req)
	return compareIDs(req, reply, loose) == idEqual
}

// appendNumberKey appends a canonical spelling of the JSON number raw: sign,
// significant digits without leading or trailing zeros, 'e', the decimal
// exponent of the point before them. Equal values spell the same (1, 1.0,
// 10e-1, -0 and 0); exponents past ±10^15 saturate, which only merges
// values no float64 holds anyway. Raw that is not a number is kept as is.
func appendNumberKey(dst, raw []byte) []byte {
	if k, ok := appendIntegerKey(dst, raw); ok {
		return k
	}
	if !wire.IsNumber(raw) {
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

// appendIntegerKey is appendNumberKey for plain integers (no fraction, no
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

// safeInteger reports whether the raw JSON number is an integer float64
// holds exactly: no fraction or exponent, magnitude at most 2^53.
func safeInteger(raw []byte) bool {
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

// skipJSONSpace returns the offset of the first byte at or after i that is
// not JSON whitespace.
func skipJSONSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}
