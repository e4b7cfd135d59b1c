package oracle

import (
	"strconv"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

// pair pairs every element of the reply array with a request: the
// reply's replies go through pairReplies, which judges the pairs it makes
// of what is left over (settle) as it goes.
func (b *batchMatch) pair(reply []byte) {
	b.collect(reply)
	b.pairReplies()
}

// pairReplies pairs the replies collected with the requests, in passes:
// the id-first passes of pairByID; then the replies left over, by moving
// paired ones along (an augmenting path, as in bipartite matching); what
// is still left is settled (settle.go): judged against the request it
// most likely answers, or found a second reply or a reply to nothing.
// Last, in a batch, reassign gives a required request left without a
// reply one a tolerance took elsewhere.
func (b *batchMatch) pairReplies() {
	// The requests that must have a reply come first, then those a
	// tolerance lets take one: a reply with id null that fits both went
	// to a notification that may be refused, where moving another reply
	// would have answered [] ([a notification with 1e400, [], an invalid
	// request] answered with -32600 twice called [] unanswered).
	b.needed = true
	b.pairByID()
	if b.requiredLeft() {
		// (The moves for required requests must not leave the rest
		// without a budget: this bounds the work at twice what it was.)
		budget := b.budget
		b.augmentAll()
		b.budget = max(b.budget, budget)
	}
	b.needed = false
	// (Replies with an id again, now to requests a tolerance lets take
	// one, before the replies without: [{"error":0,"id":0,"method":0,
	// "method":0},0] answered -32700 with id 0 and with id null gave the
	// null one to the first element, which a repeated member lets take
	// any error, and called the id 0 a second reply.)
	b.pairByID()
	b.augmentAll()
	pend := b.sc.pend
	var rm wire.Message
	if b.fitOnly {
		return
	}
	// Arrays first: an array answers nothing but a batch, where a single
	// error settled first would have left it a second reply. Then the
	// replies with an id, which say whose they are, before those without
	// one, which a tolerance may let take a request with an id: settled in
	// the order the replies came, a concurrent server's order, an id-null
	// error took {"jsonrpc":true,"id":5} before its own -32700 with id 5
	// came up, which was then called a second reply.
	for _, pass := range [3]uint8{pendArray, pendID, pendDone} {
		for j := range pend {
			p := &pend[j]
			if p.state == pendDone || pass != pendDone && p.state != pass || pass == pendDone && (p.state == pendArray || p.state == pendID) {
				continue
			}
			rm = p.message()
			b.settle(&rm, p.state, int32(j))
		}
	}
	if b.judges == nil {
		// (Not on a stream: the reply a required frame lacks may still be
		// on its way, and a correct pair undone for it would blame the
		// frame for an answer it never got.)
		b.reassign()
	}
}

// augmentAll pairs each reply still pending by moving paired ones along
// (augment): arrays first, which only batches take and which the budget
// must not run out before (a batch among a thousand refused notifications
// was called unanswered once their replies had used it up).
func (b *batchMatch) augmentAll() {
	pend := b.sc.pend
	var rm wire.Message
	for _, arrays := range [2]bool{true, false} {
		for j := range pend {
			if p := &pend[j]; p.state != pendDone && (p.state == pendArray) == arrays {
				b.stamp++
				if rm = p.message(); b.augment(&rm, int32(j), augmentDepth) {
					p.state = pendDone
				}
			}
		}
	}
}

// requiredLeft reports whether a request that must have a reply has none
// while a reply is still pending: only then can moves pair more of them.
func (b *batchMatch) requiredLeft() bool {
	pending := false
	for j := range b.sc.pend {
		pending = pending || b.sc.pend[j].state != pendDone
	}
	if !pending {
		return false
	}
	for i := range b.reqs {
		if !b.reqs[i].matched && b.required(i) {
			return true
		}
	}
	return false
}

// collect scans the elements of the reply array into the pending replies,
// recording the envelope findings of each and those that are no response.
func (b *batchMatch) collect(reply []byte) {
	it, _ := wire.ArrayElements(reply)
	var rm wire.Message
	for k := 0; ; k++ {
		elem, ok := it.Next()
		if !ok {
			break
		}
		wire.Scan(elem, &rm)
		env := check.Envelope(&rm)
		if b.notifs && (rm.Kind == wire.KindResult || rm.Kind == wire.KindError) {
			// A missing id is left to the pairing (missingIDs, stray).
			env = check.EnvelopeToNotification(&rm)
		}
		if b.found(env) {
			b.note = "reply element " + strconv.Itoa(k) + ": " + rm.Problems.String()
		}
		if (rm.Kind == wire.KindRequest || rm.Kind == wire.KindNotification) && b.found(check.Set(0).Add(check.BatchExtraReply)) {
			b.note = "reply element " + strconv.Itoa(k) + " is a request, not a response"
		}
		b.sc.addReply(&rm, k, false)
	}
}

// addReply keeps rm, reply k, for pairing when it is a response, or when
// all is kept (a stream's replies, which the stream's judge settles); the
// others answer no request of a batch (Envelope flags what they are).
func (s *batchScratch) addReply(rm *wire.Message, k int, all bool) {
	if !all && rm.Kind != wire.KindResult && rm.Kind != wire.KindError {
		return
	}
	s.pend = append(s.pend, pendingReply{id: rm.ID, code: rm.Code, k: k, kind: rm.Kind, idKind: rm.IDKind, hasCode: rm.HasCode})
	s.pend[len(s.pend)-1].unpair()
}

// unpair sets p's state for the first pass of the pairing, by its id.
func (p *pendingReply) unpair() {
	switch {
	case p.kind == wire.KindBatch:
		p.state = pendArray
	case p.kind != wire.KindResult && p.kind != wire.KindError:
		p.state = pendOther
	case p.idKind == wire.IDNull && p.kind == wire.KindResult:
		p.state = pendNullValue
	case p.idKind == wire.IDNull:
		p.state = pendNullError
	case p.idKind != wire.IDString && p.idKind != wire.IDNumber:
		// Envelope flagged the id; the response still answers a request
		// (geth echoes an id true as sent), which is not unanswered
		// then, so it is paired as one with id null.
		p.state = pendBadID
	default:
		p.state = pendID
	}
}

// pairByID is the part of the pairing that comes before any reply moves,
// shared by the replies of a batch and those of a stream: responses with
// an id to the requests with that id, in the order the replies came (a
// request they answer plainly before one that takes them only by a
// tolerance); then to those whose id is in doubt (a repeated "id" member,
// a number float64 rounds); then responses with id null, results first,
// by tier and category. Paired replies are marked pendDone.
func (b *batchMatch) pairByID() {
	pend := b.sc.pend
	var rm wire.Message
	for j := range pend {
		if p := &pend[j]; p.state == pendID {
			if rm = p.message(); b.byID(&rm, int32(j)) >= 0 {
				p.state = pendDone
			}
		}
	}
	// A request whose "id" is repeated takes any reply; the one whose id
	// it holds first ({"id":null,"id":0} and {"id":false,"id":1} answered
	// with ids 0 and 1 were paired by the order the replies came in).
	for j := range pend {
		if p := &pend[j]; p.state == pendID {
			if rm = p.message(); b.dupIDHolder(&rm, int32(j)) >= 0 {
				p.state = pendDone
			}
		}
	}
	if len(b.lists[listAnyID].idx) > 0 || len(b.lists[listLoose].idx) > 0 {
		for j := range pend {
			if p := &pend[j]; p.state == pendID {
				rm = p.message()
				if b.heldByID(&rm) {
					// (The request whose id it carries takes it, answered
					// wrongly or not, when what is left over is settled: an
					// element with "id":"1","id":null, which takes any reply,
					// took a -32700 with id 0 from {"jsonrpc":0,"method":0,
					// "id":0}, which was then called unanswered.)
					continue
				}
				if b.scan(&b.lists[listAnyID], &rm, false, int32(j)) >= 0 || b.scan(&b.lists[listLoose], &rm, false, int32(j)) >= 0 {
					p.state = pendDone
				}
			}
		}
	}
	// Arrays before replies with id null: a batch's own answer is an
	// array, and a single error a tolerance lets answer it too would
	// leave the array a second reply ({"method":0} and [{"params":null}]
	// answered with a -32700 and an array: the -32700 went to the batch).
	needed := b.needed
	b.needed = false // (a batch of notifications a server refuses takes its array too)
	for j := range pend {
		if p := &pend[j]; p.state == pendArray {
			if rm = p.message(); b.scan(&b.lists[listBatch], &rm, false, int32(j)) >= 0 {
				p.state = pendDone
			}
		}
	}
	b.needed = needed
	b.pairNulls()
}

// heldByID reports whether a request without a reply has rm's id (not in
// the any-id list: one whose "id" is repeated holds no one id).
func (b *batchMatch) heldByID(rm *wire.Message) bool {
	var out [numCategories]candidates
	for _, g := range b.groups(rm, b.idKey(rm), &out) {
		if i := g.first(b.reqs); i >= 0 && b.reqs[i].edges&edgeDupID == 0 {
			return true
		}
	}
	return false
}

// dupIDHolder pairs rm, reply j, with an unmatched request whose "id"
// member is repeated, one of them holding rm's id, that rm answers
// correctly, and returns it, or -1.
func (b *batchMatch) dupIDHolder(rm *wire.Message, j int32) int {
	for k, i := range b.lists[listAnyID].idx {
		if k >= scanLimit {
			break
		}
		if q := &b.reqs[i]; !q.matched && holdsID(q.raw, rm.ID) && b.fits(int(i), rm, j, false) {
			q.matched, q.by, q.blamed = true, j, false
			return int(i)
		}
	}
	return -1
}

// pairNulls pairs the responses with id null, results first (a result
// with id null fits fewer requests than an error does), by tier and
// category (with b.needed, to requests that must have a reply only).
func (b *batchMatch) pairNulls() {
	pend := b.sc.pend
	var rm wire.Message
	for _, want := range [3]uint8{pendNullValue, pendNullError, pendBadID} {
		for j := range pend {
			if p := &pend[j]; p.state == want {
				if rm = p.message(); b.byNull(&rm, int32(j)) >= 0 {
					p.state = pendDone
				}
			}
		}
	}
}

// byID pairs rm, reply j, with an unmatched request of its id that it
// answers correctly, and returns the request's index, or -1.
func (b *batchMatch) byID(rm *wire.Message, j int32) int {
	var out [numCategories]candidates
	groups := b.groups(rm, b.idKey(rm), &out)
	for _, strict := range [2]bool{true, false} {
		for g := range groups {
			if i := b.scan(&groups[g], rm, strict, j); i >= 0 {
				return i
			}
		}
	}
	return -1
}

// groups returns the requests indexed under key (rm's id, unless the
// caller built another), by category in rm's order, stored in out.
func (b *batchMatch) groups(rm *wire.Message, key []byte, out *[numCategories]candidates) []candidates {
	var gs [numCategories]idGroup
	n := b.sc.index.find(key, &gs)
	return ordered(rm, &gs, n, out)
}

// idKey returns the index key of rm's id, in scratch space.
func (b *batchMatch) idKey(rm *wire.Message) []byte {
	b.sc.key = wire.AppendIDKey(b.sc.key[:0], rm.ID)
	return b.sc.key
}

// byNull pairs rm, a response with id null and reply j, with an unmatched
// request it answers correctly, and returns the request's index, or -1.
func (b *batchMatch) byNull(rm *wire.Message, j int32) int {
	if i := b.atPosition(rm, j); i >= 0 {
		return i
	}
	order := categoryOrder(rm)
	tiers := numNullTiers
	if b.needed {
		// (The optional tier holds no request whose silence breaks a
		// rule: newBatchMatch puts a request there only when its silence
		// is tolerated even without a walk. Scanning it only to skip each
		// of its requests cost every id-null reply a pass over them: 72 %
		// of rpcfuzz's CPU against the reference server, where 1,000
		// requests with id null, each answered, took 1,000 passes over
		// 1,000 requests at every reply that came.)
		tiers = tierOptional
	}
	for _, strict := range [2]bool{true, false} {
		for tier := range tiers {
			for _, cat := range order {
				if i := b.scan(&b.lists[nullList(tier, cat)], rm, strict, j); i >= 0 {
					return i
				}
			}
		}
	}
	return b.scan(b.edgyList(), rm, false, j)
}

// atPosition pairs rm, a response with id null and element j of a reply
// array as long as the batch, with the batch's element at its position
// when it answers that element correctly, and returns it, or -1. A reply
// with id null says nothing of whose it is, and a server that answers a
// batch in its order (most do) says it by the position: of two elements
// both owed an id-null error, answered -32700 and -32600 in their order,
// the -32600 went to the first (an invalid request, which it answers
// best) and the -32700 was blamed on the second, a notification the
// -32600 refused (jrpc2). Where the position pairs wrongly, the moves of
// the pairing still give every reply an element it answers.
func (b *batchMatch) atPosition(rm *wire.Message, j int32) int {
	if b.judges != nil || !b.complete {
		return -1
	}
	i := b.sc.pend[j].k
	if i >= len(b.reqs) {
		return -1
	}
	if q := &b.reqs[i]; !q.matched && b.fits(i, rm, j, false) {
		q.matched, q.by, q.blamed = true, j, false
		return i
	}
	return -1
}

// edgyList returns the list of requests with an edge, walking them all the
// first time it is needed: those whose silence breaks a rule first, so
// that a reply a tolerance lets two requests take goes to the one that
// must have it ([a notification with a broken method, a call with invalid
// UTF-8] answered with two -32700 on a stream gave the call's to the
// notification, and called the call unanswered).
func (b *batchMatch) edgyList() *candidates {
	if !b.edgy {
		b.edgy = true
		l := &b.lists[listEdgy]
		for i := range b.reqs {
			if b.reqs[i].analyse() != 0 && b.required(i) {
				l.add(i)
			}
		}
		for i := range b.reqs {
			if b.reqs[i].analyse() != 0 && !b.required(i) {
				l.add(i)
			}
		}
	}
	return &b.lists[listEdgy]
}

// each calls visit with every request rm may answer, in the order the
// passes of pair look at them, until visit returns false or the budget
// runs out.
func (b *batchMatch) each(rm *wire.Message, visit func(i int) bool) {
	var lists [numNullTiers*numCategories + 2]*candidates
	n := 0
	switch {
	case rm.Kind == wire.KindBatch:
		lists[n] = &b.lists[listBatch]
		n++
	case rm.Kind != wire.KindResult && rm.Kind != wire.KindError:
		// Nothing but a response or an array answers a request.
	case rm.IDKind != wire.IDString && rm.IDKind != wire.IDNumber:
		for tier := range numNullTiers {
			for _, cat := range categoryOrder(rm) {
				lists[n] = &b.lists[nullList(tier, cat)]
				n++
			}
		}
		lists[n] = b.edgyList()
		n++
	default:
		var out [numCategories]candidates
		groups := b.groups(rm, b.idKey(rm), &out)
		for k := range groups {
			lists[n] = &groups[k]
			n++
		}
		if len(groups) == 0 {
			// (Requests that may take any id, or a rounded one, only for
			// an id no request has: see heldByID.)
			lists[n], lists[n+1] = &b.lists[listAnyID], &b.lists[listLoose]
			n += 2
		}
	}
	for _, l := range lists[:n] {
		for _, i := range l.idx {
			if b.needed && !b.required(int(i)) {
				continue
			}
			if b.budget <= 0 {
				return
			}
			b.budget--
			if !visit(int(i)) {
				return
			}
		}
	}
}

// augment pairs rm, reply j, with a request it answers correctly: a free
// one, or one whose reply can move to another request it answers, and so
// on (an augmenting path of bipartite matching, found depth first, each
// request tried once per call from pair: b.stamp). False when there is no
// such path of at most depth moves within the budget.
func (b *batchMatch) augment(rm *wire.Message, j int32, depth int) bool {
	free := -1
	b.each(rm, func(i int) bool {
		if q := &b.reqs[i]; !q.matched && b.fits(i, rm, j, false) {
			free = i
			return false
		}
		return true
	})
	if free >= 0 {
		q := &b.reqs[free]
		q.matched, q.by, q.blamed = true, j, false
		return true
	}
	ok := false
	if depth == 0 {
		return false
	}
	b.each(rm, func(i int) bool {
		q := &b.reqs[i]
		if q.stamp == b.stamp || !q.matched || !b.fits(i, rm, j, false) {
			return true
		}
		q.stamp = b.stamp
		other := b.sc.pend[q.by].message()
		if b.augment(&other, q.by, depth-1) {
			q.by, q.blamed, ok = j, false, true
			return false
		}
		return true
	})
	return ok
}

// scan returns the first unmatched request of c that rm answers correctly
// (strict: without the tolerances, so that a reply goes to a request that
// takes it only by a tolerance after those that take it plainly), marked
// matched, or -1. While the batch's budget lasts it looks at all of c;
// after, at a few candidates, which keeps huge batches linear.
func (b *batchMatch) scan(c *candidates, rm *wire.Message, strict bool, j int32) int {
	c.unmatched(b.reqs)
	judged := 0
	for k := c.nextUnmatched(int(*c.start), b.reqs); k < len(c.idx); k = c.nextUnmatched(k+1, b.reqs) {
		// (Matched requests are crossed at no cost: nextUnmatched.)
		i := c.idx[k]
		if b.needed && !b.required(int(i)) {
			continue // (not a candidate now: no budget spent on it)
		}
		if b.budget > 0 {
			b.budget--
		} else if judged >= pickTries {
			break
		}
		q := &b.reqs[i]
		judged++
		if b.fits(int(i), rm, j, strict) {
			q.matched, q.by, q.blamed = true, j, false
			return int(i)
		}
	}
	return -1
}

// fits reports whether rm, reply j, answers request i correctly (strict:
// without the tolerances). A stream's caller judges its frames as a whole
// (b.judges: a frame may be a batch, or a reply an array, and the envelope
// counts there); a strict fit then needs the request's own strict verdict
// too, but for a batch or [], which the caller alone can judge.
func (b *batchMatch) fits(i int, rm *wire.Message, j int32, strict bool) bool {
	q := &b.reqs[i]
	if b.judges == nil {
		return q.fits(rm, strict)
	}
	if !b.judges.Fits(i, b.sc.pend[j].k) {
		return false
	}
	return !strict || q.class == Batch || q.class == EmptyBatch || q.fits(rm, true)
}
