// Package jsontree is the raw-preserving JSON tree that the mutator and the
// minimizer share. encoding/json would normalise exactly what a fuzzer wants
// to keep or break: objects here are ordered member lists (duplicate keys
// survive, and a duplicated key may be the bug), and scalars and strings are
// their raw text (1e400, -0, strings with invalid UTF-8 or lone surrogates
// round-trip byte for byte). Whitespace is not kept.
//
// Parsing, printing, walking and copying are iterative: the minimizer
// shrinks ladders a hundred thousand brackets deep, which recursion would
// overflow, while the mutator bounds its trees with Options.MaxDepth.
package jsontree

import "github.com/rpcload/rpcload/internal/wire"

// Kind is the JSON type of a node, as far as the tree tells them apart.
type Kind uint8

const (
	// Scalar is any token kept verbatim: numbers and literals, and, in a
	// tolerant parse, any other run of non-delimiter bytes (NaN, 01); also
	// whole texts a caller puts in the tree, such as a container a shallow
	// parse kept unparsed.
	Scalar Kind = iota
	// String is a string token, quotes included.
	String
	// Object is an ordered member list.
	Object
	// Array is an element list.
	Array
)

// Node is one JSON value.
type Node struct {
	Kind    Kind
	Raw     []byte   // Scalar, String: the text as written; shared with the input, never written through
	Members []Member // Object
	Elems   []*Node  // Array
}

// Member is one member of an object.
type Member struct {
	Key []byte // the raw string token, quotes and escapes as written
	Val *Node
}

// Options choose how Parse reads its input.
type Options struct {
	// Strict takes only JSON: numbers per the grammar, true/false/null,
	// strings with valid escapes and no control bytes (bytes that are not
	// UTF-8 are still taken as written). Otherwise scalars are any run of
	// non-delimiter bytes and strings any bytes between quotes.
	Strict bool
	// MaxDepth, when positive, fails a parse nesting containers deeper.
	MaxDepth int
	// Shallow parses the root only: every container inside it is kept as a
	// Scalar holding its raw text, with balanced brackets and closed
	// strings but not checked further, for Expand to parse when needed.
	Shallow bool
}

type parser struct {
	b     []byte
	i     int
	o     Options
	chunk []Node // nodes are carved from chunks: one allocation for many
}

// newNode returns a zeroed node from the current chunk, starting a new chunk
// (never growing the old one, whose nodes are referenced) when it is full.
func (p *parser) newNode(kind Kind) *Node {
	if len(p.chunk) == cap(p.chunk) {
		p.chunk = make([]Node, 0, min(max(8, 2*cap(p.chunk)), 1024))
	}
	p.chunk = append(p.chunk, Node{Kind: kind})
	return &p.chunk[len(p.chunk)-1]
}

// Parse parses b as one JSON value. Trailing commas, comments and
// unterminated strings never parse.
func Parse(b []byte, o Options) (*Node, bool) {
	p := parser{b: b, o: o}
	return p.parse()
}

func (p *parser) space() { p.i = wire.SkipSpace(p.b, p.i) }

// parse keeps the open containers, innermost last, in a local stack: as a
// field of the parser it would move to the heap on every parse.
func (p *parser) parse() (*Node, bool) {
	var root *Node
	var buf [16]*Node
	stack := buf[:0]
	p.space()
	for {
		v, opened, ok := p.value(len(stack))
		if !ok {
			return nil, false
		}
		if root == nil {
			root = v
		} else {
			attach(stack[len(stack)-1], v)
		}
		if opened {
			stack = append(stack, v)
			if v.Kind == Object && !p.key(v) {
				return nil, false
			}
			continue
		}
		if stack, ok = p.afterValue(stack); !ok {
			return nil, false
		}
		if len(stack) == 0 {
			return root, p.i == len(p.b)
		}
	}
}

// attach adds v to the open container top.
func attach(top, v *Node) {
	if top.Kind == Object {
		top.Members[len(top.Members)-1].Val = v
		return
	}
	top.Elems = append(top.Elems, v)
}

// afterValue reads the commas and closers after a value, up to where the
// next value starts, or to the end of the root, and returns the containers
// still open. It reports false on text that cannot follow a value.
func (p *parser) afterValue(stack []*Node) ([]*Node, bool) {
	for {
		p.space()
		if len(stack) == 0 {
			return stack, true
		}
		if p.i >= len(p.b) {
			return stack, false
		}
		top := stack[len(stack)-1]
		switch c := p.b[p.i]; {
		case c == ',':
			p.i++
			p.space()
			return stack, top.Kind != Object || p.key(top)
		case c == '}' && top.Kind == Object, c == ']' && top.Kind == Array:
			p.i++
			stack = stack[:len(stack)-1]
		default:
			return stack, false
		}
	}
}

// key reads `"name" :` into a new member of o and leaves p.i where its
// value starts.
func (p *parser) key(o *Node) bool {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return false
	}
	k, ok := p.str()
	if !ok {
		return false
	}
	o.Members = append(o.Members, Member{Key: k})
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != ':' {
		return false
	}
	p.i++
	p.space()
	return true
}

// value reads the value at p.i, inside depth open containers. opened
// reports a non-empty container whose elements or members follow.
func (p *parser) value(depth int) (n *Node, opened, ok bool) {
	if p.i >= len(p.b) {
		return nil, false, false
	}
	switch ch := p.b[p.i]; ch {
	case '{', '[':
		if p.o.Shallow && depth > 0 {
			n, ok := p.raw()
			return n, false, ok
		}
		if p.o.MaxDepth > 0 && depth >= p.o.MaxDepth {
			return nil, false, false
		}
		kind, closer := Array, byte(']')
		if ch == '{' {
			kind, closer = Object, '}'
		}
		n := p.newNode(kind)
		p.i++
		p.space()
		if p.i < len(p.b) && p.b[p.i] == closer {
			p.i++
			return n, false, true
		}
		return n, true, true
	case '"':
		s, ok := p.str()
		if !ok {
			return nil, false, false
		}
		n := p.newNode(String)
		n.Raw = s
		return n, false, true
	case '}', ']', ',', ':':
		return nil, false, false
	}
	j := p.i
	for j < len(p.b) && !isDelim(p.b[j]) {
		j++
	}
	s := p.b[p.i:j]
	if p.o.Strict && !wire.IsNumber(s) && string(s) != "true" && string(s) != "false" && string(s) != "null" {
		return nil, false, false
	}
	n = p.newNode(Scalar)
	n.Raw = s
	p.i = j
	return n, false, true
}

// raw keeps the container at p.i as text: up to its balancing bracket,
// skipping strings.
func (p *parser) raw() (*Node, bool) {
	depth := 0
	for j := p.i; j < len(p.b); j++ {
		switch p.b[j] {
		case '"':
			end, closed := wire.StringEnd(p.b, j)
			if !closed {
				return nil, false
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				n := p.newNode(Scalar)
				n.Raw = p.b[p.i : j+1]
				p.i = j + 1
				return n, true
			}
		}
	}
	return nil, false
}

// str reads the string token at p.i.
func (p *parser) str() ([]byte, bool) {
	var end int
	var ok bool
	if p.o.Strict {
		end, ok = wire.ValidStringEnd(p.b, p.i)
	} else {
		end, ok = wire.StringEnd(p.b, p.i)
	}
	if !ok {
		return nil, false
	}
	s := p.b[p.i:end]
	p.i = end
	return s, true
}

// isDelim reports the bytes that end a scalar token.
func isDelim(b byte) bool {
	switch b {
	case '{', '}', '[', ']', ',', ':', '"', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
