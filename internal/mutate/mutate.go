package mutate

import (
	"encoding/json"
	"github.com/rpcload/rpcload/internal/jsontree"
)

// Case is one fuzz input: one or more messages sent in order on one
// connection.
type Case struct {
	// Frames are the messages, each framed by the transport (a newline,
	// a Content-Length header, an HTTP body, a WebSocket message).
	Frames [][]byte
	// Wire, when non-nil, is the exact byte stream to write instead of
	// framing Frames: the framing ops (Content-Length lies, a newline inside
	// an NDJSON message) break the framing itself, which Frames cannot
	// express. Frames still holds the messages Wire was made from. Every op
	// that changes Frames clears Wire, since it would no longer match.
	Wire []byte
}

// Framing tells the framing ops which transport framing they may break.
type Framing uint8

const (
	// FramingNone is a transport that frames messages itself (an HTTP body,
	// a WebSocket message, an in-process call): there is no framing to break.
	FramingNone Framing = iota
	// FramingNewline is newline-delimited JSON on a byte stream.
	FramingNewline
	// FramingContentLength is the LSP base protocol: a Content-Length header
	// block before each message.
	FramingContentLength
)

// DefaultMaxFrame is the frame size limit when Env.MaxFrame is 0: 1 MiB, a
// common server limit and big enough for the "very long" inputs.
const DefaultMaxFrame = 1 << 20

// Env is what ops may draw on. The zero value is usable: an op that needs a
// missing field does not apply.
type Env struct {
	// Methods is the method dictionary (from discovery or the corpus).
	Methods []string
	// Params maps a method to its params JSON Schema, for schema-valid and
	// schema-invalid params (package schemagen).
	Params map[string]json.RawMessage
	// Framing is the transport framing the framing ops may break.
	Framing Framing
	// MaxFrame bounds every frame an op produces, and every size an op
	// derives (nesting depth, batch length, string length); 0 means
	// DefaultMaxFrame.
	MaxFrame int
	// Profile is "jsonrpc" (or ""), "mcp", "lsp" or "eth": the sequence ops
	// use its handshake, shutdown and cancellation.
	Profile string
	// Corpus holds the splice donors.
	Corpus [][]byte
}

func (e *Env) maxFrame() int {
	if e == nil || e.MaxFrame <= 0 {
		return DefaultMaxFrame
	}
	return e.MaxFrame
}

// Class groups the ops as protocols.md §5 and issue 6 list them, so reports
// can say which kind of input found a bug.
type Class uint8

const (
	// ClassFraming ops break the transport framing (they set Case.Wire).
	ClassFraming Class = iota
	// ClassLexical ops break JSON at the byte level.
	ClassLexical
	// ClassEnvelope ops change the jsonrpc, id, method and params members.
	ClassEnvelope
	// ClassID ops put edge values in the id.
	ClassID
	// ClassMethod ops change the method name.
	ClassMethod
	// ClassParams ops change the params value.
	ClassParams
	// ClassBatch ops make batches.
	ClassBatch
	// ClassSequence ops reorder, drop and add whole messages.
	ClassSequence
	// ClassDictionary ops insert JSON-RPC tokens.
	ClassDictionary
	// ClassSplice ops take pieces of other corpus entries.
	ClassSplice
)

var classNames = [...]string{"framing", "lexical", "envelope", "id", "method", "params", "batch", "sequence", "dictionary", "splice"}

// String returns the class's snake_case name.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

// Op is one named mutation.
type Op struct {
	// Name is stable and snake_case (e.g. "id_edge"): findings are counted
	// per op name across runs.
	Name  string
	Class Class
	// Apply returns the mutated case, or false when the op does not apply to
	// in (no string to put a surrogate into, no params to drop, a framing
	// the op cannot break, no room under MaxFrame, ...). It never modifies
	// in, and what it returns never exceeds env's MaxFrame. env may be nil.
	Apply func(c Chooser, in Case, env *Env) (Case, bool)
}

// applyFunc is an op's implementation; env is never nil.
type applyFunc func(c Chooser, in Case, env *Env) (Case, bool)

// opDef is a table row: the op, and whether it can ever apply under an Env,
// so the Mutator does not waste picks on ops the environment rules out.
type opDef struct {
	name     string
	class    Class
	apply    applyFunc
	eligible func(*Env) bool
}

// startWeights are the starting weights of ops that do not start at
// baseWeight; rewards scale an op's weight, and cap it, in proportion to
// its start. The framing ops start at a quarter: an input whose framing is
// broken owes nothing and leaves only envelopes to judge, and at the
// common weight content_length_lie or ndjson_newline touched about one
// input in five of the native harness (four rounds of one to three ops).
var startWeights = map[string]int{
	"content_length_lie": baseWeight / 4,
	"ndjson_newline":     baseWeight / 4,
}

// startWeight returns the starting weight of op d.
func (d *opDef) startWeight() int {
	if w, ok := startWeights[d.name]; ok {
		return w
	}
	return baseWeight
}

func always(*Env) bool { return true }

// Ops returns the op table, in a fixed order: the indices Mutate reports
// index this slice.
func Ops() []Op {
	ops := make([]Op, len(opTable))
	for i, d := range opTable {
		ops[i] = Op{Name: d.name, Class: d.class, Apply: guarded(d.apply)}
	}
	return ops
}

// guarded makes an op safe to call from outside: a nil env is the zero Env,
// and an output over the size bounds counts as "does not apply", so no
// caller ever sees a frame larger than MaxFrame whatever an op computed.
func guarded(apply applyFunc) func(Chooser, Case, *Env) (Case, bool) {
	return func(c Chooser, in Case, env *Env) (Case, bool) {
		if env == nil {
			env = &Env{}
		}
		out, ok := apply(c, in, env)
		if !ok || !withinBounds(out, in, env) {
			return Case{}, false
		}
		return out, true
	}
}

// wireOverhead bounds what the framing ops add per frame (a header block).
const wireOverhead = 128

// withinBounds checks the frames an op made against MaxFrame. A frame of the
// input passed through untouched is not the op's doing: an oversized seed
// must not stop the ops that change its other frames.
func withinBounds(out, in Case, env *Env) bool {
	limit := env.maxFrame()
	total := 0
	for _, f := range out.Frames {
		if len(f) > limit && !passedThrough(f, in) {
			return false
		}
		total += len(f) + wireOverhead
	}
	return out.Wire == nil || len(out.Wire) <= total
}

// passedThrough reports whether f is one of in's frames itself (the same
// bytes in memory, not a copy).
func passedThrough(f []byte, in Case) bool {
	for _, g := range in.Frames {
		if len(f) == len(g) && len(f) > 0 && &f[0] == &g[0] {
			return true
		}
	}
	return false
}

// perFrame lifts an op on one frame to an op on a case: it picks the frame,
// and the result shares every other frame with in (frames are never
// modified in place, so sharing is safe).
func perFrame(fn func(c Chooser, f []byte, env *Env) ([]byte, bool)) applyFunc {
	return func(c Chooser, in Case, env *Env) (Case, bool) {
		if len(in.Frames) == 0 {
			return Case{}, false
		}
		i := c.Intn(len(in.Frames))
		f, ok := fn(c, in.Frames[i], env)
		if !ok {
			return Case{}, false
		}
		return replaceFrame(in, i, f), true
	}
}

func replaceFrame(in Case, i int, f []byte) Case {
	frames := make([][]byte, len(in.Frames))
	copy(frames, in.Frames)
	frames[i] = f
	return Case{Frames: frames}
}

// treeOp lifts an op on a parsed frame: frames that are not (tolerant) JSON
// do not apply. fn gets room, the bytes it may add before the frame reaches
// MaxFrame.
func treeOp(fn func(c Chooser, root *jsontree.Node, room int, env *Env) bool) applyFunc {
	return perFrame(func(c Chooser, f []byte, env *Env) ([]byte, bool) {
		root, ok := parseShallow(f)
		if !ok {
			return nil, false
		}
		if !fn(c, root, env.maxFrame()-len(f), env) {
			return nil, false
		}
		return jsontree.Append(make([]byte, 0, len(f)+32), root), true
	})
}

// envelopeOp is a treeOp on one request object: the frame itself, or an
// object element of a batch.
func envelopeOp(fn func(c Chooser, obj *jsontree.Node, room int, env *Env) bool) applyFunc {
	return treeOp(func(c Chooser, root *jsontree.Node, room int, env *Env) bool {
		obj := envelope(c, root)
		return obj != nil && fn(c, obj, room, env)
	})
}

var opTable = []opDef{
	{"content_length_lie", ClassFraming, contentLengthLie, func(e *Env) bool { return e.Framing == FramingContentLength }},
	{"ndjson_newline", ClassFraming, ndjsonNewline, func(e *Env) bool { return e.Framing == FramingNewline }},

	{"truncate_structural", ClassLexical, perFrame(truncateStructural), always},
	{"invalid_utf8", ClassLexical, perFrame(invalidUTF8), always},
	{"lone_surrogate", ClassLexical, perFrame(loneSurrogate), always},
	{"bom_prefix", ClassLexical, perFrame(bomPrefix), always},
	{"control_char", ClassLexical, perFrame(controlChar), always},
	{"nonfinite_number", ClassLexical, perFrame(nonfiniteNumber), always},
	{"comment", ClassLexical, perFrame(comment), always},
	{"trailing_comma", ClassLexical, perFrame(trailingComma), always},
	{"huge_number", ClassLexical, perFrame(hugeNumber), always},
	{"long_string", ClassLexical, perFrame(longString), always},
	{"long_line", ClassLexical, perFrame(longLine), always},

	{"envelope_absent", ClassEnvelope, envelopeOp(envelopeAbsent), always},
	{"envelope_null", ClassEnvelope, envelopeOp(envelopeNull), always},
	{"envelope_type", ClassEnvelope, envelopeOp(envelopeType), always},
	{"envelope_duplicate", ClassEnvelope, envelopeOp(envelopeDuplicate), always},

	{"id_edge", ClassID, envelopeOp(idEdge), always},

	{"method_dictionary", ClassMethod, envelopeOp(methodDictionary), func(e *Env) bool { return len(e.Methods) > 0 }},
	{"method_empty", ClassMethod, envelopeOp(methodEmpty), always},
	{"method_rpc_prefix", ClassMethod, envelopeOp(methodRPCPrefix), always},
	{"method_long", ClassMethod, envelopeOp(methodLong), always},
	{"method_near_miss", ClassMethod, envelopeOp(methodNearMiss), always},

	{"params_absent", ClassParams, envelopeOp(paramsAbsent), always},
	{"params_null", ClassParams, envelopeOp(paramsNull), always},
	{"params_scalar", ClassParams, envelopeOp(paramsScalar), always},
	{"params_arity", ClassParams, envelopeOp(paramsArity), always},
	{"params_duplicate_key", ClassParams, envelopeOp(paramsDuplicateKey), always},
	{"params_schema_valid", ClassParams, envelopeOp(paramsSchemaValid), func(e *Env) bool { return len(e.Params) > 0 }},
	{"params_schema_invalid", ClassParams, envelopeOp(paramsSchemaInvalid), func(e *Env) bool { return len(e.Params) > 0 }},
	{"params_nesting", ClassParams, envelopeOp(paramsNesting), always},
	{"params_wide", ClassParams, envelopeOp(paramsWide), always},

	{"batch_empty", ClassBatch, perFrame(batchEmpty), always},
	{"batch_invalid", ClassBatch, perFrame(batchInvalid), always},
	{"batch_wrap", ClassBatch, perFrame(batchWrap), always},
	{"batch_nested", ClassBatch, perFrame(batchNested), always},
	{"batch_notifications", ClassBatch, perFrame(batchNotifications), always},
	{"batch_duplicate_ids", ClassBatch, perFrame(batchDuplicateIDs), always},
	{"batch_size", ClassBatch, perFrame(batchSize), always},

	{"seq_skip_handshake", ClassSequence, seqSkipHandshake, func(e *Env) bool { return len(handshakeMethods(e.Profile)) > 0 }},
	{"seq_after_shutdown", ClassSequence, seqAfterShutdown, func(e *Env) bool { return e.Profile == "lsp" }},
	{"seq_cancel_unknown", ClassSequence, seqCancelUnknown, always},
	{"seq_same_id_twice", ClassSequence, seqSameIDTwice, always},
	{"seq_notification_flood", ClassSequence, seqNotificationFlood, always},

	{"dict_insert", ClassDictionary, perFrame(dictInsert), always},
	{"dict_replace", ClassDictionary, perFrame(dictReplace), always},

	{"splice_subtree", ClassSplice, perFrame(spliceSubtree), func(e *Env) bool { return len(e.Corpus) > 0 }},
	{"splice_bytes", ClassSplice, perFrame(spliceBytes), func(e *Env) bool { return len(e.Corpus) > 0 }},
}
