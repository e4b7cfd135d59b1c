package schemagen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"strconv"
	"strings"
)

// errUnsat means the generator found no value for a schema (it may have none,
// like false, or need more than the generator can do).
var errUnsat = errors.New("schemagen: no value satisfies the schema")

// doc is a parsed schema document: the root that $refs resolve against.
type doc struct {
	root   any
	id     string // the root's $id, without fragment
	draft7 bool   // draft-07 or older: $ref ignores its siblings, items may be an array
}

func newDoc(schema []byte) (*doc, error) {
	root, err := parse(schema)
	if err != nil {
		return nil, err
	}
	switch root.(type) {
	case bool, *object:
	default:
		return nil, errors.New("schemagen: a schema must be an object or a boolean")
	}
	d := &doc{root: root}
	if o, ok := root.(*object); ok {
		if s, ok := str(o, "$schema"); ok && (strings.Contains(s, "draft-07") || strings.Contains(s, "draft-06") || strings.Contains(s, "draft-04")) {
			d.draft7 = true
		}
		if s, ok := str(o, "$id"); ok {
			d.id, _, _ = strings.Cut(s, "#")
		}
	}
	return d, nil
}

// resolve finds the schema a $ref names. Only references into the same
// document are supported: "#", "#/json/pointer" (so #/$defs/x and
// #/definitions/x), optionally prefixed by the root's $id.
func (d *doc) resolve(ref string) (any, error) {
	base, frag, ok := strings.Cut(ref, "#")
	if !ok || (base != "" && base != d.id) {
		return nil, fmt.Errorf("schemagen: $ref %q: only references inside the schema (#/...) are supported", ref)
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	if frag == "" {
		return d.root, nil
	}
	if frag[0] != '/' {
		return nil, fmt.Errorf("schemagen: $ref %q: anchors are not supported", ref)
	}
	cur := d.root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case *object:
			v, ok := c.get(tok)
			if !ok {
				return nil, fmt.Errorf("schemagen: $ref %q: %q not found", ref, tok)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("schemagen: $ref %q: bad index %q", ref, tok)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("schemagen: $ref %q does not resolve", ref)
		}
	}
	switch cur.(type) {
	case bool, *object:
		return cur, nil
	}
	return nil, fmt.Errorf("schemagen: $ref %q is not a schema", ref)
}

func str(o *object, k string) (string, bool) {
	v, _ := o.get(k)
	s, ok := v.(string)
	return s, ok
}

func arr(o *object, k string) ([]any, bool) {
	v, _ := o.get(k)
	a, ok := v.([]any)
	return a, ok
}

func obj(o *object, k string) (*object, bool) {
	v, _ := o.get(k)
	a, ok := v.(*object)
	return a, ok
}

// isSchema reports whether v can be a subschema (an object or a boolean).
func isSchema(v any) bool {
	switch v.(type) {
	case bool, *object:
		return true
	}
	return false
}

// count reads a non-negative integer keyword (minLength, maxItems, ...).
func count(o *object, k string) (int64, bool) {
	v, _ := o.get(k)
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f < 0 || f != math.Trunc(f) {
		return 0, false
	}
	if f > 1<<40 {
		return 1 << 40, true
	}
	return int64(f), true
}

// maxExp bounds the exponents accepted for exact arithmetic, so a number like
// 1e999999999 cannot make big.Rat allocate without bound.
const maxExp = 400

// ratOf converts a JSON number to an exact rational, or reports false when it
// is not a number or too large to handle exactly.
func ratOf(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok || len(n) > 200 {
		return nil, false
	}
	s := string(n)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > maxExp || e < -maxExp {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

func floatOf(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// numRat reads a numeric keyword as a rational.
func numRat(o *object, k string) (*big.Rat, bool) {
	v, ok := o.get(k)
	if !ok {
		return nil, false
	}
	return ratOf(v)
}

var allTypes = []string{"null", "boolean", "object", "array", "number", "string", "integer"}

// types returns the types a schema allows by its "type" keyword (nil when it
// has none).
func types(o *object) []string {
	v, ok := o.get("type")
	if !ok {
		return nil
	}
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		out := []string{}
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// typeOf names the JSON type of a parsed value; integral numbers are
// "integer".
func typeOf(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case *object:
		return "object"
	case json.Number:
		if isIntegral(t) {
			return "integer"
		}
		return "number"
	}
	return "?"
}

func isIntegral(n json.Number) bool {
	if r, ok := ratOf(n); ok {
		return r.IsInt()
	}
	f, ok := floatOf(n)
	return ok && f == math.Trunc(f)
}

// typeAllows reports whether a type list admits a value of type t ("integer"
// is also a "number").
func typeAllows(list []string, t string) bool {
	for _, l := range list {
		if l == t || (l == "number" && t == "integer") {
			return true
		}
	}
	return false
}

// equal compares JSON values as JSON Schema does: numbers by value.
func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		rx, ok1 := ratOf(x)
		ry, ok2 := ratOf(y)
		if ok1 && ok2 {
			return rx.Cmp(ry) == 0
		}
		fx, _ := floatOf(x)
		fy, _ := floatOf(y)
		return fx == fy
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *object:
		y, ok := b.(*object)
		if !ok || len(x.keys) != len(y.keys) {
			return false
		}
		for _, k := range x.keys {
			yv, ok := y.get(k)
			if !ok || !equal(x.vals[k], yv) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

// merge combines two schemas that must both hold into one the generator can
// follow: type lists intersect, bounds tighten, required lists and
// properties join. Keywords it cannot combine keep a's value; the checker
// still holds every generated value against the original schemas.
func merge(a, b *object) *object {
	m := a.clone()
	for _, k := range b.keys {
		bv := b.vals[k]
		av, ok := m.get(k)
		if !ok {
			m.set(k, bv)
			continue
		}
		switch k {
		case "type":
			var both []any
			for _, t := range types(a) {
				switch {
				case typeAllows(types(b), t):
					both = append(both, t)
				case t == "number" && typeAllows(types(b), "integer"):
					both = append(both, "integer")
				}
			}
			if both == nil {
				both = []any{}
			}
			m.set(k, both)
		case "required":
			x, _ := av.([]any)
			y, _ := bv.([]any)
			out := append([]any(nil), x...)
			for _, e := range y {
				if !contains(out, e) {
					out = append(out, e)
				}
			}
			m.set(k, out)
		case "properties":
			x, ok1 := av.(*object)
			y, ok2 := bv.(*object)
			if !ok1 || !ok2 {
				continue
			}
			p := x.clone()
			for _, pk := range y.keys {
				if pv, ok := p.get(pk); ok {
					p.set(pk, allOf(pv, y.vals[pk]))
				} else {
					p.set(pk, y.vals[pk])
				}
			}
			m.set(k, p)
		case "items", "additionalProperties":
			if av == false || bv == false {
				m.set(k, false)
			} else if isSchema(av) && isSchema(bv) {
				m.set(k, allOf(av, bv))
			}
		case "minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties":
			if x, ok1 := ratOf(av); ok1 {
				if y, ok2 := ratOf(bv); ok2 && y.Cmp(x) > 0 {
					m.set(k, bv)
				}
			}
		case "maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties":
			if x, ok1 := ratOf(av); ok1 {
				if y, ok2 := ratOf(bv); ok2 && y.Cmp(x) < 0 {
					m.set(k, bv)
				}
			}
		case "enum":
			x, _ := av.([]any)
			y, _ := bv.([]any)
			out := []any{}
			for _, e := range x {
				if contains(y, e) {
					out = append(out, e)
				}
			}
			m.set(k, out)
		}
	}
	return m
}

func allOf(a, b any) any {
	o := newObject()
	o.set("allOf", []any{a, b})
	return o
}

func contains(list []any, v any) bool {
	for _, e := range list {
		if equal(e, v) {
			return true
		}
	}
	return false
}
