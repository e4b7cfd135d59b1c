package mutate

import (
	"bytes"
	"github.com/rpcload/rpcload/internal/jsontree"
)

// Envelope, id and method ops: the members every server reads first.

var envelopeMembers = []string{"jsonrpc", "id", "method", "params"}

var nullText = []byte("null")

func isNull(n *jsontree.Node) bool {
	return n != nil && n.Kind == jsontree.Scalar && bytes.Equal(n.Raw, nullText)
}

func envelopeAbsent(c Chooser, obj *jsontree.Node, _ int, _ *Env) bool {
	var present []string
	for _, name := range envelopeMembers {
		if obj.Find(name) >= 0 {
			present = append(present, name)
		}
	}
	if len(present) == 0 {
		return false
	}
	return obj.Remove(present[c.Intn(len(present))])
}

func envelopeNull(c Chooser, obj *jsontree.Node, _ int, _ *Env) bool {
	var candidates []string
	for _, name := range envelopeMembers {
		if !isNull(obj.Get(name)) {
			candidates = append(candidates, name)
		}
	}
	if len(candidates) == 0 {
		return false
	}
	obj.Set(candidates[c.Intn(len(candidates))], scalar(nullText))
	return true
}

// typeSamples holds values of every JSON type but null (envelope_null's),
// including near misses of the right type ("1.0" for jsonrpc).
var typeSamples = [][][]byte{
	lits(`""`, `"1"`, `"2.0"`, `"1.0"`, `"2"`, `"x"`, `"2.0 "`, `"null"`, `"[]"`),
	lits("2", "2.0", "0", "1", "-1", "1.5"),
	lits("true", "false"),
	lits("[]", "[1]", `["2.0"]`, "[null]"),
	lits("{}", `{"a":1}`, `{"jsonrpc":"2.0"}`),
}

// pickDifferent picks from values one whose text differs from old's (old may
// be nil), or reports false when every value equals it.
func pickDifferent(c Chooser, values [][]byte, old *jsontree.Node) ([]byte, bool) {
	start := c.Intn(len(values))
	for i := range values {
		v := values[(start+i)%len(values)]
		if old == nil || old.Kind == jsontree.Object || old.Kind == jsontree.Array || !bytes.Equal(v, old.Raw) {
			return v, true
		}
	}
	return nil, false
}

func envelopeType(c Chooser, obj *jsontree.Node, _ int, _ *Env) bool {
	name := envelopeMembers[c.Intn(len(envelopeMembers))]
	v, ok := pickDifferent(c, typeSamples[c.Intn(len(typeSamples))], obj.Get(name))
	if !ok {
		return false
	}
	obj.Set(name, textNode(v))
	return true
}

// conflicting values for a repeated member: a parser keeping the first and a
// validator reading the last disagree on what the request is.
var conflicting = map[string][][]byte{
	"jsonrpc": lits(`"1.0"`, `"2.0"`, "null", "2", `"3.0"`),
	"id":      lits("1", "2", `"1"`, "null", "99999", "-1", "1e400"),
	"method":  lits(`"rpc.discover"`, `"x"`, `""`, `"shutdown"`, "null", "1"),
	"params":  lits("[]", "{}", "null", "[1]", `{"a":1}`, "1"),
}

func envelopeDuplicate(c Chooser, obj *jsontree.Node, _ int, env *Env) bool {
	name := envelopeMembers[c.Intn(len(envelopeMembers))]
	values := conflicting[name]
	if name == "method" && len(env.Methods) > 0 && c.Intn(2) == 0 {
		values = [][]byte{quoted(env.Methods[c.Intn(len(env.Methods))])}
	}
	i := obj.Find(name)
	if i < 0 {
		// Absent: add it twice, with two different values.
		a := values[c.Intn(len(values))]
		obj.Set(name, textNode(a))
		i = obj.Find(name)
	}
	v, ok := pickDifferent(c, values, obj.Members[i].Val)
	if !ok {
		v, ok = pickDifferent(c, conflicting[name], obj.Members[i].Val)
		if !ok {
			return false
		}
	}
	dup := jsontree.Member{Key: obj.Members[i].Key, Val: textNode(v)}
	at := i + 1 // right after the original, or before it, or at an end
	switch c.Intn(4) {
	case 1:
		at = i
	case 2:
		at = 0
	case 3:
		at = len(obj.Members)
	}
	obj.Members = append(obj.Members, jsontree.Member{})
	copy(obj.Members[at+1:], obj.Members[at:])
	obj.Members[at] = dup
	return true
}

// idEdges: the ids protocols.md §5 lists and their neighbours. idBigString
// stands for the 1 MB string id, made only when picked.
var idEdges = lits("null", `""`, "0", "-0", "1.5", "1e2", "1E2", "1.0", "-1",
	"9007199254740991", "9007199254740992", "9007199254740993",
	"9223372036854775807", "9223372036854775808", "-9223372036854775809",
	"18446744073709551615", "18446744073709551616", "1e400", "123456789012345678901234567890",
	"true", "false", "[]", "{}", "[1]", `{"id":1}`, `"1"`, `"\u0000"`, `"\ud800"`, idBigString)

const idBigString = "BIG"

// bigIDLength is the "1 MB string" id, shortened to fit MaxFrame.
const bigIDLength = 1_000_000

func idEdge(c Chooser, obj *jsontree.Node, room int, _ *Env) bool {
	v, ok := pickDifferent(c, idEdges, obj.Get("id"))
	if !ok {
		return false
	}
	if string(v) == idBigString && c.Intn(bigIDLength/cheapBytes) != 0 {
		v = idEdges[c.Intn(len(idEdges)-1)] // made rarely: see cheapBytes
	}
	if string(v) == idBigString {
		old := 0
		if id := obj.Get("id"); id != nil {
			old = len(jsontree.Append(nil, id))
		}
		n := min(bigIDLength, room+old-len(`,"id":""`))
		if n < 1024 {
			return false
		}
		s := make([]byte, n+2)
		for i := range s {
			s[i] = 'i'
		}
		s[0], s[n+1] = '"', '"'
		v = s
	}
	obj.Set("id", textNode(v))
	return true
}

func setMethod(obj *jsontree.Node, name []byte) {
	obj.Set("method", &jsontree.Node{Kind: jsontree.String, Raw: name})
}

func methodDictionary(c Chooser, obj *jsontree.Node, _ int, env *Env) bool {
	if len(env.Methods) == 0 {
		return false
	}
	cur, _ := methodName(obj)
	start := c.Intn(len(env.Methods))
	for i := range env.Methods {
		if m := env.Methods[(start+i)%len(env.Methods)]; m != cur || obj.Find("method") < 0 {
			setMethod(obj, quoted(m))
			return true
		}
	}
	return false
}

func methodEmpty(_ Chooser, obj *jsontree.Node, _ int, _ *Env) bool {
	if cur, ok := methodName(obj); ok && cur == "" {
		return false
	}
	setMethod(obj, []byte(`""`))
	return true
}

var rpcPrefixed = []string{"rpc.", "rpc.discover", "rpc.x", "rpc.hang", "rpc..", "rpc"}

func methodRPCPrefix(c Chooser, obj *jsontree.Node, _ int, _ *Env) bool {
	cur, ok := methodName(obj)
	if ok && cur != "" && c.Intn(2) == 0 {
		prefixes := []string{"rpc.", "RPC.", "rpc.rpc."}
		setMethod(obj, quoted(prefixes[c.Intn(len(prefixes))]+cur))
		return true
	}
	setMethod(obj, quoted(rpcPrefixed[c.Intn(len(rpcPrefixed))]))
	return true
}

var methodLengths = []int{256, 1024, 4096, 65536, 1 << 20}

func methodLong(c Chooser, obj *jsontree.Node, room int, _ *Env) bool {
	cur, _ := methodName(obj)
	n, ok := pickSize(c, methodLengths, 1, room+len(cur)-len(`,"method":""`), 256)
	if !ok {
		return false
	}
	name := make([]byte, 0, n+2)
	name = append(name, '"')
	if cur != "" && c.Intn(2) == 0 {
		for len(name)+len(cur) <= n+1 { // the method itself, repeated
			name = append(name, cur...)
		}
	}
	name = append(name, repeatBytes('m', n+1-len(name))...)
	setMethod(obj, append(name, '"'))
	return true
}

func methodNearMiss(c Chooser, obj *jsontree.Node, _ int, _ *Env) bool {
	cur, ok := methodName(obj)
	if !ok || cur == "" {
		return false
	}
	b := []byte(cur)
	i := c.Intn(len(b))
	switch c.Intn(5) {
	case 0: // one letter's case
		for k := range b { // from i on, the first letter
			j := (i + k) % len(b)
			if ch := b[j]; ch|0x20 >= 'a' && ch|0x20 <= 'z' {
				b[j] ^= 0x20
				break
			}
		}
	case 1: // the whole name's case
		upper := bytes.ToUpper(b)
		if bytes.Equal(upper, b) {
			upper = bytes.ToLower(b)
		}
		b = upper
	case 2: // one letter dropped
		b = append(b[:i:i], b[i+1:]...)
	case 3: // two neighbours swapped
		if len(b) < 2 {
			return false
		}
		if i == len(b)-1 {
			i--
		}
		b[i], b[i+1] = b[i+1], b[i]
	default: // one letter added: a doubled one, a stray one, a space
		adds := []byte{b[i], 'x', ' ', '_', '/'}
		b = insert(b, i+c.Intn(2), []byte{adds[c.Intn(len(adds))]})
	}
	if string(b) == cur {
		return false
	}
	setMethod(obj, quoted(string(b)))
	return true
}
