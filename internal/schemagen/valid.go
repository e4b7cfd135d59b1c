package schemagen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"strconv"
)

// Limits of one generation. They keep the output small enough to be a
// request parameter and the time bounded whatever the schema.
const (
	softDepth   = 6       // below this depth only required members and minItems are generated
	hardDepth   = 48      // deeper than this the generator gives up (a $ref that never ends)
	stepBudget  = 20000   // values generated, retries included
	sizeBudget  = 1 << 20 // rough bytes of output
	maxCount    = 10000   // the largest minItems/minProperties honoured
	maxStrLen   = 100000  // the largest string generated
	extraItems  = 3       // items added above minItems when maxItems allows
	attempts    = 10      // tries per schema node before giving up
	refHopLimit = 32      // $ref to $ref chains
)

var errBudget = errors.New("schemagen: the schema needs more work than the generator's budget")

// gen holds the state of one call: the random source, the checker and the
// budgets.
type gen struct {
	d     *doc
	c     *checker
	r     *rand.Rand
	edges bool // ValidEdges: choice points lean to edge values (edges.go)
	steps int
	size  int
	notes []string
}

func newGen(schema []byte, r *rand.Rand) (*gen, error) {
	if r == nil {
		return nil, errors.New("schemagen: nil random source")
	}
	d, err := newDoc(schema)
	if err != nil {
		return nil, err
	}
	return &gen{d: d, c: newChecker(d), r: r}, nil
}

func (g *gen) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if !slices.Contains(g.notes, n) && len(g.notes) < 16 {
		g.notes = append(g.notes, n)
	}
}

func (g *gen) budget() error {
	g.steps++
	if g.steps > stepBudget || g.size > sizeBudget || g.c.exhausted {
		return errBudget
	}
	return nil
}

// valid generates a value that s accepts; each try is held against the
// checker.
func (g *gen) valid(s any, depth int) (any, error) {
	if depth > hardDepth {
		return nil, fmt.Errorf("schemagen: nesting deeper than %d (a recursive $ref that never ends?)", hardDepth)
	}
	if err := g.budget(); err != nil {
		return nil, err
	}
	switch t := s.(type) {
	case bool:
		if !t {
			return nil, errUnsat
		}
		return g.anyValue(depth), nil
	case *object:
		err := errUnsat
		n := attempts
		if depth > softDepth {
			n = 2
		}
		for i := 0; i < n; i++ {
			w, ferr := g.flatten(t, 0)
			if ferr != nil {
				return nil, ferr
			}
			v, verr := g.once(w, depth, i)
			if verr == nil {
				if g.c.valid(t, v) {
					return v, nil
				}
				verr = errUnsat
			}
			if errors.Is(verr, errBudget) || g.c.exhausted {
				return nil, errBudget
			}
			if verr != errUnsat {
				err = verr
			}
		}
		return nil, err
	}
	return g.anyValue(depth), nil // not a schema: anything goes
}

// flatten resolves $ref and allOf into one working schema by merging. The
// result guides generation only; the checker still uses the original.
func (g *gen) flatten(s *object, hops int) (*object, error) {
	if hops > refHopLimit {
		return nil, errors.New("schemagen: $ref chain too long")
	}
	w := s
	if ref, ok := str(s, "$ref"); ok {
		target, err := g.d.resolve(ref)
		if err != nil {
			return nil, err
		}
		w = s.clone()
		w.del("$ref")
		switch t := target.(type) {
		case bool:
			if !t {
				return nil, errUnsat
			}
		case *object:
			tw, err := g.flatten(t, hops+1)
			if err != nil {
				return nil, err
			}
			if g.d.draft7 {
				w = tw
			} else {
				w = merge(tw, w)
			}
		}
	}
	if all, ok := arr(w, "allOf"); ok {
		w = w.clone()
		w.del("allOf")
		for _, sub := range all {
			switch t := sub.(type) {
			case bool:
				if !t {
					return nil, errUnsat
				}
			case *object:
				sw, err := g.flatten(t, hops+1)
				if err != nil {
					return nil, err
				}
				w = merge(w, sw)
			}
		}
	}
	return w, nil
}

// once makes one attempt at a value for the flattened schema w.
func (g *gen) once(w *object, depth, attempt int) (any, error) {
	if err := g.budget(); err != nil {
		return nil, err
	}
	// examples and default: used now and then, always on a late attempt
	if samples := g.samples(w); len(samples) > 0 && (g.r.IntN(4) == 0 || attempt == attempts-1) {
		if p, ok := str(w, "pattern"); ok {
			if _, err := syntax.Parse(p, syntax.Perl); err != nil {
				g.note("pattern %q: used the schema's example or default", p)
			}
		}
		return g.literal(samples[g.r.IntN(len(samples))])
	}
	if cv, ok := w.get("const"); ok {
		return g.literal(cv)
	}
	if e, ok := arr(w, "enum"); ok {
		if len(e) == 0 {
			return nil, errUnsat
		}
		return g.literal(e[g.enumIndex(len(e))])
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := arr(w, k); ok && len(branches) > 0 {
			b := branches[g.r.IntN(len(branches))]
			rest := w.clone()
			rest.del(k)
			switch t := b.(type) {
			case bool:
				if !t {
					return nil, errUnsat
				}
				return g.once(rest, depth, attempt)
			case *object:
				bw, err := g.flatten(t, 0)
				if err != nil {
					return nil, err
				}
				return g.once(merge(rest, bw), depth, attempt)
			}
		}
	}
	if cond, ok := obj(w, "if"); ok {
		// steer towards one branch; the checker decides whether it held
		rest := w.clone()
		rest.del("if")
		rest.del("then")
		rest.del("else")
		var parts []any
		if g.r.IntN(2) == 0 {
			parts = []any{cond, w.vals["then"]}
		} else {
			parts = []any{w.vals["else"]}
		}
		for _, p := range parts {
			if po, ok := p.(*object); ok {
				pw, err := g.flatten(po, 0)
				if err != nil {
					return nil, err
				}
				rest = merge(rest, pw)
			}
		}
		return g.once(rest, depth, attempt)
	}
	t, err := g.pickType(w)
	if err != nil {
		return nil, err
	}
	switch t {
	case "null":
		return nil, nil
	case "boolean":
		return g.r.IntN(2) == 0, nil
	case "integer":
		return g.integer(w)
	case "number":
		return g.number(w)
	case "string":
		return g.str(w)
	case "array":
		return g.array(w, depth)
	case "object":
		return g.object(w, depth)
	}
	return nil, errUnsat
}

// samples returns the schema's examples and default.
func (g *gen) samples(w *object) []any {
	var out []any
	if ex, ok := arr(w, "examples"); ok {
		out = append(out, ex...)
	}
	if d, ok := w.get("default"); ok {
		out = append(out, d)
	}
	return out
}

// pickType chooses the type of the value: one of "type", or the type the
// other keywords imply.
func (g *gen) pickType(w *object) (string, error) {
	if w.has("type") {
		list := types(w)
		var ok []string
		for _, t := range list {
			if slices.Contains(allTypes, t) {
				ok = append(ok, t)
			}
		}
		if len(ok) == 0 {
			return "", errUnsat
		}
		return ok[g.r.IntN(len(ok))], nil
	}
	for _, k := range w.keys {
		switch k {
		case "properties", "required", "additionalProperties", "minProperties", "maxProperties", "patternProperties", "dependentRequired":
			return "object", nil
		case "items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains":
			return "array", nil
		case "minLength", "maxLength", "pattern", "format":
			return "string", nil
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			return "number", nil
		case "multipleOf":
			return "integer", nil
		}
	}
	return []string{"string", "integer", "boolean", "string", "number", "null"}[g.r.IntN(6)], nil
}

// anyValue is a value for a schema that accepts anything: a small scalar.
func (g *gen) anyValue(depth int) any {
	if v, ok := g.edgeAny(); ok {
		return v
	}
	switch g.r.IntN(5) {
	case 0:
		return json.Number(strconv.Itoa(g.r.IntN(1000)))
	case 1:
		return g.r.IntN(2) == 0
	case 2:
		if depth < 2 {
			return []any{g.word(3, 8)}
		}
		return nil
	}
	return g.word(3, 10)
}
