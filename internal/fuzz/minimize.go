package fuzz

import (
	"bytes"
	"context"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/mutate"
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
func minimize(ctx context.Context, in mutate.Case, check func(context.Context, mutate.Case) bool, budget int, deadline time.Time) (mutate.Case, minimizeResult) {
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

// treePasses shrinks frame i as a JSON tree.
func (s *shrinker) treePasses(i int) {
	frame := s.best.Frames[i]
	root, ok := parseTree(frame)
	if !ok {
		return
	}
	if compact := appendTree(nil, root); !bytes.Equal(compact, frame) && !s.try(withFrame(s.best, i, compact)) {
		return // the whitespace matters: leave it to the byte pass
	}
	tryTree := func() bool {
		b := appendTree(nil, root)
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

// containers lists the objects and arrays of a tree in preorder.
func containers(root *node) []*node {
	var out []*node
	walkTree(root, func(n *node, _ int) bool {
		if n.kind == kindObject || n.kind == kindArray {
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
func ladderStarts(root *node) []*node {
	starts := []*node{root}
	walkTree(root, func(n *node, _ int) bool {
		if len(n.kids) > 1 {
			for _, k := range n.kids {
				if len(k.kids) > 0 {
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
func rungs(root *node) map[*node]bool {
	out := map[*node]bool{}
	walkTree(root, func(n *node, _ int) bool {
		if len(n.kids) == 1 {
			if k := n.kids[0]; len(k.kids) == 1 && len(k.kids[0].kids) > 0 {
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
func (s *shrinker) arrayify(root *node, tryTree func() bool) {
	type saved struct {
		n    *node
		keys [][]byte
	}
	done := map[*node]bool{}
	for _, x := range ladderStarts(root) {
		if s.cut || done[x] {
			continue
		}
		var objs []saved
		walkTree(x, func(n *node, _ int) bool {
			if n.kind == kindObject {
				objs = append(objs, saved{n, n.keys})
			}
			return true
		})
		if len(objs) == 0 {
			continue
		}
		for _, o := range objs {
			o.n.kind, o.n.keys = kindArray, nil
		}
		if tryTree() {
			walkTree(x, func(n *node, _ int) bool { done[n] = true; return true })
			continue
		}
		for _, o := range objs {
			o.n.kind, o.n.keys = kindObject, o.keys
		}
	}
}

// dropKids shrinks every container from the root down: first it tries
// all its elements (member values) as 0 in one step, which turns a
// thousand-element batch into the smallest one that still fails with one
// check instead of a thousand; then it removes elements and members in
// chunks of halving size.
func (s *shrinker) dropKids(root *node, tryTree func() bool) {
	zero := &node{kind: kindNumber, raw: []byte("0")}
	skip := rungs(root)
	for _, n := range containers(root) {
		if skip[n] {
			continue
		}
		if len(n.kids) >= 2 && !s.cut {
			all := slices.Clone(n.kids)
			simple := true
			for i := range n.kids {
				if n.kids[i].kind != kindNumber || len(n.kids[i].raw) > 1 {
					simple = false
				}
				n.kids[i] = zero
			}
			if simple || !tryTree() {
				n.kids = all
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
func (s *shrinker) dropChunks(n *node, tryTree func() bool) {
	for size := len(n.kids); size >= 1; size /= 2 {
		misses := 0
		for i := 0; i < len(n.kids); {
			kids, keys := n.kids, n.keys
			end := min(i+size, len(n.kids))
			n.kids = slices.Delete(slices.Clone(kids), i, end)
			if n.kind == kindObject {
				n.keys = slices.Delete(slices.Clone(keys), i, end)
			}
			if tryTree() {
				misses = 0
				continue
			}
			n.kids, n.keys = kids, keys
			if s.cut {
				return
			}
			if misses++; len(n.kids) > bigContainer && misses >= maxMisses {
				break
			}
			i += size
		}
	}
}

// heights maps every container to the length of its longest path down to a
// scalar or an empty container (0 for those).
func heights(root *node) map[*node]int {
	h := map[*node]int{}
	order := containers(root)
	for k := len(order) - 1; k >= 0; k-- { // children come after parents in preorder
		n := order[k]
		best := 0
		for _, kid := range n.kids {
			best = max(best, h[kid]+1)
		}
		h[n] = best
	}
	return h
}

// halveNesting replaces a deeply nested container by its descendant half as
// far down the deepest path, then a quarter, ... one level: a ladder of
// 100,000 brackets shrinks to the depth that still fails in about log²
// steps. Only the top of each ladder is a starting point (ladderStarts).
func (s *shrinker) halveNesting(root *node, tryTree func() bool) {
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

func deepestKid(n *node, h map[*node]int) *node {
	best := n.kids[0]
	for _, k := range n.kids[1:] {
		if h[k] > h[best] {
			best = k
		}
	}
	return best
}

// shortenStrings tries each string empty, then its first half (by
// characters: an escape or a UTF-8 sequence is one), repeatedly.
func (s *shrinker) shortenStrings(root *node, tryTree func() bool) {
	var strs []*node
	walkTree(root, func(n *node, _ int) bool {
		if n.kind == kindString && len(n.raw) > 2 {
			strs = append(strs, n)
		}
		return true
	})
	for _, n := range strs {
		saved := n.raw
		n.raw = []byte(`""`)
		if tryTree() {
			continue
		}
		n.raw = saved
		for !s.cut {
			units := stringUnits(n.raw[1 : len(n.raw)-1])
			if len(units) < 2 {
				break
			}
			half := units[len(units)/2]
			prev := n.raw
			n.raw = append(append([]byte{'"'}, prev[1:1+half]...), '"')
			if !tryTree() {
				n.raw = prev
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
func (s *shrinker) simplifyNumbers(root *node, tryTree func() bool) {
	var nums []*node
	walkTree(root, func(n *node, _ int) bool {
		if n.kind == kindNumber && string(n.raw) != "0" {
			nums = append(nums, n)
		}
		return true
	})
	for _, n := range nums {
		saved := n.raw
		done := false
		for _, simple := range []string{"0", "1"} {
			if string(saved) == simple {
				continue
			}
			n.raw = []byte(simple)
			if tryTree() {
				done = true
				break
			}
			n.raw = saved
		}
		for !done && !s.cut && len(n.raw) > 2 && isPlainInteger(n.raw) {
			prev := n.raw
			n.raw = prev[:(len(prev)+1)/2]
			if !tryTree() {
				n.raw = prev
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
