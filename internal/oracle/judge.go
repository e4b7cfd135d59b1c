package oracle

import (
	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

// JudgeFuzzReply judges reply (gotReply false: none arrived within the
// timeout) to the input frame of the given class (from ClassifyRequest). It
// returns the rules broken, including the envelope rules of the reply (per
// element for a batch), and a short note for the finding ("" when nothing is
// wrong). Missing replies are hang where the input had a readable id,
// wrong_error_code where an error with id null was due. A reply of only
// whitespace counts as none; a request or notification from the server is
// not a reply and is not judged (the caller should keep waiting). Answers the
// spec leaves open are tolerated. The table of verdicts and tolerances, with
// the spec text behind each, is docs/oracle.md.
//
// It is safe for concurrent use and allocates nothing on the common paths;
// its time grows about linearly with the sizes of input and reply (n log n
// for sorting a batch's ids).
func JudgeFuzzReply(input []byte, class RequestClass, reply []byte, gotReply bool) (rules check.Set, note string) {
	if gotReply && wire.SkipSpace(reply, 0) == len(reply) {
		gotReply = false
	}
	var r wire.Message
	var rp *wire.Message
	if gotReply {
		wire.Scan(reply, &r)
		if r.Kind == wire.KindRequest || r.Kind == wire.KindNotification {
			return 0, "a request or notification from the server, not a reply: skip it and wait for the reply"
		}
		rp = &r
	}
	switch class {
	case Batch:
		return judgeBatch(input, reply, rp)
	case EmptyBatch:
		return judgeEmptyBatch(rp)
	}
	var q request
	q.init(input, 0, len(input))
	q.class = class
	rules, note = q.judgeFrame(rp)
	if rules != 0 && class == ParseError && q.parseErrorTolerates(reply, rp) {
		return 0, ""
	}
	return rules, note
}

// JudgeRefusal judges an HTTP response with a 4xx status and a body that
// is no JSON-RPC response (plain text, HTML, nothing) to an input frame of
// the given class: the message was refused at the HTTP level. Unparseable
// input so refused breaks plain_http_error, a warning: §5 and §5.1 want
// error -32700 with id null, but JSON-RPC 2.0 says nothing about HTTP, and
// the refusal is one all the same. Other inputs so refused are not judged
// here (a profile's transport rules may want a status, see
// profile.FuzzRules.Exchange). A caller whose profile allows such
// refusals (profile.FuzzRules.HTTPRefusals) does not ask.
func JudgeRefusal(class RequestClass) (check.Set, string) {
	if class != ParseError {
		return 0, ""
	}
	return check.Set(0).Add(check.PlainHTTPError), "unparseable input refused with an HTTP error status and a body that is no JSON-RPC response; want error -32700 with id null"
}

// judgeEmptyBatch holds the reply to [] against §6: one error object with
// code -32600 and id null.
func judgeEmptyBatch(r *wire.Message) (check.Set, string) {
	const want = "; want one error -32600 with id null"
	if r == nil {
		return check.Set(0).Add(check.EmptyBatchReplyWrong), "no reply to []" + want
	}
	env := check.Envelope(r)
	switch {
	case env.Has(check.InvalidJSON):
		return env, "the reply to [] is not JSON"
	case r.Kind == wire.KindBatch:
		return env.Add(check.EmptyBatchReplyWrong), "[] answered with an array" + want
	case r.Kind != wire.KindError || !r.HasCode || r.Code != wire.CodeInvalidRequest || r.IDKind != wire.IDNull:
		return env.Add(check.EmptyBatchReplyWrong), "[] answered " + describe(r) + want
	}
	return env, envelopeNote(env, r)
}

// request is one input frame or batch element with what judging it needs,
// kept small: a batch may have 100,000 of them.
type request struct {
	raw        []byte
	m          scanned
	frameLen   int          // length of the whole input frame
	depth      int32        // containers around raw: 1 for a batch element
	class      RequestClass // as classified, or as the caller of JudgeFuzzReply says
	edges      edge         // scanEdges at init; analyse adds walkEdges
	walked     bool         // edges holds walkEdges too
	matched    bool         // a batch reply has been paired with the request
	blamed     bool         // the reply was judged against it as the likeliest reading, not paired as fitting it
	takesArray bool         // a stream's frame an array may answer
	need       int8         // required, once known: 0 not asked yet, 1 no, 2 yes (batchMatch.required)
	by         int32        // the batchScratch.pend index of the reply paired with it
	stamp      uint32       // batchMatch.stamp when augment last tried it
}

// scanned is what judging a request needs of its wire.Message.
type scanned struct {
	ID       []byte
	Problems wire.Problem
	Kind     wire.Kind
	IDKind   wire.IDKind
}

// init scans raw and sets q up for judging.
func (q *request) init(raw []byte, depth, frameLen int) {
	var m wire.Message
	wire.Scan(raw, &m)
	*q = request{raw: raw, depth: int32(depth), frameLen: frameLen,
		m:     scanned{ID: m.ID, Problems: m.Problems, Kind: m.Kind, IDKind: m.IDKind},
		class: classifyMessage(m.Kind, m.Problems, m.BatchLen, depth == 0),
	}
	q.edges = q.scanEdges(m.Params)
	if string(m.Method) == `""` {
		q.edges |= edgeEmptyMethod
	}
}

// readableID reports whether the request carries an id the server could
// read and echo (null counts: it is a legal id value).
func (q *request) readableID() bool {
	if q.class == ParseError || q.m.Problems.Has(wire.ProblemBadID) {
		return false
	}
	return q.m.IDKind == wire.IDNumber || q.m.IDKind == wire.IDString || q.m.IDKind == wire.IDNull
}

// needsReply reports whether §5 requires a response to the request.
func (q *request) needsReply() bool {
	switch q.class {
	case Notification:
		return false
	case InvalidParams:
		return q.readableID()
	}
	return true
}

// judgeFrame judges the reply to a request sent as a frame of its own.
func (q *request) judgeFrame(r *wire.Message) (check.Set, string) {
	if r == nil {
		return q.judge(nil)
	}
	env := check.Envelope(r)
	if env.Has(check.InvalidJSON) {
		if q.class == Notification {
			env = env.Add(check.ReplyToNotification)
		}
		return env, "the reply is not JSON"
	}
	if r.Kind == wire.KindBatch {
		if q.class == Notification {
			env = env.Add(check.ReplyToNotification)
		}
		return env.Add(check.InvalidEnvelope), "an array answers a single " + q.class.String() + " message"
	}
	if q.class == Notification && (r.Kind == wire.KindResult || r.Kind == wire.KindError) {
		env = check.EnvelopeToNotification(r) // no id is what answering one looks like
	}
	s, note := q.judge(r)
	switch {
	case s == 0:
		note = envelopeNote(env, r)
	case env != 0 && check.MostSevere(env).Rank() < check.MostSevere(s).Rank():
		// The finding is named after the envelope rule: say that first.
		note = envelopeNote(env, r) + "; " + note
	}
	return env | s, note
}

// judge holds r (nil: silence) against what q's class requires, then drops
// the verdict when a tolerance of docs/oracle.md covers the reply.
// Replies that are not responses (Kind invalid) are left to Envelope.
func (q *request) judge(r *wire.Message) (check.Set, string) { return q.verdict(r, true) }

// verdict is judge, with the note written only when notes is set.
func (q *request) verdict(r *wire.Message, notes bool) (check.Set, string) {
	if r != nil && r.Kind != wire.KindResult && r.Kind != wire.KindError {
		if q.class == Notification {
			return check.Set(0).Add(check.ReplyToNotification), "a notification was answered"
		}
		return 0, ""
	}
	// The note waits for the verdict to stand: a tolerated reply costs no
	// allocation.
	s, _ := q.strict(r, false)
	if s == 0 && !(r == nil && q.nullIDSilence()) {
		return 0, ""
	}
	if q.class != ParseError {
		if r == nil && q.nullIDSilence() {
			// Tolerated as a failure, reported as a warning (see
			// nullIDSilence).
			return check.Set(0).Add(check.NullIDUnanswered), nullIDNote
		}
		if q.tolerates(r) {
			return 0, ""
		}
		if alt, ok := q.likelyReading(r); ok {
			// Blame what is wrong with the answer to the request as the
			// server evidently read it (a result to null params: read as
			// absent), not the code it was right to give under that reading.
			if as, an := alt.verdict(r, notes); as != 0 {
				return as, an
			}
		}
	}
	if !notes {
		return s, ""
	}
	return q.strict(r, true)
}

// nullIDNote is the note of rule null_id_unanswered.
const nullIDNote = "no reply within the timeout to a request with id null; JSON-RPC 2.0 makes it a request, not a notification (JSON-RPC 1.0 did)"

// likelyReading returns q as the server evidently read it when the strict
// verdict blames the error code but another reading the spec allows would
// not: params null read as absent when the reply is a result, or the first
// or last occurrence of each repeated envelope member when that reading
// accepts the reply's code. The second look only picks the rule of a
// finding; it never turns a finding into none.
func (q *request) likelyReading(r *wire.Message) (request, bool) {
	var alt request
	switch {
	case r == nil || r.Kind != wire.KindResult && r.Kind != wire.KindError:
		return alt, false
	case q.class == InvalidParams && r.Kind == wire.KindResult && q.edges&edgeNullParams != 0:
		alt = *q
		alt.class = Call
		if q.m.IDKind == wire.IDAbsent {
			alt.class = Notification
		}
		alt.edges &^= edgeNullParams
		return alt, true
	case q.m.Problems.Has(wire.ProblemDuplicateKey) && (q.class == InvalidRequest || q.class == InvalidParams):
		for _, first := range [2]bool{true, false} {
			if q.reading(first, &alt) && alt.class != q.class && alt.codeFits(r) {
				return alt, true
			}
		}
	}
	return alt, false
}

// codeFits reports whether r's kind and code are among the answers q's
// class allows, whatever its id.
func (q *request) codeFits(r *wire.Message) bool {
	isErr := r.Kind == wire.KindError && r.HasCode
	switch q.class {
	case InvalidRequest:
		return isErr && r.Code == wire.CodeInvalidRequest
	case InvalidParams:
		return isErr && (r.Code == wire.CodeInvalidParams || r.Code == wire.CodeInvalidRequest || r.Code == wire.CodeMethodNotFound)
	case Call:
		return !isErr || r.Code != wire.CodeParseError
	}
	return false
}

// fits reports whether r is a correct answer to q: judge without the note,
// or strict without the tolerances.
func (q *request) fits(r *wire.Message, strict bool) bool {
	if r.Kind != wire.KindResult && r.Kind != wire.KindError {
		return false
	}
	if s, _ := q.strict(r, false); s == 0 {
		return true
	}
	return !strict && q.class != ParseError && q.tolerates(r)
}
