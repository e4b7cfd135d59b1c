package mutate

import (
	"github.com/rpcload/rpcload/internal/jsontree"
	"strconv"
)

// Batch ops: JSON-RPC's array form, where servers must answer element by
// element, [] with one error, and all-notification batches with nothing.

func batchEmpty(_ Chooser, f []byte, _ *Env) ([]byte, bool) {
	if string(f) == "[]" {
		return nil, false
	}
	return []byte("[]"), true
}

// invalidBatches: every element is not a request, so the reply is an array
// of -32600 errors, one per element.
var invalidBatches = lits("[1]", "[null]", "[1,2,3]", `["x"]`, "[{}]", "[true]", "[[]]", "[1,null]")

func batchInvalid(c Chooser, f []byte, _ *Env) ([]byte, bool) {
	v := invalidBatches[c.Intn(len(invalidBatches))]
	if string(v) == string(f) {
		return nil, false
	}
	return clone(v), true
}

// batchWrappers put the frame (F) in a batch, alone or next to an invalid
// element, or in batches inside batches.
var batchWrappers = [][]string{
	{"[", "F", "]"}, {"[1,", "F", "]"}, {"[", "F", ",1]"}, {"[", "F", ",null]"}, {"[", "F", ",{}]"},
}

var nestedBatches = [][]string{
	{"[[", "F", "]]"}, {"[", "F", ",[", "F", "]]"}, {"[[", "F", "],[", "F", "]]"}, {"[[[", "F", "]]]"},
	{"[[]]"}, {"[", "F", ",[]]"}, {"[[],[]]"},
}

func fillTemplate(tmpl []string, f []byte, limit int) ([]byte, bool) {
	n := 0
	for _, p := range tmpl {
		if p == "F" {
			n += len(f)
		} else {
			n += len(p)
		}
	}
	if n > limit {
		return nil, false
	}
	out := make([]byte, 0, n)
	for _, p := range tmpl {
		if p == "F" {
			out = append(out, f...)
		} else {
			out = append(out, p...)
		}
	}
	return out, true
}

func batchWrap(c Chooser, f []byte, env *Env) ([]byte, bool) {
	return fillTemplate(batchWrappers[c.Intn(len(batchWrappers))], f, env.maxFrame())
}

func batchNested(c Chooser, f []byte, env *Env) ([]byte, bool) {
	return fillTemplate(nestedBatches[c.Intn(len(nestedBatches))], f, env.maxFrame())
}

// batchElement parses the frame and returns a copy of its request object
// (the frame, or an object element of a batch), or nil.
func batchElement(c Chooser, f []byte) *jsontree.Node {
	root, ok := parseShallow(f)
	if !ok {
		return nil
	}
	obj := envelope(c, root)
	if obj == nil {
		return nil
	}
	return jsontree.Copy(obj)
}

// repeatElement builds a batch of up to n copies of elem, as many as fit in
// limit; false when fewer than floor fit.
func repeatElement(elem []byte, n, limit, floor int) ([]byte, bool) {
	n = min(n, (limit-1)/(len(elem)+1))
	if n < floor {
		return nil, false
	}
	out := make([]byte, 0, n*(len(elem)+1)+1)
	out = append(out, '[')
	for i := range n {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, elem...)
	}
	return append(out, ']'), true
}

var smallCounts = []int{1, 2, 3, 10, 100}

func batchNotifications(c Chooser, f []byte, env *Env) ([]byte, bool) {
	obj := batchElement(c, f)
	if obj == nil || obj.Find("method") < 0 {
		return nil, false
	}
	obj.Remove("id")
	return repeatElement(jsontree.Append(nil, obj), smallCounts[c.Intn(len(smallCounts))], env.maxFrame(), 1)
}

// batchDuplicateIDs sends copies of one request under one id in one batch:
// a server keyed by id may answer once, twice, or mix the replies up.
func batchDuplicateIDs(c Chooser, f []byte, env *Env) ([]byte, bool) {
	obj := batchElement(c, f)
	if obj == nil || obj.Find("method") < 0 {
		return nil, false
	}
	if id := obj.Get("id"); id == nil || isNull(id) {
		obj.Set("id", scalar([]byte("1")))
	}
	counts := []int{2, 3, 10}
	return repeatElement(jsontree.Append(nil, obj), counts[c.Intn(len(counts))], env.maxFrame(), 2)
}

// batchSizes sit around the limits servers pick (10, 100, 1000, 1024, 10000)
// and go up to 100,000 elements.
var batchSizes = []int{9, 10, 11, 99, 100, 101, 999, 1000, 1001, 1023, 1024, 1025, 9999, 10000, 10001, 99999, 100000}

// cheapElements make the biggest sizes fit in MaxFrame.
var cheapElements = lits("1", "{}", "null")

func batchSize(c Chooser, f []byte, env *Env) ([]byte, bool) {
	limit := env.maxFrame()
	if c.Intn(3) == 0 {
		elem := cheapElements[c.Intn(len(cheapElements))]
		n, ok := pickSize(c, batchSizes, len(elem)+1, (limit-1)/(len(elem)+1), 2)
		if !ok {
			return nil, false
		}
		return repeatElement(elem, n, limit, 2)
	}
	obj := batchElement(c, f)
	if obj == nil || obj.Find("method") < 0 {
		return nil, false
	}
	// Copies of the request with ids 1..n, so every element wants its own
	// reply: the text around the id is made once.
	i := obj.Find("id")
	if i < 0 {
		obj.Members = append(obj.Members, jsontree.Member{Key: []byte(`"id"`)})
		i = len(obj.Members) - 1
	}
	before := &jsontree.Node{Kind: jsontree.Object, Members: obj.Members[:i]}
	after := &jsontree.Node{Kind: jsontree.Object, Members: obj.Members[i+1:]}
	pre := jsontree.Append(nil, before)
	pre = pre[:len(pre)-1] // drop the }
	if i > 0 {
		pre = append(pre, ',')
	}
	pre = append(pre, `"id":`...)
	post := jsontree.Append(nil, after)[1:] // drop the {
	if len(after.Members) > 0 {
		post = append([]byte{','}, post...)
	}
	per := len(pre) + len(post) + len("100000") + 1
	n, ok := pickSize(c, batchSizes, per, (limit-1)/per, 2)
	if !ok {
		return nil, false
	}
	out := make([]byte, 0, n*per+1)
	out = append(out, '[')
	for k := 1; k <= n; k++ {
		if k > 1 {
			out = append(out, ',')
		}
		out = append(out, pre...)
		out = strconv.AppendInt(out, int64(k), 10)
		out = append(out, post...)
	}
	return append(out, ']'), true
}
