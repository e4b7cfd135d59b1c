package scenario

import (
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// value converts n into what YAML decodes into an any, restricted to values
// JSON can carry: map[string]any, []any, string, int, uint64, float64, bool
// and nil. Timestamps and binary scalars stay the strings they are written
// as. It reports NaN and infinities, custom tags, non-string keys, repeated
// keys, merge keys, alias cycles, and values nested deeper than maxDepth or
// expanding (through aliases) to more than maxNodes nodes.
func (p *parser) value(n *yaml.Node, where string) (any, bool) {
	return p.val(n, where, 0, map[*yaml.Node]bool{})
}

func (p *parser) val(n *yaml.Node, where string, depth int, open map[*yaml.Node]bool) (any, bool) {
	if p.nodes--; p.nodes < 0 {
		if p.nodes == -1 {
			p.errorf(n, "%s: too large: more than %d values after expanding aliases", where, maxNodes)
		}
		return nil, false
	}
	if depth > maxDepth {
		p.errorf(n, "%s: nested deeper than %d levels", where, maxDepth)
		return nil, false
	}
	if n.Kind == yaml.AliasNode {
		if open[n.Alias] {
			p.errorf(n, "%s: alias *%s refers to a value that contains it", where, n.Value)
			return nil, false
		}
		open[n.Alias] = true
		defer delete(open, n.Alias)
		return p.val(n.Alias, where, depth, open)
	}
	switch n.Kind {
	case yaml.MappingNode:
		open[n] = true
		defer delete(open, n)
		m := make(map[string]any, len(n.Content)/2)
		seen := make(map[string]int, len(n.Content)/2)
		ok := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			name, kok := p.key(k, where)
			if !kok {
				ok = false
				continue
			}
			if line, dup := seen[name]; dup {
				p.errorf(k, "%s: key %q appears twice (first at line %d)", where, name, line)
				ok = false
				continue
			}
			seen[name] = k.Line
			x, vok := p.val(v, where, depth+1, open)
			ok = ok && vok
			m[name] = x
		}
		return m, ok
	case yaml.SequenceNode:
		open[n] = true
		defer delete(open, n)
		s := make([]any, len(n.Content))
		ok := true
		for i, c := range n.Content {
			x, cok := p.val(c, where, depth+1, open)
			ok = ok && cok
			s[i] = x
		}
		return s, ok
	case yaml.ScalarNode:
		return p.scalarValue(n, where)
	}
	p.errorf(n, "%s: unexpected YAML node", where)
	return nil, false
}

// scalarValue converts one scalar.
func (p *parser) scalarValue(n *yaml.Node, where string) (any, bool) {
	switch n.ShortTag() {
	case "!!null":
		return nil, true
	case "!!str", "!!timestamp", "!!binary":
		return n.Value, true
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b, true
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			if i >= math.MinInt && i <= math.MaxInt {
				return int(i), true
			}
			return i, true
		}
		var u uint64
		if n.Decode(&u) == nil {
			return u, true
		}
		p.errorf(n, "%s: integer %s is out of range (at most 64 bits)", where, n.Value)
		return nil, false
	case "!!float":
		var f float64
		if n.Decode(&f) == nil {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				p.errorf(n, "%s: %s is not a JSON number", where, n.Value)
				return nil, false
			}
			return f, true
		}
	default:
		p.errorf(n, "%s: unsupported YAML tag %s", where, strconv.Quote(n.ShortTag()))
		return nil, false
	}
	p.errorf(n, "%s: cannot read %s as %s", where, strconv.Quote(n.Value), kind(n))
	return nil, false
}
