package fuzz

import (
	"slices"
	"testing"
)

// TestLateWindow checks what a connection remembers of its last
// exchanges: the replies they lacked, taken off oldest first, and their
// ids, for lateGenerations exchanges.
func TestLateWindow(t *testing.T) {
	var lw lateWindow
	ids := func(fs ...string) []frameInfo {
		infos, _ := inspect(frames(fs...), nil)
		return infos
	}
	names := func(got [][]byte) []string {
		var out []string
		for _, id := range got {
			out = append(out, string(id))
		}
		return out
	}
	// Exchange 1 (ids 1, 2) ends lacking 2 replies, 1 of them required.
	if got := lw.open(ids(`{"jsonrpc":"2.0","id":1,"method":"a"}`, `{"jsonrpc":"2.0","id":2,"method":"a"}`)); len(got) != 0 {
		t.Fatalf("first exchange: ids %q", names(got))
	}
	lw.close(2, 1)
	// Exchange 2 (id 3) sets one reply aside, and lacks none.
	if got := names(lw.open(ids(`{"jsonrpc":"2.0","id":3,"method":"a"}`))); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("second exchange: ids %q", got)
	}
	lw.took(1, false)
	lw.close(0, 0)
	if m, o := lw.totals(); m != 1 || o != 0 {
		t.Errorf("after one late reply: missed %d, owed %d; want 1, 0", m, o)
	}
	// Exchange 3 still remembers exchange 1's ids; exchange 5 remembers
	// exchanges 2 to 4 only.
	if got := names(lw.open(ids(`{"jsonrpc":"2.0","id":4,"method":"a"}`))); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Errorf("third exchange: ids %q", got)
	}
	lw.close(0, 0)
	lw.open(nil)
	lw.close(0, 0)
	if got := names(lw.open(nil)); !slices.Equal(got, []string{"3", "4"}) {
		t.Errorf("fifth exchange: ids %q, want the second's and third's", got)
	}
	if m, _ := lw.totals(); m != 0 {
		t.Errorf("missed %d after three exchanges", m)
	}
}

// TestWaitTakesItsOwnNullReply checks that a reply without an id that
// answers a frame of the input ends its wait though an earlier input may
// still have such a reply coming, and that one that answers none is set
// aside as late.
func TestWaitTakesItsOwnNullReply(t *testing.T) {
	// Invalid UTF-8 in a call: a parse error (id null) answers it.
	call := "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"echo\",\"params\":{\"v\xc3\":[]}}"
	for _, tc := range []struct {
		name  string
		reply string
		done  bool
		stale int
	}{
		{"its own", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, true, 0},
		{"an earlier input's", `{"jsonrpc":"2.0","id":null,"result":1}`, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := frames(call)
			infos, _ := inspect(c, nil)
			w := newWaitFor(c.Frames, infos)
			w.staleNull, w.maybeLate = 1, 1
			r := []byte(tc.reply)
			w.answer([][]byte{r}, []replyScan{scanReply(r)})
			if got := w.complete([][]byte{r}, []replyScan{scanReply(r)}); got != tc.done || w.stale != tc.stale {
				t.Errorf("complete %v, stale %d; want %v, %d", got, w.stale, tc.done, tc.stale)
			}
		})
	}
}

// TestWaitNotEndedByRefusals checks that the refusals of notifications do
// not end the wait of a call by count: an id-null refusal fits the call by
// a tolerance, and the call's own reply was still on its way.
func TestWaitNotEndedByRefusals(t *testing.T) {
	notif := `{"jsonrpc":"2.0","method":"echo","params":true}`
	c := frames(notif, notif, notif, `[[`+notif+`],[`+notif+`]]`, `{"jsonrpc":"2.0","id":5,"method":"nope","params":null}`)
	infos, _ := inspect(c, nil)
	w := newWaitFor(c.Frames, infos)
	refusal := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`
	var reps [][]byte
	var scans []replyScan
	for _, r := range []string{refusal, refusal, refusal, `[` + refusal + `,` + refusal + `]`} {
		reps, scans = append(reps, []byte(r)), append(scans, scanReply([]byte(r)))
		w.answer(reps, scans)
		if w.complete(reps, scans) {
			t.Fatalf("complete after %d replies, before the call's", len(reps))
		}
	}
	r := []byte(`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}`)
	reps, scans = append(reps, r), append(scans, scanReply(r))
	w.answer(reps, scans)
	if !w.complete(reps, scans) {
		t.Error("not complete once the call was answered")
	}
}

// TestWaitForParseErrorBehindRefusals: 300 refused notifications do not
// end the wait of a parse error among them; its -32700 does.
func TestWaitForParseErrorBehindRefusals(t *testing.T) {
	notif := `{"jsonrpc":"2.0","method":"rpc.discover","method":"x"}`
	var fs []string
	for k := range 692 {
		fs = append(fs, notif)
		if k == 661 {
			fs = append(fs, "{\"jsonrpc\":\"2.0\",\"method\":\"rpc.discove\x06r\",\"method\":\"x\"}")
		}
	}
	c := frames(fs...)
	infos, _ := inspect(c, nil)
	w := newWaitFor(c.Frames, infos)
	refusal := []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"duplicate_key"}}`)
	var reps [][]byte
	var scans []replyScan
	for range 300 {
		reps, scans = append(reps, refusal), append(scans, scanReply(refusal))
		w.answer(reps, scans)
		if w.complete(reps, scans) {
			t.Fatalf("complete after %d refusals, before the parse error's -32700", len(reps))
		}
	}
	r := []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	reps, scans = append(reps, r), append(scans, scanReply(r))
	w.answer(reps, scans)
	if !w.complete(reps, scans) {
		t.Error("not complete once the parse error was answered")
	}
}
