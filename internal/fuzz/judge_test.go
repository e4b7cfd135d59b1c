package fuzz

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/wire"
)

const (
	call1   = `{"jsonrpc":"2.0","id":1,"method":"echo"}`
	call2   = `{"jsonrpc":"2.0","id":2,"method":"echo"}`
	notif   = `{"jsonrpc":"2.0","method":"echo"}`
	res1    = `{"jsonrpc":"2.0","id":1,"result":null}`
	res2    = `{"jsonrpc":"2.0","id":2,"result":null}`
	parse   = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`
	invalid = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`
)

func TestMatchReplies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		frames  []string
		replies []string
		want    string // frame index of each reply (len(frames) for none), by reply
	}{
		{"in order", []string{call1, call2}, []string{res1, res2}, "0 1"},
		{"any order", []string{call1, call2}, []string{res2, res1}, "1 0"},
		{"notification skipped", []string{call1, notif, call2}, []string{res1, res2}, "0 2"},
		{"parse error answered", []string{`}`, call1}, []string{parse, res1}, "0 1"},
		{"duplicate", []string{call1, call2}, []string{res1, res1, res2}, "0 0 1"},
		// An id nothing was sent with answers no frame (judged as a batch
		// judges such a reply: reply_to_notification, the input having one).
		{"reply to nothing", []string{call1, notif}, []string{res1, res2}, "0 2"},
		// A reply a notification may take (a tolerated answer to an invalid
		// one) goes to the frame that needs it when both fit.
		{"tolerated vs needed", []string{`{"jsonrpc":"2.0","method":"x","extra":1}`, `{}`}, []string{invalid}, "1"},
		// (The two replies are alike: the first goes to the frame that
		// requires one.)
		{"both answered", []string{`{"jsonrpc":"2.0","method":"x","extra":1}`, `{}`}, []string{invalid, invalid}, "1 0"},
		{"batch array", []string{notif, `[` + call1 + `]`, call2}, []string{`[` + res1 + `]`, res2}, "1 2"},
		// The same id twice, answered out of order (the call is slow): each
		// reply goes where it is a correct answer.
		{"repeated id out of order", []string{`{"jsonrpc":"2.0","id":3,"method":"slow"}`, `{"id":3}`},
			[]string{`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request"}}`, `{"jsonrpc":"2.0","id":3,"result":1}`}, "1 0"},
		// By id first, as the replies of a batch go to its elements: a
		// reply with id 1 answers the call whose id is 1, not a call
		// before it that a repeated "id" member lets take any id (the
		// matching by tolerances gave it to the first frame).
		{"id first over a repeated id", []string{`{"jsonrpc":"2.0","id":5,"id":1,"method":"x"}`, call1}, []string{res1}, "1"},
		{"id first over a repeated id, other order", []string{`{"jsonrpc":"2.0","id":1,"id":5,"method":"x"}`, call1}, []string{res1}, "1"},
		// An error with id null answers the invalid request whose id could
		// not be read before one whose id could (a server that read it
		// should have echoed it).
		{"id null to the unreadable id first", []string{`{"jsonrpc":"1.0","id":1,"method":"x"}`, `{"jsonrpc":"2.0","id":true,"method":"x"}`}, []string{invalid}, "1"},
		// Plainly before by a tolerance, as in a batch: an error -32600
		// with id null is the plain answer to the invalid request with id
		// 1; the unparseable frame before it (an invalid request with id
		// 2 and a stray word) takes it only by the tolerance for a lenient
		// reader, though id null answers that frame first by rank (the
		// stream's pairing before it was the batch's gave it the reply).
		{"plain before tolerated", []string{`{"jsonrpc":"2.0","id":2} x`, `{"jsonrpc":"2.0","id":1}`}, []string{invalid}, "1"},
		// A reply carrying a frame's id as the other JSON type answers that
		// frame (id_type_changed), not the first frame left without one.
		{"type changed to its frame", []string{call1, call2, `{"jsonrpc":"2.0","id":3,"method":"echo"}`}, []string{`{"jsonrpc":"2.0","id":"3","result":null}`, res2}, "2 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := frames(tc.frames...)
			var r [][]byte
			for _, x := range tc.replies {
				r = append(r, []byte(x))
			}
			infos, _ := inspect(c, nil)
			p := &pairs{frames: c.Frames, infos: infos, replies: r, seen: map[[2]int]pairVerdict{}}
			assigned := matchReplies(p)
			got := make([]string, len(r))
			for f, js := range assigned {
				for _, j := range js {
					got[j] = fmt.Sprint(f)
				}
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("replies go to frames %s, want %s", s, tc.want)
			}
		})
	}
}

func TestJudgeOutcome(t *testing.T) {
	one := frames(call1)
	for _, tc := range []struct {
		name  string
		c     mutate.Case
		o     outcome
		rule  string // the finding's rule, "" for none
		shape string
	}{
		{"clean", one, outcome{replies: [][]byte{[]byte(res1)}}, "", ""},
		{"hang", one, outcome{end: endTimeout}, "hang", "none"},
		{"silence before a crash is no hang", one, outcome{end: endClosed, note: "eof"}, "crash", "conn_closed"},
		{"closed after the reply", one, outcome{end: endClosed, replies: [][]byte{[]byte(res1)}}, "", ""},
		{"reset", one, outcome{end: endReset}, "crash", "conn_reset"},
		{"child exit", one, outcome{end: endExited, exitCode: 2, note: "exit status 2 after 3ms",
			stderr: []string{"starting", "panic: index out of range [5] with length 3", "goroutine 7 [running]:"}},
			"crash", "stderr:panic: index out of range [N] with length N"},
		{"child exit 0 is no crash", one, outcome{end: endExited, exitCode: 0, note: "exit status 0 after 3ms"}, "", ""},
		{"signal", one, outcome{end: endExited, exitCode: -1, note: "killed by signal SIGSEGV after 1s"}, "crash", "exit:killed by signal SIGSEGV"},
		{"wrong id", one, outcome{replies: [][]byte{[]byte(res2)}}, "unknown_id", "{id:num,jsonrpc:str,result:null}"},
		{"duplicate", one, outcome{replies: [][]byte{[]byte(res1), []byte(res1)}}, "duplicate_reply", "{id:num,jsonrpc:str,result:null}"},
		{"reply to a notification", frames(notif), outcome{replies: [][]byte{[]byte(res1)}}, "reply_to_notification", "{id:num,jsonrpc:str,result:null}"},
		{"wire: nothing owed", frames(call1), outcome{wire: true, end: endNone}, "", ""},
		{"wire: bad reply", frames(call1), outcome{wire: true, replies: [][]byte{[]byte(`{"hello":1}`)}}, "no_result_or_error", "{hello:num}"},
		{"http 500", one, outcome{perFrame: true, sent: 1, end: endReset, httpStatus: []int{500}, frameReplies: [][][]byte{{[]byte("oops")}}}, "crash", "http_500:oops"},
		{"http 400 text", one, outcome{perFrame: true, sent: 1, httpStatus: []int{400}, frameReplies: [][][]byte{{[]byte("bad request")}}}, "", ""},
		{"http timeout", one, outcome{perFrame: true, sent: 1, end: endTimeout, httpStatus: []int{0}, frameReplies: make([][][]byte, 1)}, "hang", "none"},
		{"http empty body to a call", one, outcome{perFrame: true, sent: 1, httpStatus: []int{200}, frameReplies: make([][][]byte, 1)}, "no_result_or_error", "none"},
		{"http 204 to a notification", frames(notif), outcome{perFrame: true, sent: 1, httpStatus: []int{204}, frameReplies: make([][][]byte, 1)}, "", ""},
		// The known deviations, warnings: id null read as a notification,
		// a parse error refused in plain HTTP.
		{"http 204 to id null", frames(nullIDCall), outcome{perFrame: true, sent: 1, httpStatus: []int{204}, frameReplies: make([][][]byte, 1)}, "null_id_unanswered", "none"},
		{"http 400 text to a parse error", frames(`{"jsonrpc":`), outcome{perFrame: true, sent: 1, httpStatus: []int{400}, frameReplies: [][][]byte{{[]byte("bad request")}}}, "plain_http_error", "none"},
		{"http 400 JSON to a parse error", frames(`{"jsonrpc":`), outcome{perFrame: true, sent: 1, httpStatus: []int{400}, frameReplies: [][][]byte{{[]byte(parse)}}}, "", ""},
		{"silence to id null", frames(nullIDCall), outcome{}, "null_id_unanswered", "none"},
		{"silence to id null before a crash", frames(nullIDCall), outcome{end: endClosed, note: "eof"}, "crash", "conn_closed"},
		{"silence to id null and to the sync request", frames(nullIDCall), outcome{end: endTimeout}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			infos, _ := inspect(tc.c, nil)
			v := judgeOutcome(tc.c, infos, &tc.o, nil)
			rule := ""
			if v.rules != 0 {
				rule = v.rule.String()
			}
			if rule != tc.rule || v.shape != tc.shape {
				t.Errorf("rule %q shape %q (%s), want %q %q", rule, v.shape, v.note, tc.rule, tc.shape)
			}
			if len(v.tuples) == 0 {
				t.Error("no feedback tuple")
			}
		})
	}
}

func TestMainRule(t *testing.T) {
	s := check.Set(0).Add(check.SlowInput).Add(check.InvalidEnvelope).Add(check.Hang)
	if r := mainRule(s); r != check.Hang {
		t.Errorf("mainRule = %s, want hang", r)
	}
	if r := mainRule(s.Add(check.Crash)); r != check.Crash {
		t.Errorf("mainRule = %s, want crash", r)
	}
	if r := mainRule(check.Set(0).Add(check.SlowInput).Add(check.MCPLegacyCode)); r != check.MCPLegacyCode {
		t.Errorf("mainRule = %s, want the other warning before slow_input", r)
	}
}

func TestMessageClass(t *testing.T) {
	same := [][2]string{
		{`"invalid character '}' at offset 12"`, `"invalid character ']' at offset 3"`},
		{`"Method not found"`, `"method NOT found"`},
		{`"duplicate member \"id\""`, `"duplicate member \"jsonrpc\""`},
	}
	for _, p := range same {
		if messageClass([]byte(p[0]), nil) != messageClass([]byte(p[1]), nil) {
			t.Errorf("%s and %s should be one class", p[0], p[1])
		}
	}
	if messageClass([]byte(`"no method"`), nil) == messageClass([]byte(`"nested batch"`), nil) {
		t.Error("different messages should be different classes")
	}
	if messageClass([]byte(`"x"`), []byte(`"a"`)) == messageClass([]byte(`"x"`), []byte(`"b"`)) {
		t.Error("the data counts")
	}
}

func TestStderrKey(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"listening on :80", "panic: bad thing at 0xc000123"}, "panic: bad thing at 0xN"},
		{[]string{"fatal error: concurrent map writes", "goroutine 1"}, "fatal error: concurrent map writes"},
		{[]string{"", "last words 42"}, "last words N"},
		{nil, ""},
		{[]string{"Traceback (most recent call last):", "  File x.py, line 3"}, "Traceback (most recent call last):"},
	} {
		if got := stderrKey(tc.lines); got != tc.want {
			t.Errorf("stderrKey(%q) = %q, want %q", tc.lines, got, tc.want)
		}
	}
	if got := exitKind("exit status 2 after 3.1ms"); got != "exit status 2" {
		t.Errorf("exitKind = %q", got)
	}
	if got := exitCodeOf("exit status 3 after 1s"); got != 3 {
		t.Errorf("exitCodeOf = %d", got)
	}
	if got := exitCodeOf("killed by signal SIGKILL after 1s"); got != -1 {
		t.Errorf("exitCodeOf = %d", got)
	}
}

func TestDedupKey(t *testing.T) {
	a := verdict{rule: check.Crash, shape: "conn_reset"}
	b := verdict{rule: check.Crash, shape: "conn_reset", note: "other words", reply: []byte("x")}
	c := verdict{rule: check.Crash, shape: "conn_closed"}
	if dedupKey(a) != dedupKey(b) || findingID(a.rule, dedupKey(a)) != findingID(b.rule, dedupKey(b)) {
		t.Error("the note and the reply's values are not part of the key")
	}
	if dedupKey(a) == dedupKey(c) {
		t.Error("the shape is part of the key")
	}
	id := findingID(check.WrongErrorCode, "x")
	if !strings.HasPrefix(id, "wrong_error_code-") || !idPattern.MatchString(id) {
		t.Errorf("id %q", id)
	}
}

func TestInspect(t *testing.T) {
	c := frames(call1, notif, `}`, `[`+notif+`]`, `[`+notif+`,`+call2+`]`, `{"jsonrpc":"2.0","method":"x","params":1}`, `{"jsonrpc":"2.0","id":3,"method":"x","params":1}`)
	var got []string
	infos, _ := inspect(c, nil)
	for _, fi := range infos {
		got = append(got, fmt.Sprintf("%s:%v:%v", fi.class, fi.needs, fi.readable))
	}
	want := []string{"call:true:true", "notification:false:false", "parse_error:true:false", "batch:false:false",
		"batch:true:true", "invalid_params:false:false", "invalid_params:true:true"}
	if !slices.Equal(got, want) {
		t.Errorf("inspect:\n got %q\nwant %q", got, want)
	}
	w := newWaitFor(nil, infos)
	if w.needs != 4 || w.ambiguous || len(w.owed) != 3 {
		t.Errorf("waitFor = %+v, want 4 needing a reply, 3 calls", w)
	}
}

func TestWaitFor(t *testing.T) {
	slow := `{"jsonrpc":"2.0","id":3,"method":"slow"}`
	for _, tc := range []struct {
		name    string
		frames  []string
		replies []string
		done    []bool // after each reply
	}{
		{"calls by id", []string{call1, call2}, []string{res2, res1}, []bool{false, true}},
		{"an id re-spelled", []string{`{"jsonrpc":"2.0","id":1.0,"method":"x"}`}, []string{res1}, []bool{true}},
		// Replies without a key are counted: a concurrent server may send
		// them after the sync reply.
		{"garbage answered late", []string{call1, `}`}, []string{res1, parse}, []bool{false, true}},
		{"no key: counted", []string{`}`, `{}`}, []string{parse, invalid}, []bool{false, true}},
		// Silence is allowed for id null and for a notification: not waited for.
		{"tolerated silence", []string{`{"jsonrpc":"2.0","id":null,"method":"x"}`, notif, call1}, []string{res1}, []bool{true}},
		// The invalid request shares the slow call's id: its reply cannot
		// stand for the call's, so only the count ends the wait.
		{"shared id", []string{slow, `{"id":3}`, `{}`}, []string{`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"x"}}`, invalid, `{"jsonrpc":"2.0","id":3,"result":1}`}, []bool{false, false, true}},
		{"batch array", []string{`[` + call1 + `]`}, []string{`[` + res1 + `]`}, []bool{true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := frames(tc.frames...)
			infos, _ := inspect(c, nil)
			w := newWaitFor(c.Frames, infos)
			w.settle() // (exchanges settle the counts when they would wait)
			var reps [][]byte
			var scans []replyScan
			for i, r := range tc.replies {
				reps, scans = append(reps, []byte(r)), append(scans, scanReply([]byte(r)))
				w.answer(reps, scans)
				if got := w.done(i + 1); got != tc.done[i] {
					t.Errorf("after reply %d: done %v, want %v", i+1, got, tc.done[i])
				}
			}
		})
	}
}

// TestIDKeyFollowsEchoesID checks that the key a call's reply is awaited
// under is taken by every echo of its id the oracle accepts
// (wire.EchoesID), and by no other id. A string id with invalid UTF-8
// echoed with one U+FFFD per bad stretch (as WHATWG decoders do) kept its
// reply from taking the key while idKey decoded without wire.AppendIDKey.
func TestIDKeyFollowsEchoesID(t *testing.T) {
	tests := []struct {
		req, reply string
		same       bool
	}{
		{`1`, `1.0`, true},
		{`1E2`, `100`, true},
		{`9007199254740993`, `9007199254740992`, true},
		{`1e999`, `10e998`, true},
		{`"a"`, `"\u0061"`, true},
		{"\"a\xf0\x90\x80b\"", `"a\ufffdb"`, true},
		{"\"a\xf0\x90\x80b\"", `"a\ufffd\ufffd\ufffdb"`, true},
		{`"\ud800x"`, `"\ufffdx"`, true},
		{`1`, `"1"`, false},
		{`1`, `2`, false},
		{`"a"`, `"b"`, false},
		{"\"a\xf0\x90\x80b\"", `"ab"`, false},
	}
	for _, tc := range tests {
		if echo := wire.EchoesID([]byte(tc.req), []byte(tc.reply)); echo != tc.same {
			t.Fatalf("wire.EchoesID(%q, %q) = %v; the table wants %v", tc.req, tc.reply, echo, tc.same)
		}
		if got := idKey([]byte(tc.req)) == idKey([]byte(tc.reply)); got != tc.same {
			t.Errorf("idKey(%q) == idKey(%q): %v; want %v", tc.req, tc.reply, got, tc.same)
		}
	}
}
