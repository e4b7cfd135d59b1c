// Package check names the rules a reply (or its absence) can break and judges
// a scanned reply envelope against them. The rule ids are part of the output
// contract of rpcload and rpcfuzz: reports, result files and CI thresholds
// refer to them by name.
package check

import (
	"iter"
	"math/bits"

	"github.com/rpcload/rpcload/internal/wire"
)

// Rule identifies one protocol rule.
type Rule uint8

// The rules. Keep ruleNames in the same order.
const (
	UnknownID             Rule = iota // a reply whose id was never sent on its connection
	DuplicateReply                    // a further reply for an id already answered
	IDTypeChanged                     // the reply's id is the request's id as another JSON type (7 sent, "7" back)
	BothResultAndError                // a response carrying both result and error
	NoResultOrError                   // a response carrying neither result nor error
	BadJSONRPCVersion                 // "jsonrpc" missing or not exactly "2.0"
	InvalidJSON                       // the frame is not JSON
	InvalidEnvelope                   // valid JSON, but not a JSON-RPC response (wrong shape, bad id type, extra or duplicate members)
	BadErrorObject                    // error is not {code:int, message:string, data?}
	UnexpectedNullID                  // id null although every request sent had a readable id
	ReplyToNotification               // an answer to a notification
	FrameTooLarge                     // a frame or body longer than --max-frame; it was skipped
	BatchMissingReply                 // a batch reply array without an answer for one of the batch's requests
	BatchExtraReply                   // a batch reply array with an element that answers no request of that batch
	BatchNotArray                     // a batch was answered with something other than an array
	EmptyBatchReplyWrong              // the reply to [] is not one -32600 error object with id null
	MCPReservedCode                   // MCP 2026-07-28: an error code in -32099..-32020 the spec does not define (only -32020, -32021, -32022 are)
	MCPLegacyCode                     // MCP 2026-07-28: an error code in the legacy block -32019..-32000; a warning (see Rule.Warning)
	MCPRemovedCode                    // MCP 2026-07-28: -32002 or -32042, codes that revision says a server must not emit
	MCPBadResultType                  // MCP 2026-07-28: a result whose resultType is not "complete", "input_required" or an accepted extension value
	MCPBadID                          // MCP: a server request whose id is not a string or an integer, or a reply whose id is a fraction
	ExpectationFailed                 // a scenario call's expect (result schema, echo, error code, literal result) did not hold
	ResultMismatch                    // --diff: two targets answered the same request differently (canonical JSON, ignore paths aside)
	Crash                             // rpcfuzz: the server died on an input (child exited or killed, HTTP 5xx, connection reset)
	Hang                              // rpcfuzz: no reply within --timeout to a request with a readable id
	CanaryFailed                      // rpcfuzz: a known-good request sent after the inputs no longer gets its correct answer
	WrongErrorCode                    // rpcfuzz: an input the spec assigns an error code (-32700, -32600, -32602) got another answer; see oracle.JudgeFuzzReply
	SlowInput                         // rpcfuzz: a reply took more than --slow-factor times the median; a warning (see Rule.Warning)
	NullIDUnanswered                  // rpcfuzz: a request with "id":null got no reply within the timeout, as if it were a notification; a warning (see Rule.Warning)
	PlainHTTPError                    // rpcfuzz: unparseable input answered with an HTTP 4xx whose body is no JSON-RPC response; a warning (see Rule.Warning)
	ResultSchemaMismatch              // rpcfuzz: a result (an MCP tool's structuredContent) that breaks the method's declared result schema
	IdempotentMismatch                // rpcfuzz: two equal calls of a method declared idempotent got different results
	InvalidParamsAccepted             // rpcfuzz: params the method's schema rejects answered with a result; a warning (see Rule.Warning)
	ParamsErrorCode                   // rpcfuzz: params the method's schema rejects refused with another code than -32602 (or --invalid-params-code); a warning
	ValidParamsRejected               // rpcfuzz: params the method's schema accepts refused with -32602; a warning
	InternalError                     // rpcfuzz: params the method's schema accepts answered with -32603 (Internal error); a warning
	NumRules                          // the number of rules, not a rule
)

var ruleNames = [NumRules]string{
	"unknown_id", "duplicate_reply", "id_type_changed", "both_result_and_error",
	"no_result_or_error", "bad_jsonrpc_version", "invalid_json", "invalid_envelope",
	"bad_error_object", "unexpected_null_id", "reply_to_notification", "frame_too_large",
	"batch_missing_reply", "batch_extra_reply", "batch_not_array", "empty_batch_reply_wrong",
	"mcp_reserved_code", "mcp_legacy_code", "mcp_removed_code", "mcp_bad_result_type", "mcp_bad_id",
	"expectation_failed", "result_mismatch",
	"crash", "hang", "canary_failed", "wrong_error_code", "slow_input",
	"null_id_unanswered", "plain_http_error",
	"result_schema_mismatch", "idempotent_mismatch", "invalid_params_accepted", "params_error_code",
	"valid_params_rejected", "internal_error",
}

// String returns the rule id used in reports.
func (r Rule) String() string {
	if r < NumRules {
		return ruleNames[r]
	}
	return "rule(?)"
}

// Warning reports whether breaking r is a warning rather than a violation:
// something a report shows and counts, but that a CI threshold on violations
// should not fail on. Four rules are warnings: mcp_legacy_code, because the
// 2026-07-28 revision of MCP gives the legacy block -32019..-32000 no
// meaning but does not forbid it; slow_input, because no spec bounds how
// long a server may take (a reply that does come is correct), so a slow
// input is a lead to follow, not a broken requirement; null_id_unanswered,
// because JSON-RPC 2.0 makes a request with id null a request (§4: only a
// missing id makes a notification) but also discourages that id, and
// JSON-RPC 1.0 made it a notification, which servers such as jrpc2 and
// gopls still follow; plain_http_error, because JSON-RPC 2.0 says
// nothing about HTTP, and a server refusing unparseable input at the HTTP
// level still refuses it, only in a form a JSON-RPC client cannot read;
// and the four rules that hold a server to its own schemas' promises on
// params (invalid_params_accepted, params_error_code,
// valid_params_rejected, internal_error), because JSON-RPC 2.0 defines
// -32602 and -32603 without requiring a server to validate params, a
// server may be more lenient than its schema on purpose, and a schema-valid
// call may fail for reasons of the server's state.
func (r Rule) Warning() bool {
	switch r {
	case MCPLegacyCode, SlowInput, NullIDUnanswered, PlainHTTPError,
		InvalidParamsAccepted, ParamsErrorCode, ValidParamsRejected, InternalError:
		return true
	}
	return false
}

// specRefs holds SpecRef's answers. JSON-RPC sections are those of the 2.0
// specification (4 request, 4.1 notification, 5 response, 5.1 error
// object, 6 batch); rules that enforce a tool setting rather than a spec
// say so, so that a finding never claims a requirement nobody wrote.
var specRefs = [NumRules]string{
	UnknownID:             "JSON-RPC 2.0 §5 (response id equals the request's)",
	DuplicateReply:        "JSON-RPC 2.0 §5 (one response per request)",
	IDTypeChanged:         "JSON-RPC 2.0 §5 (response id equals the request's, same type)",
	BothResultAndError:    "JSON-RPC 2.0 §5 (result and error must not both exist)",
	NoResultOrError:       "JSON-RPC 2.0 §5 (a response has result or error)",
	BadJSONRPCVersion:     "JSON-RPC 2.0 §5 (jsonrpc is exactly \"2.0\")",
	InvalidJSON:           "RFC 8259 (JSON text); JSON-RPC 2.0 §5",
	InvalidEnvelope:       "JSON-RPC 2.0 §5 (response object)",
	BadErrorObject:        "JSON-RPC 2.0 §5.1 (error object)",
	UnexpectedNullID:      "JSON-RPC 2.0 §5 (id null only when the request's id was unreadable)",
	ReplyToNotification:   "JSON-RPC 2.0 §4.1 (no reply to a notification)",
	FrameTooLarge:         "rpcload --max-frame (a local limit, no spec rule)",
	BatchMissingReply:     "JSON-RPC 2.0 §6 (a response for each request of a batch)",
	BatchExtraReply:       "JSON-RPC 2.0 §6 (batch responses answer the batch's requests)",
	BatchNotArray:         "JSON-RPC 2.0 §6 (a batch is answered with an array)",
	EmptyBatchReplyWrong:  "JSON-RPC 2.0 §6 (an empty array gets one -32600 response)",
	MCPReservedCode:       "MCP 2026-07-28 basic (error codes -32099..-32020)",
	MCPLegacyCode:         "MCP 2026-07-28 basic (legacy error codes -32019..-32000)",
	MCPRemovedCode:        "MCP 2026-07-28 basic (-32002 and -32042 removed)",
	MCPBadResultType:      "MCP 2026-07-28 schema (Result.resultType)",
	MCPBadID:              "MCP basic (request id is a string or an integer)",
	ExpectationFailed:     "scenario expect (the user's own assertion, no spec rule)",
	ResultMismatch:        "rpcload --diff (targets disagree, no spec rule)",
	Crash:                 "JSON-RPC 2.0 §5 (the server must reply to every call)",
	Hang:                  "JSON-RPC 2.0 §5 (the server must reply to every call)",
	CanaryFailed:          "JSON-RPC 2.0 §5 (a valid call gets its response)",
	WrongErrorCode:        "JSON-RPC 2.0 §5.1 (pre-defined error codes) and §5 (id null)",
	SlowInput:             "rpcfuzz --slow-factor (a latency heuristic, no spec rule)",
	NullIDUnanswered:      "JSON-RPC 2.0 §4 (id null is a request; only a missing id makes a notification) and §5",
	PlainHTTPError:        "JSON-RPC 2.0 §5 and §5.1 (a parse error is answered with a Response object, error -32700)",
	ResultSchemaMismatch:  "the method's declared result schema (OpenRPC result; MCP tools: structuredContent conforms to outputSchema)",
	IdempotentMismatch:    "the method's declared idempotence (OpenRPC x-idempotent, or --idempotent)",
	InvalidParamsAccepted: "the method's params schema, with JSON-RPC 2.0 §5.1 (-32602 Invalid params; MCP: a tool error, isError)",
	ParamsErrorCode:       "JSON-RPC 2.0 §5.1 (-32602 Invalid params), with the method's params schema",
	ValidParamsRejected:   "the method's params schema, with JSON-RPC 2.0 §5.1 (-32602 Invalid params)",
	InternalError:         "JSON-RPC 2.0 §5.1 (-32603 Internal error), with the method's params schema",
}

// SpecRef returns a short reference to the text r enforces, for findings and
// reports, or "" for a value outside the rule set.
func SpecRef(r Rule) string {
	if r < NumRules {
		return specRefs[r]
	}
	return ""
}

// ParseRule returns the rule with the given id.
func ParseRule(name string) (Rule, bool) {
	for i, n := range ruleNames {
		if n == name {
			return Rule(i), true
		}
	}
	return 0, false
}

// Set is a set of rules.
type Set uint64

// Add returns s with r added.
func (s Set) Add(r Rule) Set { return s | 1<<r }

// Has reports whether r is in s.
func (s Set) Has(r Rule) bool { return s&(1<<r) != 0 }

// All yields the rules of s, in the order of the constants.
func (s Set) All() iter.Seq[Rule] {
	return func(yield func(Rule) bool) {
		for x := uint64(s); x != 0; x &= x - 1 {
			if !yield(Rule(bits.TrailingZeros64(x))) {
				return
			}
		}
	}
}

// warnings is the set of the rules that are warnings (Rule.Warning).
var warnings = func() Set {
	var s Set
	for r := Rule(0); r < NumRules; r++ {
		if r.Warning() {
			s = s.Add(r)
		}
	}
	return s
}()

// Failures returns s without its warnings: the rules whose breach fails a
// run.
func (s Set) Failures() Set { return s &^ warnings }

// Envelope judges the shape of one scanned reply. It does not look at the id's
// value (matching ids is the pending table's job), only at the envelope. A
// frame that is not JSON breaks InvalidJSON alone, because nothing else about
// it can be judged. Requests and notifications from the server are legal
// JSON-RPC (the protocol is symmetric) and are not judged here.
func Envelope(m *wire.Message) Set { return envelope(m.Problems) }

// EnvelopeToNotification is Envelope for a reply judged a reply to a
// notification (the rule reply_to_notification): a missing id is what
// answering a notification looks like, since it has no id to echo, so it
// is not also invalid_envelope. rpcload and rpcfuzz both judge such a
// reply with it, so that they name one case alike.
func EnvelopeToNotification(m *wire.Message) Set {
	return envelope(m.Problems &^ wire.ProblemMissingID)
}

// envelope is Envelope for a reply with problems p.
func envelope(p wire.Problem) Set {
	var s Set
	if p.Has(wire.ProblemInvalidJSON) {
		return s.Add(InvalidJSON)
	}
	if p.Has(wire.ProblemBothResultAndError) {
		s = s.Add(BothResultAndError)
	}
	if p.Has(wire.ProblemNoResultOrError) {
		s = s.Add(NoResultOrError)
	}
	if p.Has(wire.ProblemBadVersion) {
		s = s.Add(BadJSONRPCVersion)
	}
	if p.Has(wire.ProblemBadErrorObject) {
		s = s.Add(BadErrorObject)
	}
	const shape = wire.ProblemNotObject | wire.ProblemDuplicateKey | wire.ProblemMissingID |
		wire.ProblemBadID | wire.ProblemExtraMember | wire.ProblemMixedMembers
	if p&shape != 0 {
		s = s.Add(InvalidEnvelope)
	}
	return s
}

// Rank orders rules by how much a finding that breaks several of them is
// about each: a crash explains everything after it (missing replies, a
// poisoned server), a hang explains the replies that did not come, and
// warnings say the least. Among the others the order of the constants
// decides, so that an id that answers nothing (unknown_id) names a finding
// before the codes of its replies do. Lower is more severe.
func (r Rule) Rank() int {
	switch {
	case r == Crash:
		return 0
	case r == Hang:
		return 1
	case r == CanaryFailed:
		return 2
	case r == SlowInput:
		return 1000
	case r.Warning():
		return 900 + int(r)
	}
	return 10 + int(r)
}

// MostSevere returns the rule of s a finding is named after (the first by
// the order above), or NumRules for the empty set. rpcfuzz names findings
// by the same order, and oracle.JudgeFuzzReply's note describes this rule, so
// that a finding's name and its note agree.
func MostSevere(s Set) Rule {
	best := NumRules
	for r := range s.All() {
		if best == NumRules || r.Rank() < best.Rank() {
			best = r
		}
	}
	return best
}
