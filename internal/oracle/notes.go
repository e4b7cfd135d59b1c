package oracle

import (
	"strconv"

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

func envelopeNote(env check.Set, r *wire.Message) string {
	if env == 0 {
		return ""
	}
	return "reply envelope: " + r.Problems.String()
}
