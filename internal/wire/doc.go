// Package wire scans, classifies and encodes JSON-RPC 2.0 frames for the load
// and fuzz tester.
//
// The scanner is on the hot path of every reply, so [Scan] validates and
// classifies a frame in one pass without allocating and without
// encoding/json: it records raw sub-slices of the frame and a [Problem] bit
// set instead of decoding into Go values. Consumers decide what counts as a
// violation by looking at the problem bits; [Kind] is only a coarse shape.
//
// # Validity
//
// A frame is JSON exactly when encoding/json.Valid accepts it: one value with
// optional surrounding space, tab, CR and LF; nesting up to [DefaultMaxDepth]
// containers. encoding/json does not check UTF-8, so neither does validity
// here: invalid UTF-8 inside strings is reported as [ProblemInvalidUTF8] on an
// otherwise valid frame. Escaped lone surrogates such as "\ud800" are valid
// JSON and are not a problem.
//
// When a frame is not JSON, the Message holds only Kind == [KindInvalid] and
// Problems == [ProblemInvalidJSON]; every other field is zero, because the
// partial contents of a broken frame are not trustworthy (a server must answer
// such a frame with id null anyway).
//
// # Classification
//
// Member names are matched case-sensitively after decoding escapes, so
// "\u0069d" is the id but "ID" is an extra member. The rules, in order:
//
//   - A top-level array is [KindBatch]; its elements are counted
//     (Message.BatchLen) but not scanned. An element that is not an object
//     sets [ProblemNotObject]. An empty batch is KindBatch with BatchLen 0 and
//     no problem bit: whether [] deserves an error is the caller's call.
//   - A top-level scalar is [KindInvalid] with [ProblemNotObject].
//   - An object with a "method" member (of any type) is a [KindRequest] when
//     it also has "id", else a [KindNotification]. "result" or "error" next to
//     "method" add [ProblemMixedMembers]; the method wins because a peer that
//     sent a method expects to be answered or ignored as a call.
//   - Otherwise an object with "result" is [KindResult], even when "error" is
//     present too ([ProblemBothResultAndError]); one with only "error" is
//     [KindError]. A "params" member in a response adds ProblemMixedMembers.
//   - Otherwise (no method, result or error) the object is [KindInvalid] with
//     [ProblemNoResultOrError].
//
// Problems never change the Kind of an object: {"id":1,"method":"x"} is a
// KindRequest with [ProblemBadVersion].
//
// # Duplicates
//
// A repeated member fills the Message fields from its last occurrence (as
// encoding/json does) and problems of every occurrence are kept. Repeats of
// the recognised names are always detected. Repeats of unrecognised names
// are detected when the first occurrence is among the first 16 distinct
// unrecognised names of that object: such a frame is already flagged
// [ProblemExtraMember] (or [ProblemBadErrorObject]), and an exact check
// without allocating would cost time quadratic in the frame size. Names are
// compared as encoding/json would decode them: escapes decoded, invalid
// UTF-8 bytes and lone surrogates as U+FFFD. Only the envelope and the error
// object are checked; nested params and results are opaque.
package wire
