package schemagen

import (
	"encoding/json"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrNoInvalid is returned by Invalid and InvalidWith when the schema accepts
// every JSON value (true, {}), or when no broken value could be found.
var ErrNoInvalid = errors.New("schemagen: the generator found no value the schema rejects")

// breakage names what an invalid value breaks: a keyword, at a location in
// the value (a JSON pointer, "" for the whole value).
type breakage struct{ keyword, at string }

func (b breakage) String() string {
	if b.at == "" {
		return b.keyword
	}
	return b.keyword + " at " + b.at
}

type candidate struct {
	keyword string
	make    func() (any, breakage, bool)
}

// invalid returns a value that s rejects, by breaking one of its constraints
// (chosen at random among those it can break), at this level or in a member.
func (g *gen) invalid(s any, depth int, at string) (any, breakage, error) {
	if depth > softDepth+2 {
		return nil, breakage{}, ErrNoInvalid
	}
	if err := g.budget(); err != nil {
		return nil, breakage{}, err
	}
	o, ok := s.(*object)
	if !ok {
		if s == false {
			return nil, breakage{"false", at}, nil
		}
		return nil, breakage{}, ErrNoInvalid
	}
	w, err := g.flatten(o, 0)
	if errors.Is(err, errUnsat) {
		if !g.c.valid(s, nil) {
			return nil, breakage{"false", at}, nil
		}
	}
	if err != nil {
		return nil, breakage{}, err
	}
	var base any
	baseOK, baseDone := false, false
	valid := func() (any, bool) { // a valid value, made once, copied on use
		if !baseDone {
			baseDone = true
			if v, err := g.valid(o, depth); err == nil {
				base, baseOK = v, true
			}
		}
		return deepCopy(base), baseOK
	}
	cands := g.candidates(w, depth, at, valid)
	for _, i := range g.r.Perm(len(cands)) {
		v, b, ok := cands[i].make()
		if !ok {
			continue
		}
		if !g.c.valid(o, v) && !g.c.exhausted {
			return v, b, nil
		}
		if g.c.exhausted {
			return nil, breakage{}, errBudget
		}
	}
	kw := "schema"
	for _, k := range []string{"anyOf", "oneOf", "not", "if", "allOf", "$ref"} {
		if o.has(k) {
			kw = k
			break
		}
	}
	for _, i := range g.r.Perm(len(probes)) {
		v := probes[i]()
		if !g.c.valid(o, v) && !g.c.exhausted {
			return v, breakage{kw, at}, nil
		}
	}
	return nil, breakage{}, ErrNoInvalid
}

// probes are values of every type, tried when no single constraint could be
// broken on purpose.
var probes = []func() any{
	func() any { return nil },
	func() any { return true },
	func() any { return json.Number("0") },
	func() any { return json.Number("-1") },
	func() any { return json.Number("1.5") },
	func() any { return "" },
	func() any { return "x" },
	func() any { return []any{} },
	func() any { return newObject() },
}

func (g *gen) candidates(w *object, depth int, at string, valid func() (any, bool)) []candidate {
	var cands []candidate
	addC := func(kw string, f func() (any, bool)) {
		cands = append(cands, candidate{kw, func() (any, breakage, bool) {
			v, ok := f()
			return v, breakage{kw, at}, ok
		}})
	}
	if w.has("type") {
		addC("type", func() (any, bool) {
			var out []any
			for _, p := range probes {
				if v := p(); !typeAllows(types(w), typeOf(v)) {
					out = append(out, v)
				}
			}
			if len(out) == 0 {
				return nil, false
			}
			return out[g.r.IntN(len(out))], true
		})
	}
	if e, ok := arr(w, "enum"); ok && len(e) > 0 {
		addC("enum", func() (any, bool) {
			for _, i := range g.r.Perm(len(e)) {
				if v := mutate(e[i]); !contains(e, v) {
					return v, true
				}
			}
			return nil, false
		})
	}
	if cv, ok := w.get("const"); ok {
		addC("const", func() (any, bool) { return mutate(cv), true })
	}
	step := big.NewInt(1)
	if m, ok, _ := multiple(w); ok && m.IsInt() {
		step = m.Num()
	}
	for _, k := range []string{"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"} {
		r, ok := numRat(w, k)
		if !ok {
			continue
		}
		addC(k, func() (any, bool) {
			var n *big.Int
			switch k {
			case "minimum": // the largest multiple of step below r
				n = floorRat(new(big.Rat).Quo(new(big.Rat).Sub(new(big.Rat).SetInt(ceilRat(r)), big.NewRat(1, 1)), new(big.Rat).SetInt(step)))
			case "exclusiveMinimum":
				n = floorRat(new(big.Rat).Quo(new(big.Rat).SetInt(floorRat(r)), new(big.Rat).SetInt(step)))
			case "maximum":
				n = ceilRat(new(big.Rat).Quo(new(big.Rat).Add(new(big.Rat).SetInt(floorRat(r)), big.NewRat(1, 1)), new(big.Rat).SetInt(step)))
			default:
				n = ceilRat(new(big.Rat).Quo(new(big.Rat).SetInt(ceilRat(r)), new(big.Rat).SetInt(step)))
			}
			return json.Number(n.Mul(n, step).String()), true
		})
	}
	if m, ok := numRat(w, "multipleOf"); ok && m.Sign() > 0 {
		addC("multipleOf", func() (any, bool) {
			v, _ := valid()
			n, ok := ratOf(v)
			if !ok {
				n = new(big.Rat)
			}
			half := new(big.Rat).Quo(m, big.NewRat(2, 1))
			if m.IsInt() && m.Num().Cmp(big.NewInt(1)) > 0 {
				half = big.NewRat(1, 1)
			}
			return json.Number(decimal(n.Add(n, half))), true
		})
	}
	g.stringCandidates(w, addC, valid)
	g.collectionCandidates(w, depth, at, valid, addC, &cands)
	if not, ok := w.get("not"); ok && isSchema(not) {
		addC("not", func() (any, bool) {
			v, err := g.valid(not, depth+1)
			return v, err == nil
		})
	}
	return cands
}

func (g *gen) stringCandidates(w *object, addC func(string, func() (any, bool)), valid func() (any, bool)) {
	baseStr := func() string {
		v, _ := valid()
		s, _ := v.(string)
		return s
	}
	if n, ok := count(w, "minLength"); ok && n > 0 {
		addC("minLength", func() (any, bool) {
			s := baseStr()
			return truncateRunes(s, int(n-1)), true
		})
	}
	if n, ok := count(w, "maxLength"); ok && n < maxStrLen {
		addC("maxLength", func() (any, bool) {
			s := baseStr()
			pad := "x"
			if s != "" {
				r, _ := utf8.DecodeLastRuneInString(s)
				pad = string(r)
			}
			if k := int(n+1) - utf8.RuneCountInString(s); k > 0 {
				s += strings.Repeat(pad, k)
			}
			return s, true
		})
	}
	if p, ok := str(w, "pattern"); ok {
		if re := g.c.regexp(p); re != nil {
			addC("pattern", func() (any, bool) {
				s := baseStr()
				for _, c := range []string{s + "!", "!" + s, "", "!", " ", "\u00e9", "0", "~~~~~~~~"} {
					if !re.MatchString(c) {
						return c, true
					}
				}
				return nil, false
			})
		}
	}
}

// collectionCandidates adds the candidates that break an object's or an
// array's keywords, object keywords first (the order draws depend on).
func (g *gen) collectionCandidates(w *object, depth int, at string, valid func() (any, bool),
	addC func(string, func() (any, bool)), cands *[]candidate) {
	baseObj := func() *object {
		v, _ := valid()
		o, _ := v.(*object)
		return o
	}
	baseArr := func() ([]any, bool) {
		v, _ := valid()
		a, ok := v.([]any)
		return a, ok
	}
	// breaking a member's own schema
	var nested nestedFunc = func(kw, key string, s any, put func(v any) (any, bool)) {
		*cands = append(*cands, candidate{kw, func() (any, breakage, bool) {
			v, b, err := g.invalid(s, depth+1, at+"/"+escapePointer(key))
			if err != nil {
				return nil, b, false
			}
			out, ok := put(v)
			return out, b, ok
		}})
	}
	g.objectCandidates(w, baseObj, nested, addC)
	g.arrayCandidates(w, depth, baseArr, nested, addC)
}

// nestedFunc adds a candidate that breaks the schema s of member or element
// key and puts the broken value in place with put.
type nestedFunc func(kw, key string, s any, put func(v any) (any, bool))

// objectCandidates adds the candidates that break an object's keywords;
// baseObj returns a fresh valid object (nil when the value is no object).
func (g *gen) objectCandidates(w *object, baseObj func() *object, nested nestedFunc, addC func(string, func() (any, bool))) {
	if req, ok := arr(w, "required"); ok && len(req) > 0 {
		addC("required", func() (any, bool) {
			o := baseObj()
			k, _ := req[g.r.IntN(len(req))].(string)
			if o == nil {
				return nil, false
			}
			o.del(k)
			return o, true
		})
	}
	if props, ok := obj(w, "properties"); ok {
		for _, k := range props.keys {
			nested("properties", k, props.vals[k], func(v any) (any, bool) {
				o := baseObj()
				if o == nil {
					return nil, false
				}
				o.set(k, v)
				return o, true
			})
		}
	}
	key := "unexpected"
	for i := 2; i < 10 && g.namedProp(w, key); i++ {
		key = "unexpected" + strconv.Itoa(i)
	}
	if ap, ok := w.get("additionalProperties"); ok && isSchema(ap) && ap != true && !g.namedProp(w, key) {
		put := func(v any) (any, bool) {
			o := baseObj()
			if o == nil {
				return nil, false
			}
			o.set(key, v)
			return o, true
		}
		if ap == false {
			addC("additionalProperties", func() (any, bool) { return put(g.word(3, 8)) })
		} else {
			nested("additionalProperties", key, ap, put)
		}
	}
	if n, ok := count(w, "minProperties"); ok && n > 0 {
		addC("minProperties", func() (any, bool) {
			o := baseObj()
			for o != nil && int64(len(o.keys)) >= n {
				o.del(o.keys[len(o.keys)-1])
			}
			return o, o != nil
		})
	}
}

// arrayCandidates adds the candidates that break an array's keywords;
// baseArr returns a fresh valid array (false when the value is no array).
func (g *gen) arrayCandidates(w *object, depth int, baseArr func() ([]any, bool), nested nestedFunc, addC func(string, func() (any, bool))) {
	prefix, rest := itemSchemas(w)
	for i, s := range prefix {
		nested("prefixItems", strconv.Itoa(i), s, func(v any) (any, bool) {
			a, ok := baseArr()
			if !ok || i > len(a) {
				return nil, false
			}
			if i == len(a) {
				return append(a, v), true
			}
			a[i] = v
			return a, true
		})
	}
	if rest != nil && rest != true {
		nested("items", strconv.Itoa(len(prefix)), rest, func(v any) (any, bool) {
			a, ok := baseArr()
			if !ok || len(a) < len(prefix) {
				return nil, false
			}
			if len(a) > len(prefix) {
				a[len(prefix)] = v
				return a, true
			}
			return append(a, v), true
		})
	}
	if n, ok := count(w, "minItems"); ok && n > 0 {
		addC("minItems", func() (any, bool) {
			a, ok := baseArr()
			if !ok || int64(len(a)) < n {
				return nil, false
			}
			return a[:n-1], true
		})
	}
	if n, ok := count(w, "maxItems"); ok && n < maxCount {
		addC("maxItems", func() (any, bool) {
			a, ok := baseArr()
			for ok && int64(len(a)) <= n {
				var s any = true
				if len(a) < len(prefix) {
					s = prefix[len(a)]
				} else if rest != nil {
					s = rest
				}
				v, err := g.valid(s, depth+1)
				if err != nil {
					return nil, false
				}
				a = append(a, v)
			}
			return a, ok
		})
	}
	if u, _ := w.get("uniqueItems"); u == true {
		addC("uniqueItems", func() (any, bool) {
			a, ok := baseArr()
			if !ok || len(a) == 0 {
				return nil, false
			}
			if len(a) == 1 {
				return append(a, deepCopy(a[0])), true
			}
			a[1] = deepCopy(a[0])
			return a, true
		})
	}
}

// namedProp reports whether key is named by properties or patternProperties.
func (g *gen) namedProp(w *object, key string) bool {
	_, named := g.c.propSchemas(w, key)
	return named
}

// mutate returns a value near v but different from it.
func mutate(v any) any {
	switch t := v.(type) {
	case string:
		return t + "-x"
	case json.Number:
		if r, ok := ratOf(t); ok {
			return json.Number(decimal(r.Add(r, big.NewRat(1, 1))))
		}
		return json.Number("0")
	case bool:
		return !t
	case nil:
		return "null"
	}
	return nil
}

func truncateRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	case *object:
		o := newObject()
		for _, k := range t.keys {
			o.set(k, deepCopy(t.vals[k]))
		}
		return o
	}
	return v
}
