package wire

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// IDFormat is how the load generator writes its counter ids.
type IDFormat uint8

// ID formats. Both exist because servers must echo the id with the same JSON
// type, and testing that needs requests of either type. The string format is
// named IDQuoted, not IDString, because IDString already names the IDKind of
// a string id and both live in this package.
const (
	IDInt    IDFormat = iota // 42
	IDQuoted                 // "42"
)

// AppendID appends counter id n in format f. Formats other than IDQuoted are
// written as IDInt.
func AppendID(dst []byte, n uint64, f IDFormat) []byte {
	if f == IDQuoted {
		dst = append(dst, '"')
		dst = strconv.AppendUint(dst, n, 10)
		return append(dst, '"')
	}
	return strconv.AppendUint(dst, n, 10)
}

// ParseCounterID reads back an id that AppendID could have written: a JSON
// integer 0..2^64-1 without sign, fraction, exponent or leading zeros, or a
// JSON string holding exactly such digits (no escapes). ok=false otherwise.
//
// It is deliberately stricter than JSON so that an id the server re-spelled
// (7.0, "\u0037", 07) counts as a mismatch instead of matching a pending call.
func ParseCounterID(raw []byte) (n uint64, f IDFormat, ok bool) {
	f = IDInt
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		f, raw = IDQuoted, raw[1:len(raw)-1]
	}
	if len(raw) == 0 || len(raw) > 20 || (raw[0] == '0' && len(raw) > 1) {
		return 0, IDInt, false
	}
	for _, c := range raw {
		d := uint64(c - '0')
		if d > 9 {
			return 0, IDInt, false
		}
		// n*10+d overflows exactly when n exceeds (MaxUint64-d)/10, which
		// only the 20th digit can do (19 digits stay below 10^19 < 2^64).
		if len(raw) == 20 && n > (1<<64-1-d)/10 {
			return 0, IDInt, false
		}
		n = n*10 + d
	}
	return n, f, true
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string (quotes, escaping per RFC 8259;
// invalid UTF-8 replaced by U+FFFD like encoding/json, but NO HTML escaping).
// U+2028 and U+2029 are escaped like encoding/json does, so the output is
// byte-identical to a json.Encoder with SetEscapeHTML(false).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendRequest appends {"jsonrpc":"2.0","id":<id>,"method":<method>,"params":<params>}.
// method is a pre-encoded JSON string (from AppendString); params is raw JSON
// or nil (then the params member is left out). Zero allocations when dst has room.
// An empty non-nil params is treated like nil, since "" is not JSON.
func AppendRequest(dst []byte, n uint64, f IDFormat, method, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = AppendID(dst, n, f)
	return appendCall(dst, ',', method, params)
}

// AppendNotification is AppendRequest without an id.
func AppendNotification(dst []byte, method, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	return appendCall(dst, ',', method, params)
}

func appendCall(dst []byte, sep byte, method, params []byte) []byte {
	dst = append(dst, sep)
	dst = append(dst, `"method":`...)
	dst = append(dst, method...)
	if len(params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendResult appends {"jsonrpc":"2.0","id":<id>,"result":<result>} (id raw JSON; nil id => null).
// A nil result is written as null because a success response must carry one.
func AppendResult(dst []byte, id, result []byte) []byte {
	dst = appendResponseHead(dst, id)
	dst = append(dst, `,"result":`...)
	dst = appendRaw(dst, result)
	return append(dst, '}')
}

// AppendError appends {"jsonrpc":"2.0","id":<id>,"error":{"code":c,"message":<msg>[,"data":<data>]}}
// (id raw JSON, nil => null; message as Go string, escaped; data raw JSON or nil).
func AppendError(dst []byte, id []byte, code int64, message string, data []byte) []byte {
	dst = appendResponseHead(dst, id)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, code, 10)
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, message)
	if len(data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, data...)
	}
	return append(dst, '}', '}')
}

func appendResponseHead(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	return appendRaw(dst, id)
}

// appendRaw writes raw JSON, standing in null for a missing value so the
// output stays valid JSON.
func appendRaw(dst, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, raw...)
}

// Unquote returns the contents of a raw JSON string (e.g. Message.Method)
// appended to dst, decoding escapes; ok=false if raw is not a valid JSON string.
// Lone surrogate escapes and invalid UTF-8 bytes become U+FFFD, as with
// encoding/json. On failure dst is returned unchanged.
func Unquote(dst, raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return dst, false
	}
	end, fl := str(raw, 0)
	if end != len(raw) {
		return dst, false
	}
	s := raw[1 : len(raw)-1]
	if fl == 0 {
		return append(dst, s...), true
	}
	for i := 0; i < len(s); {
		if c := s[i]; c != '\\' && c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		var r rune
		r, i = nextRune(s, i)
		dst = utf8.AppendRune(dst, r)
	}
	return dst, true
}

// AppendFloat appends f as encoding/json writes a float of that many bits
// (64 or 32): the shortest form that reads back, with an exponent only
// below 1e-6 or from 1e21 on, and no leading zero in a negative exponent
// (1e-7, not 1e-07). f must be finite.
func AppendFloat(dst []byte, f float64, bits int) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
