package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// asMap accepts both shapes a YAML or JSON decoder gives a mapping.
func asMap(v any) (map[string]any, bool) {
	switch v := v.(type) {
	case map[string]any:
		return v, true
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			s, ok := k.(string)
			if !ok {
				s = fmt.Sprint(k) // reported as an unknown key by the caller
			}
			m[s] = e
		}
		return m, true
	}
	return nil, false
}

// toInt64 accepts every integer kind, json.Number and integral floats (JSON
// decoders give float64 for every number).
func toInt64(v any) (int64, bool) {
	switch v := v.(type) {
	case int:
		return int64(v), true
	case int8:
		return int64(v), true
	case int16:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case uint:
		return int64(v), uint64(v) <= math.MaxInt64
	case uint8:
		return int64(v), true
	case uint16:
		return int64(v), true
	case uint32:
		return int64(v), true
	case uint64:
		return int64(v), v <= math.MaxInt64
	case float32:
		return floatToInt(float64(v))
	case float64:
		return floatToInt(v)
	case json.Number:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return n, true
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return 0, false
		}
		return floatToInt(f)
	}
	return 0, false
}

func floatToInt(f float64) (int64, bool) {
	// -2^63 is exact in float64; 2^63 is the first value out of range.
	if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// toFloat64 accepts every number kind.
func toFloat64(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	case uint:
		return float64(v), true
	case uint64:
		return float64(v), true
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		return f, err == nil
	}
	n, ok := toInt64(v)
	return float64(n), ok
}

// toQuantity reads an Ethereum quantity bound: a non-negative integer or a
// "0x" hex string (leading zeros allowed here, since it is input).
func toQuantity(v any) (uint64, bool) {
	switch v := v.(type) {
	case string:
		h, ok := strings.CutPrefix(v, "0x")
		if !ok || h == "" {
			return 0, false
		}
		n, err := strconv.ParseUint(h, 16, 64)
		return n, err == nil
	case uint:
		return uint64(v), true
	case uint64:
		return v, true
	case float64:
		if v >= 0 && v < 1<<64 && v == math.Trunc(v) {
			return uint64(v), true
		}
		return 0, false
	case json.Number:
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err == nil {
			return n, true
		}
	}
	n, ok := toInt64(v)
	return uint64(n), ok && n >= 0
}

// describe names a value in an error: short, and as the user wrote it.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return strconv.Quote(v)
	case []any:
		return fmt.Sprintf("a list of %d", len(v))
	case map[string]any, map[any]any:
		return "a mapping"
	case bool:
		return strconv.FormatBool(v)
	}
	if f, ok := toFloat64(v); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprintf("a %T", v)
}

// appendCompact appends raw JSON without insignificant space.
func appendCompact(dst, raw []byte) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return dst, err
	}
	return append(dst, b.Bytes()...), nil
}
