package schemagen

import (
	"encoding/json"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"
)

// checkBudget bounds the work of one checker (schema nodes visited), so a
// hostile schema cannot make generation run for long.
const checkBudget = 1 << 21

// unsupported lists assertion keywords the checker does not evaluate; a
// schema using them may reject a generated "valid" value.
var unsupported = []string{"unevaluatedProperties", "unevaluatedItems", "dependentSchemas", "$dynamicRef", "$recursiveRef"}

// checker decides whether a value is valid against a schema, for the
// keywords the generator knows. Every generated value is held against it, so
// "valid" and "invalid" mean the same to both halves of the package.
type checker struct {
	d         *doc
	res       map[string]*regexp.Regexp // a nil entry: the pattern does not compile
	steps     int
	exhausted bool // the budget ran out: answers are no longer reliable
	skipped   map[string]bool
	memo      map[memoKey]bool // ValidEdges: values found valid (see memoKey)
}

func newChecker(d *doc) *checker {
	return &checker{d: d, res: map[string]*regexp.Regexp{}, skipped: map[string]bool{}}
}

func (c *checker) regexp(p string) *regexp.Regexp {
	re, ok := c.res[p]
	if !ok {
		if len(p) <= 4096 {
			re, _ = regexp.Compile(p)
		}
		c.res[p] = re
	}
	return re
}

func (c *checker) valid(s, v any) bool { return c.check(s, v, 0) }

func (c *checker) check(s, v any, depth int) bool {
	c.steps++
	if c.steps > checkBudget || depth > 256 {
		c.exhausted = true
		return false
	}
	switch t := s.(type) {
	case bool:
		return t
	case *object:
		if c.memo == nil {
			return c.checkObject(t, v, depth)
		}
		k, ok := memoKeyOf(t, v)
		if ok && c.memo[k] {
			return true
		}
		valid := c.checkObject(t, v, depth)
		if ok && valid && !c.exhausted && len(c.memo) < memoMax {
			c.memo[k] = true
		}
		return valid
	}
	return true
}

func (c *checker) checkObject(o *object, v any, depth int) bool {
	if ref, ok := str(o, "$ref"); ok {
		target, err := c.d.resolve(ref)
		if err != nil || !c.check(target, v, depth+1) {
			return false
		}
		if c.d.draft7 {
			return true
		}
	}
	for _, k := range unsupported {
		if o.has(k) {
			c.skipped[k] = true
		}
	}
	if list := types(o); o.has("type") && !typeAllows(list, typeOf(v)) {
		return false
	}
	if e, ok := arr(o, "enum"); ok && !contains(e, v) {
		return false
	}
	if cv, ok := o.get("const"); ok && !equal(cv, v) {
		return false
	}
	switch t := v.(type) {
	case json.Number:
		if !c.checkNumber(o, t) {
			return false
		}
	case string:
		if !c.checkString(o, t) {
			return false
		}
	case []any:
		if !c.checkArray(o, t, depth) {
			return false
		}
	case *object:
		if !c.checkProps(o, t, depth) {
			return false
		}
	}
	if all, ok := arr(o, "allOf"); ok {
		for _, sub := range all {
			if !c.check(sub, v, depth+1) {
				return false
			}
		}
	}
	if anyOf, ok := arr(o, "anyOf"); ok {
		hit := false
		for _, sub := range anyOf {
			if c.check(sub, v, depth+1) {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	if oneOf, ok := arr(o, "oneOf"); ok {
		n := 0
		for _, sub := range oneOf {
			if c.check(sub, v, depth+1) {
				n++
			}
		}
		if n != 1 {
			return false
		}
	}
	if not, ok := o.get("not"); ok && isSchema(not) && c.check(not, v, depth+1) {
		return false
	}
	if cond, ok := o.get("if"); ok && isSchema(cond) {
		branch := "else"
		if c.check(cond, v, depth+1) {
			branch = "then"
		}
		if b, ok := o.get(branch); ok && !c.check(b, v, depth+1) {
			return false
		}
	}
	return true
}

// cmp compares a number with a numeric keyword value; ok is false when the
// keyword is absent or not a number.
func cmp(n json.Number, bound any) (int, bool) {
	if _, isNum := bound.(json.Number); !isNum {
		return 0, false
	}
	x, ok1 := ratOf(n)
	y, ok2 := ratOf(bound)
	if ok1 && ok2 {
		return x.Cmp(y), true
	}
	fx, _ := floatOf(n)
	fy, _ := floatOf(bound)
	switch {
	case fx < fy:
		return -1, true
	case fx > fy:
		return 1, true
	}
	return 0, true
}

func (c *checker) checkNumber(o *object, n json.Number) bool {
	for _, k := range []string{"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"} {
		b, ok := o.get(k)
		if !ok {
			continue
		}
		r, ok := cmp(n, b)
		if !ok {
			continue
		}
		switch {
		case k == "minimum" && r < 0, k == "exclusiveMinimum" && r <= 0,
			k == "maximum" && r > 0, k == "exclusiveMaximum" && r >= 0:
			return false
		}
	}
	if mv, ok := o.get("multipleOf"); ok {
		m, ok1 := ratOf(mv)
		x, ok2 := ratOf(n)
		if ok1 && ok2 && m.Sign() > 0 {
			return new(big.Rat).Quo(x, m).IsInt()
		}
		fm, ok1 := floatOf(mv)
		fx, ok2 := floatOf(n)
		if ok1 && ok2 && fm > 0 {
			q := fx / fm
			return !math.IsInf(q, 0) && q == math.Trunc(q)
		}
	}
	return true
}

func (c *checker) checkString(o *object, s string) bool {
	n := int64(utf8.RuneCountInString(s))
	if m, ok := count(o, "minLength"); ok && n < m {
		return false
	}
	if m, ok := count(o, "maxLength"); ok && n > m {
		return false
	}
	if p, ok := str(o, "pattern"); ok {
		if re := c.regexp(p); re != nil && !re.MatchString(s) {
			return false
		}
	}
	return true
}

func (c *checker) checkArray(o *object, a []any, depth int) bool {
	n := int64(len(a))
	if m, ok := count(o, "minItems"); ok && n < m {
		return false
	}
	if m, ok := count(o, "maxItems"); ok && n > m {
		return false
	}
	prefix, rest := itemSchemas(o)
	for i, e := range a {
		var s any
		if i < len(prefix) {
			s = prefix[i]
		} else if rest != nil {
			s = rest
		} else {
			continue
		}
		if !c.check(s, e, depth+1) {
			return false
		}
	}
	if u, _ := o.get("uniqueItems"); u == true {
		seen := make(map[string]bool, len(a))
		for _, e := range a {
			k := canon(e)
			if seen[k] {
				return false
			}
			seen[k] = true
		}
	}
	if cs, ok := o.get("contains"); ok && isSchema(cs) {
		hits := int64(0)
		for _, e := range a {
			if c.check(cs, e, depth+1) {
				hits++
			}
		}
		lo, ok := count(o, "minContains")
		if !ok {
			lo = 1
		}
		if hits < lo {
			return false
		}
		if hi, ok := count(o, "maxContains"); ok && hits > hi {
			return false
		}
	}
	return true
}

// itemSchemas returns the schemas of an array's leading positions
// (prefixItems, or a draft-07 items array) and of the positions after them
// (nil when unconstrained).
func itemSchemas(o *object) (prefix []any, rest any) {
	items, _ := o.get("items")
	if tuple, ok := items.([]any); ok {
		prefix = tuple
		if ai, ok := o.get("additionalItems"); ok && isSchema(ai) {
			rest = ai
		}
		return prefix, rest
	}
	prefix, _ = arr(o, "prefixItems")
	if isSchema(items) {
		rest = items
	}
	return prefix, rest
}

// propSchemas returns the schemas that apply to member k of an object, and
// whether any schema names it (properties or patternProperties) rather than
// additionalProperties.
func (c *checker) propSchemas(o *object, k string) (list []any, named bool) {
	if props, ok := obj(o, "properties"); ok {
		if s, ok := props.get(k); ok {
			list = append(list, s)
			named = true
		}
	}
	if pp, ok := obj(o, "patternProperties"); ok {
		for _, p := range pp.keys {
			if re := c.regexp(p); re != nil && re.MatchString(k) {
				list = append(list, pp.vals[p])
				named = true
			}
		}
	}
	if !named {
		if ap, ok := o.get("additionalProperties"); ok && isSchema(ap) {
			list = append(list, ap)
		}
	}
	return list, named
}

func (c *checker) checkProps(o *object, v *object, depth int) bool {
	n := int64(len(v.keys))
	if m, ok := count(o, "minProperties"); ok && n < m {
		return false
	}
	if m, ok := count(o, "maxProperties"); ok && n > m {
		return false
	}
	if req, ok := arr(o, "required"); ok {
		for _, r := range req {
			if k, ok := r.(string); ok && !v.has(k) {
				return false
			}
		}
	}
	for _, k := range v.keys {
		list, _ := c.propSchemas(o, k)
		for _, s := range list {
			if !c.check(s, v.vals[k], depth+1) {
				return false
			}
		}
		if pn, ok := o.get("propertyNames"); ok && isSchema(pn) && !c.check(pn, k, depth+1) {
			return false
		}
	}
	if dr, ok := obj(o, "dependentRequired"); ok {
		if !c.dependent(dr, v) {
			return false
		}
	}
	if dep, ok := obj(o, "dependencies"); ok {
		for _, k := range dep.keys {
			if !v.has(k) {
				continue
			}
			switch d := dep.vals[k].(type) {
			case []any:
				for _, r := range d {
					if s, ok := r.(string); ok && !v.has(s) {
						return false
					}
				}
			default:
				if isSchema(d) && !c.check(d, v, depth+1) {
					return false
				}
			}
		}
	}
	return true
}

func (c *checker) dependent(dr, v *object) bool {
	for _, k := range dr.keys {
		if !v.has(k) {
			continue
		}
		list, _ := dr.vals[k].([]any)
		for _, r := range list {
			if s, ok := r.(string); ok && !v.has(s) {
				return false
			}
		}
	}
	return true
}

// canon encodes a value so that two values are equal (as JSON Schema
// compares them) exactly when their encodings are: numbers by value, object
// members sorted.
func canon(v any) string { return string(appendCanon(nil, v)) }

func appendCanon(b []byte, v any) []byte {
	switch t := v.(type) {
	case json.Number:
		if r, ok := ratOf(t); ok {
			return append(append(b, 'n'), r.RatString()...)
		}
		f, _ := floatOf(t)
		return strconv.AppendFloat(append(b, 'f'), f, 'g', -1, 64)
	case []any:
		b = append(b, '[')
		for _, e := range t {
			b = append(appendCanon(b, e), ',')
		}
		return append(b, ']')
	case *object:
		keys := slices.Clone(t.keys)
		slices.Sort(keys)
		b = append(b, '{')
		for _, k := range keys {
			b = appendString(b, k)
			b = append(appendCanon(append(b, ':'), t.vals[k]), ',')
		}
		return append(b, '}')
	}
	return appendJSON(b, v)
}
