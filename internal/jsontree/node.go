package jsontree

// brackets are the opening and closing bytes of each container kind.
var brackets = [...][2]byte{Object: {'{', '}'}, Array: {'[', ']'}}

// Append appends n's compact text to dst.
func Append(dst []byte, n *Node) []byte {
	type frame struct {
		n    *Node
		next int // the next member or element to print
	}
	var buf [32]frame
	stack := append(buf[:0], frame{n: n})
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		cur := f.n
		var size int
		switch cur.Kind {
		case Object:
			size = len(cur.Members)
		case Array:
			size = len(cur.Elems)
		default:
			dst = append(dst, cur.Raw...)
			stack = stack[:len(stack)-1]
			continue
		}
		if f.next == 0 {
			dst = append(dst, brackets[cur.Kind][0])
		}
		if f.next == size {
			dst = append(dst, brackets[cur.Kind][1])
			stack = stack[:len(stack)-1]
			continue
		}
		if f.next > 0 {
			dst = append(dst, ',')
		}
		var kid *Node
		if cur.Kind == Object {
			m := cur.Members[f.next]
			dst = append(dst, m.Key...)
			dst = append(dst, ':')
			kid = m.Val
		} else {
			kid = cur.Elems[f.next]
		}
		f.next++
		stack = append(stack, frame{n: kid})
	}
	return dst
}

// Walk calls visit for root and every node under it in preorder (members
// and elements in order), with its depth (the root's is 0). visit returning
// false skips the node's children.
func Walk(root *Node, visit func(n *Node, depth int) bool) {
	type item struct {
		n     *Node
		depth int
	}
	var buf [32]item
	stack := append(buf[:0], item{root, 0})
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !visit(it.n, it.depth) {
			continue
		}
		for k := len(it.n.Elems) - 1; k >= 0; k-- {
			stack = append(stack, item{it.n.Elems[k], it.depth + 1})
		}
		for k := len(it.n.Members) - 1; k >= 0; k-- {
			stack = append(stack, item{it.n.Members[k].Val, it.depth + 1})
		}
	}
}

// Copy is a deep copy, so copies of one value can be changed one by one
// (raw texts are shared: they are never written). The children of a node
// are copied into one allocation.
func Copy(n *Node) *Node {
	c := new(Node)
	*c = *n
	var buf [32]*Node
	stack := append(buf[:0], c) // copies whose children are still the originals'
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if cur.Members != nil {
			members := make([]Member, len(cur.Members))
			vals := make([]Node, len(cur.Members))
			for i, m := range cur.Members {
				vals[i] = *m.Val
				members[i] = Member{Key: m.Key, Val: &vals[i]}
				stack = append(stack, &vals[i])
			}
			cur.Members = members
		}
		if cur.Elems != nil {
			elems := make([]*Node, len(cur.Elems))
			vals := make([]Node, len(cur.Elems))
			for i, e := range cur.Elems {
				vals[i] = *e
				elems[i] = &vals[i]
				stack = append(stack, &vals[i])
			}
			cur.Elems = elems
		}
	}
	return c
}

// RawContainer reports whether n holds a container as raw text (from a
// shallow parse, or a text a caller put there), and which bracket opens it.
func (n *Node) RawContainer() (byte, bool) {
	if n.Kind != Scalar || len(n.Raw) == 0 || (n.Raw[0] != '[' && n.Raw[0] != '{') {
		return 0, false
	}
	return n.Raw[0], true
}

// Expand parses in place, with o, a container n holds as raw text, and
// reports whether n is a container. With o.Shallow it parses one level;
// without, it also parses whatever a parsed container still holds as raw
// text. A text that does not parse stays as it was.
func (n *Node) Expand(o Options) bool {
	switch n.Kind {
	case Object, Array:
		if !o.Shallow {
			text := Append(nil, n) // parts of it may still be raw
			full, ok := Parse(text, o)
			if !ok {
				return false
			}
			*n = *full
		}
		return true
	}
	if _, ok := n.RawContainer(); !ok {
		return false
	}
	parsed, ok := Parse(n.Raw, o)
	if !ok {
		return false
	}
	*n = *parsed
	return true
}

// KeyIs reports whether the raw key token is exactly "name" (escaped
// spellings are different keys to a fuzzer, on purpose).
func KeyIs(key []byte, name string) bool {
	return len(key) == len(name)+2 && string(key[1:len(key)-1]) == name
}

// Find returns the index of the first member named name, or -1.
func (n *Node) Find(name string) int {
	for i, m := range n.Members {
		if KeyIs(m.Key, name) {
			return i
		}
	}
	return -1
}

// Get returns the value of the first member named name, or nil.
func (n *Node) Get(name string) *Node {
	if i := n.Find(name); i >= 0 {
		return n.Members[i].Val
	}
	return nil
}

// Set gives the first member named name the value v, appending the member
// when it is absent. name is written between quotes as it is: callers name
// plain members such as "id".
func (n *Node) Set(name string, v *Node) {
	if i := n.Find(name); i >= 0 {
		n.Members[i].Val = v
		return
	}
	key := make([]byte, 0, len(name)+2)
	key = append(append(append(key, '"'), name...), '"')
	n.Members = append(n.Members, Member{Key: key, Val: v})
}

// Remove drops every member named name and reports whether there was one.
func (n *Node) Remove(name string) bool {
	kept := n.Members[:0]
	for _, m := range n.Members {
		if !KeyIs(m.Key, name) {
			kept = append(kept, m)
		}
	}
	removed := len(kept) < len(n.Members)
	n.Members = kept
	return removed
}
