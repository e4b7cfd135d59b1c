package oracle

import (
	"testing"

	"github.com/rpcload/rpcload/internal/check"
)

// TestReplyToNotificationWithoutID: a server that answers a notification
// with a response that has no id member broke reply_to_notification, and
// only that (a notification has no id to echo, so the missing id is not
// also invalid_envelope), alone and in a batch, as rpcload counts it
// (issue 15, item 2). A response without an id that goes to a call is
// still invalid_envelope.
func TestReplyToNotificationWithoutID(t *testing.T) {
	const (
		note  = `{"jsonrpc":"2.0","method":"n"}`
		call  = `{"jsonrpc":"2.0","id":1,"method":"a"}`
		ok1   = `{"jsonrpc":"2.0","id":1,"result":1}`
		noID  = `{"jsonrpc":"2.0","result":1}`
		null  = `{"jsonrpc":"2.0","id":null,"result":1}`
		other = `{"jsonrpc":"2.0","id":7,"result":1}`
	)
	rtn := check.Set(0).Add(check.ReplyToNotification)
	for _, tc := range []struct {
		name, input, reply string
		want               check.Set
	}{
		{"alone, no id", note, noID, rtn},
		{"alone, id null", note, null, rtn},
		{"alone, a made-up id", note, other, rtn},
		{"alone, no id and a bad version", note, `{"result":1}`, rtn.Add(check.BadJSONRPCVersion)},
		{"in a batch, no id", `[` + call + `,` + note + `]`, `[` + ok1 + `,` + noID + `]`, rtn},
		{"in a batch, id null", `[` + call + `,` + note + `]`, `[` + ok1 + `,` + null + `]`, rtn},
		{"in a batch, a made-up id", `[` + call + `,` + note + `]`, `[` + ok1 + `,` + other + `]`, rtn},
		{"a batch of notifications, an array", `[` + note + `,` + note + `]`, `[` + noID + `]`, rtn},
		{"a batch of notifications, an object", `[` + note + `,` + note + `]`, noID, rtn},
		{"in a batch, an id of a wrong type", `[` + call + `,` + note + `]`, `[` + ok1 + `,{"jsonrpc":"2.0","id":true,"result":1}]`, check.Set(0).Add(check.InvalidEnvelope)},
		{"in a batch, the call's reply without its id", `[` + call + `,` + note + `]`, `[` + noID + `]`, check.Set(0).Add(check.InvalidEnvelope)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := JudgeFuzzReply([]byte(tc.input), ClassifyRequest([]byte(tc.input)), []byte(tc.reply), true)
			if got != tc.want || check.MostSevere(got) != check.MostSevere(tc.want) {
				t.Errorf("rules %v named %s (%s), want %v named %s", got, check.MostSevere(got), why, tc.want, check.MostSevere(tc.want))
			}
		})
	}
}
