package fuzz

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/mutate"
)

// TestBlameInDoubt: a reply without an id that answers its frame wrongly
// is a guess when another frame could have taken it (their replies
// swapped), and the verdict says so, whatever order the replies came in.
func TestBlameInDoubt(t *testing.T) {
	errID := func(id string, code int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"m"}}`, id, code)
	}
	for _, tc := range []struct {
		name    string
		frames  []string
		replies []string
		want    check.Rule
		guess   bool
	}{
		// Both owe -32600 with id null: the -32700 is either's.
		{"[] and an invalid request", []string{`[]`, `{"jsonrpc":"2.0","method":"echo"}`, `{"jsonrpc":false,"method":"echo"}`}, []string{errID("null", -32600), errID("null", -32700)}, check.EmptyBatchReplyWrong, true},
		// Two frames without a reply to blame it on.
		{"two invalid requests, one wrong reply", []string{`{"jsonrpc":false,"method":"echo"}`, `{"jsonrpc":"2.0","method":1}`}, []string{errID("null", -32700)}, check.WrongErrorCode, true},
		// A parse error's -32700 answers it, and cannot answer []: the
		// second -32700 is []'s (a server wedged by the broken frame).
		{"a parse error and []", []string{`"`, `[]`}, []string{errID("null", -32700), errID("null", -32700)}, check.EmptyBatchReplyWrong, false},
		// The other frame has an id: its reply tells.
		{"[] and a call", []string{`[]`, `{"jsonrpc":"2.0","id":1,"method":"echo"}`}, []string{errID("null", -32700), `{"jsonrpc":"2.0","id":1,"result":1}`}, check.EmptyBatchReplyWrong, false},
		// Two batches answered with arrays that answer neither correctly:
		// which is which is a guess, unless an array carries an id only
		// one of them has.
		{"two batches, two wrong arrays", []string{`[0,0]`, `[0,{"id":null}]`}, []string{`[` + errID("null", -32700) + `,` + errID("null", -32700) + `]`, `[` + errID("null", -32700) + `,` + errID("null", -32600) + `]`}, check.WrongErrorCode, true},
		{"two batches, two wrong arrays of their lengths", []string{`[0,0]`, `[0,{"id":null},0]`}, []string{`[` + errID("null", -32700) + `,` + errID("null", -32700) + `]`, `[` + errID("null", -32700) + `,` + errID("null", -32600) + `,` + errID("null", -32700) + `]`}, check.WrongErrorCode, false},
		{"two batches, two wrong arrays, one with an id", []string{`[0,0]`, `[{"id":0,"id":0},0]`}, []string{`[` + errID("null", -32700) + `,` + errID("null", -32700) + `]`, `[` + errID("0", -32600) + `,` + errID("null", -32700) + `]`}, check.WrongErrorCode, false},
		// One batch: its array is its own.
		{"one batch and a call", []string{`[0,0]`, `{"jsonrpc":"2.0","id":1,"method":"echo"}`}, []string{`[` + errID("null", -32700) + `,` + errID("null", -32700) + `]`, `{"jsonrpc":"2.0","id":1,"result":1}`}, check.WrongErrorCode, false},
		{"[], [0] and 0", []string{`[]`, `[0]`, `0`}, []string{errID("null", -32600), `[` + errID("null", -32700) + `]`, errID("null", -32700)}, check.EmptyBatchReplyWrong, true},
		// [] left without a reply while the notification took a -32700 a
		// server may refuse it with: the -32700 may be []'s (or
		// {"method":0}'s, and the -32600 []'s).
		{"[] unanswered beside a refused notification", []string{`[]`, `{"jsonrpc":"2.0","method":"a","params":{"":0,"":0}}`, `{"method":0}`}, []string{errID("null", -32600), errID("null", -32700)}, check.EmptyBatchReplyWrong, true},
		{"[] unanswered alone", []string{`[]`}, nil, check.EmptyBatchReplyWrong, false},
		// The reply with id 0 is the repeated-id request's (it holds 0),
		// the -32700 {"method":0}'s: no second reply (the -32700 went to
		// the first, which takes any reply, and the id 0 was its second).
		{"a repeated id and an invalid request", []string{`{"id":null,"id":0}`, `{"method":0}`}, []string{errID("0", -32600), errID("null", -32700)}, check.WrongErrorCode, false},
		// Two repeated ids, [], and an invalid request (jrpc2 over TCP):
		// each id to the request holding it, whatever order they came in.
		{"repeated ids held", []string{`{"id":null,"id":0}`, `[]`, "{\"jsonrpc\":\"2.0\",\"method\":\"\xbc\",\"id\":false,\"id\":1}", `{"jsonrpc":0}`}, []string{errID("null", -32600), errID("null", -32700), errID("0", -32600), errID("1", -32601)}, check.EmptyBatchReplyWrong, true},
		// Two batches, one of which any array answers (invalid UTF-8): the
		// other's verdict depends on which array it got, unless the id
		// one carries tells.
		{"a batch any array answers", []string{`[0]`, "[{\"jsonrpc\":\"2.0\",\"method\":\"\xbc\",\"id\":null}]"}, []string{`[` + errID("null", -32700) + `]`, `[` + errID("null", -32601) + `]`}, check.WrongErrorCode, true},
		{"a batch any array answers, its id carried", []string{`[0]`, "[{\"jsonrpc\":\"2.0\",\"method\":\"\xbc\",\"id\":0}]"}, []string{`[` + errID("null", -32700) + `]`, `[` + errID("0", -32601) + `]`}, check.WrongErrorCode, false},
		// jrpc2 refuses a batch of a notification with an extra member
		// with an array: the array is that batch's, not []'s (which was
		// judged "answered with an array", no guess); then which of [] and
		// {"method":0} got the -32700 is a guess.
		{"a refused notification batch, [] and an invalid request", []string{`[{"jsonrpc":"2.0","method":"","\ud80a":[]}]`, `[]`, `{"method":0}`}, []string{`[` + errID("null", -32600) + `]`, errID("null", -32600), errID("null", -32700)}, check.EmptyBatchReplyWrong, true},
		// Two frames of one id (mcp-go, concurrent): the -32602 may be the
		// tools/list's, and the invalid request's reply not come yet.
		{"a shared id", []string{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"g"}}`, `{"jsonrpc":"2.0","id":3,"ps":[]}`, `{}`}, []string{errID("3", -32602), errID("3", -32601), errID("null", -32600)}, check.WrongErrorCode, true},
		// jrpc2 answers {"error":0} (a response to it reads) -32700 and
		// the notification -32600 (refused, allowed): the -32700 judged
		// against the notification may be the other's, which may go
		// without a reply and got one.
		{"a response-like frame and a refusable notification", []string{`{"error":0}`, `{"jsonrpc":"2.0","method":"","params":""}`}, []string{errID("null", -32600), errID("null", -32700)}, check.WrongErrorCode, true},
		// Two arrays for a batch that needs one and a notification batch
		// that may be refused: which got the [-32700] is a guess.
		{"an invalid batch and a notification batch", []string{`[[]]`, `[{"jsonrpc":"2.0","method":"","params":null}]`}, []string{`[` + errID("null", -32600) + `]`, `[` + errID("null", -32700) + `]`}, check.WrongErrorCode, true},
		// Both have id null and owe a reply, which the oracle lets the
		// call go without (null_id_unanswered): the -32700 is either's.
		{"an invalid request and a call, both with id null", []string{`{"id":null,"method":[],"":[]}`, `{"jsonrpc":"2.0","id":null,"method":"e"}`}, []string{errID("null", -32700)}, check.WrongErrorCode, true},
		// A batch longer than 100 may be refused with one error, but its
		// array came, so no single error is its: then which of [] and the
		// strings got the -32600 is a guess (a -32700 took the batch, the
		// array went to [], and "[] answered with an array" was no guess).
		{"a long batch, its array, [] and strings", []string{`[{"jsonrpc":"2.0","method":"gte_time","params":null}]`, "[" + strings.Repeat("1,", 100) + "1]", `[]`, `"\u0001\u001f"`, `"2.0"`},
			[]string{errID("null", -32600), errID("null", -32700), "[" + strings.Repeat(errID("null", -32700)+",", 100) + errID("null", -32700) + "]", errID("null", -32700)}, check.EmptyBatchReplyWrong, true},
		// The id 0 an array carries ties it to the batch with id 0 (the
		// other array answers the deep batch well enough, as a parser
		// may refuse depth, and took it): no guess, whatever the order.
		{"arrays tied by ids", []string{`[[],{}]`, `[{"jsonrpc":"2.0","id":0,"method":"R","params":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `},0]`},
			[]string{`[` + errID("0", -32601) + `,` + errID("null", -32700) + `]`, `[` + errID("null", -32700) + `,` + errID("null", -32600) + `]`}, check.WrongErrorCode, false},
		{"arrays tied by ids, neither fitting", []string{`[[],{}]`, `[{"jsonrpc":"2.0","id":0,"method":"R","params":[]},0]`},
			[]string{`[` + errID("0", -32601) + `,` + errID("null", -32700) + `]`, `[` + errID("null", -32700) + `,` + errID("null", -32600) + `]`}, check.WrongErrorCode, false},
		// Two one-element arrays, either of which a batch holding []
		// and a refusable notification batch may take: which [] got
		// is a guess (jrpc2: [-32700] for [], [-32600] refusing the
		// empty method).
		{"two one-element arrays", []string{`[{"jsonrpc":"2.0","method":"r"},[]]`, `[{"jsonrpc":"2.0","method":"","params":null}]`},
			[]string{`[` + errID("null", -32600) + `]`, `[` + errID("null", -32700) + `]`}, check.WrongErrorCode, true},
		// One frame alone.
		{"[] alone", []string{`[]`}, []string{errID("null", -32700)}, check.EmptyBatchReplyWrong, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inOrders(tc.frames, tc.replies, outcome{end: endNone}, func(perm []int, v verdict) {
				if v.rule != tc.want || v.guess != tc.guess {
					t.Errorf("replies in order %v: rule %v guess %v (%s), want %v guess %v", perm, v.rule, v.guess, v.note, tc.want, tc.guess)
				}
			})
		})
	}
}

// TestSettleGuess: a verdict in doubt is confirmed only by its frame sent
// alone, which becomes the input; one that is not in doubt is left as it
// was found.
func TestSettleGuess(t *testing.T) {
	empty, invalid := []byte(`[]`), []byte(`{"jsonrpc":false,"method":"echo"}`)
	both := mutate.Case{Frames: [][]byte{empty, invalid}}
	for _, tc := range []struct {
		name      string
		guess     bool
		aloneFail bool // the frame alone breaks the rule the same way
		want      bool
		wantIn    int // frames of the input afterwards
	}{
		{"in doubt, the frame alone fails", true, true, true, 1},
		{"in doubt, the frame alone is answered right", true, false, false, 2},
		{"not in doubt", false, false, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent := 0
			cand := candidate{in: both, v: verdict{guess: tc.guess, in: empty}}
			cand.check = func(_ context.Context, c mutate.Case) bool {
				sent++
				if len(c.Frames) == 1 && !bytes.Equal(c.Frames[0], empty) {
					t.Errorf("sent %q alone, want the frame the verdict is about", c.Frames[0])
				}
				return len(c.Frames) == 2 || tc.aloneFail
			}
			if got := cand.settleGuess(context.Background()); got != tc.want {
				t.Errorf("settleGuess = %v, want %v", got, tc.want)
			}
			if len(cand.in.Frames) != tc.wantIn {
				t.Errorf("input has %d frames afterwards, want %d", len(cand.in.Frames), tc.wantIn)
			}
			if !tc.guess && sent != 0 {
				t.Errorf("sent %d inputs for a verdict not in doubt", sent)
			}
		})
	}
}

// TestReproducesWhileMinimizing: a verdict that is a guess reproduces a
// candidate while it is confirmed (settleGuess then settles it), never
// while it is minimized, so that a smaller input cannot bring back a doubt
// the candidate's own verdict did not have.
func TestReproducesWhileMinimizing(t *testing.T) {
	v := verdict{rule: check.WrongErrorCode, note: "an invalid request answered with error -32700; want error -32600"}
	key := dedupKey(v)
	for _, tc := range []struct {
		name              string
		guess, confirming bool
		want              bool
	}{
		{"no doubt, minimizing", false, false, true},
		{"no doubt, confirming", false, true, true},
		{"a guess, confirming", true, true, true},
		{"a guess, minimizing", true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cand := candidate{v: v, key: key}
			got := v
			got.guess = tc.guess
			if r := cand.reproduces(&got, key, tc.confirming); r != tc.want {
				t.Errorf("reproduces = %v, want %v", r, tc.want)
			}
		})
	}
}

// TestNoFindingWithoutProof: inputs whose replies leave open which frame
// each answers (arrays of lengths both batches could have, jrpc2 over
// TCP) give, in every order of the replies, either no failure or a guess
// that confirmation settles by sending a frame alone: never a failure as
// it is.
func TestNoFindingWithoutProof(t *testing.T) {
	errID := func(id string, code int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"m"}}`, id, code)
	}
	for _, tc := range []struct {
		name            string
		frames, replies []string
		fact            check.Rule // a failure of this rule is what the server did (0: none)
	}{
		// [0,0] got [-32700,-32700], the batch of [1e400] and a
		// notification [-32700]; either batch may take the short array
		// (the notification may go unanswered, and [0,0]'s element
		// too, by a reading of the replies).
		{"two batches of two, arrays of one and two", []string{`[0,0]`, `[[1e400],{"jsonrpc":"2.0","method":"n","params":[1e400]}]`},
			[]string{`[` + errID("null", -32700) + `]`, `[` + errID("null", -32700) + `,` + errID("null", -32700) + `]`}, 0},
		// jrpc2: [-32700] for [[]], and [-32600] refusing the empty
		// method, the id-null call read as a notification.
		{"two one-element arrays, a call with id null", []string{`[[]]`, `[{"jsonrpc":"2.0","method":""},{"jsonrpc":"2.0","method":"a","id":null}]`},
			[]string{`[` + errID("null", -32600) + `]`, `[` + errID("null", -32700) + `]`}, 0},
		// jrpc2: [[-32700] for [] (the notification with bad UTF-8
		// silent), [-32700, -32600] for [0,null]; the longer array
		// answers the first batch well (a refusal of the notification,
		// -32600 for []), and the shorter one was then called short.
		{"the array that fits is the other batch's", []string{"[{\"jsonrpc\":\"2.0\",\"method\":\"\xbf\"},[]]", `[0,null]`},
			[]string{`[` + errID("null", -32700) + `,` + errID("null", -32600) + `]`, `[` + errID("null", -32700) + `]`}, 0},
		// jrpc2: -32700 for }, [-32700] for the 0 of the second batch (its
		// notification silent): a batch of one is not the only one an
		// array of one can answer.
		{"an array of one, batches of one and two", []string{`[{"jsonrpc":"2.0","method":"l","params":null}]`, `[{"jsonrpc":"2.0","method":"_","params":null},0]`, `}`},
			[]string{errID("null", -32700), `[` + errID("null", -32700) + `]`}, 0},
		// jrpc2: -32600 with id "" for the call (empty method), -32700
		// with id null for {"jsonrpc":0}, -32700 with id "" for the
		// invalid request with id "" (a huge number lets it take any
		// error, id null too).
		{"two frames of one id, one with an edge", []string{`{"jsonrpc":"2.0","id":"","method":""}`, `{"jsonrpc":0}`, `{"jsonrpc":0,"id":"","":1e400}`},
			[]string{errID(`""`, -32700), errID(`""`, -32600), errID("null", -32700)}, check.WrongErrorCode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inOrders(tc.frames, tc.replies, outcome{end: endNone}, func(perm []int, v verdict) {
				if v.rules.Failures() != 0 && !v.guess && (tc.fact == 0 || v.rule != tc.fact) {
					t.Errorf("replies in order %v: %s (%s), no guess", perm, v.rule, v.note)
				}
			})
		})
	}
}
