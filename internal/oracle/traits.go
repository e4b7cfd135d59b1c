package oracle

import (
	"strings"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/wire"
)

// parserTraits name the edges a parser trips over wherever they sit in a
// frame, most telling first (the one least often there by chance: deep
// nesting and size come with many inputs that break nothing).
var parserTraits = [...]struct {
	e    edge
	name string
}{
	{edgeBadUTF8, "bad_utf8"}, {edgeSurrogate, "lone_surrogate"}, {edgeDupKey, "dup_key"}, {edgeHugeNumber, "huge_number"},
	{edgeDeep, "deep"}, {edgeHugeFrame, "huge_frame"},
}

// messageTraits name the edges of a message's envelope.
var messageTraits = [...]struct {
	e    edge
	name string
}{
	{edgeDupID, "dup_id"}, {edgeExtra, "extra_member"}, {edgeResponseLike, "response_like"},
	{edgeNullParams, "null_params"}, {edgeEmptyMethod, "empty_method"},
}

// InputTraits names what in an input frame a server may trip over beyond
// its request class: the edges of the tolerance table (docs/oracle.md)
// with the parser limits told apart. parser holds what a tokenizer meets
// wherever it sits, most telling first: bad_utf8, lone_surrogate (an
// escape of half a surrogate pair), dup_key, huge_number (beyond float64), odd_id (an id
// spelled as a fraction, an exponent or an integer beyond float64's exact
// range), big_batch (more elements than a server may take whole), deep,
// huge_frame. message holds what a JSON-RPC reader meets in the envelope:
// dup_id, extra_member, response_like, null_params, empty_method. Each is
// joined by '+', "" for none; text that is not JSON (or bytes that break
// the framing) has parser traits only, read off its tokens as far as they
// go. A finding whose exchange shows nothing of its cause (a crash, a
// hang) is known by them: the planted bugs of internal/fuzztarget are one
// trait each. It walks the whole frame: for findings, not for every input.
func InputTraits(frame []byte) (parser, message string) {
	var q request
	q.init(frame, 0, len(frame))
	e := q.analyse()
	if q.class == ParseError && !utf8.Valid(frame) {
		e |= edgeBadUTF8 // (the scan of text that is not JSON stops before it checks)
	}
	var p, m []string
	for _, t := range parserTraits[:4] {
		if e&t.e != 0 {
			p = append(p, t.name)
		}
	}
	if q.looseNumericID() {
		p = append(p, "odd_id")
	}
	var s wire.Message
	if q.m.Kind == wire.KindBatch {
		if wire.Scan(frame, &s); s.BatchLen > batchCapEdge {
			p = append(p, "big_batch")
		}
	}
	for _, t := range parserTraits[4:] {
		if e&t.e != 0 {
			p = append(p, t.name)
		}
	}
	if q.class != ParseError {
		for _, t := range messageTraits {
			if e&t.e != 0 {
				m = append(m, t.name)
			}
		}
	}
	return strings.Join(p, "+"), strings.Join(m, "+")
}
