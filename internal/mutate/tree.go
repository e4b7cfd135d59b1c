package mutate

import "github.com/rpcload/rpcload/internal/jsontree"

// The ops that need structure work on a tolerant jsontree: scalars are any
// run of non-delimiter bytes (so NaN or 01 parse), strings any bytes between
// quotes, because the frames they get are often what earlier ops of a chain
// broke.

// maxTreeDepth bounds the trees the ops parse; deeper frames are left to
// the byte-level ops, which are what nesting bugs need anyway.
const maxTreeDepth = 256

var (
	fullTree    = jsontree.Options{MaxDepth: maxTreeDepth}
	shallowTree = jsontree.Options{MaxDepth: maxTreeDepth, Shallow: true}
)

// parseTree parses b as one tolerant JSON value.
func parseTree(b []byte) (*jsontree.Node, bool) { return jsontree.Parse(b, fullTree) }

// parseShallow parses one level: the root, with every container inside it
// kept as raw text, which openLevel parses when an op needs it. Most ops
// touch only envelope members, and a wide or deep params, or a big batch,
// would otherwise cost a node per value on every op of a chain.
func parseShallow(b []byte) (*jsontree.Node, bool) { return jsontree.Parse(b, shallowTree) }

// openLevel parses, in place, one level of a container n holds as raw
// text, and reports whether n is a container.
func openLevel(n *jsontree.Node) bool { return n.Expand(shallowTree) }

// openAll parses, in place, the whole container n holds as raw text.
func openAll(n *jsontree.Node) bool { return n.Expand(fullTree) }

func scalar(raw []byte) *jsontree.Node { return &jsontree.Node{Kind: jsontree.Scalar, Raw: raw} }

// textNode holds raw JSON text an op made; its kind follows the first byte so
// later checks in the same op (is params an array?) still see the shape.
func textNode(raw []byte) *jsontree.Node {
	if len(raw) > 0 && raw[0] == '"' {
		return &jsontree.Node{Kind: jsontree.String, Raw: raw}
	}
	return scalar(raw)
}

// envelope picks the request object of a frame: the frame itself, or one of
// the object elements of a batch.
func envelope(c Chooser, root *jsontree.Node) *jsontree.Node {
	switch root.Kind {
	case jsontree.Object:
		return root
	case jsontree.Array:
		isObject := func(e *jsontree.Node) bool {
			open, raw := e.RawContainer()
			return e.Kind == jsontree.Object || raw && open == '{'
		}
		n := 0
		for _, e := range root.Elems {
			if isObject(e) {
				n++
			}
		}
		if n == 0 {
			return nil
		}
		k := c.Intn(n)
		for _, e := range root.Elems {
			if isObject(e) {
				if k == 0 {
					if !openLevel(e) {
						return nil
					}
					return e
				}
				k--
			}
		}
	}
	return nil
}

// pickNode picks one of the nodes under (and including) root that match
// accepts, uniformly.
func pickNode(c Chooser, root *jsontree.Node, match func(*jsontree.Node) bool) *jsontree.Node {
	n := 0
	jsontree.Walk(root, func(x *jsontree.Node, _ int) bool {
		if match(x) {
			n++
		}
		return true
	})
	if n == 0 {
		return nil
	}
	k := c.Intn(n)
	var got *jsontree.Node
	jsontree.Walk(root, func(x *jsontree.Node, _ int) bool {
		if got != nil {
			return false
		}
		if match(x) {
			if k == 0 {
				got = x
				return false
			}
			k--
		}
		return true
	})
	return got
}

// methodName returns an object's method when it is a plain string (no
// escapes, which a lookup in Env would not match anyway).
func methodName(obj *jsontree.Node) (string, bool) {
	m := obj.Get("method")
	if m == nil || m.Kind != jsontree.String {
		return "", false
	}
	s := m.Raw[1 : len(m.Raw)-1]
	for _, ch := range s {
		if ch == '\\' {
			return "", false
		}
	}
	return string(s), true
}
