package oracle

import (
	"strconv"
	"sync"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

// judgeBatch judges the reply to a non-empty batch (§6): an array with one
// response for every element that needs one, paired with the elements as
// docs/oracle.md says; nothing when no element needs one.
func judgeBatch(input, reply []byte, r *wire.Message) (check.Set, string) {
	sc := scratchPool.Get().(*batchScratch)
	defer sc.release()
	reqs := sc.requests(input)
	if r == nil || r.Kind == wire.KindBatch && r.BatchLen == 0 {
		return judgeBatchSilence(reqs, r)
	}
	env := check.Envelope(r)
	if env.Has(check.InvalidJSON) {
		return env, "the reply to a batch is not JSON"
	}
	if r.Kind != wire.KindBatch {
		allNotifs := true
		for i := range reqs {
			allNotifs = allNotifs && reqs[i].class == Notification
		}
		switch {
		case r.Kind == wire.KindError && r.IDKind == wire.IDNull && refusableWhole(input, reqs):
			return env, envelopeNote(env, r)
		case allNotifs:
			return check.EnvelopeToNotification(r).Add(check.ReplyToNotification), "a batch of only notifications was answered with " + describe(r)
		}
		return env.Add(check.BatchNotArray), "a batch of " + strconv.Itoa(len(reqs)) + " answered with a single object: " + describe(r)
	}
	b := newBatchMatch(sc, r.BatchLen, nil, nil)
	b.pair(reply)
	b.missingIDs()
	for i := range reqs {
		q := &reqs[i]
		switch {
		case q.matched:
		case q.required():
			if b.found(check.Set(0).Add(check.BatchMissingReply)) {
				b.note = "no response for element " + strconv.Itoa(i) + idSuffix(q)
			}
		case q.nullIDSilence():
			// Left out as a notification would be: the warning.
			if b.found(check.Set(0).Add(check.NullIDUnanswered)) {
				b.note = "no response for element " + strconv.Itoa(i) + ", a request with id null; JSON-RPC 2.0 makes it a request, not a notification (JSON-RPC 1.0 did)"
			}
		}
	}
	return b.rules | env, b.noteText(env, r)
}

// missingIDs records invalid_envelope for each reply without an id member
// that went to a request: in a batch with notifications, collect left the
// missing id to the pairing, since a reply to nothing there is
// reply_to_notification alone (stray), and a notification has no id to
// echo.
func (b *batchMatch) missingIDs() {
	if !b.notifs {
		return
	}
	for i := range b.reqs {
		q := &b.reqs[i]
		if !q.matched {
			continue
		}
		if p := &b.sc.pend[q.by]; p.idKind == wire.IDAbsent && b.found(check.Set(0).Add(check.InvalidEnvelope)) {
			b.note = "reply element " + strconv.Itoa(p.k) + ": missing_id"
		}
	}
}

// judgeBatchSilence judges silence (r nil) or [] as the reply to a batch:
// right when no element needs a reply, except that §6 forbids [] then too.
func judgeBatchSilence(reqs []request, r *wire.Message) (check.Set, string) {
	required, readable := 0, false
	for i := range reqs {
		if q := &reqs[i]; q.required() {
			required++
			readable = readable || q.readableID() && q.m.IDKind != wire.IDNull
		}
	}
	if r != nil {
		env := check.Envelope(r)
		if required == 0 {
			return env.Add(check.ReplyToNotification), "a batch no element of which needs a reply answered with []; the server MUST NOT return an empty array"
		}
		return env.Add(check.BatchMissingReply), "a batch of " + strconv.Itoa(len(reqs)) + " answered with []"
	}
	switch {
	case required == 0:
		for i := range reqs {
			if reqs[i].nullIDSilence() {
				return check.Set(0).Add(check.NullIDUnanswered), "no reply to a batch whose requests with id null need one; JSON-RPC 2.0 makes them requests, not notifications (JSON-RPC 1.0 did)"
			}
		}
		return 0, ""
	case readable:
		return check.Set(0).Add(check.Hang), "no reply to a batch of " + strconv.Itoa(len(reqs)) + " with " + strconv.Itoa(required) + " requests needing one"
	}
	return check.Set(0).Add(check.WrongErrorCode), "no reply to a batch of " + strconv.Itoa(len(reqs)) + " invalid requests; want an array of -32600 errors with id null"
}

// refusableWhole reports whether a server may answer the batch with one
// error for all of it: the batch is over a common size cap, or one of its
// elements has a trait a parser or a typed decoder may refuse (then the
// whole frame fails to read, and §6 wants a single response).
func refusableWhole(input []byte, reqs []request) bool {
	if len(reqs) > batchCapEdge || len(input) > sizeEdge {
		return true
	}
	for i := range reqs {
		q := &reqs[i]
		if q.analyse()&refusable != 0 {
			return true
		}
	}
	return false
}

// batchScratch is the memory one batch judgement works in, pooled so that
// judging allocates nothing once the pool is warm.
type batchScratch struct {
	reqs  []request
	pend  []pendingReply
	index idIndex
	match batchMatch
	key   []byte // the key being looked up
}

var scratchPool = sync.Pool{New: func() any { return new(batchScratch) }}

// requests splits the batch input into its elements, scanned.
func (s *batchScratch) requests(input []byte) []request {
	it, _ := wire.ArrayElements(input)
	s.reqs = s.reqs[:0]
	for {
		elem, ok := it.Next()
		if !ok {
			break
		}
		s.reqs = append(s.reqs, request{})
		s.reqs[len(s.reqs)-1].init(elem, 1, len(input))
	}
	return s.reqs
}

// release drops the references to the judged frames and returns s to the
// pool, unless a huge batch made it too big to keep.
func (s *batchScratch) release() {
	if cap(s.reqs) > maxPooled || cap(s.pend) > maxPooled || cap(s.index.keys) > sizeEdge || cap(s.key) > sizeEdge {
		return
	}
	clear(s.reqs)
	clear(s.pend)
	s.reqs, s.pend = s.reqs[:0], s.pend[:0]
	lists := s.match.lists
	s.match = batchMatch{}
	for k := range lists {
		s.match.lists[k].idx = lists[k].idx[:0]
	}
	scratchPool.Put(s)
}

// pendingReply is a response of the reply array, kept for the later passes
// of the pairing: the fields of its wire.Message that judging it needs.
type pendingReply struct {
	id      []byte
	code    int64
	k       int // its index in the reply array
	kind    wire.Kind
	idKind  wire.IDKind
	hasCode bool
	state   uint8
}

// message returns the reply as judging takes it.
func (p *pendingReply) message() wire.Message {
	return wire.Message{Kind: p.kind, IDKind: p.idKind, ID: p.id, Code: p.code, HasCode: p.hasCode}
}

// pendingReply states.
const (
	pendID        uint8 = iota // an id no element took cleanly yet
	pendNullValue              // a result with id null
	pendNullError              // an error with id null
	pendBadID                  // a response whose id is missing or of a wrong type
	pendOther                  // in a stream, anything but a response or an array
	pendArray                  // in a stream, an array (the answer to a batch)
	pendDone                   // paired
)

// The candidate lists of a batch: requests a reply may be paired with
// besides those the id index finds.
const (
	listAnyID = iota // "id" repeated: any id may answer
	listLoose        // ids float64 cannot hold: a rounded echo may answer
	listEdgy         // requests with an edge, which a tolerance may let take any reply
	listBatch        // a stream's frames an array may answer (batches)
	listNull         // the first of numNullTiers*numCategories lists by tier and category, see nullList
	numLists  = listNull + numNullTiers*numCategories
)

// The tiers of requests a response with id null may answer, in the order
// such a response looks for its request.
const (
	tierOnlyNull = iota // required, and only id null can answer (the id is unreadable)
	tierAlsoNull        // required invalid requests with a readable id, which id null may answer too
	tierOptional        // not required, but may be answered
	numNullTiers
)

// keyed reports whether q has a readable id other than null: the id a
// response that answers it carries.
func (q *request) keyed() bool { return q.readableID() && q.m.IDKind != wire.IDNull }

// nullTier returns the tier of q among the requests a response with id
// null looks for, or -1 when such a response comes to q only by a
// tolerance. required says whether silence about q breaks a rule.
func (q *request) nullTier(required bool) int {
	switch {
	case required && !q.keyed():
		return tierOnlyNull
	case required && (q.class == InvalidRequest || q.class == InvalidParams):
		return tierAlsoNull
	case !required && q.class != Notification:
		return tierOptional
	}
	return -1
}

// nullList returns the candidate list of a tier and category.
func nullList(tier int, cat byte) int { return listNull + tier*numCategories + int(cat-catInvalid) }

// The categories of requests, by the replies they expect, so that a reply
// looks for its request where it fits best: an error -32600 or -32700 among invalid
// requests first, a result among calls. Each class comes plain, then with
// an edge (catFlexible added): a request a tolerance lets take other
// replies too is left for the reply that only it takes.
const (
	catInvalid    = '0'
	catParams     = '2'
	catCall       = '4'
	catFlexible   = 1
	catAnyID      = '6'
	numCategories = 7
)

// typeChangedKey starts the index keys of string ids that read as numbers,
// indexed under the number too, to find id_type_changed.
const typeChangedKey = 'T'

// batchMatch pairs the elements of a reply array with the batch's requests.
type batchMatch struct {
	sc     *batchScratch
	reqs   []request
	lists  [numLists]candidates
	starts [numLists]int32 // the lists' matched prefixes
	edgy   bool            // lists[listEdgy] is built
	notifs bool            // the batch holds notifications
	allIDs bool            // every element had a readable non-null id
	budget int             // judgements left before pairing gets bounded
	stamp  uint32          // the augment call in progress
	rules  check.Set
	note   string
	notes  int
	noted  check.Rule // the most severe rule of the finding note describes
	// A stream's pairing (Pairing) sets judges: its frames are judged by
	// the caller, and the pairing records where each reply went (fates,
	// by reply number) instead of judging.
	judges  *Judges
	fates   []Fate
	freeAt  int  // requests before it are all matched or not required (blameRequired)
	fitOnly bool // pair correct answers only: nothing is settled (Pairing.Fitting)
	// needed: pair replies without an id with requests whose silence
	// breaks a rule only (see pairReplies).
	needed bool
	// quietAt: the requests before it are matched or no notification
	// (silentNotification).
	quietAt int
	// complete: a batch's reply array has as many elements as the batch
	// (atPosition).
	complete bool
}

// newBatchMatch indexes sc.reqs for a reply array of replies elements
// (for a stream's replies, with the caller's judges, the fates recorded in
// fates).
func newBatchMatch(sc *batchScratch, replies int, judges *Judges, fates []Fate) *batchMatch {
	b := &sc.match
	lists := b.lists
	*b = batchMatch{sc: sc, reqs: sc.reqs, allIDs: true, budget: judgeBudget*(len(sc.reqs)+replies) + 256, judges: judges, fates: fates,
		complete: judges == nil && replies == len(sc.reqs)}
	for k := range b.lists {
		b.lists[k] = candidates{idx: lists[k].idx[:0], start: &b.starts[k], jump: lists[k].jump[:0], jumps: true}
	}
	x := &sc.index
	x.reset()
	for i := range b.reqs {
		q := &b.reqs[i]
		if q.class == Notification {
			b.notifs = true
		}
		readable := q.keyed()
		if !readable {
			b.allIDs = false
		}
		if q.edges&edgeDupID != 0 {
			b.lists[listAnyID].add(i)
		}
		// Whether a batch element without an id needs a reply may take a
		// walk to tell; it counts as needing one here, where only the
		// order of the search depends on it. A stream's frame is asked of
		// the caller (a batch of notifications needs none).
		required := q.needsReply() && !q.silenceTolerated(false)
		if judges != nil {
			required = b.required(i)
		}
		if q.takesArray && (required || judges == nil) {
			b.lists[listBatch].add(i)
		}
		if tier := q.nullTier(required); tier >= 0 {
			b.lists[nullList(tier, category(q))].add(i)
		}
		if !readable {
			continue
		}
		if q.looseNumericID() {
			b.lists[listLoose].add(i)
		}
		x.add(category(q), q.m.ID, int32(i))
	}
	if judges != nil {
		// An array goes to a frame that must have one before a frame a
		// tolerance lets take one ([a notification a server may refuse,
		// [null]] answered with one array gave it to the notification,
		// and called [null] unanswered). (Only a stream's replies hold
		// arrays to pair.)
		for i := range b.reqs {
			if b.reqs[i].takesArray && !b.required(i) {
				b.lists[listBatch].add(i)
			}
		}
	}
	x.sort()
	b.budget += repeatWork(x.repeats, b.lists[nullList(0, catInvalid):])
	return b
}

// repeatWork is the pairing work a batch's shared ids may take beyond the
// linear budget: a reply with an id that g requests share may have to try
// each of them, and move the replies of each, before it is left over, so
// g requests of one id get about g² judgements (repeats holds the sum of
// g*(g-1) over the ids; the requests an id-null reply may answer count as
// one id more, in the null lists). Blaming a reply before every request
// of its id was tried names a server's correct answer (two elements with
// id 0 answered in another order) a duplicate or a missing reply. The
// work is capped at maxRepeatWork so that a huge batch of one id stays
// fast, at the price of a plainer pairing there.
func repeatWork(repeats int, nullLists []candidates) int {
	nulls := 0
	for k := range nullLists {
		nulls += len(nullLists[k].idx)
	}
	return min(repeatFactor*(repeats+nulls*(nulls-1)), maxRepeatWork)
}

// category returns the category of q. Its edges from the scan make it
// flexible; those only a walk finds are not looked for, to keep the
// common case from walking every element.
func category(q *request) byte {
	var cat byte
	switch {
	case q.edges&edgeDupID != 0:
		return catAnyID
	case q.class == InvalidRequest:
		cat = catInvalid
	case q.class == InvalidParams:
		cat = catParams
	default:
		cat = catCall
	}
	if q.edges != 0 {
		cat += catFlexible
	}
	return cat
}

// categoryOrder returns the categories in the order a reply looks for its
// request: an error -32600 or -32700 to invalid requests first, -32602 to
// requests with scalar params, anything else to calls. A -32700 says the
// server could not read a request, and an invalid request is one it could
// not read, a call one it could: of [call with id null, invalid request
// with id null] answered [{id null, -32700}] (jrpc2, which answers
// invalid requests -32700 and takes id null for a notification), the
// -32700 is the invalid request's wrong code, not the call's.
func categoryOrder(rm *wire.Message) [numCategories]byte {
	const f = catFlexible
	switch {
	case rm.Kind == wire.KindError && rm.HasCode && (rm.Code == wire.CodeInvalidRequest || rm.Code == wire.CodeParseError):
		return [...]byte{catInvalid, catInvalid + f, catParams, catParams + f, catCall, catCall + f, catAnyID}
	case rm.Kind == wire.KindError && rm.HasCode && rm.Code == wire.CodeInvalidParams:
		return [...]byte{catParams, catParams + f, catCall, catCall + f, catInvalid, catInvalid + f, catAnyID}
	}
	return [...]byte{catCall, catCall + f, catParams, catParams + f, catInvalid, catInvalid + f, catAnyID}
}
