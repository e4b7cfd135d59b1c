package mutate

// A tolerant JSON tree for the ops that need structure. encoding/json would
// normalise exactly what the fuzzer wants to keep or break: objects here are
// ordered member lists (duplicate keys survive), and scalars are their raw
// text (1e400, -0, NaN, strings with invalid UTF-8 or lone surrogates all
// round-trip byte for byte). Whitespace is not kept.

type nodeKind uint8

const (
	// nodeScalar is any token kept verbatim: numbers, literals, garbage, and
	// whole texts an op inserts (a nesting ladder, a wide array).
	nodeScalar nodeKind = iota
	nodeString
	nodeObject
	nodeArray
)

type node struct {
	kind    nodeKind
	raw     []byte // nodeScalar, nodeString: the text as written (quotes included); never modified
	members []member
	elems   []*node
}

type member struct {
	key []byte // the raw string token, quotes included
	val *node
}

// maxTreeDepth bounds the recursion of the parser and the walkers; deeper
// frames are left to the byte-level ops.
const maxTreeDepth = 256

type parser struct {
	b       []byte
	i       int
	depth   int
	chunk   []node // nodes are carved from chunks: one allocation for many
	shallow bool   // keep the containers inside the root as raw text
}

// newNode returns a zeroed node from the current chunk, starting a new chunk
// (never growing the old one, whose nodes are referenced) when it is full.
func (p *parser) newNode(kind nodeKind) *node {
	if len(p.chunk) == cap(p.chunk) {
		p.chunk = make([]node, 0, min(max(8, 2*cap(p.chunk)), 1024))
	}
	p.chunk = append(p.chunk, node{kind: kind})
	return &p.chunk[len(p.chunk)-1]
}

// parseTree parses b as one tolerant JSON value. Scalars are any run of
// non-delimiter bytes (so NaN or 01 parse), strings any bytes between
// quotes; trailing commas, comments and unterminated strings do not parse.
func parseTree(b []byte) (*node, bool) {
	return parse(b, false)
}

// parseShallow parses one level: the root, with every container inside it
// kept as a nodeScalar holding its raw text (balanced brackets, not checked
// further), which node.open parses when an op needs it. Most ops touch only
// envelope members, and a wide or deep params, or a big batch, would
// otherwise cost a node per value on every op of a chain.
func parseShallow(b []byte) (*node, bool) {
	return parse(b, true)
}

func parse(b []byte, shallow bool) (*node, bool) {
	p := parser{b: b, shallow: shallow}
	p.space()
	n, ok := p.value()
	if !ok {
		return nil, false
	}
	p.space()
	return n, p.i == len(b)
}

func (p *parser) space() {
	for p.i < len(p.b) && isSpace(p.b[p.i]) {
		p.i++
	}
}

func (p *parser) value() (*node, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	switch ch := p.b[p.i]; ch {
	case '{', '[':
		if p.shallow && p.depth > 0 {
			return p.raw()
		}
		if ch == '{' {
			return p.object()
		}
		return p.array()
	case '"':
		s, ok := p.str()
		if !ok {
			return nil, false
		}
		n := p.newNode(nodeString)
		n.raw = s
		return n, true
	case '}', ']', ',', ':':
		return nil, false
	}
	j := p.i
	for j < len(p.b) && !isDelim(p.b[j]) {
		j++
	}
	n := p.newNode(nodeScalar)
	n.raw = p.b[p.i:j]
	p.i = j
	return n, true
}

// raw keeps the container at p.i as text: up to its balancing bracket,
// skipping strings.
func (p *parser) raw() (*node, bool) {
	depth := 0
	for j := p.i; j < len(p.b); j++ {
		switch p.b[j] {
		case '"':
			end, closed := stringEnd(p.b, j)
			if !closed {
				return nil, false
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				n := p.newNode(nodeScalar)
				n.raw = p.b[p.i : j+1]
				p.i = j + 1
				return n, true
			}
		}
	}
	return nil, false
}

func (p *parser) str() ([]byte, bool) {
	end, closed := stringEnd(p.b, p.i)
	if !closed {
		return nil, false
	}
	s := p.b[p.i:end]
	p.i = end
	return s, true
}

func (p *parser) enter() bool {
	p.depth++
	p.i++
	p.space()
	return p.depth <= maxTreeDepth
}

func (p *parser) object() (*node, bool) {
	if !p.enter() {
		return nil, false
	}
	n := p.newNode(nodeObject)
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		p.depth--
		return n, true
	}
	for {
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, false
		}
		key, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		n.members = append(n.members, member{key: key, val: v})
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			p.depth--
			return n, true
		default:
			return nil, false
		}
	}
}

func (p *parser) array() (*node, bool) {
	if !p.enter() {
		return nil, false
	}
	n := p.newNode(nodeArray)
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		p.depth--
		return n, true
	}
	for {
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		n.elems = append(n.elems, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			p.depth--
			return n, true
		default:
			return nil, false
		}
	}
}

// appendNode appends n's compact text.
func appendNode(dst []byte, n *node) []byte {
	switch n.kind {
	case nodeObject:
		dst = append(dst, '{')
		for i, m := range n.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, m.key...)
			dst = append(dst, ':')
			dst = appendNode(dst, m.val)
		}
		return append(dst, '}')
	case nodeArray:
		dst = append(dst, '[')
		for i, e := range n.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendNode(dst, e)
		}
		return append(dst, ']')
	}
	return append(dst, n.raw...)
}

func scalar(raw []byte) *node { return &node{kind: nodeScalar, raw: raw} }

// textNode holds raw JSON text an op made; its kind follows the first byte so
// later checks in the same op (is params an array?) still see the shape.
func textNode(raw []byte) *node {
	if len(raw) > 0 && raw[0] == '"' {
		return &node{kind: nodeString, raw: raw}
	}
	return scalar(raw)
}

// rawContainer reports whether n holds a container as raw text (from
// parseShallow, or a text an op inserted), and which bracket opens it.
func (n *node) rawContainer() (byte, bool) {
	if n.kind != nodeScalar || len(n.raw) == 0 || (n.raw[0] != '[' && n.raw[0] != '{') {
		return 0, false
	}
	return n.raw[0], true
}

// open parses, in place, one level of a container n holds as raw text, and
// reports whether n is a container.
func (n *node) open() bool { return n.expand(true) }

// openAll parses, in place, the whole container n holds as raw text.
func (n *node) openAll() bool { return n.expand(false) }

func (n *node) expand(shallow bool) bool {
	switch n.kind {
	case nodeObject, nodeArray:
		if !shallow {
			text := appendNode(nil, n) // parts of it may still be raw
			full, ok := parseTree(text)
			if !ok {
				return false
			}
			*n = *full
		}
		return true
	}
	if _, ok := n.rawContainer(); !ok {
		return false
	}
	parsed, ok := parse(n.raw, shallow)
	if !ok {
		return false
	}
	*n = *parsed
	return true
}

// keyIs reports whether the raw key token is exactly "name" (escaped
// spellings are different keys to the fuzzer, on purpose).
func keyIs(key []byte, name string) bool {
	return len(key) == len(name)+2 && string(key[1:len(key)-1]) == name
}

// find returns the index of the first member named name, or -1.
func (n *node) find(name string) int {
	for i, m := range n.members {
		if keyIs(m.key, name) {
			return i
		}
	}
	return -1
}

func (n *node) get(name string) *node {
	if i := n.find(name); i >= 0 {
		return n.members[i].val
	}
	return nil
}

// set gives the first member named name the value v, appending the member
// when it is absent.
func (n *node) set(name string, v *node) {
	if i := n.find(name); i >= 0 {
		n.members[i].val = v
		return
	}
	n.members = append(n.members, member{key: quoted(name), val: v})
}

// remove drops every member named name and reports whether there was one.
func (n *node) remove(name string) bool {
	kept := n.members[:0]
	for _, m := range n.members {
		if !keyIs(m.key, name) {
			kept = append(kept, m)
		}
	}
	removed := len(kept) < len(n.members)
	n.members = kept
	return removed
}

// copyNode is a deep copy, so the copies an op appends can be changed one by
// one (raw texts are shared: they are never written).
func copyNode(n *node) *node {
	c := *n
	if n.members != nil {
		c.members = make([]member, len(n.members))
		for i, m := range n.members {
			c.members[i] = member{key: m.key, val: copyNode(m.val)}
		}
	}
	if n.elems != nil {
		c.elems = make([]*node, len(n.elems))
		for i, e := range n.elems {
			c.elems[i] = copyNode(e)
		}
	}
	return &c
}

// envelope picks the request object of a frame: the frame itself, or one of
// the object elements of a batch.
func envelope(c Chooser, root *node) *node {
	switch root.kind {
	case nodeObject:
		return root
	case nodeArray:
		isObject := func(e *node) bool {
			open, raw := e.rawContainer()
			return e.kind == nodeObject || raw && open == '{'
		}
		n := 0
		for _, e := range root.elems {
			if isObject(e) {
				n++
			}
		}
		if n == 0 {
			return nil
		}
		k := c.Intn(n)
		for _, e := range root.elems {
			if isObject(e) {
				if k == 0 {
					if !e.open() {
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

// walk visits n and every node under it in preorder until visit returns
// false; it reports whether the walk ran to the end.
func walk(n *node, visit func(*node) bool) bool {
	if !visit(n) {
		return false
	}
	for _, m := range n.members {
		if !walk(m.val, visit) {
			return false
		}
	}
	for _, e := range n.elems {
		if !walk(e, visit) {
			return false
		}
	}
	return true
}

// pickNode picks one of the nodes under (and including) root that match
// accepts, uniformly.
func pickNode(c Chooser, root *node, match func(*node) bool) *node {
	n := 0
	walk(root, func(x *node) bool {
		if match(x) {
			n++
		}
		return true
	})
	if n == 0 {
		return nil
	}
	k := c.Intn(n)
	var got *node
	walk(root, func(x *node) bool {
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
func methodName(obj *node) (string, bool) {
	m := obj.get("method")
	if m == nil || m.kind != nodeString {
		return "", false
	}
	s := m.raw[1 : len(m.raw)-1]
	for _, ch := range s {
		if ch == '\\' {
			return "", false
		}
	}
	return string(s), true
}
