package canonjson

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Append appends the canonical text of the JSON value v to dst: members
// sorted by name (a repeated name counts with its last value, as in Diff),
// no insignificant space, strings with one escaping, and every number in
// the one form Diff compares by (1, 1.0 and 10e-1 are all 1; integers of any
// size stay exact). Two values Diff finds equal have the same canonical
// text, so it can be compared or hashed. The error says v is not JSON.
func Append(dst, v []byte) ([]byte, error) {
	x, err := decode(v)
	if err != nil {
		return dst, err
	}
	return appendValue(dst, x), nil
}

func appendValue(dst []byte, x any) []byte {
	switch v := x.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, v)
	case string:
		return appendString(dst, v)
	case json.Number:
		return canonNumber(string(v)).appendTo(dst)
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, e)
		}
		return append(dst, ']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendValue(dst, v[k])
		}
		return append(dst, '}')
	}
	return dst
}

// appendString writes s as a JSON string (encoding/json's escaping).
func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}

// maxPlainDigits bounds the digits of a number written without an
// exponent, so a short text like 1e999999 stays short.
const maxPlainDigits = 21

// appendTo writes n as JSON: an integer in full when it has at most
// maxPlainDigits digits, a decimal fraction when it is not too small,
// otherwise d.ddde±x. An exponent too large to compute with (Diff compares
// those by text) keeps that text, which is not JSON.
func (n number) appendTo(dst []byte) []byte {
	if n.exp == "" {
		return append(dst, n.digits...) // zero
	}
	if n.negative {
		dst = append(dst, '-')
	}
	e, err := strconv.ParseInt(n.exp, 10, 64)
	if err != nil || e > 1<<40 || e < -1<<40 {
		dst = append(dst, n.digits...)
		return append(append(dst, 'e'), n.exp...)
	}
	point := int64(len(n.digits)) + e // digits before the decimal point
	switch {
	case e >= 0 && point <= maxPlainDigits:
		dst = append(dst, n.digits...)
		return append(dst, strings.Repeat("0", int(e))...)
	case e < 0 && point > 0:
		dst = append(dst, n.digits[:point]...)
		return append(append(dst, '.'), n.digits[point:]...)
	case e < 0 && point > -6:
		dst = append(dst, "0."...)
		dst = append(dst, strings.Repeat("0", int(-point))...)
		return append(dst, n.digits...)
	}
	dst = append(dst, n.digits[0])
	if len(n.digits) > 1 {
		dst = append(append(dst, '.'), n.digits[1:]...)
	}
	return strconv.AppendInt(append(dst, 'e'), point-1, 10)
}
