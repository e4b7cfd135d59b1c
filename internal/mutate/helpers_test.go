package mutate

import (
	"bytes"
	"encoding/json"
	"github.com/rpcload/rpcload/internal/jsontree"
	"testing"
)

// Test helpers shared by the op table, the properties and the fuzz target.

func frames(texts ...string) Case {
	c := Case{}
	for _, s := range texts {
		c.Frames = append(c.Frames, []byte(s))
	}
	return c
}

// cloneCase is a deep copy, to prove an op left its input alone.
func cloneCase(c Case) Case {
	out := Case{}
	if c.Wire != nil {
		out.Wire = append([]byte{}, c.Wire...)
	}
	for _, f := range c.Frames {
		out.Frames = append(out.Frames, clone(f))
	}
	return out
}

func equalCase(a, b Case) bool {
	if len(a.Frames) != len(b.Frames) || !bytes.Equal(a.Wire, b.Wire) || (a.Wire == nil) != (b.Wire == nil) {
		return false
	}
	for i := range a.Frames {
		if !bytes.Equal(a.Frames[i], b.Frames[i]) {
			return false
		}
	}
	return true
}

// obj parses a frame that must be an object (in tests: ops that keep JSON).
func obj(t *testing.T, f []byte) *jsontree.Node {
	t.Helper()
	n, ok := parseTree(f)
	if !ok || n.Kind != jsontree.Object {
		t.Fatalf("not an object: %.200q", f)
	}
	return n
}

// memberText returns a member's compact text, or "" when absent.
func memberText(n *jsontree.Node, name string) string {
	v := n.Get(name)
	if v == nil {
		return ""
	}
	return string(jsontree.Append(nil, v))
}

// depth is the deepest bracket nesting of a frame, outside strings.
func depth(f []byte) int {
	d, deepest := 0, 0
	lex(f, func(t token) bool {
		switch {
		case t.kind == tokOpen:
			d++
			deepest = max(deepest, d)
		case t.kind == tokClose:
			d--
		}
		return true
	})
	return deepest
}

func isJSON(f []byte) bool { return json.Valid(f) }

// honestWire frames messages without lies, for the framing ops to differ from.
func honestWire(c Case, framing Framing) []byte {
	var w []byte
	for _, f := range c.Frames {
		if framing == FramingContentLength {
			w = appendCLHeader(w, len(f))
			w = append(w, f...)
		} else {
			w = append(append(w, f...), '\n')
		}
	}
	return w
}

func containsAny(b []byte, set [][]byte) bool {
	for _, s := range set {
		if bytes.Contains(b, s) {
			return true
		}
	}
	return false
}

func inSet(b []byte, set [][]byte) bool {
	for _, s := range set {
		if bytes.Equal(b, s) {
			return true
		}
	}
	return false
}

func intIn(n int, set []int) bool {
	for _, v := range set {
		if v == n {
			return true
		}
	}
	return false
}

// oneEdit reports whether b is a with one byte dropped, added, or two
// neighbours swapped.
func oneEdit(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	switch len(b) - len(a) {
	case 1:
		for i := 0; i <= len(a); i++ {
			if a[:i] == b[:i] && a[i:] == b[i+1:] {
				return true
			}
		}
	case 0:
		var diff []int
		for i := range a {
			if a[i] != b[i] {
				diff = append(diff, i)
			}
		}
		return len(diff) == 2 && diff[1] == diff[0]+1 && a[diff[0]] == b[diff[1]] && a[diff[1]] == b[diff[0]]
	}
	return false
}
