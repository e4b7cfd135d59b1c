package oracle

import (
	"testing"

	"github.com/rpcload/rpcload/internal/wire"
)

func TestCandidateRank(t *testing.T) {
	const (
		call       = `{"jsonrpc":"2.0","id":1,"method":"x"}`
		callExtra  = `{"jsonrpc":"2.0","id":1,"method":"x","extra":1}`
		invalidID  = `{"jsonrpc":"1.0","id":1,"method":"x"}`
		unreadable = `{"jsonrpc":"2.0","id":true,"method":"x"}`
		notif      = `{"jsonrpc":"2.0","method":"x"}`
		idNull     = `{"jsonrpc":"2.0","id":null,"method":"x"}`
		result1    = `{"jsonrpc":"2.0","id":1,"result":1}`
		result1f   = `{"jsonrpc":"2.0","id":1.0,"result":1}`
		result2    = `{"jsonrpc":"2.0","id":2,"result":1}`
		err1       = `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"m"}}`
		errNull    = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}`
	)
	// Each row lists frames in the order a reply should try them; a frame
	// the reply does not look at in the first passes is after "-".
	tests := []struct {
		reply  string
		frames []string
	}{
		{result1, []string{call, callExtra, invalidID, "-", unreadable, notif, idNull}},
		{result1f, []string{call, "-", unreadable}},
		{err1, []string{invalidID, call, "-", notif}},
		{result2, []string{"-", call, invalidID, unreadable}},
		{errNull, []string{unreadable, invalidID, idNull, "-", call, notif}},
	}
	for _, tc := range tests {
		var r wire.Message
		wire.Scan([]byte(tc.reply), &r)
		prev, off := -1, false
		for _, f := range tc.frames {
			if f == "-" {
				off = true
				continue
			}
			c := NewCandidate([]byte(f), ClassifyRequest([]byte(f)))
			rank, ok := c.Rank(&r)
			switch {
			case ok == off:
				t.Errorf("reply %s, frame %s: looked at %v; want %v", tc.reply, f, ok, !off)
			case ok && rank < prev:
				t.Errorf("reply %s, frame %s: rank %d before the frame listed above it (%d)", tc.reply, f, rank, prev)
			case ok:
				prev = rank
			}
		}
	}
}
