package oracle

import (
	"bytes"
	"strconv"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

// pair pairs every element of the reply array with a request, in passes:
// the id-first passes of pairByID; then the responses left over by moving
// paired ones along (an augmenting path, as in bipartite matching); what
// is still left is judged against the request it most likely answers.
func (b *batchMatch) pair(reply []byte) {
	b.collect(reply)
	b.pairByID()
	pend := b.sc.pend
	var rm wire.Message
	for j := range pend {
		if p := &pend[j]; p.state != pendDone {
			b.stamp++
			if rm = p.message(); b.augment(&rm, int32(j), augmentDepth) {
				p.state = pendDone
			}
		}
	}
	for j := range pend {
		p := &pend[j]
		rm = p.message()
		switch p.state {
		case pendID:
			b.blameID(&rm, p.k, int32(j))
		case pendNullValue, pendNullError:
			b.blameNull(&rm, p.k, int32(j))
		case pendBadID:
			// With no request left for it, Envelope's verdict is all.
			b.blameNullTiers(&rm, int32(j))
		}
	}
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
		if env := check.Envelope(&rm); b.found(env) {
			b.note = "reply element " + strconv.Itoa(k) + ": " + rm.Problems.String()
		}
		if (rm.Kind == wire.KindRequest || rm.Kind == wire.KindNotification) && b.found(check.Set(0).Add(check.BatchExtraReply)) {
			b.note = "reply element " + strconv.Itoa(k) + " is a request, not a response"
		}
		b.sc.addReply(&rm, k)
	}
}

// addReply keeps rm, reply k, for pairing when it is a response; the
// others answer no request (Envelope flags what they are).
func (s *batchScratch) addReply(rm *wire.Message, k int) {
	if rm.Kind != wire.KindResult && rm.Kind != wire.KindError {
		return
	}
	s.pend = append(s.pend, pendingReply{id: rm.ID, code: rm.Code, k: k, kind: rm.Kind, idKind: rm.IDKind, hasCode: rm.HasCode})
	s.pend[len(s.pend)-1].unpair()
}

// unpair sets p's state for the first pass of the pairing, by its id.
func (p *pendingReply) unpair() {
	switch {
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
	for j := range pend {
		if p := &pend[j]; p.state == pendID {
			rm = p.message()
			if b.scan(&b.lists[listAnyID], &rm, false, int32(j)) >= 0 || b.scan(&b.lists[listLoose], &rm, false, int32(j)) >= 0 {
				p.state = pendDone
			}
		}
	}
	// A result with id null fits fewer requests than an error does.
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
	order := categoryOrder(rm)
	for _, strict := range [2]bool{true, false} {
		for tier := range numNullTiers {
			for _, cat := range order {
				if i := b.scan(&b.lists[nullList(tier, cat)], rm, strict, j); i >= 0 {
					return i
				}
			}
		}
	}
	return b.scan(b.edgyList(), rm, false, j)
}

// edgyList returns the list of requests with an edge, walking them all the
// first time it is needed.
func (b *batchMatch) edgyList() *candidates {
	if !b.edgy {
		b.edgy = true
		for i := range b.reqs {
			if b.reqs[i].analyse() != 0 {
				b.lists[listEdgy].add(i)
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
	if rm.IDKind != wire.IDString && rm.IDKind != wire.IDNumber {
		for tier := range numNullTiers {
			for _, cat := range categoryOrder(rm) {
				lists[n] = &b.lists[nullList(tier, cat)]
				n++
			}
		}
		lists[n] = b.edgyList()
		n++
	} else {
		var out [numCategories]candidates
		groups := b.groups(rm, b.idKey(rm), &out)
		for k := range groups {
			lists[n] = &groups[k]
			n++
		}
		lists[n], lists[n+1] = &b.lists[listAnyID], &b.lists[listLoose]
		n += 2
	}
	for _, l := range lists[:n] {
		for _, i := range l.idx {
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
		q.matched, q.by = true, j
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
			q.by, ok = j, true
			return false
		}
		return true
	})
	return ok
}

// blameID judges rm, a response with an id no request took cleanly,
// against the request it most likely answers: one with its id, one with
// its id as the other JSON type; else it is a duplicate or answers nothing.
func (b *batchMatch) blameID(rm *wire.Message, k int, j int32) {
	var out [numCategories]candidates
	groups := b.groups(rm, b.idKey(rm), &out)
	for g := range groups {
		if i := groups[g].first(b.reqs); i >= 0 {
			b.judgePair(i, rm, j)
			return
		}
	}
	if i := b.typeChanged(rm); i >= 0 {
		b.judgePair(i, rm, j)
		return
	}
	for g := range groups {
		if i := b.reclaim(groups[g].idx); i >= 0 {
			b.judgePair(i, rm, j)
			return
		}
	}
	if len(groups) > 0 || b.looseEcho(rm) {
		if b.found(check.Set(0).Add(check.DuplicateReply)) {
			b.note = "reply element " + strconv.Itoa(k) + ": a second response for id " + short(rm.ID)
		}
		return
	}
	if b.found(check.Set(0).Add(check.BatchExtraReply)) {
		b.note = "reply element " + strconv.Itoa(k) + ": id " + short(rm.ID) + " answers no request of the batch"
	}
}

// reclaim frees one of the requests idx (all with the id of a response
// left over) that holds a response without a readable id, by moving that
// response to another request it answers, and returns the freed request,
// or -1. The response with the id is then judged against its own request:
// [{"jsonrpc":"2.0","method":""},{"jsonrpc":-0,"id":1,"method":"x"}]
// answered [{id null, -32600}, {id 1, -32700}] gave the -32600 to the
// second element (which it fits) and left the -32700 with nothing but a
// duplicate of id 1, though the -32600 answers the first element too.
func (b *batchMatch) reclaim(idx []int32) int {
	for k, i := range idx {
		if k >= scanLimit {
			break
		}
		q := &b.reqs[i]
		if !q.matched {
			continue
		}
		if p := &b.sc.pend[q.by]; p.idKind == wire.IDNumber || p.idKind == wire.IDString {
			continue // it carries the id too
		}
		b.stamp++
		q.stamp = b.stamp // not a place for the response to move to
		other := b.sc.pend[q.by].message()
		if b.augment(&other, q.by, augmentDepth) {
			q.matched = false
			return int(i)
		}
	}
	return -1
}

// reassign gives a required request left without a response one that
// went to a request that needs none and took it only by a tolerance (a
// notification with invalid UTF-8 may be refused) where the response
// could be the required one's: an error with id null for an invalid
// request, or a response with its id; or one that echoes its id of a
// wrong type (false), wherever it went. Matching
// found no correct answer for the required request, so either way one is
// wrong; blaming the answer a request needed rather than its absence
// names what the server evidently did: [notification with invalid UTF-8,
// 1] answered [{id null, -32700}] answered the 1 with a wrong code (a
// parser reads the notification, and answers notifications with nothing),
// rather than the notification and not the 1. The work is bounded by the
// batch's size.
func (b *batchMatch) reassign() {
	work := judgeBudget*len(b.reqs) + 256
	for i := range b.reqs {
		q := &b.reqs[i]
		if q.matched || !q.required() {
			continue
		}
		for k := range b.reqs {
			if work--; work < 0 {
				return
			}
			p := &b.reqs[k]
			if k == i || !p.matched {
				continue
			}
			rm := b.sc.pend[p.by].message()
			if move := q.sameBadID(&rm) && !p.sameBadID(&rm) ||
				!p.required() && q.mayBlame(&rm) && !p.fits(&rm, true); !move {
				continue
			}
			p.matched = false
			b.judgePair(i, &rm, p.by)
			break
		}
	}
}

// sameBadID reports whether rm echoes q's id of a type no id may have
// (go-ethereum echoes an id false as it came): then rm answers q, whatever
// else it fits.
func (q *request) sameBadID(rm *wire.Message) bool {
	return rm.IDKind == wire.IDOther && q.m.IDKind == wire.IDOther && bytes.Equal(rm.ID, q.m.ID)
}

// mayBlame reports whether rm, a response paired elsewhere, could be the
// answer to q: it carries q's id, or it has no readable id and q is no
// call whose id was readable (an id null is an answer for it).
func (q *request) mayBlame(rm *wire.Message) bool {
	if rm.IDKind == wire.IDNumber || rm.IDKind == wire.IDString {
		return q.echoes(rm)
	}
	return q.class != Call || !q.readableID() || q.m.IDKind == wire.IDNull
}

// looseEcho reports whether rm's id is a float64 echo of the id of a
// request whose id float64 cannot hold exactly (0 for 1e-999999999), so
// that a reply left over with it is a second response to that request,
// not one to nothing. It looks at a bounded number of such requests.
func (b *batchMatch) looseEcho(rm *wire.Message) bool {
	if rm.IDKind != wire.IDNumber {
		return false
	}
	for k, i := range b.lists[listLoose].idx {
		if k >= scanLimit {
			break
		}
		if wire.CompareIDs(b.reqs[i].m.ID, rm.ID, true) == wire.IDEqual {
			return true
		}
	}
	return false
}

// typeChanged finds an unmatched request whose id is rm's id as the other
// JSON type (7 for "7"); judging the pair then reports id_type_changed.
func (b *batchMatch) typeChanged(rm *wire.Message) int {
	var key []byte
	if rm.IDKind == wire.IDNumber {
		key = wire.AppendNumberKey(append(b.sc.key[:0], typeChangedKey, 'n'), rm.ID)
	} else {
		var buf [64]byte
		content, ok := wire.StringContent(buf[:0], rm.ID)
		if !ok || !wire.IsNumber(content) {
			return -1
		}
		key = wire.AppendNumberKey(append(b.sc.key[:0], 'n'), content)
	}
	b.sc.key = key
	var out [numCategories]candidates
	for _, g := range b.groups(rm, key, &out) {
		if i := g.first(b.reqs); i >= 0 {
			return i
		}
	}
	return -1
}

// blameNull judges rm, a response with id null no request took cleanly,
// against the request it most likely answers, or says why it answers none.
func (b *batchMatch) blameNull(rm *wire.Message, k int, j int32) {
	if b.blameNullTiers(rm, j) {
		return
	}
	// A request that needs a response with id null may hold one that
	// answers another request too ([{"jsonrpc":"2.0","method":""},[1]]
	// answered [{id null, -32600}, {id null, -32700}]: the -32600 answers
	// either, the -32700 only the [1], wrongly).
	for tier := range tierOptional {
		for _, cat := range categoryOrder(rm) {
			if i := b.reclaim(b.lists[nullList(tier, cat)].idx); i >= 0 {
				b.judgePair(i, rm, j)
				return
			}
		}
	}
	var s check.Set
	var why string
	switch {
	case b.notifs:
		s, why = check.Set(0).Add(check.ReplyToNotification), " answers no request: a notification was answered"
	case b.allIDs:
		s, why = check.Set(0).Add(check.UnexpectedNullID), ": every request of the batch had a readable id"
	default:
		s, why = check.Set(0).Add(check.BatchExtraReply), " answers no request of the batch"
	}
	if b.found(s) {
		b.note = "reply element " + strconv.Itoa(k) + " (id null)" + why
	}
}

// blameNullTiers judges rm, reply j, against the first unmatched request
// an id-null response may answer, and reports whether there was one.
func (b *batchMatch) blameNullTiers(rm *wire.Message, j int32) bool {
	order := categoryOrder(rm)
	for tier := range numNullTiers {
		for _, cat := range order {
			if i := b.lists[nullList(tier, cat)].first(b.reqs); i >= 0 {
				b.judgePair(i, rm, j)
				return true
			}
		}
	}
	return false
}

// scan returns the first unmatched request of c that rm answers correctly
// (strict: without the tolerances, so that a reply goes to a request that
// takes it only by a tolerance after those that take it plainly), marked
// matched, or -1. While the batch's budget lasts it looks at all of c;
// after, at a few candidates, which keeps huge batches linear.
func (b *batchMatch) scan(c *candidates, rm *wire.Message, strict bool, j int32) int {
	idx := c.unmatched(b.reqs)
	judged := 0
	for k, i := range idx {
		if b.budget > 0 {
			b.budget--
		} else if k >= scanLimit || judged >= pickTries {
			break
		}
		q := &b.reqs[i]
		if q.matched {
			continue
		}
		judged++
		if b.fits(int(i), rm, j, strict) {
			q.matched, q.by = true, j
			return int(i)
		}
	}
	return -1
}

// fits reports whether rm, reply j, answers request i correctly (strict:
// without the tolerances). A stream's caller judges its frames as a whole
// (b.fit: a frame may be a batch, or a reply an array, and the envelope
// counts there); a strict fit then needs the request's own strict verdict
// too, but for a batch or [], which the caller alone can judge.
func (b *batchMatch) fits(i int, rm *wire.Message, j int32, strict bool) bool {
	q := &b.reqs[i]
	if b.fit == nil {
		return q.fits(rm, strict)
	}
	if !b.fit(i, b.sc.pend[j].k) {
		return false
	}
	return !strict || q.class == Batch || q.class == EmptyBatch || q.fits(rm, true)
}

// judgePair pairs rm, reply j, with request i and records what judging
// them finds.
func (b *batchMatch) judgePair(i int, rm *wire.Message, j int32) {
	q := &b.reqs[i]
	q.matched, q.by = true, j
	if s, _ := q.verdict(rm, false); b.found(s) {
		_, note := q.judge(rm)
		b.note = "element " + strconv.Itoa(i) + idSuffix(q) + ": " + note
	}
}

// found records the rules s and reports whether the caller should set the
// note: the batch's one note describes the first finding with the most
// severe rule (MostSevere, the rule rpcfuzz names the finding after), so
// that a batch_missing_reply is not explained by another element's extra
// reply; the others are counted. Notes are built only when found says so,
// which keeps a clean judgement free of allocations.
func (b *batchMatch) found(s check.Set) bool {
	if s == 0 {
		return false
	}
	b.rules |= s
	b.notes++
	if r := check.MostSevere(s); b.notes == 1 || r.Rank() < b.noted.Rank() {
		b.noted = r
		return true
	}
	return false
}

// noteText returns the note of a batch judged with the reply array's own
// envelope rules env: the note found kept, or the array's envelope when
// that names the finding.
func (b *batchMatch) noteText(env check.Set, r *wire.Message) string {
	if b.notes == 0 || env != 0 && check.MostSevere(env).Rank() < b.noted.Rank() {
		return envelopeNote(env, r) + more(b.notes)
	}
	return b.note + more(b.notes-1)
}

// more counts, for a note, the n other findings it does not describe.
func more(n int) string {
	if n <= 0 {
		return ""
	}
	return " (and " + strconv.Itoa(n) + " more)"
}
