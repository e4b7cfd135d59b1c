package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"sort"
	"strconv"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/wire"
)

// Expectations are checked only for the calls that have one, so their cost
// (decoding the result) is paid only where a user asked for it.

// canonical returns v as canonical JSON: objects with sorted keys, no
// insignificant space, integers as integers and other numbers in Go's
// shortest float form, so that two encodings of the same value compare
// equal. ok is false for invalid JSON.
func canonical(dst, v []byte) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil || d.More() {
		return dst, false
	}
	return appendCanonical(dst, x), true
}

func appendCanonical(dst []byte, x any) []byte {
	switch v := x.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, v)
	case string:
		return wire.AppendString(dst, v)
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return strconv.AppendInt(dst, i, 10)
		}
		if f, err := strconv.ParseFloat(string(v), 64); err == nil && !math.IsInf(f, 0) {
			if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return strconv.AppendInt(dst, int64(f), 10) // 1.0 and 1e2 are the integers 1 and 100
			}
			return strconv.AppendFloat(dst, f, 'g', -1, 64)
		}
		return append(dst, v...) // beyond float64: compared as written
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendCanonical(dst, e)
		}
		return append(dst, ']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = wire.AppendString(dst, k)
			dst = append(dst, ':')
			dst = appendCanonical(dst, v[k])
		}
		return append(dst, '}')
	}
	return dst
}

// canonicalHash fingerprints a JSON value by its canonical form; 0 for
// invalid JSON (and never otherwise, in practice).
func canonicalHash(v []byte) uint64 {
	c, ok := canonical(nil, v)
	if !ok {
		return 0
	}
	return maphash.Bytes(canonSeed, c)
}

// expectation checks an answered reply m against call c's Expect, with the
// fingerprint of the params sent, and returns what failed ("" if nothing).
func expectation(c *callState, m *wire.Message, paramsHash uint64) string {
	e := &c.Expect
	switch {
	case e.ErrorCode != nil:
		if m.Kind != wire.KindError || !m.HasCode {
			return fmt.Sprintf("expected error %d, got a result", *e.ErrorCode)
		}
		if m.Code != *e.ErrorCode {
			return fmt.Sprintf("expected error %d, got error %d", *e.ErrorCode, m.Code)
		}
		return ""
	case m.Kind != wire.KindResult:
		if m.Kind == wire.KindError && m.HasCode {
			return fmt.Sprintf("expected a result, got error %d", m.Code)
		}
		return "expected a result"
	case e.ResultEqualsParams:
		if canonicalHash(m.Result) != paramsHash {
			return "the result is not the params sent (an echo of another request's params, or altered)"
		}
	case e.ResultEquals != nil:
		got, ok := canonical(nil, m.Result)
		want, _ := canonical(nil, e.ResultEquals)
		if !ok || !bytes.Equal(got, want) {
			return fmt.Sprintf("the result is not %.200s", want)
		}
	case e.Result != nil:
		d := json.NewDecoder(bytes.NewReader(m.Result))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return "the result is not JSON"
		}
		if err := e.Result.Validate(v); err != nil {
			return "the result does not match its schema: " + oneLine(err.Error(), 300)
		}
	}
	return ""
}

func oneLine(s string, n int) string {
	s = string(bytes.Join(bytes.Fields([]byte(s)), []byte(" ")))
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// expectFailed records a broken expectation with the frame and what failed.
func (j *judge) expectFailed(method uint16, frame []byte, why string) {
	j.rec.Record(stats.Sample{Kind: stats.Violation, Rule: check.ExpectationFailed, Method: method})
	if j.submitted[check.ExpectationFailed] < 2*stats.MaxSamplesPerRule {
		j.submitted[check.ExpectationFailed]++
		j.r.agg.KeepSample(check.ExpectationFailed, int(method), frame, why)
	}
}
