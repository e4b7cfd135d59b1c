package check

// The fuzz oracles: what a server must answer to one input frame, whatever
// a mutator made of it, and whether the reply it gave is that answer.
//
// ClassifyRequest sorts an input by what the JSON-RPC 2.0 text requires of
// the server; JudgeFuzzReply holds the reply against it. A finding must
// never blame a server for something the spec allows, so every deviation is
// mapped to a MUST (a failure rule) or tolerated, as below. Severity is a
// property of the rule (Rule.Warning), so "choose MUST or SHOULD" means
// "choose the rule".
//
//	input                         | correct reply                               | deviation -> rule (level)
//	------------------------------+---------------------------------------------+--------------------------------------------------
//	not JSON (ParseError)         | one error -32700, id null (§5.1 table, §5)  | other code, a result, an id, silence -> wrong_error_code (MUST)
//	invalid request               | error -32600; id null, or the request's id  | other code (-32601 too) or a result -> wrong_error_code (MUST);
//	 (no/non-string method, bad   |  when it was readable (§5 names Invalid     |  silence -> hang if the id was readable, else wrong_error_code;
//	 jsonrpc, id of a wrong type, |  Request among the cases that may get null) |  an unreadable id answered non-null -> wrong_error_code;
//	 a scalar, a response object) |                                             |  a different readable id -> unknown_id / id_type_changed
//	scalar params (InvalidParams) | error -32602 or -32601 with the id, or      | other code (-32700 too) or a result -> wrong_error_code
//	                              |  -32600 (id or null); nothing if no id      |  (MUST); silence with an id -> hang
//	notification                  | nothing (§4.1 MUST NOT)                     | any reply -> reply_to_notification (MUST)
//	call                          | a response with the same id, same type (§5) | silence -> hang; id null -> unexpected_null_id; another id ->
//	                              |  and a valid envelope (Envelope)            |  unknown_id; 7 for "7" -> id_type_changed; -32700 -> wrong_error_code
//	[] (EmptyBatch)               | one error -32600, id null (§6 MUST)         | anything else or silence -> empty_batch_reply_wrong (MUST)
//	batch                         | an array, one response per element that     | a single object -> batch_not_array (reply_to_notification when
//	                              |  needs one, any order (§6); nothing at all  |  every element is a notification); a request unanswered ->
//	                              |  when none does (§6 MUST NOT send [])       |  batch_missing_reply; a reply answering nothing ->
//	                              |                                             |  batch_extra_reply; twice -> duplicate_reply; each element judged
//	                              |                                             |  as above; a reply to an all-notification batch -> reply_to_notification
//
// Why a wrong code is a failure, not a warning: §5.1 gives the codes
// -32768..-32000 to the spec's pre-defined errors and its table assigns one
// fault to each (-32700: the JSON could not be parsed; -32600: the JSON is
// not a valid Request object). A server that answers unparseable input with
// -32600 tells the client something false: that it read the JSON. The
// table has no RFC 2119 keyword, but a pre-defined meaning is not a
// recommendation, and the issue this oracle comes from names these cases as
// findings. The MUSTs around it (a reply at all, id null when the id was not
// readable) are §5's own. A scalar params member breaks a MUST of §4 ("MUST
// be provided as a Structured value"); both -32600 (the Request object is
// invalid) and -32602 (the params are) describe it truthfully, so either
// passes. So does -32601 ("The method does not exist / is not
// available"): §4 makes params "the parameter values to be used during the
// invocation of the method", the spec orders no checks, and a server that
// looks the method up before it reads the params (geth, mcp-go, go-sdk)
// truthfully finds no method first. An invalid request is another matter:
// when jsonrpc, method or id is wrong, or the frame is no object, the
// JSON "is not a valid Request object" (-32600), and a -32601 shows the
// server dispatched what is no JSON-RPC 2.0 request at all (the version
// decides how the rest reads: in 1.0 an id null made a notification); the
// ground truth of protocols.md wants -32600 for {"id":1,"method":"x"}. There
// -32601 stays wrong_error_code.
//
// A batch's replies may come in any order and several elements may share
// an id, so JudgeFuzzReply pairs replies with elements before judging them,
// and a reply goes to an element it is a correct answer for whenever the
// pairing allows. Replies with an id look first among the elements with
// that id (-32600 errors among invalid requests before calls, results and
// other errors among calls first; elements a tolerance lets take other
// replies too come after those of their kind), then among elements whose
// id the tolerances below let take any id; replies with id null look first
// among elements that can only be answered with id null, then invalid
// requests with a readable id, then elements that may but need not be
// answered, then any a tolerance covers. A reply left over moves paired
// replies to other elements they answer correctly where that frees an
// element for it (an augmenting path, as in bipartite matching). Only a
// reply that still has no element is a finding, judged against the element
// it most likely answers. The work spent is bounded by a budget linear in
// the batch's size plus the pairs of elements that share an id (each
// reply may have to try every element of its id before it is left over),
// the latter capped, so huge batches stay fast at the price of a plainer
// pairing.
//
// What is tolerated (never a finding), because the JSON or JSON-RPC text
// leaves the server a choice:
//
//	input                                           | also accepted                                  | why
//	------------------------------------------------+------------------------------------------------+---------------------------------------------
//	not JSON, but a prefix is a whole JSON value    | the answer to that value                       | stream decoders read one value at a time
//	not JSON only for a BOM or Unicode spaces       | the answer to the frame without them           | RFC 8259 §8.1: a parser MAY ignore a BOM
//	not JSON: NaN, Infinity, comments, 'quotes',    | any response, or silence                       | RFC 8259 §9: a parser MAY accept extensions
//	 trailing commas, bare keys                     |                                                |
//	not JSON only by nesting deeper than 10,000     | any response, or silence                       | RFC 8259 §9 sets no depth limit
//	invalid UTF-8, lone surrogate escapes, nesting  | any error response with id null or the id      | RFC 8259 §8.1, §8.2, §6, §9: behaviour
//	 over 64, numbers beyond float64, frames over   |                                                |  unpredictable or implementation-limited
//	 1 MiB                                          |                                                |
//	duplicate member names (any object)             | the answer to the request as read with the     | RFC 8259 §4: names SHOULD be unique, the
//	                                                |  first or with the last occurrence of each     |  outcome with duplicates is unpredictable
//	                                                |  repeated envelope member; any error with id   |  (parsers keep the first, the last, or
//	                                                |  null or the id; a result with the id (null    |  refuse the object)
//	                                                |  too); silence when there is no id; any id     |
//	                                                |  when "id" itself is repeated                  |
//	id null, with a fraction or exponent, or an     | error -32600 with id null; an echo equal as    | §4: null is discouraged (JSON-RPC 1.0 used it
//	 integer beyond ±2^53                           |  float64; silence for id null                  |  for notifications); fractions SHOULD NOT
//	a string id with invalid UTF-8 or lone          | the id as a decoder reads it: each bad         | RFC 8259 §8.2: the behaviour is unpredictable;
//	 surrogate escapes                              |  stretch U+FFFD, raw or \ufffd, one per byte   |  Go, JavaScript and Python decoders replace
//	                                                |  (Go) or per stretch (WHATWG)                  |  such text with U+FFFD
//	"method": "" (a request or notification)        | error -32600 with id null or the id            | §4: method is "a String containing the name of
//	                                                |                                                |  the method"; "" names none (geth, jrpc2 refuse it)
//	members besides jsonrpc/id/method/params        | error -32600 with id null or the id            | §4 lists the members; strict servers refuse
//	a response object sent to the server (also one  | silence                                        | peers of MCP and LSP receive responses; §4:
//	 with a method member, with result or error)    |                                                |  lists no member that decides (geth, mcp-go drop these)
//	"params": null in an otherwise valid request    | the answer to the request without params       | common servers read null as absent
//	a batch of more than 100 elements, over 1 MiB,  | one error object with id null (any code)       | servers cap batches (protocols.md §4); a
//	 or with an element of the rows on limits,      |  instead of the array                          |  parser or a typed decoder refusing an
//	 duplicate names, response objects or null      |                                                |  element refuses the whole frame
//	 params                                         |                                                |
//
// When the id member itself is readable, a limit trait elsewhere in the
// frame (a lone surrogate in a member name, nesting past 64 in params) lets
// the error carry the id (as read: equal as float64 beyond ±2^53) or null.
//
// A finding names what is wrong under the reading the reply shows: a result
// to "params": null is judged as the answer to the request without params
// (a wrong id is unknown_id, not a wrong code), and an answer whose code
// fits the first or the last occurrence of a repeated envelope member is
// judged under that reading. In a batch, a response whose id is missing or
// of a wrong type (Envelope's finding) still answers an element, paired as
// one with id null: that element is not also unanswered.
//
// So no verdict here is a warning: each one breaks a MUST (§4.1, §5, §6) or
// a pre-defined meaning (§5.1), and the spec's SHOULDs (unique member names,
// integer ids, "a Response object SHOULD exist for each Request object" in
// §6, which §5's "the Server MUST reply" makes a MUST for every call) are
// what the tolerances above are made of. The one fuzz rule that is a warning
// is slow_input, which no spec text backs at all.
//
// A reply that is itself a request or notification from the server is not a
// reply; JudgeFuzzReply says so and finds nothing (the caller should skip it
// and keep waiting). A reply of only whitespace counts as no reply (an HTTP
// 200 or 202 with an empty body). What the transport did (an HTTP status
// without a JSON body, a reset, an exit) is the engine's to judge.

import (
	"bytes"
	"cmp"
	"slices"
	"sort"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/wire"
)

// RequestClass is what the spec says a server must do with one input frame.
type RequestClass uint8

// The request classes, in the order of ClassifyRequest's tests.
const (
	ParseError        RequestClass = iota // not JSON: one error -32700 with id null
	InvalidRequest                        // JSON but not a Request object: error -32600
	InvalidParams                         // a Request object whose params is a scalar or null: -32602 or -32600
	Notification                          // a valid request without id: no reply
	Call                                  // a valid request with an id: a response with that id
	Batch                                 // a non-empty array: an array of the responses its elements need
	EmptyBatch                            // []: one error -32600 with id null
	NumRequestClasses                     // the number of classes, not a class
)

var requestClassNames = [NumRequestClasses]string{
	"parse_error", "invalid_request", "invalid_params", "notification", "call", "batch", "empty_batch",
}

// String returns the snake_case name of c for notes and reports.
func (c RequestClass) String() string {
	if c < NumRequestClasses {
		return requestClassNames[c]
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// ClassifyRequest says what the spec requires a server to do with frame. It
// is pure and does not allocate. A repeated envelope member counts against
// the request when any of its occurrences is wrong (a bad "jsonrpc" before
// a good one makes an invalid request), the view of a reader that refuses
// what it cannot read unambiguously; JudgeFuzzReply also accepts the answer
// to the request as read with the first or with the last occurrences.
func ClassifyRequest(frame []byte) RequestClass {
	var m wire.Message
	wire.Scan(frame, &m)
	return ClassifyScanned(&m)
}

// ClassifyScanned is ClassifyRequest of a frame already scanned into m, for
// callers that read more off the same scan (the black-box engine scans each
// input frame once).
func ClassifyScanned(m *wire.Message) RequestClass {
	return classifyMessage(m.Kind, m.Problems, m.BatchLen, true)
}

// classifyMessage classifies one scanned frame or batch element (top is
// false for elements: an array inside a batch is not a nested batch but an
// invalid Request object).
func classifyMessage(kind wire.Kind, p wire.Problem, batchLen int, top bool) RequestClass {
	switch {
	case p.Has(wire.ProblemInvalidJSON):
		return ParseError
	case kind == wire.KindBatch && top:
		if batchLen == 0 {
			return EmptyBatch
		}
		return Batch
	case kind != wire.KindRequest && kind != wire.KindNotification:
		return InvalidRequest
	case p&(wire.ProblemBadVersion|wire.ProblemBadID|wire.ProblemBadMethod) != 0:
		return InvalidRequest
	case p.Has(wire.ProblemBadParams):
		return InvalidParams
	case kind == wire.KindNotification:
		return Notification
	}
	return Call
}

// Limits of the tolerances in the comment atop this file, and of the work
// spent pairing a batch's replies.
const (
	sizeEdge      = 1 << 20 // a frame this long may hit a server's size limit
	depthEdge     = 64      // nesting deeper than this may hit a parser's depth limit
	batchCapEdge  = 100     // a batch longer than this may be refused as a whole
	pickTries     = 8       // candidates judged per reply once the batch's budget is spent
	scanLimit     = 64      // candidates looked at per reply once the budget is spent
	judgeBudget   = 16      // judgements per element and reply before pairing gets bounded
	maxPooled     = 1 << 14 // batches up to this many elements keep their scratch space
	augmentDepth  = 256     // replies moved at most to pair one left over
	repeatFactor  = 8       // judgements per pair of requests sharing an id (repeatWork)
	maxRepeatWork = 1 << 18 // the most repeatWork adds to a batch's budget
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
// the spec text behind each, is the comment atop fuzz.go.
//
// It is safe for concurrent use and allocates nothing on the common paths;
// its time grows about linearly with the sizes of input and reply (n log n
// for sorting a batch's ids).
func JudgeFuzzReply(input []byte, class RequestClass, reply []byte, gotReply bool) (rules Set, note string) {
	if gotReply && skipJSONSpace(reply, 0) == len(reply) {
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

// judgeEmptyBatch holds the reply to [] against §6: one error object with
// code -32600 and id null.
func judgeEmptyBatch(r *wire.Message) (Set, string) {
	const want = "; want one error -32600 with id null"
	if r == nil {
		return Set(0).Add(EmptyBatchReplyWrong), "no reply to []" + want
	}
	env := Envelope(r)
	switch {
	case env.Has(InvalidJSON):
		return env, "the reply to [] is not JSON"
	case r.Kind == wire.KindBatch:
		return env.Add(EmptyBatchReplyWrong), "[] answered with an array" + want
	case r.Kind != wire.KindError || !r.HasCode || r.Code != wire.CodeInvalidRequest || r.IDKind != wire.IDNull:
		return env.Add(EmptyBatchReplyWrong), "[] answered " + describe(r) + want
	}
	return env, envelopeNote(env, r)
}

// request is one input frame or batch element with what judging it needs,
// kept small: a batch may have 100,000 of them.
type request struct {
	raw      []byte
	m        scanned
	frameLen int          // length of the whole input frame
	depth    int32        // containers around raw: 1 for a batch element
	class    RequestClass // as classified, or as the caller of JudgeFuzzReply says
	edges    edge         // scanEdges at init; analyse adds walkEdges
	walked   bool         // edges holds walkEdges too
	matched  bool         // a batch reply has been paired with the request
	by       int32        // the batchScratch.pend index of the reply paired with it
	stamp    uint32       // batchMatch.stamp when augment last tried it
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
func (q *request) judgeFrame(r *wire.Message) (Set, string) {
	if r == nil {
		return q.judge(nil)
	}
	env := Envelope(r)
	if env.Has(InvalidJSON) {
		if q.class == Notification {
			env = env.Add(ReplyToNotification)
		}
		return env, "the reply is not JSON"
	}
	if r.Kind == wire.KindBatch {
		if q.class == Notification {
			env = env.Add(ReplyToNotification)
		}
		return env.Add(InvalidEnvelope), "an array answers a single " + q.class.String() + " message"
	}
	s, note := q.judge(r)
	switch {
	case s == 0:
		note = envelopeNote(env, r)
	case env != 0 && MostSevere(env).Rank() < MostSevere(s).Rank():
		// The finding is named after the envelope rule: say that first.
		note = envelopeNote(env, r) + "; " + note
	}
	return env | s, note
}

// judge holds r (nil: silence) against what q's class requires, then drops
// the verdict when a tolerance of the comment atop this file covers the reply.
// Replies that are not responses (Kind invalid) are left to Envelope.
func (q *request) judge(r *wire.Message) (Set, string) { return q.verdict(r, true) }

// verdict is judge, with the note written only when notes is set.
func (q *request) verdict(r *wire.Message, notes bool) (Set, string) {
	if r != nil && r.Kind != wire.KindResult && r.Kind != wire.KindError {
		if q.class == Notification {
			return Set(0).Add(ReplyToNotification), "a notification was answered"
		}
		return 0, ""
	}
	// The note waits for the verdict to stand: a tolerated reply costs no
	// allocation.
	s, _ := q.strict(r, false)
	if s == 0 {
		return 0, ""
	}
	if q.class != ParseError {
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

// strict is the verdict without tolerances. The note is written only when
// notes is set: pairing a batch's replies judges many pairs that are not
// findings, and a note costs allocations.
func (q *request) strict(r *wire.Message, notes bool) (Set, string) {
	wrong := Set(0).Add(WrongErrorCode)
	switch q.class {
	case Notification:
		if r == nil {
			return 0, ""
		}
		if !notes {
			return Set(0).Add(ReplyToNotification), ""
		}
		return Set(0).Add(ReplyToNotification), "a notification was answered with " + describe(r)
	case ParseError:
		const want = "; want error -32700 with id null"
		switch {
		case r == nil:
			return wrong, "no reply to unparseable input" + want
		case !notes && (r.Kind != wire.KindError || !r.HasCode || r.Code != wire.CodeParseError || r.IDKind != wire.IDNull && r.IDKind != wire.IDAbsent):
			return wrong, ""
		case r.Kind != wire.KindError || !r.HasCode || r.Code != wire.CodeParseError:
			return wrong, "unparseable input answered with " + describe(r) + want
		case r.IDKind != wire.IDNull && r.IDKind != wire.IDAbsent:
			return wrong, "the parse error carries id " + short(r.ID) + want
		}
		return 0, ""
	case InvalidRequest:
		switch {
		case r == nil && q.readableID() && q.m.IDKind != wire.IDNull:
			if !notes {
				return Set(0).Add(Hang), ""
			}
			return Set(0).Add(Hang), "no reply to an invalid request with id " + short(q.m.ID) + "; want error -32600"
		case r == nil:
			return wrong, "no reply to an invalid request; want error -32600 with id null"
		case r.Kind != wire.KindError || !r.HasCode || r.Code != wire.CodeInvalidRequest:
			if !notes {
				return wrong, ""
			}
			return wrong, "an invalid request answered with " + describe(r) + "; want error -32600"
		}
		return q.checkID(r, true, notes)
	case InvalidParams:
		switch {
		case r == nil && q.readableID() && q.m.IDKind != wire.IDNull:
			if !notes {
				return Set(0).Add(Hang), ""
			}
			return Set(0).Add(Hang), "no reply to a request with scalar params, id " + short(q.m.ID) + "; want error -32602 or -32600"
		case r == nil:
			return 0, ""
		case r.Kind != wire.KindError || !r.HasCode || (r.Code != wire.CodeInvalidParams && r.Code != wire.CodeInvalidRequest && r.Code != wire.CodeMethodNotFound):
			if !notes {
				return wrong, ""
			}
			return wrong, "a request with scalar params answered with " + describe(r) + "; want error -32602, -32600 or -32601"
		}
		return q.checkID(r, r.Code == wire.CodeInvalidRequest, notes)
	case Call:
		switch {
		case r == nil:
			if !notes {
				return Set(0).Add(Hang), ""
			}
			return Set(0).Add(Hang), "no reply to a call with id " + short(q.m.ID)
		case r.Kind == wire.KindError && r.HasCode && r.Code == wire.CodeParseError:
			s, note := q.checkID(r, false, notes)
			if !notes {
				return s.Add(WrongErrorCode), ""
			}
			return s.Add(WrongErrorCode), "a call in valid JSON answered with -32700 (parse error)" + prefixed(note)
		}
		return q.checkID(r, false, notes)
	}
	return 0, ""
}

// checkID holds the response's id against the request's (§5): the same
// value and JSON type, or null where the id was unreadable (or, with
// nullOK, for an invalid request). A response without an id or with an id
// of a wrong type is left to Envelope. The note is written only with notes.
func (q *request) checkID(r *wire.Message, nullOK, notes bool) (Set, string) {
	if r.IDKind == wire.IDAbsent || r.IDKind == wire.IDOther {
		return 0, ""
	}
	var s Set
	if !q.readableID() {
		if r.IDKind == wire.IDNull {
			return 0, ""
		}
		if s = Set(0).Add(WrongErrorCode); !notes {
			return s, ""
		}
		return s, "the request's id is unreadable, so the reply's id must be null, not " + short(r.ID)
	}
	if r.IDKind == wire.IDNull {
		if q.m.IDKind == wire.IDNull || nullOK {
			return 0, ""
		}
		if s = Set(0).Add(UnexpectedNullID); !notes {
			return s, ""
		}
		return s, "reply id null; the request's id " + short(q.m.ID) + " was readable"
	}
	switch compareIDs(q.m.ID, r.ID, q.looseNumericID()) {
	case idEqual:
		return 0, ""
	case idTypeChanged:
		if s = Set(0).Add(IDTypeChanged); !notes {
			return s, ""
		}
		return s, "reply id " + short(r.ID) + " for request id " + short(q.m.ID) + ": same value, other JSON type"
	}
	if s = Set(0).Add(UnknownID); !notes {
		return s, ""
	}
	return s, "reply id " + short(r.ID) + "; want " + short(q.m.ID)
}

// looseNumericID reports whether the request's id is a number float64
// cannot hold exactly, so that a server echoing it through a float64 is
// forgiven (the id tolerance of the comment atop this file).
func (q *request) looseNumericID() bool {
	return q.m.IDKind == wire.IDNumber && (q.m.Problems.Has(wire.ProblemFractionalID) || !safeInteger(q.m.ID))
}

// edge is a bit set of the traits of an input that make the spec leave a
// server a choice (the tolerance table atop this file).
type edge uint16

const (
	edgeLimit        edge = 1 << iota // invalid UTF-8, lone surrogate, deep nesting, huge number, huge frame
	edgeDupKey                        // a member name repeated in some object
	edgeDupID                         // the envelope's "id" repeated
	edgeIDShape                       // id null, fractional, exponent, or an integer beyond float64's exact range
	edgeExtra                         // envelope members besides jsonrpc, id, method, params
	edgeResponseLike                  // a response object (result or error, no method) sent to the server
	edgeNullParams                    // "params": null
	edgeEmptyMethod                   // "method": "", which names no method
)

// refusable are the edges for which a whole batch may be refused with one
// error (the last row of the tolerance table). Extra members and odd ids
// are not among them: the spec's own batch example has an element with an
// extra member and wants an array back.
const refusable = edgeLimit | edgeDupKey | edgeResponseLike | edgeNullParams

// scanEdges returns the edges the scan shows, without walking the frame.
func (q *request) scanEdges(params []byte) edge {
	m := &q.m
	var e edge
	if q.frameLen > sizeEdge || m.Problems.Has(wire.ProblemInvalidUTF8) {
		e |= edgeLimit
	}
	if m.Problems.Has(wire.ProblemDuplicateKey) {
		e |= edgeDupKey | q.dupIDEdge()
	}
	if m.Problems&(wire.ProblemExtraMember|wire.ProblemMixedMembers) != 0 {
		e |= edgeExtra
	}
	if m.Kind == wire.KindResult || m.Kind == wire.KindError || m.Problems.Has(wire.ProblemMixedMembers) {
		// A message with a method and a result or error is a request or a
		// response with members too many, and the spec does not say which:
		// a peer that also receives responses (MCP, LSP) may take it for
		// one and drop it (mcp-go does), or refuse it with -32600.
		e |= edgeResponseLike
	}
	if m.IDKind == wire.IDNull || q.looseNumericID() {
		e |= edgeIDShape
	}
	if string(params) == "null" {
		e |= edgeNullParams
	}
	return e
}

// analyse returns all of q's edges, walking the request the first time:
// only a second look at a strict verdict needs what the walk finds.
func (q *request) analyse() edge {
	if !q.walked {
		q.walked = true
		q.edges |= walkEdges(q.raw, int(q.depth))
	}
	return q.edges
}

// echoes reports whether r carries q's id: an equal value of the same JSON
// type, null for null.
func (q *request) echoes(r *wire.Message) bool {
	if !q.readableID() {
		return false
	}
	if q.m.IDKind == wire.IDNull || r.IDKind == wire.IDNull {
		return q.m.IDKind == r.IDKind
	}
	return r.IDKind != wire.IDAbsent && compareIDs(q.m.ID, r.ID, q.looseNumericID()) == idEqual
}

// silenceTolerated reports whether no reply at all is an answer the
// tolerances allow although the strict verdict wants one. It walks the
// request only for an element without an id, where a repeated name
// anywhere allows silence, and only with walk (without, such a request
// counts as one that needs a reply).
func (q *request) silenceTolerated(walk bool) bool {
	switch {
	case q.edges&edgeResponseLike != 0 || q.m.IDKind == wire.IDNull:
		return true
	case q.m.Problems.Has(wire.ProblemDuplicateKey) && q.readingAccepts(nil):
		return true
	case q.m.IDKind != wire.IDAbsent || !walk && !q.walked:
		return q.edges&edgeDupKey != 0 && q.m.IDKind == wire.IDAbsent
	}
	return q.analyse()&edgeDupKey != 0
}

// required reports whether silence about q, a batch element, is a finding.
func (q *request) required() bool { return q.needsReply() && !q.silenceTolerated(true) }

// tolerates reports whether r (nil: silence) is an answer the spec allows
// for one of q's edges although the strict verdict rejected it.
func (q *request) tolerates(r *wire.Message) bool {
	if r == nil {
		return q.silenceTolerated(true)
	}
	e := q.analyse()
	if e == 0 {
		return false
	}
	isErr := r.Kind == wire.KindError
	sameID := q.echoes(r)
	idOK := r.IDKind == wire.IDNull || sameID
	switch {
	case e&edgeDupID != 0:
		return true
	case e&(edgeLimit|edgeDupKey) != 0 && isErr && idOK:
		return true
	case e&edgeDupKey != 0 && sameID:
		return true
	case e&(edgeIDShape|edgeExtra|edgeResponseLike|edgeEmptyMethod) != 0 && isErr && r.HasCode && r.Code == wire.CodeInvalidRequest && idOK:
		return true
	case e&edgeNullParams != 0 && q.class == InvalidParams:
		// Read as absent, null leaves a valid request.
		alt := *q
		alt.class = Call
		if q.m.IDKind == wire.IDAbsent {
			alt.class = Notification
		}
		if s, _ := alt.strict(r, false); s == 0 {
			return true
		}
	}
	return e&edgeDupKey != 0 && q.m.Problems.Has(wire.ProblemDuplicateKey) && q.readingAccepts(r)
}

// readingAccepts reports whether r (nil: silence) is the correct answer to
// q as read by a parser that keeps the first, or the last, occurrence of
// each repeated envelope member.
func (q *request) readingAccepts(r *wire.Message) bool {
	var alt request
	for _, first := range [2]bool{true, false} {
		if !q.reading(first, &alt) {
			return false
		}
		if s, _ := alt.verdict(r, false); s == 0 {
			return true
		}
	}
	return false
}

// Envelope members whose repeats change how a request reads.
const (
	memJSONRPC uint8 = 1 << iota
	memID
	memMethod
	memParams
)

// readingProblems are the problem bits that depend on which occurrence of
// a repeated member a reader keeps.
const readingProblems = wire.ProblemBadVersion | wire.ProblemBadID | wire.ProblemFractionalID |
	wire.ProblemBadMethod | wire.ProblemBadParams

// reading sets *alt to q as read keeping the first (or the last) occurrence
// of each repeated envelope member; false when q is not an object. The
// reading has no repeats, and q's edges except those of the repeats and of
// the id and params it replaces, so judging it does not come back here.
func (q *request) reading(first bool, alt *request) bool {
	it, ok := newMemberIter(q.raw)
	if !ok {
		return false
	}
	*alt = *q
	m := &alt.m
	m.Problems &^= readingProblems | wire.ProblemDuplicateKey
	m.ID, m.IDKind = nil, wire.IDAbsent
	var params []byte
	var got uint8
	versionOK := false
	for {
		name, v, ok := it.next()
		if !ok {
			break
		}
		mem := memberOf(name)
		if mem == 0 || first && got&mem != 0 {
			continue
		}
		got |= mem
		switch mem {
		case memJSONRPC:
			versionOK = isVersion(v)
		case memID:
			// A later occurrence replaces what an earlier one made wrong.
			m.Problems &^= wire.ProblemBadID | wire.ProblemFractionalID
			m.ID, m.IDKind = v, wire.IDOther
			switch c := v[0]; {
			case c == '"':
				m.IDKind = wire.IDString
			case c == 'n':
				m.IDKind = wire.IDNull
			case c == '-' || c >= '0' && c <= '9':
				m.IDKind = wire.IDNumber
				if bytes.ContainsAny(v, ".eE") {
					m.Problems |= wire.ProblemFractionalID
				}
			default:
				m.Problems |= wire.ProblemBadID
			}
		case memMethod:
			m.Problems &^= wire.ProblemBadMethod
			if v[0] != '"' {
				m.Problems |= wire.ProblemBadMethod
			}
		case memParams:
			params = v
			m.Problems &^= wire.ProblemBadParams
			if v[0] != '[' && v[0] != '{' {
				m.Problems |= wire.ProblemBadParams
			}
		}
	}
	if !versionOK {
		m.Problems |= wire.ProblemBadVersion
	}
	alt.class = classifyMessage(m.Kind, m.Problems, 0, q.depth == 0)
	alt.edges = q.analyse()&^(edgeDupKey|edgeDupID|edgeIDShape|edgeNullParams) |
		alt.scanEdges(params)&(edgeIDShape|edgeNullParams)
	alt.walked = true
	return true
}

// dupIDEdge returns edgeDupID when the envelope q.raw holds "id" twice.
func (q *request) dupIDEdge() edge {
	it, ok := newMemberIter(q.raw)
	if !ok {
		return 0
	}
	ids := 0
	for {
		name, _, ok := it.next()
		if !ok {
			return 0
		}
		if memberOf(name) == memID {
			if ids++; ids == 2 {
				return edgeDupID
			}
		}
	}
}

// memberOf returns the envelope member bit of the raw member name, or 0.
func memberOf(name []byte) uint8 {
	if len(name) > 64 {
		return 0
	}
	var buf [64]byte
	s, ok := unquoteName(buf[:0], name)
	if !ok {
		return 0
	}
	switch string(s) {
	case "jsonrpc":
		return memJSONRPC
	case "id":
		return memID
	case "method":
		return memMethod
	case "params":
		return memParams
	}
	return 0
}

// isVersion reports whether the raw JSON value v is the string "2.0".
func isVersion(v []byte) bool {
	if len(v) > 64 || v[0] != '"' {
		return false
	}
	var buf [64]byte
	s, ok := unquoteName(buf[:0], v)
	return ok && string(s) == "2.0"
}

// unquoteName appends the content of the raw JSON string s to dst, copying
// nothing when s has no escapes.
func unquoteName(dst, s []byte) ([]byte, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return dst, false
	}
	if bytes.IndexByte(s, '\\') < 0 {
		return s[1 : len(s)-1], true
	}
	return wire.Unquote(dst, s)
}

// memberIter walks the members of an object that Scan accepted. It stays
// in bounds and ends on anything else.
type memberIter struct {
	d []byte
	i int
}

func newMemberIter(d []byte) (memberIter, bool) {
	i := skipJSONSpace(d, 0)
	if i >= len(d) || d[i] != '{' {
		return memberIter{}, false
	}
	return memberIter{d: d, i: i + 1}, true
}

// next returns the raw name (quotes included) and value of the next member.
func (it *memberIter) next() (name, value []byte, ok bool) {
	d := it.d
	i := skipJSONSpace(d, it.i)
	if i < len(d) && d[i] == ',' {
		i = skipJSONSpace(d, i+1)
	}
	if i >= len(d) || d[i] != '"' {
		it.i = len(d)
		return nil, nil, false
	}
	ne := skipString(d, i)
	j := skipJSONSpace(d, ne)
	if j >= len(d) || d[j] != ':' {
		it.i = len(d)
		return nil, nil, false
	}
	j = skipJSONSpace(d, j+1)
	ve := skipValue(d, j)
	if ve <= j {
		it.i = len(d)
		return nil, nil, false
	}
	it.i = ve
	return d[i:ne], d[j:ve], true
}

// parseErrorTolerates applies the tolerances for input that is not JSON:
// a readable prefix or a frame readable without a BOM or Unicode spaces
// (judged as that JSON), JSON extensions, nesting beyond encoding/json.
func (q *request) parseErrorTolerates(reply []byte, r *wire.Message) bool {
	if alt, ok := readableAlternative(q.raw); ok {
		var s Set
		var aq request
		aq.init(alt, 0, q.frameLen)
		switch aq.class {
		case Batch:
			s, _ = judgeBatch(alt, reply, r)
		case EmptyBatch:
			s, _ = judgeEmptyBatch(r)
		case ParseError:
			s = Set(0).Add(WrongErrorCode)
		default:
			s, _ = aq.judgeFrame(r)
		}
		if s == 0 {
			return true
		}
	}
	return hasJSONExtension(q.raw) || tooDeepForScan(q.raw)
}

// readableAlternative returns the JSON a lenient reader could have taken
// from frame: frame without a leading BOM and Unicode spaces or NULs around
// it, or the first whole JSON value when more follows (what a stream
// decoder such as encoding/json's Decoder reads first).
func readableAlternative(frame []byte) ([]byte, bool) {
	var m wire.Message
	trimmed := bytes.TrimLeft(bytes.TrimSpace(bytes.TrimPrefix(frame, []byte("\uFEFF"))), "\x00")
	trimmed = bytes.TrimSpace(bytes.TrimRight(trimmed, "\x00"))
	if len(trimmed) < len(frame) && len(trimmed) > 0 {
		if wire.Scan(trimmed, &m); !m.Problems.Has(wire.ProblemInvalidJSON) {
			return trimmed, true
		}
	}
	end := firstValueEnd(frame, skipJSONSpace(frame, 0))
	if end <= 0 || end >= len(frame) {
		return nil, false
	}
	if wire.Scan(frame[:end], &m); m.Problems.Has(wire.ProblemInvalidJSON) {
		return nil, false
	}
	return frame[:end], true
}

// firstValueEnd returns where the JSON value starting at d[i] would end if
// it is valid (the caller checks that), or -1 when no value starts there.
// A number ends where its grammar does, as in a stream decoder: "01" reads
// as 0 followed by more.
func firstValueEnd(d []byte, i int) int {
	if i >= len(d) {
		return -1
	}
	switch c := d[i]; {
	case c == '{' || c == '[' || c == '"':
		return skipValue(d, i)
	case c == '-' || c >= '0' && c <= '9':
		return numberEnd(d, i)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(d[i:], []byte(lit)) {
			return i + len(lit)
		}
	}
	return -1
}

// numberEnd returns the end of the longest JSON number starting at d[i],
// or i when none does.
func numberEnd(d []byte, i int) int {
	start := i
	if i < len(d) && d[i] == '-' {
		i++
	}
	digits := func(i int) int {
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		return i
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(i)
	default:
		return start
	}
	if i+1 < len(d) && d[i] == '.' && d[i+1] >= '0' && d[i+1] <= '9' {
		i = digits(i + 1)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		j := i + 1
		if j < len(d) && (d[j] == '+' || d[j] == '-') {
			j++
		}
		if j < len(d) && d[j] >= '0' && d[j] <= '9' {
			i = digits(j)
		}
	}
	return i
}

// hasJSONExtension reports whether frame, outside its double-quoted strings,
// uses a common non-JSON form: NaN, Infinity, undefined, a bare member name,
// a comment, a single-quoted string, a leading '+', or a trailing comma.
func hasJSONExtension(frame []byte) bool {
	for i := 0; i < len(frame); i++ {
		c := frame[i]
		switch {
		case c == '"':
			i = skipString(frame, i) - 1
		case c == '/' || c == '\'':
			return true
		case c == '+':
			if i == 0 || frame[i-1]|0x20 != 'e' {
				return true
			}
		case c == ',':
			if j := skipJSONSpace(frame, i+1); j < len(frame) && (frame[j] == ']' || frame[j] == '}') {
				return true
			}
		case c|0x20 >= 'a' && c|0x20 <= 'z' || c == '_' || c == '$':
			j := i
			for j < len(frame) && (frame[j]|0x20 >= 'a' && frame[j]|0x20 <= 'z' || frame[j] >= '0' && frame[j] <= '9' || frame[j] == '_' || frame[j] == '$') {
				j++
			}
			word := string(frame[i:j])
			if word == "NaN" || word == "Infinity" || word == "undefined" {
				return true
			}
			if k := skipJSONSpace(frame, j); k < len(frame) && frame[k] == ':' && word != "true" && word != "false" && word != "null" {
				return true
			}
			i = j - 1
		}
	}
	return false
}

// tooDeepForScan reports whether frame holds more open brackets than
// wire.Scan (like encoding/json) accepts nesting, so that it may be JSON
// the scanner refused only for its depth.
func tooDeepForScan(frame []byte) bool {
	return bytes.Count(frame, []byte("["))+bytes.Count(frame, []byte("{")) > wire.DefaultMaxDepth
}

// nameSpan is a member name in a walked frame: v[s:e], quotes included.
type nameSpan struct {
	s, e int32
	esc  bool // the name has escapes, so it compares decoded
}

// walkEdges walks valid JSON v, nested depth containers deep, and returns
// the edges only a full walk finds: lone surrogate escapes, nesting beyond
// depthEdge, numbers beyond float64, repeated member names (edgeDupID when
// the repeated name is the envelope's "id"). It allocates only for frames
// nested deeper than 64 or with more than 32 member names open at once.
func walkEdges(v []byte, depth int) edge {
	var e edge
	var objBuf [64]bool
	var startBuf [64]int32
	var nameBuf [32]nameSpan
	isObj, starts, names := objBuf[:0], startBuf[:0], nameBuf[:0]
	expectKey := false
	base := depth
	ids := 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '{' || c == '[':
			depth++
			if depth > depthEdge {
				e |= edgeLimit
			}
			isObj = append(isObj, c == '{')
			starts = append(starts, int32(len(names)))
			expectKey = c == '{'
		case c == '}' || c == ']':
			depth--
			if n := len(isObj); n > 0 {
				if isObj[n-1] && hasDuplicateName(v, names[starts[n-1]:]) {
					e |= edgeDupKey
				}
				names = names[:starts[n-1]]
				isObj, starts = isObj[:n-1], starts[:n-1]
			}
			expectKey = false
		case c == ',':
			expectKey = len(isObj) > 0 && isObj[len(isObj)-1]
		case c == '"':
			end := skipString(v, i)
			s := v[i:end]
			esc := bytes.IndexByte(s, '\\') >= 0
			if esc && loneSurrogate(s) {
				e |= edgeLimit
			}
			if expectKey && len(isObj) > 0 {
				names = append(names, nameSpan{int32(i), int32(end), esc})
				if depth == base+1 && memberOf(s) == memID {
					if ids++; ids == 2 {
						e |= edgeDupID | edgeDupKey
					}
				}
				expectKey = false
			}
			i = end - 1
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(v) && (v[j] >= '0' && v[j] <= '9' || v[j] == '.' || v[j] == 'e' || v[j] == 'E' || v[j] == '+' || v[j] == '-') {
				j++
			}
			if beyondFloat64(v[i:j]) {
				e |= edgeLimit
			}
			i = j - 1
		}
	}
	return e
}

// beyondFloat64 reports whether the number text n does not parse as a
// float64 (out of range). Short plain numbers always do.
func beyondFloat64(n []byte) bool {
	if len(n) <= 16 && !bytes.ContainsAny(n, "eE") {
		return false
	}
	_, err := strconv.ParseFloat(string(n), 64)
	return err != nil
}

// hasDuplicateName reports whether two of one object's member names are
// equal once decoded: pairwise for small objects, after sorting for wide
// ones (which sorts names in place).
func hasDuplicateName(v []byte, names []nameSpan) bool {
	if len(names) <= 8 {
		for i := 1; i < len(names); i++ {
			for j := range i {
				if compareNames(v, names[i], names[j]) == 0 {
					return true
				}
			}
		}
		return false
	}
	slices.SortFunc(names, func(a, b nameSpan) int { return compareNames(v, a, b) })
	for i := 1; i < len(names); i++ {
		if compareNames(v, names[i-1], names[i]) == 0 {
			return true
		}
	}
	return false
}

// compareNames orders member names by their decoded content.
func compareNames(v []byte, a, b nameSpan) int {
	ra, rb := v[a.s+1:a.e-1], v[b.s+1:b.e-1]
	if !a.esc && !b.esc {
		return bytes.Compare(ra, rb)
	}
	var bufA, bufB [64]byte
	if a.esc {
		ra, _ = wire.Unquote(bufA[:0], v[a.s:a.e])
	}
	if b.esc {
		rb, _ = wire.Unquote(bufB[:0], v[b.s:b.e])
	}
	return bytes.Compare(ra, rb)
}

// skipString returns the offset after the string starting at the quote
// d[i], or len(d) when it does not end.
func skipString(d []byte, i int) int {
	j := i + 1
	// A byte loop for the first bytes: most strings are short, and
	// IndexByte pays off only on long ones.
	for limit := min(len(d), j+32); j < limit; j++ {
		switch d[j] {
		case '"':
			return j + 1
		case '\\':
			j++
		}
	}
	for j < len(d) {
		k := bytes.IndexByte(d[j:], '"')
		if k < 0 {
			break
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && d[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
	return len(d)
}

// stops are the bytes skipValue looks at inside a container; delimiters
// end a scalar.
var stops, delimiters [256]bool

func init() {
	for _, c := range []byte(`"{}[]`) {
		stops[c] = true
	}
	for _, c := range []byte(",:}] \t\n\r") {
		delimiters[c] = true
	}
}

// skipValue returns the offset after the JSON value starting at d[i], for
// text Scan accepted: strings and brackets are matched, scalars end at the
// next delimiter. On other text it stays in bounds and ends somewhere.
func skipValue(d []byte, i int) int {
	if i >= len(d) {
		return i
	}
	switch d[i] {
	case '"':
		return skipString(d, i)
	case '{', '[':
	default:
		for i < len(d) && !delimiters[d[i]] {
			i++
		}
		return i
	}
	depth := 0
	for i < len(d) {
		for i < len(d) && !stops[d[i]] {
			i++
		}
		if i >= len(d) {
			break
		}
		switch d[i] {
		case '"':
			i = skipString(d, i)
			continue
		case '{', '[':
			depth++
		default:
			if depth--; depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return i
}

// loneSurrogate reports whether the JSON string s has a \u escape of a
// UTF-16 surrogate that is not part of a high-low pair.
func loneSurrogate(s []byte) bool {
	for i := 0; i+5 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if s[i+1] != 'u' {
			i++
			continue
		}
		r := hex4(s[i+2:])
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			if i+11 >= len(s) || s[i+6] != '\\' || s[i+7] != 'u' {
				return true
			}
			if lo := hex4(s[i+8:]); lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

// hex4 decodes four hex digits, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			c = (c | 0x20) - 'a' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// judgeBatch judges the reply to a non-empty batch (§6): an array with one
// response for every element that needs one, paired with the elements as
// the comment atop this file says; nothing when no element needs one.
func judgeBatch(input, reply []byte, r *wire.Message) (Set, string) {
	sc := scratchPool.Get().(*batchScratch)
	defer sc.release()
	reqs := sc.requests(input)
	if r == nil || r.Kind == wire.KindBatch && r.BatchLen == 0 {
		return judgeBatchSilence(reqs, r)
	}
	env := Envelope(r)
	if env.Has(InvalidJSON) {
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
			return env.Add(ReplyToNotification), "a batch of only notifications was answered with " + describe(r)
		}
		return env.Add(BatchNotArray), "a batch of " + strconv.Itoa(len(reqs)) + " answered with a single object: " + describe(r)
	}
	b := newBatchMatch(sc, r.BatchLen)
	b.pair(reply)
	b.reassign()
	for i := range reqs {
		if q := &reqs[i]; !q.matched && q.required() && b.found(Set(0).Add(BatchMissingReply)) {
			b.note = "no response for element " + strconv.Itoa(i) + idSuffix(q)
		}
	}
	return b.rules | env, b.noteText(env, r)
}

// judgeBatchSilence judges silence (r nil) or [] as the reply to a batch:
// right when no element needs a reply, except that §6 forbids [] then too.
func judgeBatchSilence(reqs []request, r *wire.Message) (Set, string) {
	required, readable := 0, false
	for i := range reqs {
		if q := &reqs[i]; q.required() {
			required++
			readable = readable || q.readableID() && q.m.IDKind != wire.IDNull
		}
	}
	if r != nil {
		env := Envelope(r)
		if required == 0 {
			return env.Add(ReplyToNotification), "a batch no element of which needs a reply answered with []; the server MUST NOT return an empty array"
		}
		return env.Add(BatchMissingReply), "a batch of " + strconv.Itoa(len(reqs)) + " answered with []"
	}
	switch {
	case required == 0:
		return 0, ""
	case readable:
		return Set(0).Add(Hang), "no reply to a batch of " + strconv.Itoa(len(reqs)) + " with " + strconv.Itoa(required) + " requests needing one"
	}
	return Set(0).Add(WrongErrorCode), "no reply to a batch of " + strconv.Itoa(len(reqs)) + " invalid requests; want an array of -32600 errors with id null"
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
	it := elemIter{d: input}
	s.reqs = s.reqs[:0]
	for {
		elem, ok := it.next()
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
	pendDone                   // paired
)

// The candidate lists of a batch: requests a reply may be paired with
// besides those the id index finds.
const (
	listAnyID = iota // "id" repeated: any id may answer
	listLoose        // ids float64 cannot hold: a rounded echo may answer
	listEdgy         // requests with an edge, which a tolerance may let take any reply
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

// nullList returns the candidate list of a tier and category.
func nullList(tier int, cat byte) int { return listNull + tier*numCategories + int(cat-catInvalid) }

// The categories of requests, by the replies they expect, so that a reply
// looks for its request where it fits best: an error -32600 among invalid
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
	rules  Set
	note   string
	notes  int
	noted  Rule // the most severe rule of the finding note describes
}

// newBatchMatch indexes sc.reqs for a reply array of replies elements.
func newBatchMatch(sc *batchScratch, replies int) *batchMatch {
	b := &sc.match
	lists := b.lists
	*b = batchMatch{sc: sc, reqs: sc.reqs, allIDs: true, budget: judgeBudget*(len(sc.reqs)+replies) + 256}
	for k := range b.lists {
		b.lists[k] = candidates{idx: lists[k].idx[:0], start: &b.starts[k]}
	}
	x := &sc.index
	x.reset()
	for i := range b.reqs {
		q := &b.reqs[i]
		if q.class == Notification {
			b.notifs = true
		}
		readable := q.readableID() && q.m.IDKind != wire.IDNull
		if !readable {
			b.allIDs = false
		}
		if q.edges&edgeDupID != 0 {
			b.lists[listAnyID].add(i)
		}
		// Whether an element without an id needs a reply may take a walk
		// to tell; it counts as needing one here, where only the order of
		// the search depends on it.
		switch required := q.needsReply() && !q.silenceTolerated(false); {
		case required && !readable:
			b.lists[nullList(tierOnlyNull, category(q))].add(i)
		case required && (q.class == InvalidRequest || q.class == InvalidParams):
			b.lists[nullList(tierAlsoNull, category(q))].add(i)
		case !required && q.class != Notification:
			b.lists[nullList(tierOptional, category(q))].add(i)
		}
		if !readable {
			continue
		}
		if q.looseNumericID() {
			b.lists[listLoose].add(i)
		}
		x.add(category(q), q.m.ID, int32(i))
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
// request: an error -32600 to invalid requests first, -32602 to requests
// with scalar params, anything else to calls.
func categoryOrder(rm *wire.Message) [numCategories]byte {
	const f = catFlexible
	switch {
	case rm.Kind == wire.KindError && rm.HasCode && rm.Code == wire.CodeInvalidRequest:
		return [...]byte{catInvalid, catInvalid + f, catParams, catParams + f, catCall, catCall + f, catAnyID}
	case rm.Kind == wire.KindError && rm.HasCode && rm.Code == wire.CodeInvalidParams:
		return [...]byte{catParams, catParams + f, catCall, catCall + f, catInvalid, catInvalid + f, catAnyID}
	}
	return [...]byte{catCall, catCall + f, catParams, catParams + f, catInvalid, catInvalid + f, catAnyID}
}

// pair pairs every element of the reply array with a request, in passes:
// responses with an id to the requests with that id, then to those whose
// id is in doubt; responses with id null; then those left over by moving
// paired ones along (an augmenting path, as in bipartite matching); what
// is still left is judged against the request it most likely answers.
func (b *batchMatch) pair(reply []byte) {
	sc := b.sc
	it := elemIter{d: reply}
	var rm wire.Message
	for k := 0; ; k++ {
		elem, ok := it.next()
		if !ok {
			break
		}
		wire.Scan(elem, &rm)
		if env := Envelope(&rm); b.found(env) {
			b.note = "reply element " + strconv.Itoa(k) + ": " + rm.Problems.String()
		}
		state := pendID
		switch {
		case rm.Kind == wire.KindRequest || rm.Kind == wire.KindNotification:
			if b.found(Set(0).Add(BatchExtraReply)) {
				b.note = "reply element " + strconv.Itoa(k) + " is a request, not a response"
			}
			continue
		case rm.Kind != wire.KindResult && rm.Kind != wire.KindError:
			continue // Envelope flagged it
		case rm.IDKind == wire.IDNull:
			state = pendNullError
			if rm.Kind == wire.KindResult {
				state = pendNullValue
			}
		case rm.IDKind != wire.IDString && rm.IDKind != wire.IDNumber:
			// Envelope flagged the id; the response still answers an
			// element (geth echoes an id true as sent), which is not
			// unanswered then, so it is paired as one with id null.
			state = pendBadID
		}
		j := int32(len(sc.pend))
		sc.pend = append(sc.pend, pendingReply{id: rm.ID, code: rm.Code, k: k, kind: rm.Kind, idKind: rm.IDKind, hasCode: rm.HasCode, state: state})
		if state == pendID && b.byID(&rm, j) >= 0 {
			sc.pend[j].state = pendDone
		}
	}
	pend := sc.pend
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
	b.sc.key = appendIDKey(b.sc.key[:0], rm.ID)
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
		if q := &b.reqs[i]; !q.matched && q.fits(rm, false) {
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
		if q.stamp == b.stamp || !q.matched || !q.fits(rm, false) {
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
		if b.found(Set(0).Add(DuplicateReply)) {
			b.note = "reply element " + strconv.Itoa(k) + ": a second response for id " + short(rm.ID)
		}
		return
	}
	if b.found(Set(0).Add(BatchExtraReply)) {
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
		if compareIDs(b.reqs[i].m.ID, rm.ID, true) == idEqual {
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
		key = appendNumberKey(append(b.sc.key[:0], typeChangedKey, 'n'), rm.ID)
	} else {
		var buf [64]byte
		content, ok := unquoteName(buf[:0], rm.ID)
		if !ok || !wire.IsNumber(content) {
			return -1
		}
		key = appendNumberKey(append(b.sc.key[:0], 'n'), content)
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
	var s Set
	var why string
	switch {
	case b.notifs:
		s, why = Set(0).Add(ReplyToNotification), " answers no request: a notification was answered"
	case b.allIDs:
		s, why = Set(0).Add(UnexpectedNullID), ": every request of the batch had a readable id"
	default:
		s, why = Set(0).Add(BatchExtraReply), " answers no request of the batch"
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
		if q.fits(rm, strict) {
			q.matched, q.by = true, j
			return int(i)
		}
	}
	return -1
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
func (b *batchMatch) found(s Set) bool {
	if s == 0 {
		return false
	}
	b.rules |= s
	b.notes++
	if r := MostSevere(s); b.notes == 1 || r.Rank() < b.noted.Rank() {
		b.noted = r
		return true
	}
	return false
}

// noteText returns the note of a batch judged with the reply array's own
// envelope rules env: the note found kept, or the array's envelope when
// that names the finding.
func (b *batchMatch) noteText(env Set, r *wire.Message) string {
	if b.notes == 0 || env != 0 && MostSevere(env).Rank() < b.noted.Rank() {
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

// candidates is a list of request indices consumed from the front as
// requests get matched, so that a batch of n requests with one id is
// matched in linear time.
type candidates struct {
	idx   []int32
	start *int32 // idx[:*start] are all matched
}

func (c *candidates) add(i int) { c.idx = append(c.idx, int32(i)) }

// unmatched drops the matched prefix and returns the rest (which may still
// hold matched indices further on).
func (c *candidates) unmatched(reqs []request) []int32 {
	s := c.start
	for int(*s) < len(c.idx) && reqs[c.idx[*s]].matched {
		*s++
	}
	return c.idx[*s:]
}

// first returns the first unmatched request of c, or -1.
func (c *candidates) first(reqs []request) int {
	if rest := c.unmatched(reqs); len(rest) > 0 {
		return int(rest[0])
	}
	return -1
}

// idIndex finds a batch's requests by id, in groups by category: keys
// sorted once, looked up by binary search, no map.
type idIndex struct {
	keys  []byte
	ents  []idEntry // sorted by key, category, request
	elems []int32   // the requests of ents, in order
	heads []int32   // per group (at its first entry): how many of its first requests are matched
	ends  []int32   // per group (at its first entry): where it ends
	// repeats is the sum over the keys of g*(g-1), g the number of
	// entries under the key: the pairs of requests that share an id.
	repeats int
}

type idEntry struct {
	off, end int // the key: keys[off:end]
	elem     int32
	cat      byte
}

func (x *idIndex) reset() {
	x.keys, x.ents, x.elems, x.heads, x.ends = x.keys[:0], x.ents[:0], x.elems[:0], x.heads[:0], x.ends[:0]
}

// add indexes request elem of category cat under its raw id, and a string
// id that reads as a number also under typeChangedKey of that number.
func (x *idIndex) add(cat byte, id []byte, elem int32) {
	off := len(x.keys)
	x.keys = appendIDKey(x.keys, id)
	x.ents = append(x.ents, idEntry{off, len(x.keys), elem, cat})
	if content := x.keys[off:]; content[0] == 's' && wire.IsNumber(content[1:]) {
		off = len(x.keys)
		x.keys = appendNumberKey(append(x.keys, typeChangedKey, 'n'), content[1:])
		x.ents = append(x.ents, idEntry{off, len(x.keys), elem, cat})
	}
}

func (x *idIndex) key(k int) []byte { return x.keys[x.ents[k].off:x.ents[k].end] }

func (x *idIndex) sort() {
	slices.SortFunc(x.ents, func(a, b idEntry) int {
		if c := bytes.Compare(x.keys[a.off:a.end], x.keys[b.off:b.end]); c != 0 {
			return c
		}
		if a.cat != b.cat {
			return cmp.Compare(a.cat, b.cat)
		}
		return cmp.Compare(a.elem, b.elem)
	})
	for _, e := range x.ents {
		x.elems = append(x.elems, e.elem)
		x.heads = append(x.heads, 0)
		x.ends = append(x.ends, 0)
	}
	x.repeats = 0
	same := 0 // entries before k with k's key
	for k := 0; k < len(x.ents); {
		end := k + 1
		for end < len(x.ents) && x.ents[end].cat == x.ents[k].cat && bytes.Equal(x.key(end), x.key(k)) {
			end++
		}
		x.ends[k] = int32(end)
		if k > 0 && !bytes.Equal(x.key(k-1), x.key(k)) {
			same = 0
		}
		for g := end - k; g > 0; g-- {
			x.repeats += 2 * same
			same++
		}
		k = end
	}
}

// find stores in gs the groups of requests indexed under key, one per
// category, each in batch order, and returns how many there are.
func (x *idIndex) find(key []byte, gs *[numCategories]idGroup) int {
	n := len(x.ents)
	k := sort.Search(n, func(k int) bool { return bytes.Compare(x.key(k), key) >= 0 })
	c := 0
	for ; k < n && c < numCategories && bytes.Equal(x.key(k), key); k = int(x.ends[k]) {
		gs[c] = idGroup{x.ents[k].cat, candidates{idx: x.elems[k:x.ends[k]], start: &x.heads[k]}}
		c++
	}
	return c
}

// idGroup is the requests of one category under one id.
type idGroup struct {
	cat  byte
	reqs candidates
}

// ordered returns the n groups of gs in the category order of rm, which
// it stores in out.
func ordered(rm *wire.Message, gs *[numCategories]idGroup, n int, out *[numCategories]candidates) []candidates {
	m := 0
	for _, cat := range categoryOrder(rm) {
		for _, g := range gs[:n] {
			if g.cat == cat {
				out[m] = g.reqs
				m++
			}
		}
	}
	return out[:m]
}

// elemIter walks the elements of an array that Scan accepted, like
// wire.NextElement but without validating each element again. It stays in
// bounds and ends on anything else.
type elemIter struct {
	d       []byte
	i       int
	started bool
}

func (it *elemIter) next() ([]byte, bool) {
	d := it.d
	i := skipJSONSpace(d, it.i)
	want := byte(',')
	if !it.started {
		it.started, want = true, '['
	}
	if i >= len(d) || d[i] != want {
		it.i = len(d)
		return nil, false
	}
	i = skipJSONSpace(d, i+1)
	if i >= len(d) || d[i] == ']' {
		it.i = len(d)
		return nil, false
	}
	end := skipValue(d, i)
	if end <= i {
		it.i = len(d)
		return nil, false
	}
	it.i = end
	return d[i:end], true
}

// idSuffix names a request's id for notes.
func idSuffix(q *request) string {
	if q.m.ID == nil {
		return ""
	}
	return " (id " + short(q.m.ID) + ")"
}

// describe says what a reply is, for notes: "result", "error -32601".
func describe(r *wire.Message) string {
	switch {
	case r.Kind == wire.KindResult:
		return "a result"
	case r.Kind == wire.KindError && r.HasCode:
		return "error " + strconv.FormatInt(r.Code, 10)
	case r.Kind == wire.KindError:
		return "an error without an integer code"
	}
	return "something that is not a response"
}

// short returns raw for a note, cut to a readable length: fuzz inputs
// carry megabyte ids.
func short(raw []byte) string {
	const limit = 40
	if len(raw) <= limit {
		return string(raw)
	}
	return string(raw[:limit]) + "..."
}

func prefixed(note string) string {
	if note == "" {
		return ""
	}
	return "; " + note
}

func envelopeNote(env Set, r *wire.Message) string {
	if env == 0 {
		return ""
	}
	return "reply envelope: " + r.Problems.String()
}

// ID comparison outcomes.
const (
	idDifferent = iota
	idEqual
	idTypeChanged
)

// compareIDs compares a request id with a reply id, both raw JSON strings
// or numbers: strings by decoded content, numbers by exact decimal value
// (so 1e2 echoes 100), or as float64 when loose. A request string with
// invalid UTF-8 or a lone surrogate escape also matches the text a decoder
// reads from it, each bad stretch replaced by U+FFFD (raw or escaped; one
// per byte as Go does, or one per stretch as WHATWG decoders do). A string
// and a number of the same value are idTypeChanged. It allocates only for
// ids longer than a few dozen bytes.
func compareIDs(req, rep []byte, loose bool) int {
	reqStr, repStr := len(req) > 0 && req[0] == '"', len(rep) > 0 && rep[0] == '"'
	var bufA, bufB [64]byte
	switch {
	case reqStr && repStr:
		a, okA := unquoteName(bufA[:0], req)
		b, okB := unquoteName(bufB[:0], rep)
		if okA && okB && (bytes.Equal(a, b) || replacedText(req) && equalReplaced(a, b)) {
			return idEqual
		}
		return idDifferent
	case !reqStr && !repStr:
		if bytes.Equal(req, rep) || bytes.Equal(appendNumberKey(bufA[:0], req), appendNumberKey(bufB[:0], rep)) {
			return idEqual
		}
		if loose {
			a, errA := strconv.ParseFloat(string(req), 64)
			b, errB := strconv.ParseFloat(string(rep), 64)
			if errA == nil && errB == nil && a == b {
				return idEqual
			}
		}
		return idDifferent
	}
	str, number := req, rep
	if repStr {
		str, number = rep, req
	}
	content, ok := unquoteName(bufA[:0], str)
	if ok && wire.IsNumber(content) && bytes.Equal(appendNumberKey(bufB[:0], content), appendNumberKey(nil, number)) {
		return idTypeChanged
	}
	return idDifferent
}

// appendIDKey appends an index key for a raw string or number id: 's' and the
// decoded content, or 'n' and appendNumberKey. Decoding replaces invalid
// UTF-8 and lone surrogates with U+FFFD, and a run of U+FFFD keys as one,
// so that an id and its echo through any decoder share a key (compareIDs
// then judges the pair).
func appendIDKey(dst, id []byte) []byte {
	if len(id) > 0 && id[0] == '"' {
		start := len(dst) + 1
		if content, ok := wire.Unquote(append(dst, 's'), id); ok {
			if bytes.Contains(content[start:], replacementChar) {
				content = collapseReplacements(content, start)
			}
			return content
		}
		return append(append(dst, 'r'), id...)
	}
	return appendNumberKey(append(dst, 'n'), id)
}

// replacementChar is U+FFFD in UTF-8, what decoders put in place of text
// they cannot read.
var replacementChar = []byte("\uFFFD")

// replacedText reports whether the raw JSON string s holds text a decoder
// replaces with U+FFFD: invalid UTF-8 or a lone surrogate escape.
func replacedText(s []byte) bool {
	return !utf8.Valid(s) || bytes.Contains(s, []byte(`\u`)) && loneSurrogate(s)
}

// equalReplaced reports whether the decoded strings a and b are equal when
// every run of U+FFFD or invalid UTF-8 in either counts as one character:
// decoders replace a bad byte sequence with one U+FFFD per byte (Go) or
// one per maximal bad stretch (WHATWG, Python).
func equalReplaced(a, b []byte) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ra, na := utf8.DecodeRune(a[i:])
		rb, nb := utf8.DecodeRune(b[j:])
		if ra != rb {
			return false
		}
		if ra == utf8.RuneError {
			i, j = skipReplaced(a, i), skipReplaced(b, j)
			continue
		}
		i, j = i+na, j+nb
	}
	return i == len(a) && j == len(b)
}

// skipReplaced returns the offset after the run of U+FFFD and invalid
// UTF-8 starting at s[i].
func skipReplaced(s []byte, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRune(s[i:])
		if r != utf8.RuneError {
			break
		}
		i += n
	}
	return i
}

// collapseReplacements shortens every run of U+FFFD in key[from:] to one,
// in place.
func collapseReplacements(key []byte, from int) []byte {
	out := from
	prev := false
	for i := from; i < len(key); {
		if bytes.HasPrefix(key[i:], replacementChar) {
			if !prev {
				out += copy(key[out:], replacementChar)
			}
			prev = true
			i += len(replacementChar)
			continue
		}
		prev = false
		key[out] = key[i]
		out++
		i++
	}
	return key[:out]
}

// EchoesID reports whether reply, the raw id of a response (a JSON string
// or number), carries the raw request id req as JudgeFuzzReply judges ids:
// an equal value of the same JSON type, the float64 nearest to a number id
// float64 cannot hold exactly, or the text a decoder reads from a string
// with invalid UTF-8 or lone surrogates. It is for pairing replies with
// the frames of a stream the way the oracle would, and does not allocate
// for ids up to a few dozen bytes.
func EchoesID(req, reply []byte) bool {
	loose := len(req) > 0 && req[0] != '"' && !safeInteger(req)
	return compareIDs(req, reply, loose) == idEqual
}

// appendNumberKey appends a canonical spelling of the JSON number raw: sign,
// significant digits without leading or trailing zeros, 'e', the decimal
// exponent of the point before them. Equal values spell the same (1, 1.0,
// 10e-1, -0 and 0); exponents past ±10^15 saturate, which only merges
// values no float64 holds anyway. Raw that is not a number is kept as is.
func appendNumberKey(dst, raw []byte) []byte {
	if k, ok := appendIntegerKey(dst, raw); ok {
		return k
	}
	if !wire.IsNumber(raw) {
		return append(append(dst, '?'), raw...)
	}
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	mant, exp := raw, int64(0)
	if i := bytes.IndexAny(raw, "eE"); i >= 0 {
		mant, exp = raw[:i], parseExponent(raw[i+1:])
	}
	intPart, frac := mant, []byte(nil)
	if i := bytes.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	digit := func(i int) byte {
		if i < len(intPart) {
			return intPart[i]
		}
		return frac[i-len(intPart)]
	}
	n := len(intPart) + len(frac)
	lead := 0
	for lead < n && digit(lead) == '0' {
		lead++
	}
	if lead == n {
		return append(dst, '0')
	}
	end := n
	for digit(end-1) == '0' {
		end--
	}
	if neg {
		dst = append(dst, '-')
	}
	for i := lead; i < end; i++ {
		dst = append(dst, digit(i))
	}
	point := clampExp(int64(len(intPart)-lead) + exp)
	return strconv.AppendInt(append(dst, 'e'), point, 10)
}

// appendIntegerKey is appendNumberKey for plain integers (no fraction, no
// exponent, no leading zero), the ids of most requests, without its general
// walk; false for other text.
func appendIntegerKey(dst, raw []byte) ([]byte, bool) {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || digits[0] == '0' && len(digits) > 1 {
		return dst, false
	}
	end := len(digits)
	for _, c := range digits {
		if c < '0' || c > '9' {
			return dst, false
		}
	}
	if digits[0] == '0' {
		return append(dst, '0'), true
	}
	for digits[end-1] == '0' {
		end--
	}
	if len(digits) < len(raw) {
		dst = append(dst, '-')
	}
	dst = append(dst, digits[:end]...)
	return strconv.AppendInt(append(dst, 'e'), int64(len(digits)), 10), true
}

const expClamp = 1_000_000_000_000_000

func clampExp(e int64) int64 {
	return max(-expClamp, min(expClamp, e))
}

// parseExponent reads an exponent's optional sign and digits, saturating.
func parseExponent(b []byte) int64 {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg, b = b[0] == '-', b[1:]
	}
	var e int64
	for _, c := range b {
		if e < expClamp {
			e = e*10 + int64(c-'0')
		}
	}
	if neg {
		e = -e
	}
	return clampExp(e)
}

// safeInteger reports whether the raw JSON number is an integer float64
// holds exactly: no fraction or exponent, magnitude at most 2^53.
func safeInteger(raw []byte) bool {
	digits := bytes.TrimPrefix(raw, []byte("-"))
	if len(digits) == 0 || len(digits) > 16 {
		return false
	}
	var n uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + uint64(c-'0')
	}
	return n <= 1<<53
}

// skipJSONSpace returns the offset of the first byte at or after i that is
// not JSON whitespace.
func skipJSONSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}
