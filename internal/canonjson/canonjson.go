// Package canonjson compares JSON texts as the values they denote, so that
// two servers that give the same answer in different spellings are not told
// apart: member order and spacing do not matter, strings compare after their
// escapes are decoded ("\u00e9" is "é"), and numbers compare by value (1,
// 1.0, 10e-1 and 0.1e1 are equal; integers of any size compare exactly, never
// through float64). A member that appears twice counts with its last value,
// as encoding/json reads it.
//
// Numbers are brought to one form: sign, significant digits without leading
// or trailing zeros, and a decimal exponent. Exponents written with more than
// 10,000 digits (no real number needs them) are compared by their text
// rather than their value, so that comparing hostile input stays linear.
//
// Differences are reported as paths (see Path) in a fixed order, members by
// name and array elements by index, so Diff(a, b) and Diff(b, a) list the
// same paths; each reported path can be given back as an ignore path.
package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Diff returns the places where a and b differ as JSON values, skipping the
// places (and everything below them) that one of ignore names. A member
// present on one side only is reported at its own path, an array element
// beyond the other array's end likewise, and values of different types at
// the place they differ. The error says which input is not JSON.
func Diff(a, b []byte, ignore []Path) ([]string, error) {
	va, err := decode(a)
	if err != nil {
		return nil, fmt.Errorf("first value: %w", err)
	}
	vb, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("second value: %w", err)
	}
	w := walker{ignore: ignore}
	w.walk(va, vb)
	return w.out, nil
}

// decode reads one JSON value, numbers kept as their text.
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("not JSON: no value")
		}
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("not JSON: data after the value at byte %d", dec.InputOffset()+1)
	}
	return v, nil
}

type walker struct {
	ignore []Path
	segs   []segment
	out    []string
}

func (w *walker) ignored() bool {
	for _, p := range w.ignore {
		if p.matches(w.segs) {
			return true
		}
	}
	return false
}

// differ records the current place as a difference unless it is ignored.
func (w *walker) differ() {
	if !w.ignored() {
		w.out = append(w.out, formatPath(w.segs))
	}
}

func (w *walker) walk(a, b any) {
	if w.ignored() {
		return
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			w.differ()
			return
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, dup := x[k]; !dup {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			w.segs = append(w.segs, segment{name: k})
			va, inA := x[k]
			vb, inB := y[k]
			if inA && inB {
				w.walk(va, vb)
			} else {
				w.differ()
			}
			w.segs = w.segs[:len(w.segs)-1]
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			w.differ()
			return
		}
		for i := range max(len(x), len(y)) {
			w.segs = append(w.segs, segment{index: i, isIndex: true})
			if i < len(x) && i < len(y) {
				w.walk(x[i], y[i])
			} else {
				w.differ()
			}
			w.segs = w.segs[:len(w.segs)-1]
		}
	case json.Number:
		y, ok := b.(json.Number)
		if !ok || canonNumber(string(x)) != canonNumber(string(y)) {
			w.differ()
		}
	default: // string, bool or nil: comparable, and of another type than b's when b is a map or slice
		if a != b {
			w.differ()
		}
	}
}

// number is a JSON number in one form per value: zero is {digits: "0"}.
type number struct {
	negative bool
	digits   string // significant digits, no leading or trailing zeros
	exp      string // the value is digits × 10^exp; exp in decimal
}

// canonNumber brings a JSON number (as the decoder checked it) to its one
// form.
func canonNumber(s string) number {
	var n number
	if strings.HasPrefix(s, "-") {
		n.negative, s = true, s[1:]
	}
	mant, expText := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, expText = s[:i], s[i+1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return number{digits: "0"} // -0, 0.000e5: zero has no sign or exponent
	}
	n.digits = strings.TrimRight(digits, "0")
	// value = (intPart frac as an integer) × 10^(exp − len(frac)); the
	// trailing zeros dropped from the digits move into the exponent.
	n.exp = addToExponent(expText, int64(len(digits)-len(n.digits))-int64(len(frac)))
	return n
}

// maxExpDigits bounds the exponents added exactly (big.Int parsing is
// quadratic in the number of digits).
const maxExpDigits = 10000

// addToExponent returns the decimal text of exp + adj; exp is the text after
// "e" ("" for none), adj is small (bounded by the length of the number).
func addToExponent(exp string, adj int64) string {
	neg := false
	switch {
	case strings.HasPrefix(exp, "-"):
		neg, exp = true, exp[1:]
	case strings.HasPrefix(exp, "+"):
		exp = exp[1:]
	}
	exp = strings.TrimLeft(exp, "0")
	switch {
	case len(exp) <= 18: // fits int64 with room for adj (|adj| < 2^53)
		e := int64(0)
		if exp != "" {
			e, _ = strconv.ParseInt(exp, 10, 64)
		}
		if neg {
			e = -e
		}
		return strconv.FormatInt(e+adj, 10)
	case len(exp) <= maxExpDigits:
		e, _ := new(big.Int).SetString(exp, 10)
		if neg {
			e.Neg(e)
		}
		return e.Add(e, big.NewInt(adj)).String()
	default:
		sign := ""
		if neg {
			sign = "-"
		}
		return sign + exp + "+" + strconv.FormatInt(adj, 10)
	}
}
