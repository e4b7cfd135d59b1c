package fuzz

import (
	"github.com/rpcload/rpcload/internal/wire"
)

// nodeKind is the JSON type of a tree node.
type nodeKind uint8

const (
	kindObject nodeKind = iota
	kindArray
	kindString
	kindNumber
	kindLiteral // true, false, null
)

// node is one JSON value as the minimizer and the reply-shape summary see
// it: scalars keep their exact text, objects keep their members in order
// with duplicates (a duplicated key may be the bug), whitespace is dropped.
type node struct {
	kind nodeKind
	raw  []byte   // scalars: the exact text (strings with their quotes and escapes)
	keys [][]byte // objects: the member names as written, quotes included
	kids []*node  // objects: the member values, parallel to keys; arrays: the elements
}

// parseTree parses one JSON text into a tree. It is iterative, so nesting a
// million deep costs memory, not stack. Strings are taken as written, bytes
// that are not UTF-8 included; anything else that is not JSON fails.
func parseTree(d []byte) (*node, bool) {
	var stack []*node
	var root *node
	i := wire.SkipSpace(d, 0)
	for {
		// A value starts at i.
		if i >= len(d) {
			return nil, false
		}
		var v *node
		switch c := d[i]; {
		case c == '{' || c == '[':
			v = &node{kind: kindArray}
			closer := byte(']')
			if c == '{' {
				v.kind, closer = kindObject, '}'
			}
			i = wire.SkipSpace(d, i+1)
			if i < len(d) && d[i] == closer {
				i++
				break
			}
			if !attach(&stack, &root, v) {
				return nil, false
			}
			stack = append(stack, v)
			if v.kind == kindObject {
				var ok bool
				if i, ok = objectKey(d, i, v); !ok {
					return nil, false
				}
			}
			continue
		case c == '"':
			end, ok := stringEnd(d, i)
			if !ok {
				return nil, false
			}
			v = &node{kind: kindString, raw: d[i:end]}
			i = end
		case c == '-' || ('0' <= c && c <= '9'):
			end := i
			for end < len(d) && isNumberByte(d[end]) {
				end++
			}
			if !wire.IsNumber(d[i:end]) {
				return nil, false
			}
			v = &node{kind: kindNumber, raw: d[i:end]}
			i = end
		default:
			end := i
			for _, lit := range [...]string{"true", "false", "null"} {
				if len(d)-i >= len(lit) && string(d[i:i+len(lit)]) == lit {
					end = i + len(lit)
					break
				}
			}
			if end == i {
				return nil, false
			}
			v = &node{kind: kindLiteral, raw: d[i:end]}
			i = end
		}
		if len(stack) == 0 {
			root = v
			return root, wire.SkipSpace(d, i) == len(d)
		}
		if !attach(&stack, &root, v) {
			return nil, false
		}
		// After a value: a comma, or closers.
		for {
			i = wire.SkipSpace(d, i)
			if i >= len(d) {
				return nil, false
			}
			top := stack[len(stack)-1]
			if d[i] == ',' {
				i = wire.SkipSpace(d, i+1)
				if top.kind == kindObject {
					var ok bool
					if i, ok = objectKey(d, i, top); !ok {
						return nil, false
					}
				}
				break
			}
			if (top.kind == kindObject && d[i] != '}') || (top.kind == kindArray && d[i] != ']') {
				return nil, false
			}
			i++
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return root, wire.SkipSpace(d, i) == len(d)
			}
		}
	}
}

// attach adds v to the container on top of the stack, or makes it the root.
func attach(stack *[]*node, root **node, v *node) bool {
	if len(*stack) == 0 {
		if *root != nil {
			return false
		}
		*root = v
		return true
	}
	top := (*stack)[len(*stack)-1]
	top.kids = append(top.kids, v)
	return true
}

// objectKey reads `"name" :` at i into o's keys and returns where its value
// starts.
func objectKey(d []byte, i int, o *node) (int, bool) {
	if i >= len(d) || d[i] != '"' {
		return i, false
	}
	end, ok := stringEnd(d, i)
	if !ok {
		return i, false
	}
	o.keys = append(o.keys, d[i:end])
	i = wire.SkipSpace(d, end)
	if i >= len(d) || d[i] != ':' {
		return i, false
	}
	return wire.SkipSpace(d, i+1), true
}

// stringEnd returns the offset just past the string starting at d[i] ('"').
// Escapes must be JSON escapes; control characters are refused; other bytes
// are taken as they are.
func stringEnd(d []byte, i int) (int, bool) {
	for j := i + 1; j < len(d); j++ {
		switch c := d[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return j, false
		case c == '\\':
			if j+1 >= len(d) {
				return j, false
			}
			switch d[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+5 >= len(d) || !isHexDigit(d[j+2]) || !isHexDigit(d[j+3]) || !isHexDigit(d[j+4]) || !isHexDigit(d[j+5]) {
					return j, false
				}
				j += 5
			default:
				return j, false
			}
		}
	}
	return len(d), false
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// appendTree appends n as compact JSON. It is iterative, like parseTree.
func appendTree(dst []byte, n *node) []byte {
	type frame struct {
		n    *node
		next int
	}
	stack := []frame{{n: n}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		cur := f.n
		if cur.kind != kindObject && cur.kind != kindArray {
			dst = append(dst, cur.raw...)
			stack = stack[:len(stack)-1]
			continue
		}
		if f.next == 0 {
			if cur.kind == kindObject {
				dst = append(dst, '{')
			} else {
				dst = append(dst, '[')
			}
		}
		if f.next == len(cur.kids) {
			if cur.kind == kindObject {
				dst = append(dst, '}')
			} else {
				dst = append(dst, ']')
			}
			stack = stack[:len(stack)-1]
			continue
		}
		if f.next > 0 {
			dst = append(dst, ',')
		}
		if cur.kind == kindObject {
			dst = append(dst, cur.keys[f.next]...)
			dst = append(dst, ':')
		}
		kid := cur.kids[f.next]
		f.next++
		stack = append(stack, frame{n: kid})
	}
	return dst
}

// walkTree calls fn for every node in preorder with its depth (the root is
// 0), iteratively. fn returning false skips the node's children.
func walkTree(root *node, fn func(n *node, depth int) bool) {
	type item struct {
		n     *node
		depth int
	}
	stack := []item{{root, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !fn(it.n, it.depth) {
			continue
		}
		for k := len(it.n.kids) - 1; k >= 0; k-- {
			stack = append(stack, item{it.n.kids[k], it.depth + 1})
		}
	}
}
