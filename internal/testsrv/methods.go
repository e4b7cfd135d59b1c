package testsrv

import (
	"bytes"
	"math"
	"strconv"
	"time"

	"github.com/rpcload/rpcload/internal/wire"
)

// Method service times and bounds. The first two reproduce the demo server
// that the docs walk through; the bounds keep one request from holding a
// connection (or a CPU) for longer than a test or benchmark can wait.
const (
	weatherDelay  = 300 * time.Millisecond
	convertDelay  = 100 * time.Millisecond
	maxSleepMS    = 10 * 60 * 1000 // 10 minutes
	maxSpinUS     = 1_000_000      // 1 second
	blockInterval = time.Second    // eth_blockNumber grows by one per interval
	chainID       = `"0x539"`      // 1337, the usual dev-chain id
)

// Parameter names by method, in positional order.
var (
	namesWeather = []string{"city"}
	namesConvert = []string{"value", "factor"}
	namesAdd     = []string{"a", "b"}
	namesSleep   = []string{"ms"}
	namesSpin    = []string{"us"}
)

// call runs method (a raw JSON string) with raw params and sets part i.
func (p *proc) call(i int, method, params []byte) {
	if len(method) < 2 {
		p.fail(i, wire.CodeMethodNotFound, msgMethodNotFound, method)
		return
	}
	name := method[1 : len(method)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		// "get\u005ftime" is get_time: compare decoded names, not spellings.
		p.name, _ = wire.Unquote(p.name[:0], method)
		name = p.name
	}
	var v [2][]byte
	switch string(name) {
	case "get_time":
		if p.bind(i, "get_time", params, nil, &v) {
			t := p.s.now().UTC()
			lo := len(p.scratch)
			p.scratch = append(p.scratch, '"')
			p.scratch = append2(p.scratch, t.Hour())
			p.scratch = append(p.scratch, ':')
			p.scratch = append2(p.scratch, t.Minute())
			p.scratch = append(p.scratch, '"')
			p.okScratch(i, lo)
		}
	case "echo":
		if params == nil {
			params = nullJSON
		}
		p.ok(i, params)
	case "add":
		if p.bind(i, "add", params, namesAdd, &v) {
			p.arith(i, v[0], v[1], "a", "b", false)
		}
	case "convert":
		if p.bind(i, "convert", params, namesConvert, &v) {
			p.arith(i, v[0], v[1], "value", "factor", true)
			p.parts[i].delay = convertDelay
		}
	case "lookup_weather":
		if p.bind(i, "lookup_weather", params, namesWeather, &v) {
			if len(v[0]) == 0 || v[0][0] != '"' {
				p.badParams(i, "city must be a string", "")
				return
			}
			lo := len(p.scratch)
			p.scratch = append(p.scratch, `{"city":`...)
			p.scratch = append(p.scratch, v[0]...)
			p.scratch = append(p.scratch, `,"temp_c":11}`...)
			p.okScratch(i, lo)
			p.parts[i].delay = weatherDelay
		}
	case "sleep":
		if p.bind(i, "sleep", params, namesSleep, &v) {
			if d, ok := p.bounded(i, v[0], "ms", maxSleepMS, time.Millisecond); ok {
				p.ok(i, trueJSON)
				p.parts[i].delay = d
			}
		}
	case "spin":
		if p.bind(i, "spin", params, namesSpin, &v) {
			if d, ok := p.bounded(i, v[0], "us", maxSpinUS, time.Microsecond); ok {
				p.ok(i, trueJSON)
				p.parts[i].spin = d
			}
		}
	case "eth_blockNumber":
		if p.bind(i, "eth_blockNumber", params, nil, &v) {
			n := uint64(1)
			if el := p.s.now().Sub(p.s.start); el > 0 {
				n += uint64(el / blockInterval)
			}
			lo := len(p.scratch)
			p.scratch = append(p.scratch, `"0x`...)
			p.scratch = strconv.AppendUint(p.scratch, n, 16)
			p.scratch = append(p.scratch, '"')
			p.okScratch(i, lo)
		}
	case "eth_chainId":
		if p.bind(i, "eth_chainId", params, nil, &v) {
			p.ok(i, []byte(chainID))
		}
	case "rpc.discover":
		p.ok(i, openRPCDoc)
	default:
		// The raw name is already a valid JSON string (UTF-8 was checked), so it
		// is the data as is. Other rpc.* names land here too.
		p.fail(i, wire.CodeMethodNotFound, msgMethodNotFound, method)
	}
}

var (
	nullJSON = []byte("null")
	trueJSON = []byte("true")
)

func append2(dst []byte, n int) []byte {
	return append(dst, byte('0'+n/10%10), byte('0'+n%10))
}

// bind matches params to names, by position (array) or by name (object), and
// fills v. Every name is required; extra, unknown and repeated names are
// errors, so a typo is reported instead of silently ignored. On failure part i
// becomes -32602 and bind returns false.
func (p *proc) bind(i int, method string, params []byte, names []string, v *[2][]byte) bool {
	if params == nil {
		if len(names) > 0 {
			return p.badParams(i, "missing param: ", names[0])
		}
		return true
	}
	// One of the two walks runs, picked by the first byte; both are wire's.
	obj, isObj := wire.ObjectMembers(params)
	arr, isArr := wire.ArrayElements(params)
	if !isObj && !isArr {
		return p.badParams(i, "params must be an array or an object", "")
	}
	for n := 0; ; n++ {
		var key, val []byte
		var ok bool
		if isObj {
			key, val, ok = obj.Next()
		} else {
			val, ok = arr.Next()
		}
		if !ok {
			break
		}
		if len(names) == 0 {
			return p.badParams(i, method, " takes no params")
		}
		if !isObj {
			if n >= len(names) {
				return p.badParams(i, "too many params for ", method)
			}
			v[n] = val
			continue
		}
		k := p.keyName(key)
		j := 0
		for j < len(names) && names[j] != string(k) {
			j++
		}
		switch {
		case j == len(names):
			return p.badParams(i, "unknown param: ", string(k))
		case v[j] != nil:
			return p.badParams(i, "duplicate param: ", string(k))
		}
		v[j] = val
	}
	for j, name := range names {
		if v[j] == nil {
			return p.badParams(i, "missing param: ", name)
		}
	}
	return true
}

// keyName returns the decoded name of a raw object key.
func (p *proc) keyName(key []byte) []byte {
	if len(key) < 2 {
		return nil
	}
	if bytes.IndexByte(key, '\\') < 0 {
		return key[1 : len(key)-1]
	}
	p.name, _ = wire.Unquote(p.name[:0], key)
	return p.name
}

// badParams sets part i to -32602 with data a+b (a JSON string) and returns
// false so callers can `return p.badParams(...)`.
func (p *proc) badParams(i int, a, b string) bool {
	lo := len(p.scratch)
	p.scratch = append(p.scratch, '"')
	p.scratch = appendEscaped(p.scratch, a)
	p.scratch = appendEscaped(p.scratch, b)
	p.scratch = append(p.scratch, '"')
	p.failScratch(i, wire.CodeInvalidParams, msgInvalidParams, lo)
	return false
}

// appendEscaped appends s escaped as JSON string contents (no quotes).
func appendEscaped(dst []byte, s string) []byte {
	start := len(dst)
	dst = wire.AppendString(dst, s)
	copy(dst[start:], dst[start+1:len(dst)-1])
	return dst[:len(dst)-2]
}

// bounded reads a number in [0, limit] and scales it to a duration.
func (p *proc) bounded(i int, raw []byte, name string, limit float64, unit time.Duration) (time.Duration, bool) {
	f, _, _, ok := number(raw)
	if !ok || f < 0 || f > limit {
		lo := len(p.scratch)
		p.scratch = append(p.scratch, '"')
		p.scratch = append(p.scratch, name...)
		p.scratch = append(p.scratch, " must be a number between 0 and "...)
		p.scratch = strconv.AppendFloat(p.scratch, limit, 'f', -1, 64)
		p.scratch = append(p.scratch, '"')
		p.failScratch(i, wire.CodeInvalidParams, msgInvalidParams, lo)
		return 0, false
	}
	return time.Duration(f * float64(unit)), true
}

// arith sets part i to x+y (or x*y): exact for integers that fit int64, a
// float64 otherwise. A result that is not finite has no JSON form: -32602.
func (p *proc) arith(i int, x, y []byte, xn, yn string, mul bool) {
	fx, ix, xint, ok := number(x)
	if !ok {
		p.badParams(i, xn, " must be a finite number")
		return
	}
	fy, iy, yint, ok := number(y)
	if !ok {
		p.badParams(i, yn, " must be a finite number")
		return
	}
	lo := len(p.scratch)
	if xint && yint {
		if r, ok := intOp(ix, iy, mul); ok {
			p.scratch = strconv.AppendInt(p.scratch, r, 10)
			p.okScratch(i, lo)
			return
		}
	}
	r := fx + fy
	if mul {
		r = fx * fy
	}
	if math.IsInf(r, 0) || math.IsNaN(r) {
		p.badParams(i, "result is out of range", "")
		return
	}
	p.scratch = wire.AppendFloat(p.scratch, r, 64)
	p.okScratch(i, lo)
}

// intOp computes x+y or x*y, reporting overflow.
func intOp(x, y int64, mul bool) (int64, bool) {
	if !mul {
		r := x + y
		return r, (x^r)&(y^r) >= 0
	}
	if x == 0 || y == 0 {
		return 0, true
	}
	r := x * y
	if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
		return 0, false
	}
	return r, true
}

// number parses a raw JSON number. isInt means an integer literal that fits
// int64 (i is exact). ok is false for non-numbers and for numbers that do not
// fit a float64.
func number(raw []byte) (f float64, i int64, isInt, ok bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, 0, false, false
	}
	if !bytes.ContainsAny(raw, ".eE") {
		if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return float64(v), v, true, true
		}
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, 0, false, false
	}
	return v, 0, false, true
}
