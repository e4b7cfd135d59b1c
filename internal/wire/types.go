package wire

import "strconv"

// Kind classifies one scanned frame.
type Kind uint8

// Kinds of frames. The zero value is KindInvalid so that a reset Message never
// looks like a usable reply.
const (
	KindInvalid      Kind = iota // not a JSON-RPC message (or not JSON at all); see Problems
	KindRequest                  // has "method" and "id"
	KindNotification             // has "method", no "id"
	KindResult                   // response with "result"
	KindError                    // response with "error"
	KindBatch                    // a JSON array (elements are NOT scanned by Scan; use NextElement)
)

var kindNames = [...]string{
	KindInvalid:      "invalid",
	KindRequest:      "request",
	KindNotification: "notification",
	KindResult:       "result",
	KindError:        "error",
	KindBatch:        "batch",
}

// String returns the lower-case name used in reports, or "kind(N)" for values
// outside the defined set.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Problem is a bit set of everything wrong with a frame. A frame can be
// classified (Kind != KindInvalid) and still carry problems (e.g. a response
// with both result and error is KindResult with ProblemBothResultAndError).
type Problem uint32

// Problem bits. Each is counted separately by consumers, so one frame may set
// several.
const (
	ProblemInvalidJSON        Problem = 1 << iota // not JSON per encoding/json.Valid (syntax, depth > MaxDepth, trailing data)
	ProblemNotObject                              // valid JSON, but a scalar at top level (or an array element that is not an object)
	ProblemDuplicateKey                           // a member name appears twice in the envelope or in the error object
	ProblemBadVersion                             // "jsonrpc" missing or not exactly the string "2.0"
	ProblemBothResultAndError                     // a response carries both "result" and "error"
	ProblemNoResultOrError                        // not a request (no method) and neither result nor error
	ProblemMissingID                              // response without an "id" member
	ProblemBadID                                  // id present but not string, number or null (bool, object, array)
	ProblemFractionalID                           // id is a number with fraction or exponent (allowed by JSON-RPC, SHOULD NOT)
	ProblemBadMethod                              // method present but not a string
	ProblemBadParams                              // params present but not an array or object
	ProblemBadErrorObject                         // error not an object; code missing or not an integer; message missing or not a string; members other than code/message/data
	ProblemExtraMember                            // a top-level member other than jsonrpc,id,method,params,result,error
	ProblemMixedMembers                           // request members (method/params) together with response members (result/error)
	ProblemInvalidUTF8                            // JSON-valid frame containing invalid UTF-8 bytes inside strings
)

var problemNames = [...]string{
	"invalid_json",
	"not_object",
	"duplicate_key",
	"bad_version",
	"both_result_and_error",
	"no_result_or_error",
	"missing_id",
	"bad_id",
	"fractional_id",
	"bad_method",
	"bad_params",
	"bad_error_object",
	"extra_member",
	"mixed_members",
	"invalid_utf8",
}

// Has reports whether every bit of q is set in p.
func (p Problem) Has(q Problem) bool { return p&q == q }

// String joins the snake_case names of the set bits with "|" in bit order, so
// the output is stable for logs and golden files. Bits without a name are
// shown as one hex value at the end. It returns "" for zero.
func (p Problem) String() string {
	if p == 0 {
		return ""
	}
	return string(p.Append(nil))
}

// Append appends String's text to dst without allocating (beyond growing
// dst). The text is plain ASCII letters, digits, '_' and '|', so it can go
// between JSON quotes as it is.
func (p Problem) Append(dst []byte) []byte {
	start := len(dst)
	for i, name := range problemNames {
		if p&(1<<i) != 0 {
			if len(dst) > start {
				dst = append(dst, '|')
			}
			dst = append(dst, name...)
		}
	}
	if rest := p &^ (1<<len(problemNames) - 1); rest != 0 {
		if len(dst) > start {
			dst = append(dst, '|')
		}
		dst = append(dst, "0x"...)
		dst = strconv.AppendUint(dst, uint64(rest), 16)
	}
	return dst
}

// IDKind says what the id member held.
type IDKind uint8

// ID kinds. IDOther exists so that a wrong-typed id is still distinguishable
// from a missing one.
const (
	IDAbsent IDKind = iota
	IDNull
	IDNumber
	IDString
	IDOther // bool, object, array
)

// Message is one scanned frame. All []byte fields alias the scanned frame;
// they are valid only while the frame's bytes are.
type Message struct {
	Kind     Kind
	Problems Problem
	IDKind   IDKind
	ID       []byte // raw JSON of the id value exactly as in the frame (e.g. `7`, `"7"`, `null`); nil if absent
	Method   []byte // raw JSON string of the method INCLUDING quotes, escapes untouched; nil if absent or not a string
	Params   []byte // raw JSON value; nil if absent
	Result   []byte // raw JSON value; nil if absent
	Error    []byte // raw JSON of the whole error value; nil if absent
	Code     int64  // error.code when it is an integer that fits int64
	HasCode  bool
	ErrMsg   []byte // raw JSON string of error.message including quotes; nil if absent/not a string
	ErrData  []byte // raw JSON of error.data; nil if absent
	BatchLen int    // number of elements when Kind == KindBatch
}

// DefaultMaxDepth is the deepest container nesting Scan accepts. It equals
// encoding/json's limit so that validity agrees with encoding/json.Valid.
const DefaultMaxDepth = 10000
