package mutate

import (
	"github.com/rpcload/rpcload/internal/jsontree"
	"math/rand/v2"
	"strconv"

	"github.com/rpcload/rpcload/internal/schemagen"
)

// Params ops: the value servers decode into their own types.

func paramsAbsent(_ Chooser, obj *jsontree.Node, _ int, _ *Env) bool { return obj.Remove("params") }

func paramsNull(_ Chooser, obj *jsontree.Node, _ int, _ *Env) bool {
	if isNull(obj.Get("params")) {
		return false
	}
	obj.Set("params", scalar(nullText))
	return true
}

// scalarParams: params MUST be an array or an object, so each of these is
// an invalid request (-32600) or invalid params (-32602).
var scalarParams = lits("1", "0", "-1", "1.5", `"x"`, `""`, `"[]"`, "true", "false", "1e400")

func paramsScalar(c Chooser, obj *jsontree.Node, _ int, _ *Env) bool {
	v, ok := pickDifferent(c, scalarParams, obj.Get("params"))
	if !ok {
		return false
	}
	obj.Set("params", scalar(v))
	return true
}

var (
	fillerValues = lits("null", "0", `""`, "{}", "[]", "true", "-1")
	// extraKeys include the names that pollute JavaScript prototypes.
	extraKeys = lits(`"extra"`, `"x"`, `""`, `"__proto__"`, `"constructor"`, `"_meta"`)
)

// paramsArity drops or adds one element or member, so a positional handler
// sees one argument too few or too many and a named one a missing or an
// unexpected name.
func paramsArity(c Chooser, obj *jsontree.Node, _ int, _ *Env) bool {
	p := obj.Get("params")
	if p == nil || !openLevel(p) {
		return false
	}
	size := len(p.Elems) + len(p.Members)
	if size > 0 && c.Intn(2) == 0 {
		i := c.Intn(size)
		if p.Kind == jsontree.Array {
			p.Elems = append(p.Elems[:i:i], p.Elems[i+1:]...)
		} else {
			p.Members = append(p.Members[:i:i], p.Members[i+1:]...)
		}
		return true
	}
	v := scalar(fillerValues[c.Intn(len(fillerValues))])
	if size > 0 && c.Intn(2) == 0 { // a copy of a neighbour: the right type, one too many
		if p.Kind == jsontree.Array {
			v = jsontree.Copy(p.Elems[c.Intn(size)])
		} else {
			v = jsontree.Copy(p.Members[c.Intn(size)].Val)
		}
	}
	if p.Kind == jsontree.Array {
		at := c.Intn(len(p.Elems) + 1)
		p.Elems = append(p.Elems, nil)
		copy(p.Elems[at+1:], p.Elems[at:])
		p.Elems[at] = v
	} else {
		p.Members = append(p.Members, jsontree.Member{Key: extraKeys[c.Intn(len(extraKeys))], Val: v})
	}
	return true
}

// paramsDuplicateKey repeats a member of an object anywhere in params with a
// different value.
func paramsDuplicateKey(c Chooser, obj *jsontree.Node, _ int, _ *Env) bool {
	p := obj.Get("params")
	if p == nil || !openAll(p) {
		return false
	}
	o := pickNode(c, p, func(n *jsontree.Node) bool { return n.Kind == jsontree.Object && len(n.Members) > 0 })
	if o == nil {
		return false
	}
	i := c.Intn(len(o.Members))
	v, ok := pickDifferent(c, fillerValues, o.Members[i].Val)
	if !ok {
		return false
	}
	o.Members = append(o.Members, jsontree.Member{})
	copy(o.Members[i+2:], o.Members[i+1:])
	o.Members[i+1] = jsontree.Member{Key: o.Members[i].Key, Val: scalar(v)}
	return true
}

// schemaParams runs a schemagen generator on the method's params schema.
// schemagen wants a *rand.Rand; its seed is drawn from the Chooser so the
// result is still a function of the choice stream.
func schemaParams(c Chooser, obj *jsontree.Node, env *Env, gen func([]byte, *rand.Rand) ([]byte, error)) bool {
	name, ok := methodName(obj)
	if !ok {
		return false
	}
	schema, ok := env.Params[name]
	if !ok || len(schema) == 0 {
		return false
	}
	r := rand.New(rand.NewPCG(uint64(c.Intn(1<<16)), pcgStream))
	v, err := gen(schema, r)
	if err != nil {
		return false
	}
	obj.Set("params", textNode(v))
	return true
}

func paramsSchemaValid(c Chooser, obj *jsontree.Node, _ int, env *Env) bool {
	return schemaParams(c, obj, env, schemagen.Valid)
}

func paramsSchemaInvalid(c Chooser, obj *jsontree.Node, _ int, env *Env) bool {
	return schemaParams(c, obj, env, schemagen.Invalid)
}

// nestDepths is the nesting ladder: around the usual parser limits (64,
// 100, 128, 256, 512, 1000, 10000) up to 100,000, clamped to MaxFrame.
var nestDepths = []int{2, 3, 8, 16, 32, 63, 64, 65, 100, 101, 128, 129, 255, 256, 257,
	500, 512, 513, 1000, 1001, 1024, 1025, 5000, 10000, 10001, 50000, 100000}

// nestShapes: the bytes each level opens with and closes with, and what sits
// at the bottom.
var nestShapes = []struct{ open, close, bottom string }{
	{"[", "]", ""},
	{`{"a":`, "}", "{}"},
	{`[{"a":`, "}]", "[]"},
	{"[", "]", "1"},
	{`{"":`, "}", "null"},
}

// nest builds depth levels of a shape directly as text: a tree this deep
// would cost far more than its bytes.
func nest(depth int, open, close, bottom string) []byte {
	b := make([]byte, 0, depth*(len(open)+len(close))+len(bottom))
	for range depth {
		b = append(b, open...)
	}
	b = append(b, bottom...)
	for range depth {
		b = append(b, close...)
	}
	return b
}

// paramsNesting puts a nesting ladder rung as the params, or as one argument
// in them.
func paramsNesting(c Chooser, obj *jsontree.Node, room int, _ *Env) bool {
	s := nestShapes[c.Intn(len(nestShapes))]
	perLevel := len(s.open) + len(s.close)
	room -= len(`,"params":[]`) + len(s.bottom)
	depth, ok := pickSize(c, nestDepths, perLevel, room/perLevel, 2)
	if !ok {
		return false
	}
	deep := scalar(nest(depth, s.open, s.close, s.bottom))
	p := obj.Get("params")
	inside := p != nil && c.Intn(2) == 0 && openLevel(p)
	switch {
	case inside && p.Kind == jsontree.Array:
		p.Elems = append(p.Elems, deep)
	case inside && p.Kind == jsontree.Object:
		p.Members = append(p.Members, jsontree.Member{Key: []byte(`"deep"`), Val: deep})
	default:
		obj.Set("params", deep)
	}
	return true
}

var wideWidths = []int{0, 1, 2, 3, 5, 7, 8, 9, 16, 64, 100, 255, 256, 257, 1000, 1024, 10000, 65536, 100000}

// paramsWide makes params a wide array (width copies of one filler, so
// exactly-N-of-a-kind inputs are one step away) or a wide object (distinct
// keys k0, k1, ...).
func paramsWide(c Chooser, obj *jsontree.Node, room int, _ *Env) bool {
	fill := fillerValues[c.Intn(len(fillerValues))]
	room -= len(`,"params":[]`)
	var b []byte
	if c.Intn(2) == 0 {
		width, ok := pickSize(c, wideWidths, len(fill)+1, room/(len(fill)+1), 0)
		if !ok {
			return false
		}
		b = make([]byte, 0, width*(len(fill)+1)+2)
		b = append(b, '[')
		for i := range width {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, fill...)
		}
		b = append(b, ']')
	} else {
		// `"k99999":` is 9 bytes; the per-member bound keeps the clamp simple.
		width, ok := pickSize(c, wideWidths, len(fill)+10, room/(len(fill)+10), 0)
		if !ok {
			return false
		}
		b = make([]byte, 0, width*(len(fill)+10)+2)
		b = append(b, '{')
		for i := range width {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `"k`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `":`...)
			b = append(b, fill...)
		}
		b = append(b, '}')
	}
	obj.Set("params", scalar(b))
	return true
}
