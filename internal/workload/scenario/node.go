package scenario

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits on what a value (params, a schema, a literal) may expand to.
const (
	maxDepth = 64      // nesting of lists and mappings
	maxNodes = 1 << 20 // nodes visited, counting each alias expansion again
)

// parser holds the state of one Parse: the file, the problems found so far,
// and the budget of nodes left for expanding values.
type parser struct {
	file   string
	dir    string
	data   []byte
	getenv func(string) (string, bool)
	errs   Errors
	nodes  int      // nodes left to visit in values
	lines  []string // the lines of data, split when a problem is first found

	secrets []string // the values ${VAR} took (Scenario.Secrets)
}

// errorf records a problem at n.
func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line, col = n.Line, max(n.Column, 1)
	}
	line, col = p.clamp(line, col)
	p.errs = append(p.errs, Error{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
}

// clamp keeps a position inside the file: the YAML parser places the end
// of a document (an empty value, a "---" with no newline) one line past the
// last.
func (p *parser) clamp(line, col int) (int, int) {
	if p.lines == nil {
		p.lines = strings.Split(string(p.data), "\n")
		if n := len(p.lines); n > 1 && p.lines[n-1] == "" {
			p.lines = p.lines[:n-1]
		}
	}
	if line > len(p.lines) {
		line, col = len(p.lines), utf8.RuneCountInString(p.lines[len(p.lines)-1])+1
	}
	return line, max(1, min(col, utf8.RuneCountInString(p.lines[line-1])+1))
}

// resolve follows aliases to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// kind names what n is, for messages ("got a list").
func kind(n *yaml.Node) string {
	n = resolve(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.ShortTag() {
	case "!!str":
		return "a string"
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	case "!!timestamp":
		return "a timestamp"
	case "!!binary":
		return "binary data"
	}
	return "a value tagged " + n.ShortTag()
}

// field is one key of a mapping with its value.
type field struct {
	key, val *yaml.Node
}

// fields checks that n is a mapping whose keys are distinct strings among
// known, reports the others, and returns the fields by key. where names the
// mapping in messages ("transport"). It returns nil if n is not a mapping.
func (p *parser) fields(n *yaml.Node, where string, known ...string) map[string]field {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		p.errorf(n, "%s: expected a mapping, got %s", where, kind(n))
		return nil
	}
	out := make(map[string]field, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name, ok := p.key(k, where)
		if !ok {
			continue
		}
		if prev, dup := out[name]; dup {
			p.errorf(k, "%s: key %q appears twice (first at line %d)", where, name, prev.key.Line)
			continue
		}
		if !slices.Contains(known, name) {
			p.errorf(k, "%s: unknown key %q%s", where, name, suggest(name, known))
			continue
		}
		out[name] = field{k, v}
	}
	return out
}

// key reads a mapping key: a plain string, not a merge key or a structure.
func (p *parser) key(k *yaml.Node, where string) (string, bool) {
	k = resolve(k)
	switch {
	case k == nil || k.Kind != yaml.ScalarNode:
		p.errorf(k, "%s: a key must be a string, got %s", where, kind(k))
		return "", false
	case k.ShortTag() == "!!merge":
		p.errorf(k, "%s: merge keys (<<) are not supported; repeat the keys or use an alias for the whole value", where)
		return "", false
	}
	return k.Value, true
}

// suggest lists the keys expected instead of name, the closest first.
func suggest(name string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := distance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	s := " (expected " + strings.Join(known, ", ") + ")"
	if len(known) == 1 {
		s = " (expected " + known[0] + ")"
	}
	if best != "" {
		s = "; did you mean " + best + "?" + s
	}
	return s
}

// distance is the Levenshtein distance of a and b (bytes).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// scalar returns n resolved if it is a scalar with the YAML tag tag, and
// reports a problem otherwise. want says what was expected.
func (p *parser) scalar(n *yaml.Node, where, want string, tags ...string) (*yaml.Node, bool) {
	r := resolve(n)
	if r == nil || r.Kind != yaml.ScalarNode || !slices.Contains(tags, r.ShortTag()) {
		p.errorf(n, "%s: expected %s, got %s", where, want, kind(n))
		return nil, false
	}
	return r, true
}

// str reads a string. An unquoted date (a YAML timestamp, such as an MCP
// revision 2025-06-18) is the string it is written as.
func (p *parser) str(n *yaml.Node, where string) (string, bool) {
	r, ok := p.scalar(n, where, "a string", "!!str", "!!timestamp")
	if !ok {
		return "", false
	}
	return r.Value, true
}

// nonEmpty reads a string that must not be empty.
func (p *parser) nonEmpty(n *yaml.Node, where string) (string, bool) {
	s, ok := p.str(n, where)
	if ok && s == "" {
		p.errorf(n, "%s: must not be empty", where)
		return "", false
	}
	return s, ok
}

// oneOf reads a string that must be one of choices.
func (p *parser) oneOf(n *yaml.Node, where string, choices ...string) (string, bool) {
	s, ok := p.str(n, where)
	if ok && !slices.Contains(choices, s) {
		p.errorf(n, "%s: %q is not one of %s", where, s, strings.Join(choices, ", "))
		return "", false
	}
	return s, ok
}

// boolean reads true or false.
func (p *parser) boolean(n *yaml.Node, where string) (bool, bool) {
	if r := resolve(n); r != nil && r.Kind == yaml.ScalarNode && r.ShortTag() == "!!str" {
		switch strings.ToLower(r.Value) {
		case "yes", "no", "on", "off", "y", "n":
			p.errorf(n, "%s: expected true or false, got the string %q (YAML 1.2 reads yes, no, on and off as strings)", where, r.Value)
			return false, false
		}
	}
	r, ok := p.scalar(n, where, "true or false", "!!bool")
	if !ok {
		return false, false
	}
	var b bool
	if err := r.Decode(&b); err != nil {
		p.errorf(n, "%s: expected true or false", where)
		return false, false
	}
	return b, true
}

// integer reads an integer that fits int64.
func (p *parser) integer(n *yaml.Node, where string) (int64, bool) {
	r, ok := p.scalar(n, where, "an integer", "!!int")
	if !ok {
		return 0, false
	}
	var i int64
	if err := r.Decode(&i); err != nil {
		p.errorf(n, "%s: integer %s is out of range", where, r.Value)
		return 0, false
	}
	return i, true
}

// intIn reads an integer in [lo, hi].
func (p *parser) intIn(n *yaml.Node, where string, lo, hi int64) (int, bool) {
	i, ok := p.integer(n, where)
	if !ok {
		return 0, false
	}
	if i < lo || i > hi {
		want := fmt.Sprintf("%d to %d", lo, hi)
		if hi >= math.MaxInt32 {
			want = fmt.Sprintf("at least %d", lo)
		}
		p.errorf(n, "%s: %d is out of range (expected %s)", where, i, want)
		return 0, false
	}
	return int(i), true
}

// number reads a finite number (an integer or a float).
func (p *parser) number(n *yaml.Node, where string) (float64, bool) {
	r, ok := p.scalar(n, where, "a number", "!!int", "!!float")
	if !ok {
		return 0, false
	}
	var f float64
	if err := r.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		p.errorf(n, "%s: expected a finite number, got %s", where, r.Value)
		return 0, false
	}
	return f, true
}

// positive reads a number > 0 (or >= 0 with zeroOK).
func (p *parser) positive(n *yaml.Node, where string, zeroOK bool) (float64, bool) {
	f, ok := p.number(n, where)
	switch {
	case !ok:
		return 0, false
	case f < 0 || f == 0 && !zeroOK:
		want := "a number greater than 0"
		if zeroOK {
			want = "a number of at least 0"
		}
		p.errorf(n, "%s: %v is out of range (expected %s)", where, f, want)
		return 0, false
	}
	return f, true
}

// list returns the items of a sequence, or reports a problem.
func (p *parser) list(n *yaml.Node, where string) ([]*yaml.Node, bool) {
	r := resolve(n)
	if r == nil || r.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: expected a list, got %s", where, kind(n))
		return nil, false
	}
	return r.Content, true
}
