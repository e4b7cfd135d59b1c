package fuzz

import (
	"bytes"
	"context"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/jsontree"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/wire"
)

// minimizeResult says what a minimization spent.
type minimizeResult struct {
	checks   int
	complete bool // no pass was cut short by the budget, the deadline or ctx
}

// shrinker holds the smallest input known to fail, and the budget left.
type shrinker struct {
	ctx      context.Context
	check    func(context.Context, mutate.Case) bool
	budget   int
	deadline time.Time
	checks   int
	best     mutate.Case
	cut      bool
}

func (s *shrinker) exhausted() bool {
	if s.checks >= s.budget || s.ctx.Err() != nil || (!s.deadline.IsZero() && time.Now().After(s.deadline)) {
		s.cut = true
		return true
	}
	return false
}

// try checks c and keeps it when it still fails the same way.
func (s *shrinker) try(c mutate.Case) bool {
	if s.exhausted() {
		return false
	}
	s.checks++
	if s.check(s.ctx, c) {
		s.best = c
		return true
	}
	return false
}

// minimize shrinks in while check keeps failing: whole frames first, then,
// in every frame that is JSON, the tree (batch elements and members
// dropped, nesting halved, strings shortened, numbers simplified), then the
// bytes (chunks removed, halving their size down to one byte). Each round
// runs every pass; rounds repeat until one changes nothing. It stops early
// after budget checks, at the deadline, or when ctx ends, and returns the
// smallest input that still failed (in itself when nothing smaller did).
// The deadline cuts the check in flight too (its context ends then): a
// check of an input that hangs the server waits out the timeout, and one
// begun just before the deadline took it that much past.
func minimize(ctx context.Context, in mutate.Case, check func(context.Context, mutate.Case) bool, budget int, deadline time.Time) (mutate.Case, minimizeResult) {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	s := &shrinker{ctx: ctx, check: check, budget: budget, deadline: deadline, best: in}
	for round := 0; !s.exhausted(); round++ {
		before := caseSize(s.best) + len(s.best.Frames)
		s.dropFrames()
		s.dropWire()
		for i := 0; i < len(s.best.Frames) && s.best.Wire == nil; i++ {
			s.treePasses(i)
		}
		for i := 0; i < len(s.best.Frames) && s.best.Wire == nil; i++ {
			s.bytePass(func() []byte { return s.best.Frames[i] }, func(b []byte) mutate.Case { return withFrame(s.best, i, b) })
		}
		if s.best.Wire != nil {
			s.bytePass(func() []byte { return s.best.Wire }, func(b []byte) mutate.Case { return mutate.Case{Frames: s.best.Frames, Wire: b} })
		}
		if caseSize(s.best)+len(s.best.Frames) == before {
			break
		}
	}
	return s.best, minimizeResult{checks: s.checks, complete: !s.cut}
}

// minimizeTree is minimize with the tree passes alone, on a case of one
// frame that is JSON: what it returns is JSON too (the schema-aware
// minimization of an API call shrinks its params so, see minimizeCall).
func minimizeTree(ctx context.Context, in mutate.Case, check func(context.Context, mutate.Case) bool, budget int, deadline time.Time) (mutate.Case, minimizeResult) {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	s := &shrinker{ctx: ctx, check: check, budget: budget, deadline: deadline, best: in}
	for !s.exhausted() {
		before := caseSize(s.best)
		s.treePasses(0)
		if caseSize(s.best) == before {
			break
		}
	}
	return s.best, minimizeResult{checks: s.checks, complete: !s.cut}
}

// ShrinkStats says what a Shrink spent: checks made, and whether every
// pass ran to its end (false when the budget, the deadline or ctx cut one
// short).
type ShrinkStats struct {
	Checks   int
	Complete bool
}

// Shrink is the minimizer of findings for inputs judged elsewhere:
// rpcfuzz minimize on a native failure, whose check runs the package's
// test binary. It shrinks in as minimize does while check keeps failing.
func Shrink(ctx context.Context, in mutate.Case, check func(context.Context, mutate.Case) bool, budget int, deadline time.Time) (mutate.Case, ShrinkStats) {
	out, res := minimize(ctx, in, check, budget, deadline)
	return out, ShrinkStats{Checks: res.checks, Complete: res.complete}
}

func withFrame(c mutate.Case, i int, f []byte) mutate.Case {
	frames := slices.Clone(c.Frames)
	frames[i] = f
	return mutate.Case{Frames: frames}
}

// dropFrames removes whole messages of a multi-message case, in chunks of
// halving size.
func (s *shrinker) dropFrames() {
	if len(s.best.Frames) < 2 || s.best.Wire != nil {
		return
	}
	for size := len(s.best.Frames) / 2; size >= 1; size /= 2 {
		for i := 0; i < len(s.best.Frames) && len(s.best.Frames) > 1; {
			frames := slices.Delete(slices.Clone(s.best.Frames), i, min(i+size, len(s.best.Frames)))
			if len(frames) > 0 && s.try(mutate.Case{Frames: frames}) {
				continue
			}
			if s.cut {
				return
			}
			i += size
		}
	}
}

// dropWire tries the frames with their normal framing: when the broken
// framing is not what fails, the input is easier to read without it.
func (s *shrinker) dropWire() {
	if s.best.Wire != nil && len(s.best.Frames) > 0 {
		s.try(mutate.Case{Frames: s.best.Frames})
	}
}

// strictTree is how the minimizer parses a frame: only JSON (anything else
// is left to the byte pass), to any depth.
var strictTree = jsontree.Options{Strict: true}

// treePasses shrinks frame i as a JSON tree.
func (s *shrinker) treePasses(i int) {
	frame := s.best.Frames[i]
	root, ok := jsontree.Parse(frame, strictTree)
	if !ok {
		return
	}
	if compact := jsontree.Append(nil, root); !bytes.Equal(compact, frame) && !s.try(withFrame(s.best, i, compact)) {
		return // the whitespace matters: leave it to the byte pass
	}
	tryTree := func() bool {
		// Cut first: the passes walk every element, string and number,
		// and printing a big tree for each of them once the budget was
		// spent took minutes past the deadline (a batch of 8,000 calls:
		// 267 s of a 1 s --minimize-time).
		if s.exhausted() {
			return false
		}
		b := jsontree.Append(nil, root)
		if bytes.Equal(b, s.best.Frames[i]) {
			return false
		}
		return s.try(withFrame(s.best, i, b))
	}
	// Nesting first: it takes a ladder to the depth that still fails in
	// about log² checks, where dropping its rungs one by one takes one
	// check per rung.
	s.halveNesting(root, tryTree)
	s.arrayify(root, tryTree)
	s.dropKids(root, tryTree)
	s.shortenStrings(root, tryTree)
	s.simplifyNumbers(root, tryTree)
}

// The passes see an object's member values and an array's elements alike,
// as a container's kids.

// kidCount returns how many kids n has.
func kidCount(n *jsontree.Node) int { return len(n.Members) + len(n.Elems) }

// kid returns n's i-th kid.
func kid(n *jsontree.Node, i int) *jsontree.Node {
	if n.Kind == jsontree.Object {
		return n.Members[i].Val
	}
	return n.Elems[i]
}

// isNumber reports a number node: in a strict tree, the scalars that are
// not true, false or null.
func isNumber(n *jsontree.Node) bool { return n.Kind == jsontree.Scalar && wire.IsNumber(n.Raw) }

// containers lists the objects and arrays of a tree in preorder.
func containers(root *jsontree.Node) []*jsontree.Node {
	var out []*jsontree.Node
	jsontree.Walk(root, func(n *jsontree.Node, _ int) bool {
		if n.Kind == jsontree.Object || n.Kind == jsontree.Array {
			out = append(out, n)
		}
		return true
	})
	return out
}

// ladderStarts returns the root and every container that is an element or
// member value of a container with more than one: the tops of ladders of
// one-element containers, in preorder. A pass that works on whole ladders
// tries each of these once instead of once per rung, which on a ladder of
// a hundred one-member objects was most of a 200-check budget.
func ladderStarts(root *jsontree.Node) []*jsontree.Node {
	starts := []*jsontree.Node{root}
	jsontree.Walk(root, func(n *jsontree.Node, _ int) bool {
		if kidCount(n) > 1 {
			for i := range kidCount(n) {
				if k := kid(n, i); kidCount(k) > 0 {
					starts = append(starts, k)
				}
			}
		}
		return true
	})
	return starts
}

// rungs returns the containers below the top of a ladder: those whose only
// element or member value is a non-empty container and whose parent has
// only them. Dropping such a rung's one kid is what halveNesting already
// tried for the whole ladder, so dropKids skips them.
func rungs(root *jsontree.Node) map[*jsontree.Node]bool {
	out := map[*jsontree.Node]bool{}
	jsontree.Walk(root, func(n *jsontree.Node, _ int) bool {
		if kidCount(n) == 1 {
			if k := kid(n, 0); kidCount(k) == 1 && kidCount(kid(k, 0)) > 0 {
				out[k] = true
			}
		}
		return true
	})
	return out
}

// arrayify tries, for each ladder start from the root down, every object
// below it (itself included) as the array of its member values, in one
// check: a nesting bug rarely needs member names, and `{"a":` costs five
// bytes a level where `[` costs one. A start under one that was turned is
// skipped.
func (s *shrinker) arrayify(root *jsontree.Node, tryTree func() bool) {
	type saved struct {
		n       *jsontree.Node
		members []jsontree.Member
	}
	done := map[*jsontree.Node]bool{}
	for _, x := range ladderStarts(root) {
		if s.cut || done[x] {
			continue
		}
		var objs []saved
		jsontree.Walk(x, func(n *jsontree.Node, _ int) bool {
			if n.Kind == jsontree.Object {
				objs = append(objs, saved{n, n.Members})
			}
			return true
		})
		if len(objs) == 0 {
			continue
		}
		for _, o := range objs {
			elems := make([]*jsontree.Node, len(o.members))
			for i, m := range o.members {
				elems[i] = m.Val
			}
			o.n.Kind, o.n.Members, o.n.Elems = jsontree.Array, nil, elems
		}
		if tryTree() {
			jsontree.Walk(x, func(n *jsontree.Node, _ int) bool { done[n] = true; return true })
			continue
		}
		for _, o := range objs {
			o.n.Kind, o.n.Members, o.n.Elems = jsontree.Object, o.members, nil
		}
	}
}

// dropKids shrinks every container from the root down: first it tries
// all its elements (member values) as 0 in one step, which turns a
// thousand-element batch into the smallest one that still fails with one
// check instead of a thousand; then it removes elements and members in
// chunks of halving size.
func (s *shrinker) dropKids(root *jsontree.Node, tryTree func() bool) {
	zero := &jsontree.Node{Kind: jsontree.Scalar, Raw: []byte("0")}
	skip := rungs(root)
	for _, n := range containers(root) {
		if skip[n] {
			continue
		}
		if kidCount(n) >= 2 && !s.cut {
			members, elems := slices.Clone(n.Members), slices.Clone(n.Elems)
			simple := true
			for i := range kidCount(n) {
				if k := kid(n, i); !isNumber(k) || len(k.Raw) > 1 {
					simple = false
				}
				if n.Kind == jsontree.Object {
					n.Members[i].Val = zero
				} else {
					n.Elems[i] = zero
				}
			}
			if simple || !tryTree() {
				n.Members, n.Elems = members, elems
			}
		}
		s.dropChunks(n, tryTree)
	}
}

// bigContainer is the number of elements past which a container is shrunk
// approximately: at each chunk size, a run of maxMisses failed removals
// moves on to the next size, so a batch of 100,000 does not take the whole
// budget proving that no single element can go.
const (
	bigContainer = 64
	maxMisses    = 16
)

// dropChunks removes a container's kids in chunks of halving size.
func (s *shrinker) dropChunks(n *jsontree.Node, tryTree func() bool) {
	for size := kidCount(n); size >= 1; size /= 2 {
		misses := 0
		for i := 0; i < kidCount(n); {
			members, elems := n.Members, n.Elems
			end := min(i+size, kidCount(n))
			if n.Kind == jsontree.Object {
				n.Members = slices.Delete(slices.Clone(members), i, end)
			} else {
				n.Elems = slices.Delete(slices.Clone(elems), i, end)
			}
			if tryTree() {
				misses = 0
				continue
			}
			n.Members, n.Elems = members, elems
			if s.cut {
				return
			}
			if misses++; kidCount(n) > bigContainer && misses >= maxMisses {
				break
			}
			i += size
		}
	}
}

// heights maps every container to the length of its longest path down to a
// scalar or an empty container (0 for those).
func heights(root *jsontree.Node) map[*jsontree.Node]int {
	h := map[*jsontree.Node]int{}
	order := containers(root)
	for k := len(order) - 1; k >= 0; k-- { // children come after parents in preorder
		n := order[k]
		best := 0
		for i := range kidCount(n) {
			best = max(best, h[kid(n, i)]+1)
		}
		h[n] = best
	}
	return h
}

// halveNesting replaces a deeply nested container by its descendant half as
// far down the deepest path, then a quarter, ... one level: a ladder of
// 100,000 brackets shrinks to the depth that still fails in about log²
// steps. Only the top of each ladder is a starting point (ladderStarts).
func (s *shrinker) halveNesting(root *jsontree.Node, tryTree func() bool) {
	h := heights(root)
	for _, x := range ladderStarts(root) {
		for k := h[x] / 2; k >= 1 && !s.cut; {
			d := x
			for range k {
				d = deepestKid(d, h)
			}
			saved := *x
			*x = *d
			if tryTree() {
				h = heights(root)
				k = h[x] / 2
				continue
			}
			*x = saved
			k /= 2
		}
	}
}

func deepestKid(n *jsontree.Node, h map[*jsontree.Node]int) *jsontree.Node {
	best := kid(n, 0)
	for i := 1; i < kidCount(n); i++ {
		if k := kid(n, i); h[k] > h[best] {
			best = k
		}
	}
	return best
}

// shortenStrings tries each string empty, then its first half (by
// characters: an escape or a UTF-8 sequence is one), repeatedly.
func (s *shrinker) shortenStrings(root *jsontree.Node, tryTree func() bool) {
	var strs []*jsontree.Node
	jsontree.Walk(root, func(n *jsontree.Node, _ int) bool {
		if n.Kind == jsontree.String && len(n.Raw) > 2 {
			strs = append(strs, n)
		}
		return true
	})
	for _, n := range strs {
		saved := n.Raw
		n.Raw = []byte(`""`)
		if tryTree() {
			continue
		}
		n.Raw = saved
		for !s.cut {
			units := stringUnits(n.Raw[1 : len(n.Raw)-1])
			if len(units) < 2 {
				break
			}
			half := units[len(units)/2]
			prev := n.Raw
			n.Raw = append(append([]byte{'"'}, prev[1:1+half]...), '"')
			if !tryTree() {
				n.Raw = prev
				break
			}
		}
	}
}

// stringUnits returns the offsets where each character of a JSON string's
// content starts: an escape (\n, \u0041) or a UTF-8 sequence is one.
func stringUnits(b []byte) []int {
	var out []int
	for i := 0; i < len(b); {
		out = append(out, i)
		switch {
		case b[i] == '\\' && i+1 < len(b) && b[i+1] == 'u':
			i = min(i+6, len(b))
		case b[i] == '\\':
			i = min(i+2, len(b))
		default:
			_, n := utf8.DecodeRune(b[i:])
			i += n
		}
	}
	return out
}

// simplifyNumbers tries each number as 0, then 1, then with its integer
// digits halved.
func (s *shrinker) simplifyNumbers(root *jsontree.Node, tryTree func() bool) {
	var nums []*jsontree.Node
	jsontree.Walk(root, func(n *jsontree.Node, _ int) bool {
		if isNumber(n) && string(n.Raw) != "0" {
			nums = append(nums, n)
		}
		return true
	})
	for _, n := range nums {
		saved := n.Raw
		done := false
		for _, simple := range []string{"0", "1"} {
			if string(saved) == simple {
				continue
			}
			n.Raw = []byte(simple)
			if tryTree() {
				done = true
				break
			}
			n.Raw = saved
		}
		for !done && !s.cut && len(n.Raw) > 2 && isPlainInteger(n.Raw) {
			prev := n.Raw
			n.Raw = prev[:(len(prev)+1)/2]
			if !tryTree() {
				n.Raw = prev
				break
			}
		}
	}
}

func isPlainInteger(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// bytePass removes chunks of the bytes get returns, halving the chunk size
// down to one byte; set makes the case to try from the shorter bytes.
func (s *shrinker) bytePass(get func() []byte, set func([]byte) mutate.Case) {
	b := get()
	for size := len(b) / 2; size >= 1; size /= 2 {
		for i := 0; i < len(b); {
			cand := slices.Concat(b[:i], b[min(i+size, len(b)):])
			if len(cand) > 0 && s.try(set(cand)) {
				b = get()
				continue
			}
			if s.cut {
				return
			}
			i += size
		}
	}
}
