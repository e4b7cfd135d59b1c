package gen

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/wire"
)

// generatorFor returns the compiler of a generator, which runs at the path
// of the generator's key and gets the key's value. A switch rather than a
// map: a map of methods would be an initialization cycle, since compiling a
// $choice compiles nested generators.
func generatorFor(name string) func(c *compiler, arg any) {
	switch name {
	case "$int":
		return (*compiler).genInt
	case "$float":
		return (*compiler).genFloat
	case "$string":
		return (*compiler).genString
	case "$choice":
		return (*compiler).genChoice
	case "$weighted":
		return (*compiler).genWeighted
	case "$seq":
		return (*compiler).genSeq
	case "$uuid":
		return (*compiler).genUUID
	case "$hex":
		return (*compiler).genHex
	case "$hexint":
		return (*compiler).genHexInt
	case "$now":
		return (*compiler).genNow
	case "$feed":
		return (*compiler).genFeed
	}
	return nil
}

// knownGenerators lists the names for the unknown-generator error; keep it
// in step with generatorFor (a test checks).
const knownGenerators = "$choice, $feed, $float, $hex, $hexint, $int, $now, $seq, $string, $uuid, $weighted"

func (c *compiler) generator(name string, arg any) {
	g := generatorFor(name)
	if g == nil {
		c.errorf("unknown generator %s; known generators: %s (write $%s for a literal key)", name, knownGenerators, name)
		c.lit = append(c.lit, "null"...)
		return
	}
	n := len(c.errs)
	g(c, arg)
	if len(c.errs) > n {
		// Keep the output well formed so later values are still checked.
		c.lit = append(c.lit, "null"...)
	}
}

// pair reads a [min, max] argument.
func (c *compiler) pair(arg any, example string) (lo, hi any, ok bool) {
	l, isList := arg.([]any)
	if !isList || len(l) != 2 {
		c.errorf("expected [min, max], e.g. %s; got %s", example, describe(arg))
		return nil, nil, false
	}
	return l[0], l[1], true
}

func (c *compiler) genInt(arg any) {
	a, b, ok := c.pair(arg, "{$int: [1, 100]}")
	if !ok {
		return
	}
	lo, ok1 := c.intAt(0, a)
	hi, ok2 := c.intAt(1, b)
	if !ok1 || !ok2 {
		return
	}
	if lo > hi {
		c.errorf("min %d is greater than max %d", lo, hi)
		return
	}
	c.emit(op{kind: opInt, i0: lo, u1: uint64(hi) - uint64(lo)})
}

// intAt reads an int64 element of a list argument, naming it in the path.
func (c *compiler) intAt(i int, v any) (int64, bool) {
	c.push(i)
	defer c.pop()
	n, ok := toInt64(v)
	if !ok {
		c.errorf("expected an integer, got %s", describe(v))
	}
	return n, ok
}

func (c *compiler) genFloat(arg any) {
	a, b, ok := c.pair(arg, "{$float: [0, 1.5]}")
	if !ok {
		return
	}
	var f [2]float64
	for i, v := range []any{a, b} {
		x, ok := toFloat64(v)
		if !ok || math.IsInf(x, 0) || math.IsNaN(x) {
			c.push(i)
			c.errorf("expected a finite number, got %s", describe(v))
			c.pop()
			return
		}
		f[i] = x
	}
	span := f[1] - f[0]
	switch {
	case f[0] > f[1]:
		c.errorf("min %v is greater than max %v", f[0], f[1])
	case math.IsInf(span, 0):
		c.errorf("the range [%v, %v] is wider than a float64 can hold", f[0], f[1])
	default:
		c.emit(op{kind: opFloat, f0: f[0], f1: span, f2: f[1]})
	}
}

const defaultAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func (c *compiler) genString(arg any) {
	o := op{kind: opString, alpha: []byte(defaultAlphabet)}
	if _, isMap := asMap(arg); !isMap {
		n, ok := c.length(arg, "a length from 0 to 1048576 ({$string: 16}) or a mapping ({$string: {len: 16}}, {$string: {min: 1, max: 32, alphabet: abc}})")
		if !ok {
			return
		}
		o.u0, o.u1 = n, n
		c.emit(o)
		return
	}
	m, ok := c.fields(arg, "$string", "len", "min", "max", "alphabet")
	if !ok {
		return
	}
	lenV, hasLen := m["len"]
	minV, hasMin := m["min"]
	maxV, hasMax := m["max"]
	switch {
	case hasLen && (hasMin || hasMax):
		c.errorf("give either len or min/max, not both")
		return
	case hasLen:
		if o.u0, ok = c.field("len", lenV, c.length); !ok {
			return
		}
		o.u1 = o.u0
	case hasMax:
		if o.u1, ok = c.field("max", maxV, c.length); !ok {
			return
		}
		if hasMin {
			if o.u0, ok = c.field("min", minV, c.length); !ok {
				return
			}
		}
		if o.u0 > o.u1 {
			c.errorf("min %d is greater than max %d", o.u0, o.u1)
			return
		}
	default:
		c.errorf("expected len or max (and optionally min) in $string")
		return
	}
	if a, has := m["alphabet"]; has {
		c.push("alphabet")
		ok = c.alphabet(a, &o)
		c.pop()
		if !ok {
			return
		}
	}
	c.emit(o)
}

// field runs a reader on a mapping member, naming it in the path.
func (c *compiler) field(key string, v any, read func(any, string) (uint64, bool)) (uint64, bool) {
	c.push(key)
	defer c.pop()
	return read(v, "an integer from 0 to 1048576")
}

// length reads a string or byte count: 0..maxStringLen.
func (c *compiler) length(v any, expected string) (uint64, bool) {
	n, ok := toInt64(v)
	if !ok || n < 0 || n > maxStringLen {
		c.errorf("expected %s, got %s", expected, describe(v))
		return 0, false
	}
	return uint64(n), true
}

// alphabet stores the characters to draw from: bytes when all are plain
// ASCII (the common case, one append per character), else escaped strings.
func (c *compiler) alphabet(a any, o *op) bool {
	s, ok := a.(string)
	switch {
	case !ok || s == "":
		c.errorf("expected a non-empty string of characters, got %s", describe(a))
		return false
	case !utf8.ValidString(s):
		c.errorf("the alphabet is not valid UTF-8")
		return false
	}
	plain := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == '"' || s[i] == '\\' || s[i] >= utf8.RuneSelf {
			plain = false
		}
	}
	if plain {
		o.alpha = []byte(s)
		return true
	}
	o.alpha = nil
	for _, r := range s {
		q := wire.AppendString(nil, string(r))
		o.chars = append(o.chars, string(q[1:len(q)-1]))
	}
	return true
}

func (c *compiler) genChoice(arg any) {
	l, ok := arg.([]any)
	if !ok || len(l) == 0 {
		c.errorf("expected a non-empty list of values, e.g. {$choice: [latest, pending]}; got %s", describe(arg))
		return
	}
	c.choice(l, nil)
}

// choice emits a $choice among values (weights nil: uniform). When every
// value is constant it is one operation holding the rendered constants;
// otherwise each value is compiled as a branch.
func (c *compiler) choice(values []any, cum []float64) {
	c.flush()
	start := len(c.ops)
	c.ops = append(c.ops, op{kind: opChoice, cum: cum})
	jumps := []int{}
	var targets []int
	for i, v := range values {
		targets = append(targets, len(c.ops))
		c.push(i)
		if cum != nil {
			c.push("value")
		}
		c.value(v)
		c.flush()
		if cum != nil {
			c.pop()
		}
		c.pop()
		if i < len(values)-1 {
			jumps = append(jumps, len(c.ops))
			c.ops = append(c.ops, op{kind: opJump})
		}
	}
	end := len(c.ops)
	// All constant: each branch is one literal (and a jump), nothing else.
	var lits [][]byte
	for i, tg := range targets {
		next := end
		if i < len(targets)-1 {
			next = targets[i+1] - 1 // the branch's jump
		}
		if next-tg != 1 || c.ops[tg].kind != opLit {
			lits = nil
			break
		}
		lits = append(lits, c.ops[tg].lit)
	}
	if lits != nil {
		c.ops = append(c.ops[:start], op{kind: opChoiceLit, lits: lits, cum: cum})
		return
	}
	c.ops[start].targets = targets
	for _, j := range jumps {
		c.ops[j].target = end
	}
}

func (c *compiler) genWeighted(arg any) {
	const example = "{$weighted: [{weight: 3, value: latest}, {weight: 1, value: pending}]}"
	l, ok := arg.([]any)
	if !ok || len(l) == 0 {
		c.errorf("expected a non-empty list of {weight, value}, e.g. %s; got %s", example, describe(arg))
		return
	}
	values := make([]any, len(l))
	cum := make([]float64, len(l))
	total := 0.0
	bad := false
	for i, e := range l {
		c.push(i)
		m, ok := c.fields(e, "$weighted entry", "weight", "value")
		if ok {
			_, hasV := m["value"]
			w, hasW := m["weight"]
			x, isNum := toFloat64(w)
			switch {
			case !hasW || !hasV:
				c.errorf("expected {weight: N, value: V}, e.g. %s", example)
				ok = false
			case !isNum || x < 0 || math.IsInf(x, 0) || math.IsNaN(x):
				c.push("weight")
				c.errorf("expected a non-negative number, got %s", describe(w))
				c.pop()
				ok = false
			}
			total += x
			values[i] = m["value"]
		}
		cum[i] = total
		bad = bad || !ok
		c.pop()
	}
	switch {
	case bad:
	case total <= 0 || math.IsInf(total, 0):
		c.errorf("the weights must add up to a positive finite number, got %v", total)
	default:
		c.choice(values, cum)
	}
}

func (c *compiler) genSeq(arg any) {
	o := op{kind: opSeq, i0: 1, i1: 1}
	if _, isMap := asMap(arg); isMap {
		m, ok := c.fields(arg, "$seq", "start", "step")
		if !ok {
			return
		}
		for _, f := range []struct {
			key string
			dst *int64
		}{{"start", &o.i0}, {"step", &o.i1}} {
			v, has := m[f.key]
			if !has {
				continue
			}
			n, ok := toInt64(v)
			if !ok {
				c.push(f.key)
				c.errorf("expected an integer, got %s", describe(v))
				c.pop()
				return
			}
			*f.dst = n
		}
	} else if arg != nil {
		n, ok := toInt64(arg)
		if !ok {
			c.errorf("expected a start integer or {start: S, step: K}, got %s", describe(arg))
			return
		}
		o.i0 = n
	}
	c.emit(o)
}

func (c *compiler) genUUID(arg any) {
	if s, ok := arg.(string); !ok || s != "v4" {
		c.errorf("expected v4 ({$uuid: v4}), got %s", describe(arg))
		return
	}
	c.emit(op{kind: opUUID})
}

func (c *compiler) genHex(arg any) {
	const expected = "{$hex: {bytes: N}} or {$hex: N} with N from 0 to 1048576"
	v := arg
	if _, isMap := asMap(arg); isMap {
		m, ok := c.fields(arg, "$hex", "bytes")
		if !ok {
			return
		}
		if v, ok = m["bytes"]; !ok {
			c.errorf("expected %s", expected)
			return
		}
		c.push("bytes")
		defer c.pop()
	}
	if n, ok := c.length(v, expected); ok {
		c.emit(op{kind: opHex, u0: n})
	}
}

func (c *compiler) genHexInt(arg any) {
	a, b, ok := c.pair(arg, `{$hexint: [0, 1000000]} or {$hexint: ["0x0", "0xffff"]}`)
	if !ok {
		return
	}
	var u [2]uint64
	for i, v := range []any{a, b} {
		var ok bool
		if u[i], ok = toQuantity(v); !ok {
			c.push(i)
			c.errorf("expected a non-negative integer or a \"0x\" hex string up to 2^64-1, got %s", describe(v))
			c.pop()
			return
		}
	}
	if u[0] > u[1] {
		c.errorf("min %#x is greater than max %#x", u[0], u[1])
		return
	}
	c.emit(op{kind: opHexInt, u0: u[0], u1: u[1] - u[0]})
}

func (c *compiler) genNow(arg any) {
	formats := map[string]uint8{"unix": nowUnix, "unixms": nowUnixMS, "unixns": nowUnixNS, "rfc3339": nowRFC3339}
	s, _ := arg.(string)
	f, ok := formats[s]
	if !ok {
		c.errorf("expected unix, unixms, unixns or rfc3339, got %s", describe(arg))
		return
	}
	c.emit(op{kind: opNow, now: f})
}

func (c *compiler) genFeed(arg any) {
	s, ok := arg.(string)
	if !ok || s == "" {
		c.errorf(`expected "feeder" or "feeder.column", got %s`, describe(arg))
		return
	}
	name, column, hasCol := strings.Cut(s, ".")
	f := c.feeders[name]
	if f == nil {
		names := make([]string, 0, len(c.feeders))
		for n, f := range c.feeders {
			if f != nil {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		if len(names) == 0 {
			c.errorf("no feeder named %q: the scenario defines no feeders", name)
		} else {
			c.errorf("no feeder named %q; feeders: %s", name, strings.Join(names, ", "))
		}
		return
	}
	if f.Len() == 0 {
		c.errorf("feeder %q has no rows", name)
		return
	}
	o := op{kind: opFeedRow}
	if hasCol {
		col := slices.Index(f.cols, column)
		if col < 0 {
			cols := f.cols
			more := ""
			if len(cols) > 20 {
				cols, more = cols[:20], fmt.Sprintf(" and %d more", len(f.cols)-20)
			}
			c.errorf("feeder %q has no column %q; columns: %s%s", name, column, strings.Join(cols, ", "), more)
			return
		}
		o.kind, o.col = opFeedCell, col
	}
	idx, seen := c.used[f]
	if !seen {
		idx = len(c.feederList)
		c.used[f] = idx
		c.feederList = append(c.feederList, f)
	}
	o.feed = idx
	c.emit(o)
}

// fields reads a mapping argument and refuses keys other than allowed.
func (c *compiler) fields(arg any, what string, allowed ...string) (map[string]any, bool) {
	m, ok := asMap(arg)
	if !ok {
		c.errorf("expected a mapping with %s, got %s", strings.Join(allowed, ", "), describe(arg))
		return nil, false
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		c.errorf("unknown key %s in %s; expected %s", strings.Join(unknown, ", "), what, strings.Join(allowed, ", "))
		return nil, false
	}
	return m, true
}
