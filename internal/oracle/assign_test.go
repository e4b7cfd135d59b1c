package oracle

import (
	"testing"

	"github.com/rpcload/rpcload/internal/wire"
)

// TestPairingOrder holds Pairing to the order of the batch pairing's first
// passes: each row lists frames in the order a reply takes them (each
// pair of neighbours is paired in the other order, so that the frames'
// order breaks no tie), and after "-" frames it takes in none of them.
func TestPairingOrder(t *testing.T) {
	const (
		call       = `{"jsonrpc":"2.0","id":1,"method":"x"}`
		callExtra  = `{"jsonrpc":"2.0","id":1,"method":"x","extra":1}`
		invalidID  = `{"jsonrpc":"1.0","id":1,"method":"x"}`
		unreadable = `{"jsonrpc":"2.0","id":true,"method":"x"}`
		notif      = `{"jsonrpc":"2.0","method":"x"}`
		idNull     = `{"jsonrpc":"2.0","id":null,"method":"x"}`
		lenient    = `{"jsonrpc":"2.0","id":2} x`
		result1    = `{"jsonrpc":"2.0","id":1,"result":1}`
		result1f   = `{"jsonrpc":"2.0","id":1.0,"result":1}`
		result2    = `{"jsonrpc":"2.0","id":2,"result":1}`
		err1       = `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"m"}}`
		errNull    = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}`
	)
	tests := []struct {
		reply  string
		frames []string
	}{
		{result1, []string{call, callExtra, invalidID, "-", unreadable, notif, idNull}},
		{result1f, []string{call, "-", unreadable}},
		{err1, []string{invalidID, call, "-", notif}},
		{result2, []string{"-", call, invalidID, unreadable}},
		{errNull, []string{unreadable, invalidID, idNull, "-", call, notif}},
		// A plain answer before one a tolerance allows (a lenient reader of
		// the unparseable frame), whatever the tier.
		{errNull, []string{invalidID, lenient}},
	}
	var p Pairing
	var r wire.Message
	var frames []string
	// A frame is required as the oracle judges its silence, as the stream
	// asks (internal/fuzz requiredAt): silence that is only a warning
	// (null_id_unanswered) does not make it required.
	judges := Judges{Fits: func(int, int) bool { return true }, Required: func(i int) bool {
		f := []byte(frames[i])
		rules, _ := JudgeFuzzReply(f, ClassifyRequest(f), nil, false)
		return rules.Failures() != 0
	}}
	for _, tc := range tests {
		wire.Scan([]byte(tc.reply), &r)
		off := false
		for k, f := range tc.frames {
			if f == "-" {
				off = true
				continue
			}
			p.Reset()
			frames = []string{f}
			p.AddRequest([]byte(f), ClassifyRequest([]byte(f)), false)
			p.AddReply(&r)
			if got := p.Pair(judges)[0].Kind == Answer; got == off {
				t.Errorf("reply %s, frame %s: paired %v; want %v", tc.reply, f, got, !off)
			}
			if k == 0 || off || tc.frames[k-1] == "-" {
				continue
			}
			prev := tc.frames[k-1]
			p.Reset()
			frames = []string{f, prev}
			p.AddRequest([]byte(f), ClassifyRequest([]byte(f)), false)
			p.AddRequest([]byte(prev), ClassifyRequest([]byte(prev)), false)
			p.AddReply(&r)
			if fate := p.Pair(judges)[0]; fate != (Fate{Answer, 1}) {
				t.Errorf("reply %s went to frame %v of [%s %s]; want %s", tc.reply, fate, f, prev, prev)
			}
		}
	}
}
