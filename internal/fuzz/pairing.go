package fuzz

import (
	"slices"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/wire"
)

// covered reports whether replies answer every frame that requires a
// reply, paired as match pairs them (required frames first). A frame
// without a reply that fits it counts as answered by a reply no frame
// takes (a wrong answer is an answer, and waiting for another would wait
// for nothing), except the stale replies that may be the input before's.
func (p *pairs) covered(stale int) bool {
	frames, infos, replies := p.frames, p.infos, p.replies
	ids := make([][]byte, len(replies))
	for j := range replies {
		if sc := p.scan(j); sc.idKind == wire.IDNumber || sc.idKind == wire.IDString {
			ids[j] = sc.id
		}
	}
	got := make([]bool, len(frames))
	spare := -stale // replies no frame takes: wrong answers, but answers
	for _, f := range match(p, ids) {
		if f >= 0 {
			got[f] = true
		} else {
			spare++
		}
	}
	for i := range infos {
		if !got[i] && infos[i].needs && p.req(i) {
			if spare--; spare < 0 {
				return false
			}
		}
	}
	return true
}

// maxAlign bounds frames×replies for the matching of matchReplies; past it,
// replies are matched by id, and the rest in order.
const maxAlign = 2048

// pairs judges (frame, reply) pairs once each: matching replies to frames
// and judging the pairs found ask the same questions.
type pairs struct {
	frames  [][]byte
	infos   []frameInfo
	replies [][]byte
	scans   []replyScan // of each reply
	seen    map[[2]int]pairVerdict
	memo    judgeMemo
	// What the input before may still have had coming (outcome.staleNull
	// and staleIDs).
	staleNull int
	staleIDs  [][]byte
	budget    int // pairs judged for leftovers past maxAlign
	pairing   oracle.Pairing
}

type pairVerdict struct {
	rules check.Set
	note  string
}

func (p *pairs) judge(i, j int) pairVerdict {
	k := [2]int{i, j}
	if v, ok := p.seen[k]; ok {
		return v
	}
	class := p.infos[i].class
	if p.infos[i].asBatch && p.kind(j) == wire.KindBatch {
		class = oracle.Batch
	}
	rules, note := p.memo.judge(p.frames[i], class, p.replies[j], true)
	v := pairVerdict{rules, note}
	if len(p.frames) > 1 {
		// (One frame's pairs are judged once each: no matching asks.)
		if p.seen == nil {
			p.seen = map[[2]int]pairVerdict{}
		}
		p.seen[k] = v
	}
	return v
}

// fits reports whether reply j answers frame i correctly. An array answers
// nothing but a batch, which needs no judging (a notification flood before
// a big batch would otherwise scan its reply once per notification).
func (p *pairs) fits(i, j int) bool {
	if p.kind(j) == wire.KindBatch && p.infos[i].class != oracle.Batch && !p.infos[i].asBatch {
		return false
	}
	return p.judge(i, j).rules == 0
}

// scan is reply j's scan.
func (p *pairs) scan(j int) *replyScan {
	if len(p.scans) != len(p.replies) {
		p.scans = scanAll(p.scans[:0], p.replies)
	}
	return &p.scans[j]
}

func (p *pairs) kind(j int) wire.Kind { return p.scan(j).kind }

// matchReplies assigns stream replies to frames: assigned[i] holds the
// indices of frame i's replies, assigned[len(frames)] those of replies that
// answer no frame, assigned[len(frames)+1] those of replies recognised as
// late replies to the input before (p.staleNull, p.staleIDs), not judged.
// Most servers answer frames in order, so that is tried first (inOrder);
// JSON-RPC allows any order, though, which ids sort out unless the input
// repeats them or the replies carry id null: then the replies are matched
// to frames they answer correctly in any order, as many as possible,
// required frames (whose silence breaks a rule) first (match). So a reply
// that could answer two frames goes to the one that must have it, and no
// finding depends on a choice the replies leave open. A reply left over
// goes to the frame whose id it carries, is set aside as late when it can
// be the last input's, else goes to the next required frame still without
// a reply (judged against it: the most likely reading), then to any frame
// without one; one finding none is a second reply to the frame whose id it
// carries, or a reply to nothing.
func matchReplies(p *pairs) [][]int {
	n, m := len(p.infos), len(p.replies)
	assigned := make([][]int, n+2)
	if n == 1 && p.staleNull == 0 {
		// One frame: every reply is its own, but for one carrying an id
		// of the input before and not this frame's.
		for j := range m {
			slot := 0
			if sc := p.scan(j); len(p.staleIDs) > 0 && keyedScan(sc) && !p.echoes(0, sc.id) {
				null := 0
				if p.stale(sc.id, &null) {
					slot = n + 1
				}
			}
			assigned[slot] = append(assigned[slot], j)
		}
		return assigned
	}
	if inOrder(p, assigned) {
		return assigned
	}
	for i := range assigned {
		assigned[i] = assigned[i][:0]
	}
	ids := make([][]byte, m)
	for j := range p.replies {
		if sc := p.scan(j); sc.idKind == wire.IDNumber || sc.idKind == wire.IDString {
			ids[j] = sc.id
		}
	}
	frameOf := match(p, ids)
	taken := make([]bool, n)
	for _, f := range frameOf {
		if f >= 0 {
			taken[f] = true
		}
	}
	staleNull := p.staleNull
	by := make([]int, n) // the reply match gave each frame, or -1
	for i := range by {
		by[i] = -1
	}
	for j, f := range frameOf {
		if f >= 0 {
			assigned[f] = append(assigned[f], j)
			by[f] = j
		}
	}
	for j := range p.replies {
		if frameOf[j] >= 0 {
			continue
		}
		own := -1 // a frame whose id the reply carries
		for i := range p.infos {
			if p.echoes(i, ids[j]) {
				if own < 0 || !taken[i] && taken[own] {
					own = i
				}
			}
		}
		switch {
		case own >= 0 && !taken[own]:
			taken[own] = true
			assigned[own] = append(assigned[own], j)
			continue
		case ids[j] == nil && staleNull > 0:
			// A reply without an id that may be the input before's: a
			// frame of this input that requires a reply and has none
			// takes it first (a wrong answer is more likely its own than
			// a stray), else it is set aside.
			if i := p.freeRequired(taken); i >= 0 {
				taken[i] = true
				assigned[i] = append(assigned[i], j)
				continue
			}
			staleNull--
			assigned[n+1] = append(assigned[n+1], j)
			continue
		case p.stale(ids[j], &staleNull):
			assigned[n+1] = append(assigned[n+1], j)
			continue
		}
		if i := p.typeChanged(ids[j], taken); i >= 0 {
			// Its id is a frame's id as the other JSON type (7 for "7"):
			// judged against that frame, as in a batch, it is
			// id_type_changed, not a second reply or an unknown id.
			taken[i] = true
			assigned[i] = append(assigned[i], j)
			continue
		}
		switch {
		case own >= 0:
			assigned[own] = append(assigned[own], j) // a second reply to it
			continue
		}
		pick := p.leftoverFrame(j, taken, by, assigned)
		if pick < 0 {
			pick = n
		} else {
			taken[pick] = true
		}
		assigned[pick] = append(assigned[pick], j)
	}
	return assigned
}

// typeChanged returns the first frame without a reply whose readable id
// is id (a reply's raw id, nil for none) as the other JSON type; -1 if
// none.
func (p *pairs) typeChanged(id []byte, taken []bool) int {
	if id == nil {
		return -1
	}
	for i := range p.infos {
		fi := &p.infos[i]
		if !taken[i] && fi.readable && fi.id != nil && wire.CompareIDs(fi.id, id, false) == wire.IDTypeChanged {
			return i
		}
	}
	return -1
}

// freeRequired returns the first frame without a reply, without a
// readable id, that requires one; -1 if none.
func (p *pairs) freeRequired(taken []bool) int {
	for i := range p.infos {
		if !taken[i] && !p.infos[i].readable && p.req(i) {
			return i
		}
	}
	return -1
}

// leftoverFrame picks the frame a reply that answers none correctly is
// judged against: the first frame, in the input's order (not the replies',
// which a concurrent server makes random), that requires a reply and has
// none, directly or by moving its reply to another such frame that reply
// fits too; else the first that needs one without having one, then any
// without one; -1 when every frame has one. The order of the input makes
// the verdict the same however the replies were ordered, as a sequential
// server would have ordered them. by and assigned are updated for a move.
//
// A reply without an id goes to a frame whose id the server could not read
// first: given to a call with a readable id it would make a finding
// (unexpected_null_id) of a choice. Moving replies is bounded like match:
// past maxAlign pairs, only frames without a reply are looked at.
func (p *pairs) leftoverFrame(j int, taken []bool, by []int, assigned [][]int) int {
	n := len(p.infos)
	keyed := keyedScan(p.scan(j))
	moves := n*len(p.replies) <= maxAlign
	if !moves {
		// Past the bound match compared ids only: a reply it left over may
		// still answer a frame correctly (a tolerated reply to a
		// notification), required frames first. Looked for within a
		// budget.
		for _, required := range [2]bool{true, false} {
			for i := range n {
				if p.budget >= maxAlign {
					break
				}
				if !taken[i] && p.req(i) == required {
					p.budget++
					if p.fits(i, j) {
						return i
					}
				}
			}
		}
	}
	for i := range n {
		if !p.req(i) || !keyed && p.infos[i].readable {
			continue // (a readable one is tried below, after the others)
		}
		if !taken[i] {
			return i
		}
		j2 := by[i]
		if j2 < 0 || !moves {
			continue
		}
		for k := range n {
			if k != i && !taken[k] && p.req(k) && p.fits(k, j2) {
				// Move reply j2 from frame i to frame k.
				taken[k], by[k], by[i] = true, j2, -1
				assigned[k] = append(assigned[k], j2)
				assigned[i] = slices.DeleteFunc(assigned[i], func(x int) bool { return x == j2 })
				return i
			}
		}
	}
	for _, ok := range [...]func(int) bool{
		func(i int) bool { return p.infos[i].needs && !p.infos[i].readable },
		func(i int) bool { return !p.infos[i].readable },
		func(i int) bool { return p.req(i) },
		func(i int) bool { return p.infos[i].needs },
		func(int) bool { return true },
	} {
		if i := firstFrameFrom(p.infos, taken, 0, ok); i >= 0 {
			return i
		}
	}
	return -1
}

// echoes reports whether frame i has a readable id that id (a reply's raw
// id, nil for none) carries, as the oracle compares ids.
func (p *pairs) echoes(i int, id []byte) bool {
	fi := &p.infos[i]
	return id != nil && fi.readable && fi.id != nil && wire.EchoesID(fi.id, id)
}

// stale reports whether a reply that answers no frame of the input can be
// a late reply to the input before: it carries one of that input's ids, or
// no id while that input still lacked replies without one (taking one of
// those off *null).
func (p *pairs) stale(id []byte, null *int) bool {
	if id != nil {
		for _, old := range p.staleIDs {
			if wire.EchoesID(old, id) {
				return true
			}
		}
		return false
	}
	if *null > 0 {
		*null--
		return true
	}
	return false
}

// inOrder tries the common case: the replies answer, in order, the frames
// that require one, and a frame that requires none (a notification, a
// call with id null) may take one where the spec allows an answer. A reply
// that fits both the next frame that requires one and a frame before it
// that does not is ambiguous; both choices are tried, depth first,
// remembering the states that failed, so the search stays within
// frames×replies steps.
func inOrder(p *pairs, assigned [][]int) bool {
	n, m := len(p.infos), len(p.replies)
	failed := map[[2]int]bool{}
	var solve func(i, j int) bool
	solve = func(i, j int) bool {
		if j == m {
			for ; i < n; i++ {
				if p.req(i) {
					return false
				}
			}
			return true
		}
		if failed[[2]int{i, j}] {
			return false
		}
		next, tolerated := n, -1
		for k := i; k < n; k++ {
			if p.req(k) {
				next = k
				break
			}
			if tolerated < 0 && p.fits(k, j) {
				tolerated = k
			}
		}
		for _, k := range [2]int{next, tolerated} {
			if k < 0 || k == n || (k == next && !p.fits(k, j)) {
				continue
			}
			if solve(k+1, j+1) {
				assigned[k] = append(assigned[k], j)
				return true
			}
		}
		failed[[2]int{i, j}] = true
		return false
	}
	return solve(0, 0)
}

// match pairs replies with frames they answer correctly, in any order, as
// many as possible. It pairs by id first, in the oracle's order (byOrder):
// each reply that carries a frame's id goes to a frame with that id, and
// each reply without a readable id to a frame only id null can answer
// before one whose id was readable, as the replies of a batch go to its
// elements. Then, with the tolerances the oracle allows, by Kuhn's
// augmenting paths: frames that require a reply first, then frames that
// need one but may stay silent, then the others that may take one. An
// augmenting path never unmatches a frame, so the required frames keep the
// most replies any pairing gives them. frameOf[j] is reply j's frame, or
// -1. Past maxAlign pairs, only ids are compared.
func match(p *pairs, ids [][]byte) []int {
	n, m := len(p.infos), len(p.replies)
	frameOf := make([]int, m)
	for j := range frameOf {
		frameOf[j] = -1
	}
	paired := make([]bool, n)
	if n*m <= maxAlign {
		p.byOrder(frameOf, paired)
	}
	same := func(i, j int) bool { return p.echoes(i, ids[j]) }
	edge := func(i, j int) bool {
		if n*m > maxAlign {
			return same(i, j)
		}
		return p.fits(i, j)
	}
	seen := make([]bool, m)
	var augment func(i int) bool
	augment = func(i int) bool {
		// Replies with the frame's id first, then the others, in order.
		for _, byID := range [2]bool{true, false} {
			for j := range m {
				if seen[j] || same(i, j) != byID || !edge(i, j) {
					continue
				}
				seen[j] = true
				if frameOf[j] < 0 || augment(frameOf[j]) {
					frameOf[j] = i
					return true
				}
			}
		}
		return false
	}
	for tier := range 3 {
		for i := range n {
			if !paired[i] && p.tierOf(i) == tier {
				clear(seen)
				augment(i)
			}
		}
	}
	return frameOf
}

// byOrder pairs replies with frames by the id-first passes of the
// oracle's pairing (oracle.Pairing), the ones a batch's replies go
// through: replies with an id first, each with a frame with its id that
// it answers correctly, plainly before by a tolerance; then replies
// without a readable id, results before errors (a result fits fewer
// frames), each with a frame an id-null answer may go to, those only id
// null can answer first. Arrays are left to the matching: only a batch
// takes one. It sets frameOf and paired.
func (p *pairs) byOrder(frameOf []int, paired []bool) {
	pg := &p.pairing
	pg.Reset()
	for i := range p.infos {
		pg.AddRequest(p.frames[i], p.infos[i].class)
	}
	for j := range p.replies {
		sc := p.scan(j)
		rm := wire.Message{Kind: sc.kind, IDKind: sc.idKind, ID: sc.id, Code: sc.code, HasCode: sc.hasCode}
		pg.AddReply(&rm)
	}
	pg.Pair(p.fits, frameOf)
	for _, f := range frameOf {
		if f >= 0 {
			paired[f] = true
		}
	}
}

// tierOf orders frames for match: required, needing, the rest.
func (p *pairs) tierOf(i int) int {
	switch {
	case p.req(i):
		return 0
	case p.infos[i].needs:
		return 1
	}
	return 2
}

// req is requiredAt for frame i.
func (p *pairs) req(i int) bool { return requiredAt(p.frames, p.infos, i, &p.memo) }

func firstFrameFrom(infos []frameInfo, taken []bool, from int, ok func(int) bool) int {
	for i := from; i < len(infos); i++ {
		if !taken[i] && ok(i) {
			return i
		}
	}
	return -1
}
