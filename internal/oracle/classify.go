package oracle

import (
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

// Limits of the tolerances of docs/oracle.md, and of the work
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
