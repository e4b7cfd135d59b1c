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
	var b batchReply
	for off := 0; ; {
		elem, next, ok := wire.NextElement(frame, off)
		if !ok {
			break
		}
		off = next
		wire.Scan(elem, &j.msg)
		j.one(tb, elem, now, &b)
	}
	if b.first == 0 {
		return // no element answered a batch of ours: each was judged on its own
	}
	for id := b.first; id < b.first+uint64(b.n); id++ {
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
}

// one judges the message already scanned into j.msg. b is nil for a frame
// on its own, and collects the batch for an element of a reply array.
func (j *judge) one(tb *pending.Table, frame []byte, now int64, b *batchReply) {
	m := &j.msg
	if m.Kind == wire.KindRequest || m.Kind == wire.KindNotification {
		j.rec.Record(stats.Sample{Kind: stats.ServerMessage, Method: j.r.unmatched})
		j.countServerMethod(m.Method)
		j.violations(j.r.prof.Check(m, j.eraNow()), j.r.unmatched, frame)
		if m.Kind == wire.KindRequest && j.peer != nil {
			j.peer.answerServer(m)
		}
		return
	}
	if j.peer != nil && j.peer.control(m, frame) {
		return
	}
	rules := check.Envelope(m) | j.r.prof.Check(m, j.eraNow())
	method := j.r.unmatched
	switch m.IDKind {
	case wire.IDNull:
		switch {
		case j.sent.notified.Load() > 0:
			rules = rules.Add(check.ReplyToNotification)
		case b == nil && j.sent.batches.Load() > 0:
			rules = rules.Add(check.BatchNotArray) // e.g. a server that refuses batches with one -32600
		default:
			rules = rules.Add(check.UnexpectedNullID)
		}
	case wire.IDNumber, wire.IDString:
		if j.reuse.claim(m, tb) {
			return // a reply the id-reuse probe drew: its own outcome, not the load's
		}
		e, v, typeChanged := tb.Resolve(m.ID)
		switch v {
		case pending.Answered:
			method = e.Method
			if typeChanged {
				rules = rules.Add(check.IDTypeChanged)
			}
			rules |= j.batchRules(e, b)
			kind := stats.OK
			var code int64
			switch {
			case m.Problems.Has(wire.ProblemBothResultAndError):
				kind = stats.InvalidReply // clients disagree on whether it succeeded
			case m.Kind == wire.KindError && m.HasCode:
				kind, code = stats.RPCError, m.Code
			case m.Kind != wire.KindResult:
				kind = stats.InvalidReply
			}
			j.answered(stats.Sample{Kind: kind, Method: method, A: now - e.Intended, B: now - e.Sent, Code: code}, now)
			if kind == stats.RPCError {
				j.offerErrorMessage(code, m.ErrMsg)
			}
			if c := &j.r.calls[method]; c.Expect.Any() {
				if why := c.Expect.Check(m, e.Fingerprint); why != "" {
					j.expectFailed(method, frame, why)
				}
			}
		case pending.Late:
			j.rec.Record(stats.Sample{Kind: stats.Late, Method: j.r.unmatched})
		case pending.DuplicateReply:
			rules = rules.Add(check.DuplicateReply)
		case pending.UnknownID:
			rules = rules.Add(check.UnknownID)
		}
		if (v == pending.DuplicateReply || v == pending.UnknownID) && b != nil {
			// A late element still belongs to its batch; these do not.
			rules = rules.Add(check.BatchExtraReply)
		}
	}
	j.violations(rules, method, frame)
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
		b.first, b.n, b.method = e.Batch, e.BatchLen, e.Method
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
