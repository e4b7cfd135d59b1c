package oracle

import (
	"strconv"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

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
// carry megabyte ids. A cut falls on a character's boundary, and one
// inside a string closes the string after the "...": a note whose quote
// stayed open hid the rest of it from the dedup key, which reads a quoted
// text as one token (the key of "element 0 (id {"method":"echo...): an
// invalid request answered with error -32700" lost all but the id).
func short(raw []byte) string {
	const limit = 40
	if len(raw) <= limit {
		return string(raw)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(raw[cut]) {
		cut--
	}
	inString, escaped := false, false
	for _, c := range raw[:cut] {
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = inString
		case c == '"':
			inString = !inString
		}
	}
	if escaped {
		cut-- // (a lone backslash would escape the closing quote)
	}
	if inString {
		return string(raw[:cut]) + `..."`
	}
	return string(raw[:cut]) + "..."
}

func prefixed(note string) string {
	if note == "" {
		return ""
	}
	return "; " + note
}

func envelopeNote(env check.Set, r *wire.Message) string {
	if env == 0 {
		return ""
	}
	return "reply envelope: " + r.Problems.String()
}
