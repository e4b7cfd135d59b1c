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
//	invalid request               | error -32600; id null, or the request's id  | other code or a result -> wrong_error_code (MUST);
//	 (no/non-string method, bad   |  when it was readable (§5 names Invalid     |  silence -> hang if the id was readable, else wrong_error_code;
//	 jsonrpc, id of a wrong type, |  Request among the cases that may get null) |  an unreadable id answered non-null -> wrong_error_code;
//	 a scalar, a response object) |                                             |  a different readable id -> unknown_id / id_type_changed
//	scalar params (InvalidParams) | error -32602 with the id, or -32600 (id or  | other code or a result -> wrong_error_code (MUST);
//	                              |  null); nothing if it has no id             |  silence with an id -> hang
//	notification                  | nothing (§4.1 MUST NOT)                     | any reply -> reply_to_notification (MUST)
//	call                          | a response with the same id, same type (§5) | silence -> hang; id null -> unexpected_null_id; another id ->
//	                              |  and a valid envelope (Envelope)            |  unknown_id; 7 for "7" -> id_type_changed; -32700 -> wrong_error_code
//	[] (EmptyBatch)               | one error -32600, id null (§6 MUST)         | anything else or silence -> empty_batch_reply_wrong (MUST)
//	batch                         | an array, one response per element that     | a single object -> batch_not_array; a request unanswered ->
//	                              |  needs one, any order (§6); nothing at all  |  batch_missing_reply; a reply answering nothing ->
//	                              |  when none does (§6 MUST NOT send [])       |  batch_extra_reply; twice -> duplicate_reply; each element judged
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
// passes.
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
//	duplicate member names (any object)             | the answer under either occurrence: any error  | RFC 8259 §4: names SHOULD be unique, the
//	                                                |  with id null or the id; a result with the id; |  outcome with duplicates is unpredictable
//	                                                |  silence when there is no id; any id when      |
//	                                                |  "id" itself is repeated                       |
//	id null, with a fraction or exponent, or an     | error -32600 with id null; an echo equal as    | §4: null is discouraged (JSON-RPC 1.0 used it
//	 integer beyond ±2^53                           |  float64; silence for id null                 |  for notifications); fractions SHOULD NOT
//	members besides jsonrpc/id/method/params        | error -32600 with id null or the id            | §4 lists the members; strict servers refuse
//	a response object sent to the server            | silence                                        | peers of MCP and LSP receive responses
//	"params": null                                  | the answer to the request without params       | common servers read null as absent
//	a batch of more than 100 elements, over 1 MiB,  | one error object with id null                  | servers cap batches (protocols.md §4); a
//	 or with an element of the two rows above       |                                                |  parser refusing an element refuses the frame
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
	"encoding/json"
	"strconv"

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
// is pure and does not allocate. Member repeats are read last-wins, like
// encoding/json; JudgeFuzzReply tolerates the answer to the other reading.
func ClassifyRequest(frame []byte) RequestClass {
	var m wire.Message
	wire.Scan(frame, &m)
	return classifyMessage(&m, true)
}

// classifyMessage classifies one scanned frame or batch element (top is
// false for elements: an array inside a batch is not a nested batch but an
// invalid Request object).
func classifyMessage(m *wire.Message, top bool) RequestClass {
	switch {
	case m.Problems.Has(wire.ProblemInvalidJSON):
		return ParseError
	case m.Kind == wire.KindBatch && top:
		if m.BatchLen == 0 {
			return EmptyBatch
		}
		return Batch
	case m.Kind != wire.KindRequest && m.Kind != wire.KindNotification:
		return InvalidRequest
	case m.Problems&(wire.ProblemBadVersion|wire.ProblemBadID|wire.ProblemBadMethod) != 0:
		return InvalidRequest
	case m.Problems.Has(wire.ProblemBadParams):
		return InvalidParams
	case m.Kind == wire.KindNotification:
		return Notification
	}
	return Call
}

// Limits of the tolerances in the comment atop this file.
const (
	sizeEdge      = 1 << 20 // a frame this long may hit a server's size limit
	depthEdge     = 64      // nesting deeper than this may hit a parser's depth limit
	batchCapEdge  = 100     // a batch longer than this may be refused as a whole
	safeIntDigits = 15      // integers with at most this many digits are exact in float64
	pickTries     = 8       // candidates judged for the clean match of one batch reply
	scanLimit     = 64      // candidates looked at for one batch reply
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
	q := newRequest(input, 0, len(input))
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

// request is one input frame or batch element with what judging it needs.
type request struct {
	raw      []byte
	m        wire.Message
	class    RequestClass
	depth    int // containers around raw: 1 for a batch element
	frameLen int // length of the whole input frame
	edges    edge
	analysed bool
}

func newRequest(raw []byte, depth, frameLen int) *request {
	q := &request{raw: raw, depth: depth, frameLen: frameLen}
	wire.Scan(raw, &q.m)
	q.class = classifyMessage(&q.m, depth == 0)
	return q
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
	if s == 0 {
		note = envelopeNote(env, r)
	}
	return env | s, note
}

// judge holds r (nil: silence) against what q's class requires, then drops
// the verdict when a tolerance of the comment atop this file covers the reply.
// Replies that are not responses (Kind invalid) are left to Envelope.
func (q *request) judge(r *wire.Message) (Set, string) {
	if r != nil && r.Kind != wire.KindResult && r.Kind != wire.KindError {
		if q.class == Notification {
			return Set(0).Add(ReplyToNotification), "a notification was answered"
		}
		return 0, ""
	}
	s, note := q.strict(r)
	if s != 0 && q.class != ParseError && q.tolerates(r) {
		return 0, ""
	}
	return s, note
}

// strict is the verdict without tolerances.
func (q *request) strict(r *wire.Message) (Set, string) {
	wrong := Set(0).Add(WrongErrorCode)
	switch q.class {
	case Notification:
		if r == nil {
			return 0, ""
		}
		return Set(0).Add(ReplyToNotification), "a notification was answered with " + describe(r)
	case ParseError:
		const want = "; want error -32700 with id null"
		switch {
		case r == nil:
			return wrong, "no reply to unparseable input" + want
		case r.Kind != wire.KindError || !r.HasCode || r.Code != wire.CodeParseError:
			return wrong, "unparseable input answered with " + describe(r) + want
		case r.IDKind != wire.IDNull && r.IDKind != wire.IDAbsent:
			return wrong, "the parse error carries id " + short(r.ID) + want
		}
		return 0, ""
	case InvalidRequest:
		switch {
		case r == nil && q.readableID() && q.m.IDKind != wire.IDNull:
			return Set(0).Add(Hang), "no reply to an invalid request with id " + short(q.m.ID) + "; want error -32600"
		case r == nil:
			return wrong, "no reply to an invalid request; want error -32600 with id null"
		case r.Kind != wire.KindError || !r.HasCode || r.Code != wire.CodeInvalidRequest:
			return wrong, "an invalid request answered with " + describe(r) + "; want error -32600"
		}
		return q.checkID(r, true)
	case InvalidParams:
		switch {
		case r == nil && q.readableID() && q.m.IDKind != wire.IDNull:
			return Set(0).Add(Hang), "no reply to a request with scalar params, id " + short(q.m.ID) + "; want error -32602 or -32600"
		case r == nil:
			return 0, ""
		case r.Kind != wire.KindError || !r.HasCode || (r.Code != wire.CodeInvalidParams && r.Code != wire.CodeInvalidRequest):
			return wrong, "a request with scalar params answered with " + describe(r) + "; want error -32602 or -32600"
		}
		return q.checkID(r, r.Code == wire.CodeInvalidRequest)
	case Call:
		switch {
		case r == nil:
			return Set(0).Add(Hang), "no reply to a call with id " + short(q.m.ID)
		case r.Kind == wire.KindError && r.HasCode && r.Code == wire.CodeParseError:
			s, note := q.checkID(r, false)
			return s.Add(WrongErrorCode), "a call in valid JSON answered with -32700 (parse error)" + prefixed(note)
		}
		return q.checkID(r, false)
	}
	return 0, ""
}

// checkID holds the response's id against the request's (§5): the same
// value and JSON type, or null where the id was unreadable (or, with
// nullOK, for an invalid request). A response without an id or with an id
// of a wrong type is left to Envelope.
func (q *request) checkID(r *wire.Message, nullOK bool) (Set, string) {
	if r.IDKind == wire.IDAbsent || r.IDKind == wire.IDOther {
		return 0, ""
	}
	if !q.readableID() {
		if r.IDKind == wire.IDNull {
			return 0, ""
		}
		return Set(0).Add(WrongErrorCode), "the request's id is unreadable, so the reply's id must be null, not " + short(r.ID)
	}
	if r.IDKind == wire.IDNull {
		if q.m.IDKind == wire.IDNull || nullOK {
			return 0, ""
		}
		return Set(0).Add(UnexpectedNullID), "reply id null; the request's id " + short(q.m.ID) + " was readable"
	}
	switch compareIDs(q.m.ID, r.ID, q.looseNumericID()) {
	case idEqual:
		return 0, ""
	case idTypeChanged:
		return Set(0).Add(IDTypeChanged), "reply id " + short(r.ID) + " for request id " + short(q.m.ID) + ": same value, other JSON type"
	}
	return Set(0).Add(UnknownID), "reply id " + short(r.ID) + "; want " + short(q.m.ID)
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
)

// analyse computes q.edges once; it walks the whole request, so it runs only
// when a strict verdict needs a second look.
func (q *request) analyse() edge {
	if q.analysed {
		return q.edges
	}
	q.analysed = true
	m := &q.m
	var e edge
	if q.frameLen > sizeEdge || m.Problems.Has(wire.ProblemInvalidUTF8) {
		e |= edgeLimit
	}
	if m.Problems.Has(wire.ProblemDuplicateKey) {
		e |= edgeDupKey
	}
	if m.Problems&(wire.ProblemExtraMember|wire.ProblemMixedMembers) != 0 {
		e |= edgeExtra
	}
	if m.Kind == wire.KindResult || m.Kind == wire.KindError {
		e |= edgeResponseLike
	}
	if m.IDKind == wire.IDNull || q.looseNumericID() {
		e |= edgeIDShape
	}
	if string(m.Params) == "null" {
		e |= edgeNullParams
	}
	q.edges = e | walkEdges(q.raw, q.depth)
	return q.edges
}

// tolerates reports whether r (nil: silence) is an answer the spec allows
// for one of q's edges although the strict verdict rejected it.
func (q *request) tolerates(r *wire.Message) bool {
	e := q.analyse()
	if e == 0 {
		return false
	}
	if r == nil {
		return e&edgeResponseLike != 0 || q.m.IDKind == wire.IDNull ||
			e&edgeDupKey != 0 && q.m.IDKind == wire.IDAbsent ||
			e&edgeNullParams != 0 && q.m.IDKind == wire.IDAbsent
	}
	isErr := r.Kind == wire.KindError
	sameID := q.readableID() && r.IDKind != wire.IDNull && r.IDKind != wire.IDAbsent &&
		compareIDs(q.m.ID, r.ID, q.looseNumericID()) == idEqual
	idOK := r.IDKind == wire.IDNull || sameID
	switch {
	case e&edgeDupID != 0:
		return true
	case e&(edgeLimit|edgeDupKey) != 0 && isErr && idOK:
		return true
	case e&edgeDupKey != 0 && sameID:
		return true
	case e&(edgeIDShape|edgeExtra|edgeResponseLike) != 0 && isErr && r.HasCode && r.Code == wire.CodeInvalidRequest && idOK:
		return true
	case e&edgeNullParams != 0:
		alt := *q
		alt.class = Call
		if q.m.IDKind == wire.IDAbsent {
			alt.class = Notification
		}
		s, _ := alt.strict(r)
		return s == 0
	}
	return false
}

// parseErrorTolerates applies the tolerances for input that is not JSON:
// a readable prefix or a frame readable without a BOM or Unicode spaces
// (judged as that JSON), JSON extensions, nesting beyond encoding/json.
func (q *request) parseErrorTolerates(reply []byte, r *wire.Message) bool {
	if alt, ok := readableAlternative(q.raw); ok {
		var s Set
		aq := newRequest(alt, 0, q.frameLen)
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
// it, or the first whole JSON value when more follows.
func readableAlternative(frame []byte) ([]byte, bool) {
	trimmed := bytes.TrimLeft(bytes.TrimSpace(bytes.TrimPrefix(frame, []byte("\uFEFF"))), "\x00")
	trimmed = bytes.TrimSpace(bytes.TrimRight(trimmed, "\x00"))
	if len(trimmed) < len(frame) && len(trimmed) > 0 {
		var m wire.Message
		if wire.Scan(trimmed, &m); !m.Problems.Has(wire.ProblemInvalidJSON) {
			return trimmed, true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(frame))
	var first json.RawMessage
	if dec.Decode(&first) != nil {
		return nil, false
	}
	if end := int(dec.InputOffset()); end < len(frame) && end > 0 {
		return frame[:end], true
	}
	return nil, false
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

// walkEdges walks valid JSON v, nested depth containers deep, and returns
// the edges only a full walk finds: lone surrogate escapes, nesting beyond
// depthEdge, numbers beyond float64, repeated member names (edgeDupID when
// the repeated name is the envelope's "id").
func walkEdges(v []byte, depth int) edge {
	var e edge
	// keys holds one set of member names per open container (nil for
	// arrays and for objects whose names were not collected yet).
	var keys []map[string]struct{}
	var isObj []bool
	expectKey := false
	base := depth
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '{' || c == '[':
			depth++
			if depth > depthEdge {
				e |= edgeLimit
			}
			keys = append(keys, nil)
			isObj = append(isObj, c == '{')
			expectKey = c == '{'
		case c == '}' || c == ']':
			depth--
			if n := len(keys); n > 0 {
				keys, isObj = keys[:n-1], isObj[:n-1]
			}
			expectKey = false
		case c == ',':
			expectKey = len(isObj) > 0 && isObj[len(isObj)-1]
		case c == '"':
			end := skipString(v, i)
			s := v[i:end]
			if loneSurrogate(s) {
				e |= edgeLimit
			}
			if expectKey && len(keys) > 0 {
				name, _ := wire.Unquote(nil, s)
				top := &keys[len(keys)-1]
				if *top == nil {
					*top = map[string]struct{}{}
				}
				if _, dup := (*top)[string(name)]; dup {
					e |= edgeDupKey
					if depth == base+1 && string(name) == "id" {
						e |= edgeDupID
					}
				}
				(*top)[string(name)] = struct{}{}
				expectKey = false
			}
			i = end - 1
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(v) && (v[j] >= '0' && v[j] <= '9' || v[j] == '.' || v[j] == 'e' || v[j] == 'E' || v[j] == '+' || v[j] == '-') {
				j++
			}
			if _, err := strconv.ParseFloat(string(v[i:j]), 64); err != nil {
				e |= edgeLimit
			}
			i = j - 1
		}
	}
	return e
}

// skipString returns the offset after the string starting at the quote
// d[i], or len(d) when it does not end.
func skipString(d []byte, i int) int {
	for i++; i < len(d); i++ {
		switch d[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(d)
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
// response for every element that needs one, matched by id in any order;
// nothing when no element needs one.
func judgeBatch(input, reply []byte, r *wire.Message) (Set, string) {
	var reqs []*request
	for off := 0; ; {
		elem, next, ok := wire.NextElement(input, off)
		if !ok {
			break
		}
		reqs = append(reqs, newRequest(elem, 1, len(input)))
		off = next
	}
	required, readable := 0, false
	for _, q := range reqs {
		if q.needsReply() {
			required++
			readable = readable || q.readableID() && q.m.IDKind != wire.IDNull
		}
	}
	n := strconv.Itoa(len(reqs))
	if r == nil {
		missing := 0
		for _, q := range reqs {
			if q.needsReply() && !q.tolerates(nil) {
				missing++
			}
		}
		switch {
		case missing == 0:
			return 0, ""
		case readable:
			return Set(0).Add(Hang), "no reply to a batch of " + n + " with " + strconv.Itoa(required) + " requests needing one"
		}
		return Set(0).Add(WrongErrorCode), "no reply to a batch of " + n + " invalid requests; want an array of -32600 errors with id null"
	}
	env := Envelope(r)
	if env.Has(InvalidJSON) {
		return env, "the reply to a batch is not JSON"
	}
	if r.Kind != wire.KindBatch {
		if r.Kind == wire.KindError && r.IDKind == wire.IDNull && refusableWhole(input, reqs) {
			return env, envelopeNote(env, r)
		}
		if required == 0 {
			return env.Add(ReplyToNotification), "a batch of only notifications was answered with " + describe(r)
		}
		return env.Add(BatchNotArray), "a batch of " + n + " answered with a single object: " + describe(r)
	}
	if r.BatchLen == 0 {
		if required == 0 {
			return env.Add(ReplyToNotification), "a batch of only notifications answered with []; the server MUST NOT return an empty array"
		}
		return env.Add(BatchMissingReply), "a batch of " + n + " answered with []"
	}
	b := newBatchMatch(reqs)
	// Responses with ids are matched first: their ids say which request
	// they answer. Null ids are ambiguous, so they are matched after, and
	// results before errors, because a result with id null fits only a
	// request with id null while an error with id null fits more.
	var nullResults, nullErrors []nullReply
	for off, k := 0, 0; ; k++ {
		elem, next, ok := wire.NextElement(reply, off)
		if !ok {
			break
		}
		off = next
		nr := nullReply{k: k}
		wire.Scan(elem, &nr.m)
		if !b.reply(&nr.m, k) {
			continue
		}
		if nr.m.Kind == wire.KindResult {
			nullResults = append(nullResults, nr)
		} else {
			nullErrors = append(nullErrors, nr)
		}
	}
	for _, list := range [][]nullReply{nullResults, nullErrors} {
		for i := range list {
			b.nullReply(&list[i].m, list[i].k)
		}
	}
	for i, q := range reqs {
		if !b.matched[i] && q.needsReply() && !q.tolerates(nil) {
			b.add(Set(0).Add(BatchMissingReply), "no response for element "+strconv.Itoa(i)+idSuffix(q))
		}
	}
	return b.rules | env, b.noteText(env, r)
}

// refusableWhole reports whether a server may answer the batch with one
// error for all of it: the batch is over a common size cap, or one of its
// elements has a trait a parser may refuse (then the whole frame fails to
// parse, and §6 wants a single response).
func refusableWhole(input []byte, reqs []*request) bool {
	if len(reqs) > batchCapEdge || len(input) > sizeEdge {
		return true
	}
	for _, q := range reqs {
		if q.analyse()&(edgeLimit|edgeDupKey) != 0 {
			return true
		}
	}
	return false
}

// nullReply is a response with id null from a reply array, kept for the
// second matching pass.
type nullReply struct {
	m wire.Message
	k int
}

// batchMatch pairs the elements of a reply array with the batch's requests.
type batchMatch struct {
	reqs      []*request
	matched   []bool
	byID      map[string]*candidates // requests by appendIDKey of their readable, non-null ids
	byNumStr  map[string]*candidates // string ids that read as numbers, by number key: for id_type_changed
	nullsOnly candidates             // requests only a null id can answer (id unreadable or null)
	nullsAlso candidates             // requests with a readable id that may still be answered with null
	edgy      *candidates            // requests with edges, for tolerating; nil until first needed
	notifs    bool                   // the batch holds notifications
	allIDs    bool                   // every element had a readable non-null id
	rules     Set
	note      string
	notes     int
}

func newBatchMatch(reqs []*request) *batchMatch {
	b := &batchMatch{reqs: reqs, matched: make([]bool, len(reqs)), byID: map[string]*candidates{}, byNumStr: map[string]*candidates{}, allIDs: true}
	var key []byte
	for i, q := range reqs {
		if q.class == Notification {
			b.notifs = true
		}
		if !q.readableID() || q.m.IDKind == wire.IDNull {
			b.allIDs = false
			if q.needsReply() || q.class == InvalidParams {
				b.nullsOnly.add(i)
			}
			continue
		}
		if q.class == InvalidRequest || q.class == InvalidParams {
			b.nullsAlso.add(i)
		}
		key = appendIDKey(key[:0], q.m.ID)
		addTo(b.byID, key, i)
		if q.m.IDKind == wire.IDString {
			if content, ok := wire.Unquote(nil, q.m.ID); ok && wire.IsNumber(content) {
				key = appendNumberKey(append(key[:0], 'n'), content)
				addTo(b.byNumStr, key, i)
			}
		}
	}
	return b
}

func (b *batchMatch) add(s Set, note string) {
	b.rules |= s
	if s != 0 && note != "" {
		if b.notes == 0 {
			b.note = note
		}
		b.notes++
	}
}

func (b *batchMatch) noteText(env Set, r *wire.Message) string {
	switch {
	case b.notes > 1:
		return b.note + " (and " + strconv.Itoa(b.notes-1) + " more)"
	case b.notes == 1:
		return b.note
	}
	return envelopeNote(env, r)
}

// reply matches the k-th element of the reply array by its id and judges
// the pair. It returns true for a response with id null, which the caller
// matches later with nullReply.
func (b *batchMatch) reply(rm *wire.Message, k int) bool {
	at := "reply element " + strconv.Itoa(k)
	if env := Envelope(rm); env != 0 {
		b.add(env, at+": "+rm.Problems.String())
	}
	switch {
	case rm.Kind == wire.KindRequest || rm.Kind == wire.KindNotification:
		b.add(Set(0).Add(BatchExtraReply), at+" is a request, not a response")
		return false
	case rm.Kind != wire.KindResult && rm.Kind != wire.KindError:
		return false
	case rm.IDKind == wire.IDNull:
		return true
	case rm.IDKind != wire.IDString && rm.IDKind != wire.IDNumber:
		return false // Envelope flagged the id
	}
	cands := b.byID[string(appendIDKey(nil, rm.ID))]
	pick := b.pick(cands, rm)
	if pick < 0 && cands != nil {
		b.add(Set(0).Add(DuplicateReply), at+": a second response for id "+short(rm.ID))
		return false
	}
	if pick < 0 {
		pick = b.typeChanged(rm)
	}
	if pick < 0 {
		pick = b.tolerating(rm)
	}
	if pick < 0 {
		b.add(Set(0).Add(BatchExtraReply), at+": id "+short(rm.ID)+" answers no request of the batch")
		return false
	}
	b.judgePair(pick, rm)
	return false
}

// nullReply matches a response with id null, in the second pass.
func (b *batchMatch) nullReply(rm *wire.Message, k int) {
	pick := b.pick(&b.nullsOnly, rm)
	if pick < 0 {
		pick = b.pick(&b.nullsAlso, rm)
	}
	if pick < 0 {
		pick = b.tolerating(rm)
	}
	if pick >= 0 {
		b.judgePair(pick, rm)
		return
	}
	at := "reply element " + strconv.Itoa(k) + " (id null)"
	switch {
	case b.notifs:
		b.add(Set(0).Add(ReplyToNotification), at+" answers no request: a notification was answered")
	case b.allIDs:
		b.add(Set(0).Add(UnexpectedNullID), at+": every request of the batch had a readable id")
	default:
		b.add(Set(0).Add(BatchExtraReply), at+" answers no request of the batch")
	}
}

func (b *batchMatch) judgePair(i int, rm *wire.Message) {
	b.matched[i] = true
	if s, note := b.reqs[i].judge(rm); s != 0 {
		b.add(s, "element "+strconv.Itoa(i)+idSuffix(b.reqs[i])+": "+note)
	}
}

// pick returns the unmatched candidate rm fits best among the first few:
// one whose verdict is clean and whose class the reply speaks of (a -32600
// or -32602 error goes to an invalid request before a call, which any
// error fits), else any clean one, else the first unmatched, else -1.
// Servers may answer in any order, so a response goes to the request it fits.
func (b *batchMatch) pick(c *candidates, rm *wire.Message) int {
	if c == nil {
		return -1
	}
	first, clean, tries := -1, -1, 0
	invalidErr := rm.Kind == wire.KindError && rm.HasCode && (rm.Code == wire.CodeInvalidRequest || rm.Code == wire.CodeInvalidParams)
	for k, i := range c.unmatched(b.matched) {
		if k == scanLimit {
			break
		}
		if b.matched[i] {
			continue
		}
		if first < 0 {
			first = i
		}
		if s, _ := b.reqs[i].judge(rm); s == 0 {
			if !invalidErr || b.reqs[i].class != Call {
				return i
			}
			if clean < 0 {
				clean = i
			}
		}
		if tries++; tries == pickTries {
			break
		}
	}
	if clean >= 0 {
		return clean
	}
	return first
}

// typeChanged finds an unmatched request whose id is rm's id as the other
// JSON type (7 for "7"); judging the pair then reports id_type_changed.
func (b *batchMatch) typeChanged(rm *wire.Message) int {
	if rm.IDKind == wire.IDNumber {
		return b.pick(b.byNumStr[string(appendNumberKey([]byte{'n'}, rm.ID))], rm)
	}
	content, ok := wire.Unquote(nil, rm.ID)
	if !ok || !wire.IsNumber(content) {
		return -1
	}
	return b.pick(b.byID[string(appendNumberKey([]byte{'n'}, content))], rm)
}

// tolerating finds an unmatched request that accepts rm only through a
// tolerance (an id echoed through float64, an id null for an edge input).
// Only requests with edges can, so it looks at those alone, and at a few of
// them per reply, to keep huge batches linear.
func (b *batchMatch) tolerating(rm *wire.Message) int {
	if b.edgy == nil {
		b.edgy = &candidates{}
		for i, q := range b.reqs {
			if q.analyse() != 0 {
				b.edgy.add(i)
			}
		}
	}
	tries := 0
	for k, i := range b.edgy.unmatched(b.matched) {
		if k == scanLimit {
			break
		}
		if b.matched[i] {
			continue
		}
		if s, _ := b.reqs[i].judge(rm); s == 0 {
			return i
		}
		if tries++; tries == pickTries {
			break
		}
	}
	return -1
}

// candidates is a list of request indices consumed from the front as
// requests get matched, so that a batch of n requests with one id is
// matched in linear time.
type candidates struct {
	idx   []int
	start int // idx[:start] are all matched
}

func (c *candidates) add(i int) { c.idx = append(c.idx, i) }

// unmatched drops the matched prefix and returns the rest (which may still
// hold matched indices further on).
func (c *candidates) unmatched(matched []bool) []int {
	for c.start < len(c.idx) && matched[c.idx[c.start]] {
		c.start++
	}
	return c.idx[c.start:]
}

func addTo(m map[string]*candidates, key []byte, i int) {
	c := m[string(key)]
	if c == nil {
		c = &candidates{}
		m[string(key)] = c
	}
	c.add(i)
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
// (so 1e2 echoes 100), or as float64 when loose. A string and a number of
// the same value are idTypeChanged.
func compareIDs(req, rep []byte, loose bool) int {
	reqStr, repStr := len(req) > 0 && req[0] == '"', len(rep) > 0 && rep[0] == '"'
	switch {
	case reqStr && repStr:
		a, okA := wire.Unquote(nil, req)
		b, okB := wire.Unquote(nil, rep)
		if okA && okB && bytes.Equal(a, b) {
			return idEqual
		}
		return idDifferent
	case !reqStr && !repStr:
		if bytes.Equal(appendNumberKey(nil, req), appendNumberKey(nil, rep)) {
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
	content, ok := wire.Unquote(nil, str)
	if ok && wire.IsNumber(content) && bytes.Equal(appendNumberKey(nil, content), appendNumberKey(nil, number)) {
		return idTypeChanged
	}
	return idDifferent
}

// appendIDKey appends a map key for a raw string or number id: 's' and the
// decoded content, or 'n' and appendNumberKey.
func appendIDKey(dst, id []byte) []byte {
	if len(id) > 0 && id[0] == '"' {
		if content, ok := wire.Unquote(append(dst, 's'), id); ok {
			return content
		}
		return append(append(dst, 'r'), id...)
	}
	return appendNumberKey(append(dst, 'n'), id)
}

// appendNumberKey appends a canonical spelling of the JSON number raw: sign,
// significant digits without leading or trailing zeros, 'e', the decimal
// exponent of the point before them. Equal values spell the same (1, 1.0,
// 10e-1, -0 and 0); exponents past ±10^15 saturate, which only merges
// values no float64 holds anyway. Raw that is not a number is kept as is.
func appendNumberKey(dst, raw []byte) []byte {
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
	if len(digits) > 16 {
		return false
	}
	n, err := strconv.ParseUint(string(digits), 10, 64)
	return err == nil && n <= 1<<53
}

// skipJSONSpace returns the offset of the first byte at or after i that is
// not JSON whitespace.
func skipJSONSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}
