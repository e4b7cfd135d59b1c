package fuzz

import (
	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

// judgeWire judges the replies to bytes that broke the framing on purpose:
// nothing is owed (the server may close the stream), but what comes back
// must be well-formed JSON-RPC, and the server must not die.
func judgeWire(j *judgement, o *outcome) {
	status := uint16(o.end)
	if died, shape, note, ev := streamCrash(o, nil, 0); died && o.end != endClosed && !orderlyExit(o) {
		j.crash(shape, note, ev, status)
	}
	var m wire.Message
	for _, r := range o.replies {
		wire.Scan(r, &m)
		rules := check.Envelope(&m)
		if m.Kind == wire.KindBatch {
			rules = 0 // an array answers the batch the broken framing delimited
		}
		sc := scanOf(&m)
		j.add(rules, "a reply to input with broken framing is not a valid response", r, &sc, status)
	}
}
