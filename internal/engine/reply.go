package engine

import (
	"encoding/json"
	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/wire"
)

// judge handles every frame that arrives on one connection (or in one HTTP
// body): it matches the reply to its request and records the outcome and
// any broken rules. One judge per receiving goroutine.
type judge struct {
	r   *run
	rec *stats.Recorder
	msg wire.Message
	// sent says what was sent on this connection: an id-null reply can
	// only answer a notification if one was sent, and a non-array reply
	// to a batch is only recognisable if batches were sent.
	sent *connCounters
	// submitted counts samples this judge offered per rule; past the
	// aggregator's limit it stops offering, so a server that breaks a rule
	// in every reply does not cost a lock per reply.
	submitted [check.NumRules]int
	// serverMethods counts requests and notifications from the server by
	// method, merged into the result when the judge's goroutine ends.
	serverMethods map[string]uint64
	// peer answers the server's requests and takes the replies to the
	// profile layer's own requests; nil for plain HTTP.
	peer peer
	// era is the era the connection speaks, for the profile's rules; nil
	// means the run's era, fixed before any reply came.
	era *eraBox
	// reuse is the connection's id-reuse probes (nil: none possible).
	reuse *idReuse
	// messagesOffered counts error messages this judge offered per code;
	// past stats.MaxMessagesPerCode it stops offering, as with samples.
	messagesOffered map[int64]int
	// pool is the connection slot's closed-loop credits, which answered
	// requests go back to (nil: the run's tokens, if any).
	pool *credits
	// With hold set (a stream reader whose stream tells when its next Recv
	// would wait), answered requests are settled in groups: their samples
	// recorded and their in-flight slots released together, at most
	// settleEvery at a time and always before the reader waits, since a
	// release may be what lets the writer send the requests the server's
	// next replies answer. Every reply of a group came in the same read, so
	// they share one release time.
	hold    bool
	owed    int
	owedAt  int64
	samples []stats.Sample
	// strays holds the elements of the reply array being judged that
	// answer no request by their id, for batch's second pass.
	strays [][]byte
}

// settleEvery bounds how many answered requests a judge holds before it
// settles them, so a writer on another core gets its credits back soon.
const settleEvery = 64

// answered records the sample of an answered request and releases its
// in-flight slot at time now, at once or, with hold, with its group.
func (j *judge) answered(s stats.Sample, now int64) {
	if !j.hold {
		j.rec.Record(s)
		j.r.release(j.pool, 1, now)
		return
	}
	if j.owed > 0 && now != j.owedAt {
		j.settle()
	}
	if j.samples == nil {
		j.samples = make([]stats.Sample, 0, settleEvery)
	}
	j.samples = append(j.samples, s)
	j.owed++
	j.owedAt = now
	if j.owed == settleEvery {
		j.settle()
	}
}

// settle records and releases the answered requests the judge holds.
func (j *judge) settle() {
	if j.owed == 0 {
		return
	}
	j.rec.RecordAll(j.samples)
	j.samples = j.samples[:0]
	j.r.release(j.pool, j.owed, j.owedAt)
	j.owed = 0
}

// peer is the profile layer's side of a connection, as the judge needs it.
type peer interface {
	// answerServer answers a request the server sent.
	answerServer(m *wire.Message)
	// control takes a reply to one of the profile layer's own requests
	// and reports whether it was one.
	control(m *wire.Message, frame []byte) bool
	// emptyBatchReply takes the reply to the empty-batch probe.
	emptyBatchReply(m *wire.Message, frame []byte) bool
}

func (j *judge) eraNow() profile.Era {
	if j.era != nil {
		return j.era.load()
	}
	return j.r.era
}

// maxServerMethods bounds the distinct server method names counted; the
// rest are counted together, so a server cannot grow the map without end.
const maxServerMethods = 256

func (j *judge) countServerMethod(raw []byte) {
	if j.serverMethods == nil {
		j.serverMethods = map[string]uint64{}
	}
	name, ok := wire.Unquote(nil, raw)
	key := string(name)
	if !ok {
		key = "(no method name)"
	}
	if _, seen := j.serverMethods[key]; !seen && len(j.serverMethods) >= maxServerMethods {
		key = "(other)"
	}
	j.serverMethods[key]++
}

// finish hands what the judge counted locally to the run's aggregator.
func (j *judge) finish() {
	j.settle()
	if len(j.serverMethods) > 0 {
		j.r.agg.AddServerMethods(j.serverMethods)
	}
}

// frame judges one received frame. A reply array is judged element by
// element, then as the answer to one batch: every request of the batch must
// be answered in it (in any order), and nothing else.
func (j *judge) frame(tb *pending.Table, frame []byte, now int64) {
	wire.Scan(frame, &j.msg)
	if j.peer != nil && j.peer.emptyBatchReply(&j.msg, frame) {
		return
	}
	if j.msg.Kind != wire.KindBatch {
		j.one(tb, frame, now, nil)
		return
	}
	if j.msg.BatchLen == 0 {
		// An empty array answers nothing; JSON-RPC says a server must not send one.
		j.violations(check.Set(0).Add(check.BatchMissingReply), j.r.unmatched, frame)
		return
	}
	j.batch(tb, frame, now)
}

// batch judges a reply array in two passes, so that one fault gets one
// rule (the table in README.md): first every element whose id is one of
// ours, which also tells which batch the array answers; then the elements
// that answer no request by their id (id null, no id, an id never sent),
// each judged against the first request of that batch still without a
// reply, or else found a reply to nothing. A request left without a reply
// after that is batch_missing_reply.
func (j *judge) batch(tb *pending.Table, frame []byte, now int64) {
	var b batchReply
	j.strays = j.strays[:0]
	for off := 0; ; {
		elem, next, ok := wire.NextElement(frame, off)
		if !ok {
			break
		}
		off = next
		wire.Scan(elem, &j.msg)
		if !j.one(tb, elem, now, &b) {
			j.strays = append(j.strays, elem)
		}
	}
	for k, elem := range j.strays {
		j.strays[k] = nil // (the frame's buffer is not kept past this call)
		wire.Scan(elem, &j.msg)
		j.stray(tb, elem, now, &b)
	}
	if b.first == 0 {
		return // no element answered a batch of ours: each was judged on its own
	}
	for id := b.free; id < b.first+uint64(b.n); id++ {
		if tb.Pending(id) {
			j.violations(check.Set(0).Add(check.BatchMissingReply), b.method, frame)
		}
	}
}

// batchReply is what judging a reply array learns about the batch it answers:
// the batch of its first element that answered a batched request.
type batchReply struct {
	first  uint64
	n      uint32
	method uint16
	// free is where the search for a request of the batch without a reply
	// goes on from: the ids before it have one.
	free uint64
}

// one judges the message already scanned into j.msg. b is nil for a frame
// on its own, and collects the batch for an element of a reply array. In an
// array, a response that answers no request by its id is left for stray
// (one returns false) until the batch the array answers is known.
func (j *judge) one(tb *pending.Table, frame []byte, now int64, b *batchReply) bool {
	m := &j.msg
	if m.Kind == wire.KindRequest || m.Kind == wire.KindNotification {
		j.rec.Record(stats.Sample{Kind: stats.ServerMessage, Method: j.r.unmatched})
		j.countServerMethod(m.Method)
		j.violations(j.r.prof.Check(m, j.eraNow()), j.r.unmatched, frame)
		if m.Kind == wire.KindRequest && j.peer != nil {
			j.peer.answerServer(m)
		}
		return true
	}
	if j.peer != nil && j.peer.control(m, frame) {
		return true
	}
	env := check.Envelope(m)
	if m.IDKind != wire.IDNumber && m.IDKind != wire.IDString {
		if m.Kind != wire.KindResult && m.Kind != wire.KindError {
			j.violations(j.rules(m, env), j.r.unmatched, frame) // no response, no id: env says what it is
			return true
		}
		if b != nil {
			return false
		}
		j.violations(j.r.prof.Check(m, j.eraNow())|j.noID(m, env, false), j.r.unmatched, frame)
		return true
	}
	if j.reuse.claim(m, tb) {
		return true // a reply the id-reuse probe drew: its own outcome, not the load's
	}
	e, v, typeChanged := tb.Resolve(m.ID)
	rules, method := j.rules(m, env), j.r.unmatched
	switch v {
	case pending.Answered:
		method = e.Method
		if typeChanged {
			rules = rules.Add(check.IDTypeChanged)
		}
		rules |= j.batchRules(e, b)
		j.answer(e, env != 0, frame, now)
	case pending.Late:
		j.rec.Record(stats.Sample{Kind: stats.Late, Method: j.r.unmatched})
	case pending.DuplicateReply:
		rules = rules.Add(check.DuplicateReply) // in an array too: a second reply, nothing more
	case pending.UnknownID:
		if b != nil {
			return false
		}
		rules = rules.Add(check.UnknownID)
	}
	j.violations(rules, method, frame)
	return true
}

// answer records request e answered by the reply in j.msg at time now: an
// invalid reply when invalid (a broken envelope, or an id that is not the
// request's), else by what it carries; then the call's expectations.
func (j *judge) answer(e pending.Entry, invalid bool, frame []byte, now int64) {
	m := &j.msg
	kind := stats.OK
	var code int64
	switch {
	case invalid || m.Kind != wire.KindResult && m.Kind != wire.KindError:
		// A broken envelope is an invalid reply, whatever it carries:
		// clients disagree on whether it succeeded.
		kind = stats.InvalidReply
	case m.Kind == wire.KindError && m.HasCode:
		kind, code = stats.RPCError, m.Code
	}
	j.answered(stats.Sample{Kind: kind, Method: e.Method, A: now - e.Intended, B: now - e.Sent, Code: code, Warmup: j.r.warm(e.Intended)}, now)
	if kind == stats.RPCError {
		j.offerErrorMessage(code, m.ErrMsg)
	}
	if kind == stats.InvalidReply {
		return // its rule says what is wrong with it; an expectation would count it twice
	}
	if c := &j.r.calls[e.Method]; c.Expect.Any() {
		if why := c.Expect.Check(m, e.Fingerprint); why != "" {
			j.expectFailed(e.Method, frame, why)
		}
	}
}

// stray judges an element of a reply array, scanned into j.msg, that
// answers no request by its id (id null, no id or one of a wrong type, an
// id never sent), once the batch the array answers is known (b): it goes
// to the first request of that batch still without a reply, which it
// most likely answers (the server lost or changed the id: unknown_id,
// unexpected_null_id, or the envelope's rule for a missing id), and that
// request is answered by an invalid reply, not also missing. With none
// left, it answers nothing: a reply to a notification when the batch had
// one (whatever id the server made up), unexpected_null_id for id null,
// batch_extra_reply for an id. An array none of whose elements carries an
// id of ours answers no batch rpcload can tell: each element is judged as
// a frame on its own. An id of a wrong type that answers nothing is
// invalid_envelope alone.
func (j *judge) stray(tb *pending.Table, elem []byte, now int64, b *batchReply) {
	m := &j.msg
	env := check.Envelope(m)
	rules := j.rules(m, env)
	readable := m.IDKind == wire.IDNumber || m.IDKind == wire.IDString
	if b.first == 0 {
		switch {
		case readable:
			rules = rules.Add(check.UnknownID)
		case m.IDKind != wire.IDOther:
			rules = j.r.prof.Check(m, j.eraNow()) | j.noID(m, env, true)
		}
		j.violations(rules, j.r.unmatched, elem)
		return
	}
	if e, ok := j.freeRequest(tb, b); ok {
		switch {
		case readable:
			rules = rules.Add(check.UnknownID)
		case m.IDKind == wire.IDNull:
			rules = rules.Add(check.UnexpectedNullID)
		}
		j.answer(e, true, elem, now)
		j.violations(rules, e.Method, elem)
		return
	}
	switch {
	case m.IDKind == wire.IDOther:
		// An id of a wrong type answering nothing: the envelope's rule
		// says all there is, as rpcfuzz's oracle does.
	case j.r.calls[b.method].weight > int(b.n): // elements beyond the requests were notifications
		rules = j.r.prof.Check(m, j.eraNow()) | toNotification(m)
	case m.IDKind == wire.IDNull:
		rules = rules.Add(check.UnexpectedNullID)
	case readable:
		rules = rules.Add(check.BatchExtraReply)
	}
	j.violations(rules, j.r.unmatched, elem)
}

// freeRequest takes the first request of batch b still without a reply
// out of tb, in id order.
func (j *judge) freeRequest(tb *pending.Table, b *batchReply) (pending.Entry, bool) {
	end := b.first + uint64(b.n)
	for ; b.free < end; b.free++ {
		if e, ok := tb.Forget(b.free); ok {
			b.free++
			return e, true
		}
	}
	return pending.Entry{}, false
}

// rules are the rules reply m breaks whatever it answers: its envelope's
// (env) and the profile's.
func (j *judge) rules(m *wire.Message, env check.Set) check.Set {
	return env | j.r.prof.Check(m, j.eraNow())
}

// noID judges a response with envelope rules env that carries no id it
// could answer a request by (id null, no id, an id of a wrong type) and
// that no batch of ours can take: it answers a notification when one was
// sent on the connection; a single object (not an element of an array,
// inArray) sent back when batches were is batch_not_array (a server that
// refuses batches with one -32600); else id null is unexpected_null_id,
// since every request rpcload sends has a readable id, and a missing or
// broken id is the envelope's rule.
func (j *judge) noID(m *wire.Message, env check.Set, inArray bool) check.Set {
	switch {
	case j.sent.notified.Load() > 0:
		return toNotification(m)
	case !inArray && j.sent.batches.Load() > 0:
		return env.Add(check.BatchNotArray)
	case m.IDKind == wire.IDNull:
		return env.Add(check.UnexpectedNullID)
	}
	return env
}

// toNotification is the rules of response m as a reply to a
// notification: reply_to_notification, with a missing id no envelope
// fault of its own (check.EnvelopeToNotification).
func toNotification(m *wire.Message) check.Set {
	return check.EnvelopeToNotification(m).Add(check.ReplyToNotification)
}

// batchRules checks an answered entry against the way it was answered: a
// batched request must be answered inside an array, together with the rest
// of its own batch.
func (j *judge) batchRules(e pending.Entry, b *batchReply) check.Set {
	var s check.Set
	switch {
	case b == nil && e.Batch != 0:
		s = s.Add(check.BatchNotArray)
	case b == nil:
	case e.Batch == 0:
		s = s.Add(check.BatchExtraReply) // a request sent alone, answered inside an array
	case b.first == 0:
		b.first, b.n, b.method, b.free = e.Batch, e.BatchLen, e.Method, e.Batch
	case e.Batch != b.first:
		s = s.Add(check.BatchExtraReply) // another batch's answer in this array
	}
	return s
}

func (j *judge) violations(rules check.Set, method uint16, frame []byte) {
	if rules == 0 {
		return
	}
	for rule := check.Rule(0); rule < check.NumRules; rule++ {
		if rules.Has(rule) {
			j.rec.Record(stats.Sample{Kind: stats.Violation, Rule: rule, Method: method})
			if j.submitted[rule] < 2*stats.MaxSamplesPerRule {
				j.submitted[rule]++
				j.r.agg.KeepSample(rule, int(method), frame, "")
			}
		}
	}
}

// offerErrorMessage hands an error reply's message to the aggregator, the
// first few times per code: the slow path, a lock and an unquote each.
func (j *judge) offerErrorMessage(code int64, raw []byte) {
	if j.messagesOffered[code] >= stats.MaxMessagesPerCode {
		return
	}
	if j.messagesOffered == nil {
		j.messagesOffered = map[int64]int{}
	}
	j.messagesOffered[code]++
	var msg string
	if raw == nil || json.Unmarshal(raw, &msg) != nil {
		msg = "(no message)"
	}
	j.r.agg.KeepErrorMessage(code, msg)
}
