package discover

import (
	"math/big"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// defsPrefix is where a self-contained schema keeps the definitions it
// uses.
const defsPrefix = "#/$defs/"

// selfContained copies a schema from a document, rewriting references to the
// document's named schemas (prefix, e.g. "#/components/schemas/") into
// "#/$defs/NAME" and carrying every schema it reaches in $defs, so the
// schema stands alone in a scenario file and in a validator.
func selfContained(s *yaml.Node, prefix string, named *yaml.Node) *yaml.Node {
	out := clone(s)
	var order []string
	seen := map[string]bool{}
	var rewrite func(n *yaml.Node)
	rewrite = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Value == "$ref" && v.Kind == yaml.ScalarNode && strings.HasPrefix(v.Value, prefix) {
					name := strings.TrimPrefix(v.Value, prefix)
					v.Value = defsPrefix + name
					if !seen[name] {
						seen[name] = true
						order = append(order, name)
					}
				}
			}
		}
		for _, c := range n.Content {
			rewrite(c)
		}
	}
	rewrite(out)
	if len(order) == 0 || out.Kind != yaml.MappingNode {
		return out
	}
	defs := get(out, "$defs")
	if defs == nil {
		defs = mapping()
		out.Content = append(out.Content, str("$defs"), defs)
	}
	for i := 0; i < len(order); i++ { // order grows as definitions are copied
		name := order[i]
		def := get(named, unescapePointer(name))
		if def == nil || get(defs, name) != nil {
			continue
		}
		c := clone(def)
		rewrite(c)
		defs.Content = append(defs.Content, str(name), c)
	}
	return out
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// annotations are keywords that never reject a value.
var annotations = []string{"title", "description", "examples", "default", "$comment", "deprecated",
	"readOnly", "writeOnly", "$schema", "$id", "$defs", "definitions", "$anchor"}

// only reports whether every keyword of schema s is an annotation or one of
// the given keywords, so a generator covering those keywords covers s.
func only(s *yaml.Node, keys ...string) bool {
	for i := 0; i+1 < len(s.Content); i += 2 {
		k := s.Content[i].Value
		if !slices.Contains(keys, k) && !slices.Contains(annotations, k) {
			return false
		}
	}
	return true
}

// deref follows $ref to #/$defs/NAME or #/definitions/NAME while the schema
// is nothing but the reference (and annotations).
func deref(s, root *yaml.Node) *yaml.Node {
	for range 16 {
		if s == nil || s.Kind != yaml.MappingNode {
			return s
		}
		ref, ok := getStr(s, "$ref")
		if !ok || !only(s, "$ref") {
			return s
		}
		var next *yaml.Node
		switch {
		case strings.HasPrefix(ref, defsPrefix):
			next = get(get(root, "$defs"), unescapePointer(strings.TrimPrefix(ref, defsPrefix)))
		case strings.HasPrefix(ref, "#/definitions/"):
			next = get(get(root, "definitions"), unescapePointer(strings.TrimPrefix(ref, "#/definitions/")))
		}
		if next == nil {
			return s
		}
		s = next
	}
	return s
}

func typeIs(s *yaml.Node, t string) bool {
	v, ok := getStr(s, "type")
	return ok && v == t
}

var (
	// ^0x[0-9a-fA-F]{40}$ and its spellings: N hex digits, an even number
	hexFixed = regexp.MustCompile(`^\^0x\[(?:0-9a-fA-F|0-9A-Fa-f|a-fA-F0-9|A-Fa-f0-9|0-9a-f|a-f0-9)\]\{(\d+)\}\$$`)
	// ^0x[0-9a-f]+$, ^0x[0-9a-fA-F]*$, the execution-apis uint pattern
	hexQuantity = map[string]bool{
		`^0x[0-9a-f]+$`: true, `^0x[0-9a-fA-F]+$`: true, `^0x[0-9a-f]*$`: true, `^0x[0-9a-fA-F]*$`: true,
		`^0x([1-9a-f]+[0-9a-f]*|0)$`: true, `^0x(0|[1-9a-f][0-9a-f]*)$`: true, `^0x([1-9a-f][0-9a-f]*|0)$`: true,
	}
)

// generatorFor returns the scenario generator that produces exactly the
// values of a schema, when one does: an integer range, an enum, a boolean, a
// uuid, an RFC 3339 time, an Ethereum address-like fixed hex string or hex
// quantity, a string of bounded length, or a choice among such schemas.
func generatorFor(s, root *yaml.Node, depth int) *yaml.Node {
	s = deref(s, root)
	if s == nil || s.Kind != yaml.MappingNode || depth > 4 {
		return nil
	}
	if e := get(s, "enum"); e != nil && e.Kind == yaml.SequenceNode && only(s, "enum", "type") && len(e.Content) > 1 && validEnum(s) {
		vals := make([]*yaml.Node, len(e.Content))
		for i, v := range e.Content {
			vals[i] = clone(v)
			escapeKeys(vals[i], nil)
		}
		return generator("$choice", seq(vals...))
	}
	switch {
	case typeIs(s, "boolean") && only(s, "type"):
		return generator("$choice", seq(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "false"}))
	case typeIs(s, "integer") && only(s, "type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "format"):
		lo, okLo := intBound(s, "minimum", "exclusiveMinimum", true)
		hi, okHi := intBound(s, "maximum", "exclusiveMaximum", false)
		if okLo && okHi && lo.Cmp(hi) <= 0 && lo.IsInt64() && hi.IsInt64() {
			return generator("$int", seq(num(lo.Int64()), num(hi.Int64())))
		}
	case typeIs(s, "string"):
		format, _ := getStr(s, "format")
		pattern, _ := getStr(s, "pattern")
		switch {
		case format == "uuid" && only(s, "type", "format"):
			return generator("$uuid", str("v4"))
		case format == "date-time" && only(s, "type", "format"):
			return generator("$now", str("rfc3339"))
		case pattern != "" && only(s, "type", "pattern"):
			if m := hexFixed.FindStringSubmatch(pattern); m != nil && len(m[1]) < 6 {
				if n := atoi(m[1]); n > 0 && n%2 == 0 {
					return generator("$hex", mapping("bytes", num(int64(n/2))))
				}
			}
			if hexQuantity[pattern] {
				return generator("$hexint", seq(num(0), num(1000000)))
			}
		case pattern == "" && format == "" && only(s, "type", "minLength", "maxLength") && (get(s, "minLength") != nil || get(s, "maxLength") != nil):
			lo, hi := atoi(scalar(get(s, "minLength"))), atoi(scalar(get(s, "maxLength")))
			if get(s, "maxLength") == nil {
				hi = lo + 16
			}
			if lo >= 0 && hi >= lo && hi <= 4096 {
				return generator("$string", mapping("min", num(int64(lo)), "max", num(int64(hi))))
			}
		}
	}
	return choiceOf(s, root, depth)
}

// choiceOf maps anyOf, or a oneOf whose branches cannot overlap (at most one
// branch that is not an enum of strings, none of those strings matching its
// pattern), to a $choice over the branches' generators.
func choiceOf(s, root *yaml.Node, depth int) *yaml.Node {
	kw := "anyOf"
	branches := get(s, kw)
	if branches == nil {
		kw, branches = "oneOf", get(s, "oneOf")
	}
	if branches == nil || branches.Kind != yaml.SequenceNode || !only(s, kw) || len(branches.Content) == 0 {
		return nil
	}
	var out []*yaml.Node
	var enums []string
	var open []*yaml.Node // branches that are not string enums
	for _, b := range branches.Content {
		g := generatorFor(b, root, depth+1)
		if g == nil {
			return nil
		}
		if g.Content[0].Value == "$choice" && allStrings(g.Content[1]) {
			for _, v := range g.Content[1].Content {
				enums = append(enums, v.Value)
			}
			out = append(out, g.Content[1].Content...) // the enum's values join the choice
			continue
		}
		open = append(open, deref(b, root))
		out = append(out, g)
	}
	if kw == "oneOf" {
		if len(open) > 1 {
			return nil
		}
		if len(open) == 1 {
			p, _ := getStr(open[0], "pattern")
			re, err := regexp.Compile(p)
			if p == "" || err != nil || !typeIs(open[0], "string") {
				return nil
			}
			for _, e := range enums {
				if re.MatchString(e) {
					return nil
				}
			}
		}
	}
	return generator("$choice", seq(out...))
}

func allStrings(n *yaml.Node) bool {
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || c.Tag != "!!str" {
			return false
		}
	}
	return true
}

// validEnum reports whether every enum value also has the schema's type.
func validEnum(s *yaml.Node) bool {
	t, ok := getStr(s, "type")
	if !ok {
		return get(s, "type") == nil
	}
	for _, v := range get(s, "enum").Content {
		if jsonType(v) != t && !(t == "number" && jsonType(v) == "integer") {
			return false
		}
	}
	return true
}

func jsonType(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "array"
	}
	switch n.Tag {
	case "!!str":
		return "string"
	case "!!bool":
		return "boolean"
	case "!!null":
		return "null"
	case "!!int":
		return "integer"
	}
	// 1.0 is an integer too; numbers with exponents are left as numbers
	// (big.Rat would expand 1e999999999 in full)
	if len(n.Value) < 40 && !strings.ContainsAny(n.Value, "eE") {
		if r, ok := new(big.Rat).SetString(n.Value); ok && r.IsInt() {
			return "integer"
		}
	}
	return "number"
}

// intBound reads an integer bound: the inclusive keyword, or the exclusive
// one moved by one.
func intBound(s *yaml.Node, incl, excl string, lower bool) (*big.Int, bool) {
	var best *big.Int
	for _, k := range []string{incl, excl} {
		v := get(s, k)
		if v == nil || (v.Tag != "!!int" && v.Tag != "!!float") || len(v.Value) > 40 || strings.ContainsAny(v.Value, "eE") {
			continue
		}
		r, ok := new(big.Rat).SetString(v.Value)
		if !ok {
			continue
		}
		q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int)) // floor
		switch {
		case lower && (m.Sign() != 0 || k == excl):
			q.Add(q, big.NewInt(1))
		case !lower && m.Sign() == 0 && k == excl:
			q.Sub(q, big.NewInt(1))
		}
		if best == nil || (lower && q.Cmp(best) > 0) || (!lower && q.Cmp(best) < 0) {
			best = q
		}
	}
	return best, best != nil
}

func scalar(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}

func atoi(s string) int {
	n := 0
	if s == "" || len(s) > 6 {
		return -1
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// containerKeys are the keywords of an object or array schema whose members
// can be generated one by one without breaking the whole.
var containerKeys = []string{"type", "properties", "required", "additionalProperties", "items", "prefixItems",
	"minItems", "maxItems", "minProperties", "maxProperties"}

// overlay replaces the parts of a literal value whose schema maps to a
// generator, walking objects and arrays whose schemas constrain each member
// on its own. It records the generator nodes it inserts.
func overlay(v, s, root *yaml.Node, gens map[*yaml.Node]bool, depth int) *yaml.Node {
	s = deref(s, root)
	if s == nil || s.Kind != yaml.MappingNode || depth > 32 {
		return v
	}
	if g := generatorFor(s, root, 0); g != nil {
		gens[g] = true
		return g
	}
	if !only(s, containerKeys...) {
		return v
	}
	switch v.Kind {
	case yaml.MappingNode:
		props := get(s, "properties")
		for i := 0; i+1 < len(v.Content); i += 2 {
			if sub := get(props, v.Content[i].Value); sub != nil {
				v.Content[i+1] = overlay(v.Content[i+1], sub, root, gens, depth+1)
			}
		}
	case yaml.SequenceNode:
		prefix := get(s, "prefixItems")
		items := get(s, "items")
		for i, e := range v.Content {
			switch {
			case prefix != nil && i < len(prefix.Content):
				v.Content[i] = overlay(e, prefix.Content[i], root, gens, depth+1)
			case items != nil && items.Kind == yaml.MappingNode:
				v.Content[i] = overlay(e, items, root, gens, depth+1)
			}
		}
	}
	return v
}
