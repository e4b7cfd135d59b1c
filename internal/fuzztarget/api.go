package fuzztarget

// The OpenRPC surface: rpc.discover and countdown, the method that plants
// negative_int. echo and add stay in server.go, beside call.

import (
	"bytes"
	_ "embed" // the OpenRPC document
	"encoding/json"
	"strconv"

	"github.com/rpcload/rpcload/internal/wire"
)

// openRPCSource describes echo, add and countdown as an OpenRPC document,
// the answer to rpc.discover: what an API-aware fuzzer reads to make
// schema-valid and schema-invalid params.
//
//go:embed openrpc.json
var openRPCSource []byte

// openRPCDoc is openRPCSource compacted once: a result must fit on one line
// of newline framing.
var openRPCDoc = mustCompact("openrpc.json", openRPCSource)

// mustCompact compacts an embedded JSON file; a broken one is a build-time
// mistake the package's tests catch, so it panics.
func mustCompact(name string, src []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, src); err != nil {
		panic("fuzztarget: " + name + ": " + err.Error())
	}
	return b.Bytes()
}

// discover answers rpc.discover: the document, for params that are absent,
// [] or {}.
func discover(id []byte, params *member) []byte {
	if params != nil && len(items(params.val)) > 0 {
		return errorReply(id, wire.CodeInvalidParams, msgInvalidParams, "rpc.discover takes no params")
	}
	return wire.AppendResult(nil, id, openRPCDoc)
}

// The bounds of countdown's n (its schema in openrpc.json).
const (
	countdownMin = -1000000
	countdownMax = 1000
)

// countdown answers [n, n-1, ..., 0] to {"n": n}, and [] for n < 0, where
// negative_int crashes: the handler's bug is a negative n that passed
// validation, so params that break the schema never reach it.
func (s *Server) countdown(id []byte, params *member) []byte {
	n, why := countdownParam(params)
	if why != "" {
		return errorReply(id, wire.CodeInvalidParams, msgInvalidParams, why)
	}
	if n < 0 {
		if s.bugs&NegativeInt != 0 {
			panic(Crash{NegativeInt})
		}
		return wire.AppendResult(nil, id, []byte("[]"))
	}
	out := make([]byte, 0, 5*(n+1)+2)
	out = append(out, '[')
	for i := n; i >= 0; i-- {
		out = strconv.AppendInt(out, i, 10)
		if i > 0 {
			out = append(out, ',')
		}
	}
	return wire.AppendResult(nil, id, append(out, ']'))
}

// countdownParam validates countdown's params against its schema and
// returns n, or what is wrong.
func countdownParam(params *member) (n int64, why string) {
	const usage = `countdown takes params by name: {"n": integer}`
	switch {
	case params == nil:
		return 0, usage + `; n is missing`
	case params.kind() != kindObject:
		return 0, usage + `, not an array`
	}
	ms := items(params.val)
	if name, ok := unknownMember(ms, "n"); ok {
		return 0, "unknown param " + strconv.Quote(name) + " (countdown takes only n)"
	}
	m := last(ms, "n")
	if m == nil {
		return 0, usage + `; n is missing`
	}
	n, integer, inRange := schemaInt(m.val, countdownMin, countdownMax)
	switch {
	case !integer:
		return 0, "n must be an integer"
	case !inRange:
		return 0, "n must be between -1000000 and 1000"
	}
	return n, ""
}

// last returns the last member named key (the one encoding/json would
// keep), or nil.
func last(ms []member, key string) *member {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].key == key {
			return &ms[i]
		}
	}
	return nil
}

// unknownMember returns the first member name of ms that is not in known:
// what "additionalProperties": false refuses.
func unknownMember(ms []member, known ...string) (string, bool) {
	for _, m := range ms {
		found := false
		for _, k := range known {
			found = found || m.key == k
		}
		if !found {
			return m.key, true
		}
	}
	return "", false
}

// schemaInt reads raw, a value the parser accepted, as JSON Schema reads an
// integer bounded by lo and hi (both below 10^18 in magnitude): integer is
// true for a number whose fractional part is zero however it is written (5,
// 5.0, 5e0, 0.5e1, -0), as santhosh-tekuri/jsonschema decides it, exactly;
// inRange is true when it is also within [lo, hi], and v is then its value.
// The text is read digit by digit, never converted whole, so no exponent is
// too large for it (1e999999999 is an integer, out of range).
func schemaInt(raw []byte, lo, hi int64) (v int64, integer, inRange bool) {
	if kindOf(raw[0]) != kindNumber {
		return 0, false, false
	}
	neg := raw[0] == '-'
	i := 0
	if neg {
		i++
	}
	// The significant digits, leading zeros dropped; point is how many of
	// them stand before the decimal point.
	var digits []byte
	point, seenPoint := 0, false
	for ; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c >= '0' && c <= '9':
			if c == '0' && len(digits) == 0 {
				if seenPoint {
					point-- // 0.05: the 5 stands one place further right
				}
				continue
			}
			digits = append(digits, c)
			if !seenPoint {
				point++
			}
			continue
		case c == '.':
			seenPoint = true
			continue
		}
		break
	}
	digits = bytes.TrimRight(digits, "0")
	if len(digits) == 0 {
		return 0, true, lo <= 0 && 0 <= hi // zero, however written
	}
	if i < len(raw) { // the exponent
		point += exponent(raw[i+1:])
	}
	if len(digits) > point {
		return 0, false, false // a significant digit after the point
	}
	if point > 18 {
		return 0, true, false // at least 10^18: beyond the bounds
	}
	for k := range point {
		d := int64(0)
		if k < len(digits) {
			d = int64(digits[k] - '0')
		}
		v = 10*v + d
	}
	if neg {
		v = -v
	}
	return v, true, lo <= v && v <= hi
}

// exponent reads the digits of an exponent after its 'e' ("-3", "+21",
// "7"), saturating far beyond any place a frame's digits can reach.
func exponent(e []byte) int {
	neg := len(e) > 0 && e[0] == '-'
	if len(e) > 0 && (e[0] == '-' || e[0] == '+') {
		e = e[1:]
	}
	const limit = 1 << 40
	x := 0
	for _, c := range e {
		if x < limit {
			x = 10*x + int(c-'0')
		}
	}
	if neg {
		return -x
	}
	return x
}
