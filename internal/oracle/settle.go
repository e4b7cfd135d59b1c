package oracle

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

// settle settles rm, reply j, which no request took as a correct answer:
// it is judged against the request it most likely answers (answer), or
// found a second reply to a request (second) or a reply to nothing
// (stray), or a stream's caller knows it for a late reply of an earlier
// exchange (late). The same order serves a batch's replies and a
// stream's, so that one fault gets one rule wherever it happens: a reply
// whose id the server changed is judged against the request left without
// a reply (unknown_id), not counted as a reply to nothing and a missing
// reply as well.
func (b *batchMatch) settle(rm *wire.Message, state uint8, j int32) {
	switch state {
	case pendID:
		b.settleID(rm, j)
	case pendNullValue, pendNullError, pendBadID:
		b.settleNull(rm, state, j)
	case pendArray:
		b.settleArray(rm, j)
	default:
		if !b.late(j) {
			b.blameRequired(rm, state, j)
		}
	}
}

// settleID settles rm, reply j, a response with an id: it is judged
// against a free request of its id; else, when the caller knows it for a
// late reply, set aside; else judged against a free request whose id it
// carries as the other JSON type (id_type_changed), or one of its id
// freed by moving an id-less reply along (reclaim). With every request of
// its id answered it is a second reply; an id no request has goes to the
// first required request without a reply (blameRequired).
func (b *batchMatch) settleID(rm *wire.Message, j int32) {
	var out [numCategories]candidates
	groups := b.groups(rm, b.idKey(rm), &out)
	for g := range groups {
		if i := groups[g].first(b.reqs); i >= 0 {
			b.answer(i, rm, j)
			return
		}
	}
	if b.late(j) {
		return
	}
	if i := b.dupIDOwner(rm); i >= 0 {
		b.answer(i, rm, j)
		return
	}
	if i := b.typeChanged(rm); i >= 0 {
		b.answer(i, rm, j)
		return
	}
	for g := range groups {
		if i := b.reclaim(groups[g].idx); i >= 0 {
			b.answer(i, rm, j)
			return
		}
	}
	if len(groups) > 0 {
		b.second(int(groups[0].idx[0]), rm, j)
		return
	}
	if i := b.looseOwner(rm); i >= 0 {
		b.second(i, rm, j)
		return
	}
	b.blameRequired(rm, pendID, j)
}

// settleNull settles rm, reply j, a response with id null (or with an id
// no request can have, state pendBadID): it is judged against the first
// request only id null can answer, in the input's order, that has no
// reply or whose reply can move to another request it answers (so that
// of "" and [], both owed -32600 with id null, the "" is the one a -32700
// got wrong whichever came first; firstOnlyNull); else, when the caller knows it
// for a late reply, set aside; else judged against the first free request
// of the other tiers, or one of the first two tiers freed by moving its
// reply along. A request that needs a response with id null may hold one
// that answers another request too ([{"jsonrpc":"2.0","method":""},[1]]
// answered [{id null, -32600}, {id null, -32700}]: the -32600 answers
// either, the -32700 only the [1], wrongly). Last, it goes to the first
// required request without a reply (blameRequired).
func (b *batchMatch) settleNull(rm *wire.Message, state uint8, j int32) {
	if i := b.firstOnlyNull(); i >= 0 {
		b.answer(i, rm, j)
		return
	}
	if b.late(j) {
		return
	}
	if i := b.firstInTiers(rm, tierAlsoNull, numNullTiers); i >= 0 {
		b.answer(i, rm, j)
		return
	}
	for tier := range tierOptional {
		for _, cat := range categoryOrder(rm) {
			if i := b.reclaim(b.lists[nullList(tier, cat)].idx); i >= 0 {
				b.answer(i, rm, j)
				return
			}
		}
	}
	b.blameRequired(rm, state, j)
}

// settleArray settles rm, reply j, an array on a stream: judged against
// the first batch without a reply (not [] while another is left); else,
// when the caller knows it for a late reply, set aside; else a second
// reply to a batch, or judged against the first required frame without a
// reply.
func (b *batchMatch) settleArray(rm *wire.Message, j int32) {
	batches := &b.lists[listBatch]
	if i := b.batchOwning(j); i >= 0 {
		b.answer(i, rm, j)
		return
	}
	if i := b.firstNonEmptyBatch(); i >= 0 {
		b.answer(i, rm, j)
		return
	}
	if i := batches.first(b.reqs); i >= 0 {
		b.answer(i, rm, j)
		return
	}
	if b.late(j) {
		return
	}
	if len(batches.idx) > 0 {
		b.second(int(batches.idx[0]), rm, j)
		return
	}
	b.blameRequired(rm, pendArray, j)
}

// batchOwning returns the first batch without a reply that array j
// shows it is for (Judges.Owns), or -1: ([[],{}] and [{"id":0,…},0],
// answered [-32601 with id 0, -32700] and [-32700, -32600], neither
// correct, gave the first array to [[],{}] by the input's order).
func (b *batchMatch) batchOwning(j int32) int {
	if b.judges == nil || b.judges.Owns == nil {
		return -1
	}
	for n, i := range b.lists[listBatch].unmatched(b.reqs) {
		if n >= scanLimit {
			break
		}
		if q := &b.reqs[i]; !q.matched && q.class != EmptyBatch && b.judges.Owns(int(i), b.sc.pend[j].k) {
			return int(i)
		}
	}
	return -1
}

// firstNonEmptyBatch returns the first batch without a reply that is not
// [] (whose answer is a single error, never an array), or -1: an array
// that answers no batch correctly is more likely a batch's than []'s
// ([], [0] and 0 answered -32600, [-32700] and -32700: the array went to
// [] and the -32700 to [0]).
func (b *batchMatch) firstNonEmptyBatch() int {
	for _, i := range b.lists[listBatch].unmatched(b.reqs) {
		if q := &b.reqs[i]; !q.matched && q.class != EmptyBatch {
			return int(i)
		}
	}
	return -1
}

// blameRequired judges rm, reply j, against the first required request
// without a reply, in the input's order (the order a sequential server
// would have answered in, whatever order a concurrent one chose), or
// finds it a reply to nothing.
func (b *batchMatch) blameRequired(rm *wire.Message, state uint8, j int32) {
	for ; b.freeAt < len(b.reqs); b.freeAt++ {
		// (A request matched stays matched while replies are settled,
		// so the requests before freeAt need no second look.)
		if i := b.freeAt; !b.reqs[i].matched && b.required(i) {
			b.answer(i, rm, j)
			return
		}
	}
	b.stray(rm, state, j)
}

// firstOnlyNull returns the first request only id null can answer
// (tierOnlyNull), in the input's order, that has no reply, or whose reply
// can move to another request it answers correctly (then moved); -1 if
// none. Moves are looked for among a bounded number of requests before
// the first free one.
func (b *batchMatch) firstOnlyNull() int {
	free := -1
	for cat := range numCategories {
		if i := b.lists[nullList(tierOnlyNull, byte(catInvalid+cat))].first(b.reqs); i >= 0 && (free < 0 || i < free) {
			free = i
		}
	}
	var buf [numCategories * 8]int32
	movable := buf[:0]
	for cat := range numCategories {
		c := &b.lists[nullList(tierOnlyNull, byte(catInvalid+cat))]
		for k, i := range c.idx {
			if k >= 8 || free >= 0 && int(i) >= free {
				break
			}
			movable = append(movable, i)
		}
	}
	slices.Sort(movable)
	for _, i := range movable {
		if b.reqs[i].matched && b.budget > 0 && b.moveAway(i) {
			return int(i)
		}
	}
	return free
}

// firstInTiers returns the first free request of the null tiers [from,
// to) an id-null response rm may answer, by tier and then category in
// rm's order, or -1.
func (b *batchMatch) firstInTiers(rm *wire.Message, from, to int) int {
	order := categoryOrder(rm)
	for tier := from; tier < to; tier++ {
		for _, cat := range order {
			if i := b.lists[nullList(tier, cat)].first(b.reqs); i >= 0 {
				return i
			}
		}
	}
	return -1
}

// required reports whether silence about request i breaks a rule: the
// caller's judgement for a stream's frames (a frame may be a batch), the
// request's own for a batch element. Asked once per request.
func (b *batchMatch) required(i int) bool {
	q := &b.reqs[i]
	if q.need == 0 {
		var r bool
		if b.judges != nil {
			r = b.judges.Required(i)
		} else {
			r = q.required()
		}
		q.need = 1
		if r {
			q.need = 2
		}
	}
	return q.need == 2
}

// late reports whether a stream's caller sets reply j aside as a late
// reply of an earlier exchange, and records it so.
func (b *batchMatch) late(j int32) bool {
	if b.judges == nil || b.judges.Late == nil {
		return false
	}
	k := b.sc.pend[j].k
	if !b.judges.Late(k) {
		return false
	}
	b.fates[k] = Fate{Kind: Late, Of: -1}
	return true
}

// answer pairs rm, reply j, with request i as the reply it most likely
// is, though it does not answer i correctly, and records what judging
// them finds.
func (b *batchMatch) answer(i int, rm *wire.Message, j int32) {
	q := &b.reqs[i]
	q.matched, q.by, q.blamed = true, j, true
	if b.judges != nil {
		return // the stream's caller judges the pair
	}
	if s, _ := q.verdict(rm, false); b.found(s) {
		_, note := q.judge(rm)
		b.note = "element " + strconv.Itoa(i) + idSuffix(q) + ": " + note
	}
}

// second records rm, reply j, as a second reply to request i.
func (b *batchMatch) second(i int, rm *wire.Message, j int32) {
	k := b.sc.pend[j].k
	if b.judges != nil {
		b.fates[k] = Fate{Kind: Second, Of: i}
		return
	}
	if b.found(check.Set(0).Add(check.DuplicateReply)) {
		b.note = "reply element " + strconv.Itoa(k) + ": a second response for id " + short(rm.ID)
	}
}

// stray records rm, reply j, as a reply that answers no request.
func (b *batchMatch) stray(rm *wire.Message, state uint8, j int32) {
	k := b.sc.pend[j].k
	if b.judges != nil {
		if i := b.silentNotification(rm); i >= 0 {
			// On a stream, a reply without an id that no request takes
			// is judged against a notification left without a reply (a
			// reply to nothing would say less than the server did: it
			// answered as many messages as the input had, one of them a
			// notification).
			b.answer(i, rm, j)
			return
		}
		b.fates[k] = Fate{Kind: Stray, Of: -1}
		return
	}
	if state == pendBadID && !(b.notifs && rm.IDKind == wire.IDAbsent) {
		return // Envelope flagged the id; that is all there is to say
	}
	if rule, why := strayRule(rm, b.notifs, b.allIDs, true); b.found(check.Set(0).Add(rule)) {
		b.note = "reply element " + strconv.Itoa(k) + " (id " + short(rm.ID) + ")" + why
	}
}

// dupIDOwner returns a request whose "id" member is repeated, one of them
// holding rm's id, that has no reply or one without an id that can move
// to another request (then moved); -1 if none. A server that reads the
// last of repeated members echoes that id ({"id":null,"id":0} answered
// with id 0): the reply is that request's, whatever the oracle says of
// its id, not a reply to the first request left without one.
func (b *batchMatch) dupIDOwner(rm *wire.Message) int {
	for k, i := range b.lists[listAnyID].idx {
		if k >= scanLimit {
			break
		}
		q := &b.reqs[i]
		if !holdsID(q.raw, rm.ID) {
			continue
		}
		if !q.matched {
			return int(i)
		}
		if by := &b.sc.pend[q.by]; by.idKind != wire.IDNumber && by.idKind != wire.IDString && b.budget > 0 && b.moveAway(i) {
			return int(i)
		}
	}
	return -1
}

// holdsID reports whether the object raw has an "id" member whose value
// is id, byte for byte.
func holdsID(raw, id []byte) bool {
	for rest := raw; ; {
		k := bytes.Index(rest, []byte(`"id"`))
		if k < 0 || len(id) == 0 {
			return false
		}
		rest = rest[k+4:]
		v := rest[wire.SkipSpace(rest, 0):]
		if len(v) == 0 || v[0] != ':' {
			continue
		}
		v = v[1:]
		v = v[wire.SkipSpace(v, 0):]
		if bytes.HasPrefix(v, id) && (len(v) == len(id) || v[len(id)] == ',' || v[len(id)] == '}' || v[len(id)] == ' ' || v[len(id)] == '\t' || v[len(id)] == '\n' || v[len(id)] == '\r') {
			return true
		}
	}
}

// silentNotification returns the first notification without a reply a
// reply rm without an id may be judged against, or -1.
func (b *batchMatch) silentNotification(rm *wire.Message) int {
	if rm.IDKind == wire.IDNumber || rm.IDKind == wire.IDString || rm.Kind == wire.KindBatch {
		return -1
	}
	for ; b.quietAt < len(b.reqs); b.quietAt++ {
		// (Requests before quietAt are matched or no notification: the
		// walk is linear over all the strays of an exchange.)
		if q := &b.reqs[b.quietAt]; !q.matched && q.class == Notification {
			return b.quietAt
		}
	}
	return -1
}

// strayRule names a reply that answers no request of an input: a reply to
// a notification when the input had one (whatever its id: a server that
// answers notifications makes ids up as well as sending null); id null
// although every request had a readable id; else a reply to nothing
// (batch_extra_reply in a batch, unknown_id on a stream).
func strayRule(rm *wire.Message, notifs, allIDs, inBatch bool) (check.Rule, string) {
	switch {
	case notifs:
		return check.ReplyToNotification, " answers no request: a notification was answered"
	case rm.IDKind == wire.IDNull && allIDs:
		return check.UnexpectedNullID, ": every request had a readable id"
	case inBatch:
		return check.BatchExtraReply, " answers no request of the batch"
	}
	return check.UnknownID, " answers no request of the input"
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
		if b.moveAway(i) {
			return int(i)
		}
	}
	return -1
}

// moveAway moves the reply of request i, which has one, to another
// request it answers correctly (an augmenting path that does not come
// back to i), and leaves i without a reply; false when there is no such
// path within the budget.
func (b *batchMatch) moveAway(i int32) bool {
	q := &b.reqs[i]
	b.stamp++
	q.stamp = b.stamp // not a place for the reply to move to
	other := b.sc.pend[q.by].message()
	if !b.augment(&other, q.by, augmentDepth) {
		return false
	}
	q.matched = false
	return true
}

// reassign gives a required request left without a response one that
// went to a request that needs none and took it only by a tolerance (a
// notification with invalid UTF-8 may be refused) where the response
// could be the required one's: an error with id null for an invalid
// request, or a response with its id; or one that echoes its id of a
// wrong type (false), wherever it went. Matching found no correct answer
// for the required request, so either way one is wrong; blaming the
// answer a request needed rather than its absence names what the server
// evidently did: [notification with invalid UTF-8, 1] answered [{id null,
// -32700}] answered the 1 with a wrong code (a parser reads the
// notification, and answers notifications with nothing), rather than the
// notification and not the 1. The work is bounded by the input's size.
func (b *batchMatch) reassign() {
	work := judgeBudget*len(b.reqs) + 256
	for i := range b.reqs {
		q := &b.reqs[i]
		if q.matched || !b.required(i) {
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
				!b.required(k) && q.mayBlame(&rm) && !b.fits(k, &rm, p.by, true); !move {
				continue
			}
			p.matched = false
			b.answer(i, &rm, p.by)
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

// looseOwner returns a request whose id float64 cannot hold exactly (0
// for 1e-999999999) and of which rm's id is a float64 echo, so that a
// reply left over with it is a second response to that request, not one
// to nothing; -1 if none. It looks at a bounded number of such requests.
func (b *batchMatch) looseOwner(rm *wire.Message) int {
	if rm.IDKind != wire.IDNumber {
		return -1
	}
	for k, i := range b.lists[listLoose].idx {
		if k >= scanLimit {
			break
		}
		if wire.CompareIDs(b.reqs[i].m.ID, rm.ID, true) == wire.IDEqual {
			return int(i)
		}
	}
	return -1
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
