package fuzz

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/wire"
)

// dedupKey is what makes two failures the same finding: its cause, as far
// as a black box can name it. A key is the rule, then what the input was,
// then what came back (or how the exchange ended), then the deviation the
// oracle names, each part only where it tells causes apart:
//
//   - a reply that breaks a rule: the class of the frame it answers (call,
//     invalid_request, … see inputClass; "-" for a reply that answers
//     none), the reply's class (its kind and error code, see replyClass;
//     "batch" for an array) and the note with ids, numbers and quoted text
//     blanked (noteClass), which for a batch names the element that broke
//     the rule: wrong_error_code|invalid_request|error:-32601|an invalid
//     request answered with error -32601; want error -32600. The reply's
//     shape is not in it: a server that answers every invalid request with
//     -32601 does so whatever the id's type or the params' shape;
//   - an id the reply changed (unknown_id, id_type_changed): the note
//     alone, which names the ids' forms: a server that wraps negative ids
//     to uint64 does so in every reply, results and errors alike; a
//     second reply (duplicate_reply): the input's class and the note,
//     whatever the second message was;
//   - a reply envelope the spec forbids (invalid_envelope and the other
//     envelope rules, of a reply that came): the input's class and the
//     envelope's problems
//     (bad_id, extra_member, …): a server that echoes whatever id it got,
//     true, [] or {}, breaks §5 one way;
//   - a crash whose stderr names it (a panic, a fatal error, a traceback:
//     crashLine): that line, made alike (stderrKey): crash|stderr:panic: …;
//   - any other crash (an exit with an error message or none, a reset, a
//     closed connection, an HTTP 5xx) and a hang, where the exchange says
//     nothing of the cause: the input's class with its id's kind and its
//     traits (oracle.InputTraits: deep nesting, a repeated key, a huge
//     number, …), and how it ended: crash|call/id:num/deep|conn_reset,
//     crash|parse_error|exit:exit status 2, hang|call/id:num/odd_id+empty_method|timeout;
//   - a canary or a slow input: the error code and the reply's shape.
//
// So one cause is one finding however its input was spelled (id -0, 1.5
// or 1e3; another message in the quotes of an error), and two causes that
// end alike (a connection closed on a parse error, and on []) are two.
func dedupKey(v verdict) string {
	r := v.rule.String()
	if i := strings.Index(v.note, "; "+v.api+": "); v.api != "" && !apiRule(v.rule) && i >= 0 {
		// The note of an API oracle that fired on the same reply ("; METHOD:
		// params its schema rejects (at /x: …)") is no part of another
		// rule's key: gopls's -32700 for params it cannot decode is one
		// finding, not one per method and broken member.
		v.note = v.note[:i]
	}
	switch {
	case apiRule(v.rule):
		return apiKey(&v)
	case v.rule == check.CanaryFailed, v.rule == check.SlowInput:
		return r + "|" + strconv.FormatInt(v.code, 10) + "|" + v.shape
	case tracedRule(&v):
		p, m := inputTraits(&v)
		return tracedKey(&v, p, m)
	case v.rule == check.Crash:
		return r + "|" + v.shape
	case v.rule == check.UnknownID, v.rule == check.IDTypeChanged:
		return r + "|" + noteClass(v.note)
	case v.rule == check.DuplicateReply && !strings.HasPrefix(v.shape, "["):
		return r + "|" + inputClass(v.in, v.inClass, false) + "|" + noteClass(v.note)
	case strings.HasPrefix(v.shape, "["):
		return r + "|" + inputClass(v.in, v.inClass, false) + "|batch|" + noteClass(v.note)
	case envelopeRule(v.rule) && len(wire.TrimSpace(v.reply)) > 0:
		return r + "|" + inputClass(v.in, v.inClass, false) + "|" + envelopeClass(v.reply)
	}
	return r + "|" + inputClass(v.in, v.inClass, false) + "|" + replyClass(v.reply) + "|" + noteClass(v.note)
}

// noteClass is a verdict's note as a part of a dedup key: quoted text
// (ids, method names, the input's bytes) and numbers blanked, except the
// codes of the spec's errors (-32768..-32000), which name the deviation;
// the count of further deviations dropped.
func noteClass(note string) string {
	if i := strings.Index(note, " (and "); i >= 0 && strings.HasSuffix(note, " more)") {
		note = note[:i]
	}
	note = noteNoise.ReplaceAllStringFunc(note, func(n string) string {
		switch {
		case n[0] == '"':
			return "?"
		case strings.HasPrefix(n, "-32") && len(n) == 6:
			return n
		}
		return "N"
	})
	// (A batch element's id is blanked by dropping it: an element with an
	// id and one without break the rule the same way.)
	note = elementID.ReplaceAllString(note, "element N")
	if len(note) > 160 {
		note = strings.ToValidUTF8(note[:160], "")
	}
	return note
}

// elementID is a batch element's id as a note names it, once blanked:
// "element N (id N)", "(id ?)", "(id true)", "(id {})", "(id null)".
var elementID = regexp.MustCompile(`element N \(id [^)]*\)`)

// noteNoise matches the parts of a note that vary between inputs breaking
// a rule the same way. A quoted text the note was cut in runs to the end:
// the cut may fall inside a character, and the key of the replay, read
// back from finding.json, never matched.
var noteNoise = regexp.MustCompile(`"(?:[^"\\]|\\.)*(?:"|\\?$)|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?`)

// wireClass is the request class of a verdict about bytes that broke the
// framing on purpose (Case.Wire): no frame of them is a message.
const wireClass = oracle.NumRequestClasses

// inputClass is the part of a dedup key that says what the input was: the
// request class of the frame a verdict is about (as the profile reads it:
// an array where the protocol has no batches is an invalid request), "-"
// for none (a reply that answers no frame) and "wire" for broken framing.
// With detail, the id's kind follows (call/id:num), for findings whose
// exchange says nothing of their cause when their frame has no traits
// (see tracedKey). The id's spelling never counts: -0, 1.5 and 1e3 are
// each a number.
func inputClass(frame []byte, class oracle.RequestClass, detail bool) string {
	switch {
	case class == wireClass:
		return "wire"
	case frame == nil:
		return "-"
	}
	s := class.String()
	if detail && class != oracle.ParseError && class != oracle.Batch && class != oracle.EmptyBatch {
		var m wire.Message
		wire.Scan(frame, &m)
		s += "/id:" + idKindName(m.IDKind)
	}
	return s
}

// inputTraits are oracle.InputTraits of a verdict's frame (or of the
// bytes that broke the framing).
func inputTraits(v *verdict) (parser, message string) {
	if v.in == nil {
		return "", ""
	}
	return oracle.InputTraits(v.in)
}

// tracedRule reports whether v's key names its input's traits: a crash
// or a hang that neither a reply nor a stderr line explains.
func tracedRule(v *verdict) bool {
	switch {
	case v.rule == check.Hang:
		return true
	case v.rule != check.Crash:
		return false
	}
	return !strings.HasPrefix(v.shape, "stderr:") && v.shape != "unreachable"
}

// causeKey is what a traced finding's input must keep while it shrinks
// (see candidate.reproduces): its key with the class and the id's kind in
// place of the traits, and all its traits, parser and message ones joined
// by '+'. A minimized input keeps its cause but may lose traits the
// original only happened to have (deep nesting around an empty method
// that hangs the server), and its key is the finding's (see run.rekey).
// Both are "" for a finding that is not traced.
func causeKey(v *verdict) (coarse, traits string) {
	if !tracedRule(v) {
		return "", ""
	}
	p, m := inputTraits(v)
	switch {
	case p == "":
		traits = m
	case m == "":
		traits = p
	default:
		traits = p + "+" + m
	}
	if v.rule == check.Crash && strings.HasPrefix(v.shape, "exit:") {
		// A child that exits without a line that names why may have
		// answered the message that ended it (a server that ends its
		// session on a parse error answers -32700 first), so the first
		// frame left unanswered is not surely the cause: the input
		// shrinks to the smallest that still ends the child so, whose
		// class names the finding (run.rekey).
		return v.rule.String() + "|*|" + v.shape, traits
	}
	return tracedKey(v, "", ""), traits
}

// tracedKey is the dedup key of a traced verdict whose frame has the given
// traits: rule|trait|end with the frame's most telling parser trait (a
// deep array in a call, in a notification or alone is one cause, and of
// several traits the others most often came along by chance), else, for a
// call of a method of the API, rule|api:METHOD|end, else
// rule|class/id:kind|end, with the message traits after the id's kind:
// without a parser trait, the class of the message is what a black box
// knows of the cause (a connection closed on a parse error, and on [], are
// two findings).
func tracedKey(v *verdict, parser, message string) string {
	in, _, _ := strings.Cut(parser, "+")
	switch {
	case in == "" && v.api != "":
		// A call of the API whose parser met nothing odd: the method's
		// handler is what a black box knows of the cause.
		in = "api:" + v.api
	case in == "":
		in = inputClass(v.in, v.inClass, true)
		if message != "" {
			in += "/" + message
		}
	}
	end := v.shape
	if v.rule == check.Hang {
		end = "timeout"
	}
	return v.rule.String() + "|" + in + "|" + end
}

// traitsWithin reports whether every trait of t is one of within (both as
// inputTraits joins them).
func traitsWithin(t, within string) bool {
	if t == "" {
		return true
	}
	have := strings.Split(within, "+")
	for _, x := range strings.Split(t, "+") {
		if !slices.Contains(have, x) {
			return false
		}
	}
	return true
}

func idKindName(k wire.IDKind) string {
	switch k {
	case wire.IDNull:
		return "null"
	case wire.IDNumber:
		return "num"
	case wire.IDString:
		return "str"
	case wire.IDOther:
		return "other"
	}
	return "none"
}

// replyClass is the part of a dedup key that says what came back: the
// reply's kind, and an error's code (error:-32601); "none" for silence,
// "not_json" for text that is not JSON.
func replyClass(reply []byte) string {
	if len(wire.TrimSpace(reply)) == 0 {
		return "none"
	}
	var m wire.Message
	wire.Scan(reply, &m)
	switch {
	case m.Problems.Has(wire.ProblemInvalidJSON):
		return "not_json"
	case m.Kind == wire.KindError && m.HasCode:
		return "error:" + strconv.FormatInt(m.Code, 10)
	}
	return kindName(m.Kind)
}

func kindName(k wire.Kind) string {
	switch k {
	case wire.KindResult:
		return "result"
	case wire.KindError:
		return "error"
	case wire.KindBatch:
		return "batch"
	case wire.KindRequest:
		return "request"
	case wire.KindNotification:
		return "notification"
	}
	return "invalid"
}

// envelopeRule reports whether r is a rule of the reply's envelope alone
// (check.Envelope's), whose cause is what is wrong with the envelope.
func envelopeRule(r check.Rule) bool {
	switch r {
	case check.InvalidEnvelope, check.BadJSONRPCVersion, check.BothResultAndError, check.NoResultOrError,
		check.BadErrorObject, check.InvalidJSON:
		return true
	}
	return false
}

// envelopeClass names what is wrong with a reply's envelope: its problems
// (bad_id|extra_member), or its class when it has none.
func envelopeClass(reply []byte) string {
	var m wire.Message
	wire.Scan(reply, &m)
	if p := m.Problems.String(); p != "" {
		return p
	}
	return replyClass(reply)
}

// bodyClass is what a 5xx response said, for a crash's key: a JSON-RPC
// body's class, or the first line of a text made alike as a stderr line is
// (stderrKey), cut to 80 bytes.
func bodyClass(body []byte) string {
	if looksLikeJSON(body) {
		return replyClass(body)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
	if line = stderrKey([]string{line}); len(line) > 80 {
		line = line[:80]
	}
	return line
}
