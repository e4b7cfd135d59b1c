package fuzz

import (
	"testing"

	"github.com/rpcload/rpcload/internal/check"
)

// TestReplyToNotificationNamedAlike: on a stream, a server that answers a
// notification frame (alone, or inside a batch) with a response that has
// no id member, id null or an id it made up breaks reply_to_notification
// and nothing else, the rule rpcload counts for the same case (issue 15,
// item 2).
func TestReplyToNotificationNamedAlike(t *testing.T) {
	const (
		note = `{"jsonrpc":"2.0","method":"n"}`
		call = `{"jsonrpc":"2.0","id":1,"method":"a"}`
		ok1  = `{"jsonrpc":"2.0","id":1,"result":1}`
		noID = `{"jsonrpc":"2.0","result":1}`
		null = `{"jsonrpc":"2.0","id":null,"result":1}`
	)
	rtn := check.Set(0).Add(check.ReplyToNotification)
	for _, tc := range []struct {
		name    string
		frames  []string
		replies []string
	}{
		{"a notification, no id", []string{note}, []string{noID}},
		{"a notification, id null", []string{note}, []string{null}},
		{"a call and a notification, no id", []string{call, note}, []string{ok1, noID}},
		{"a call and a notification, no id first", []string{call, note}, []string{noID, ok1}},
		{"a batch with a notification, no id", []string{`[` + call + `,` + note + `]`}, []string{`[` + ok1 + `,` + noID + `]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := frames(tc.frames...)
			var reps [][]byte
			for _, r := range tc.replies {
				reps = append(reps, []byte(r))
			}
			infos, _ := inspect(c, nil)
			o := outcome{replies: reps, end: endNone}
			v := judgeOutcome(c, infos, &o, nil)
			if v.rules != rtn || v.rule != check.ReplyToNotification {
				t.Errorf("rules %v named %s (%s), want reply_to_notification alone", v.rules, v.rule, v.note)
			}
		})
	}
}
