package fuzz

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// fuzzFrames are the frames the engine meets: every profile's seeds and a
// few thousand of their mutations (fixed seed), with hand-picked edge cases.
func fuzzFrames(t *testing.T) [][]byte {
	t.Helper()
	out := [][]byte{[]byte(`[]`), []byte(`[[]]`), []byte(`[1,{"jsonrpc":"2.0","method":"x"}]`), []byte(` `), []byte(`null`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":3}`), []byte(`{"jsonrpc":"2.0","id":true,"method":"x"}`),
		[]byte(`{"jsonrpc":"1.0","id":1,"method":"x"}`), []byte(`{"jsonrpc":"2.0","id":1,"method":5}`), []byte("{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}")}
	tg, err := transport.ParseTarget("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, prof := range []string{"jsonrpc", "mcp", "lsp", "eth"} {
		seeds := shippedSeeds(prof)
		if len(seeds) == 0 {
			t.Fatalf("no seeds for %s", prof)
		}
		cfg := Config{Target: tg, MaxFrame: 1 << 16}
		m := mutate.New(mutationEnv(&cfg, seeds, nil))
		ch := mutate.NewRand(11)
		for i := range 1500 {
			c, _ := m.Mutate(ch, seeds[i%len(seeds)])
			out = append(out, c.Frames...)
		}
		for _, s := range seeds {
			out = append(out, s.Frames...)
		}
	}
	return out
}

// TestClassifyMatchesCheck holds the engine's classification of a scanned
// frame to oracle.ClassifyRequest, which scans the frame itself.
func TestClassifyMatchesCheck(t *testing.T) {
	var m wire.Message
	n := 0
	for _, f := range fuzzFrames(t) {
		pieces := [][]byte{f}
		for off := 0; ; {
			elem, next, ok := wire.NextElement(f, off)
			if !ok {
				break
			}
			off = next
			pieces = append(pieces, elem)
		}
		for _, p := range pieces {
			wire.Scan(p, &m)
			if got, want := classify(&m), oracle.ClassifyRequest(p); got != want {
				t.Errorf("classify(%.120q) = %s, oracle.ClassifyRequest says %s", p, got, want)
			}
			n++
		}
	}
	if n < 5000 {
		t.Errorf("only %d frames compared", n)
	}
}

// messageClassFNV is messageClass as first written, with hash/fnv and a
// fresh buffer per part (and the unquoting always done): the
// allocation-free one must hash alike.
func messageClassFNV(msg, data []byte) uint32 {
	h := fnv.New32a()
	for _, part := range [][]byte{msg, data} {
		if len(part) < 2 || part[0] != '"' {
			continue
		}
		text, ok := wire.Unquote(nil, part)
		if !ok {
			continue
		}
		b := appendMessageClass(nil, text)
		h.Write(b)
		h.Write([]byte{0})
	}
	return h.Sum32()
}

func TestMessageClassMatchesFNV(t *testing.T) {
	long := `"` + strings.Repeat("Abc 12 ", 100) + `"`
	quotes := `"` + strings.Repeat("x", 47) + `'q'` + strings.Repeat("y", 30) + `"`
	for _, tc := range [][2]string{
		{`"Method not found"`, ``},
		{`"invalid character '}' at offset 12"`, `"line 3"`},
		{long, long},
		{quotes, `""`},
		{`"\u00e9\ud800 \"quoted\" \\ end"`, `{"not":"a string"}`},
		{"\"bad \xff utf8\"", `12`},
		{`"`, `"x`},
		{``, ``},
		{`"x"`, `null`},
		{`""`, `"a"b"`},
		{"\"tab\there\"", "\"del \x7f\""},
		{`"ends with a backslash\"`, `"Caf\u00e9 42"`},
	} {
		msg, data := []byte(tc[0]), []byte(tc[1])
		if tc[1] == "" {
			data = nil
		}
		if got, want := messageClass(msg, data), messageClassFNV(msg, data); got != want {
			t.Errorf("messageClass(%.40q, %.40q) = %#x, want %#x", tc[0], tc[1], got, want)
		}
	}
	// Fuzz inputs as messages, raw and as the JSON string of their text.
	for _, f := range fuzzFrames(t) {
		quoted := wire.AppendString(nil, string(f))
		if got, want := messageClass(f, quoted), messageClassFNV(f, quoted); got != want {
			t.Fatalf("messageClass(%.60q) = %#x, want %#x", f, got, want)
		}
	}
}

// TestInspectFloods: a frame repeated (a notification flood) reads as it
// does alone.
func TestInspectFloods(t *testing.T) {
	var fs []string
	fs = append(fs, call1)
	for range 50 {
		fs = append(fs, notif)
	}
	fs = append(fs, call2, call2, `{"id":3}`, `{"id":3}`, `[`+call1+`]`, `[`+call1+`]`, `}`)
	infos, _ := inspect(frames(fs...), nil)
	for i, f := range fs {
		alone, _ := inspect(frames(f), nil)
		got, want := fmt.Sprintf("%+v", infos[i]), fmt.Sprintf("%+v", alone[0])
		if got != want {
			t.Errorf("frame %d %s: %s, alone %s", i, f, got, want)
		}
	}
}

// TestWaitForManyKeys: past manyKeys distinct ids the awaited replies are
// counted in a map; the answers are the same.
func TestWaitForManyKeys(t *testing.T) {
	call := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"x"}` }
	res := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":1}` }
	for _, n := range []int{3, manyKeys, manyKeys + 1, 3 * manyKeys} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var fs, ids []string
			for i := range n {
				id := fmt.Sprint(i + 1)
				if i%2 == 1 {
					id = `"s` + id + `"`
				}
				ids = append(ids, id)
				fs = append(fs, call(id))
			}
			infos, _ := inspect(frames(fs...), nil)
			w := newWaitFor(nil, infos)
			if w.ambiguous || w.needs != n {
				t.Fatalf("waitFor = %+v", w)
			}
			// Answered in reverse order; a reply to no call and a repeat
			// change nothing. The count alone is not reached before the end.
			for _, r := range []string{res("999"), res(ids[n-1])} {
				w.answer([][]byte{[]byte(r)}, []replyScan{scanReply([]byte(r))})
			}
			for k := n - 2; k >= 0; k-- {
				if w.done(0) {
					t.Fatalf("done with %d calls unanswered", k+1)
				}
				r := []byte(res(ids[k]))
				w.answer([][]byte{r}, []replyScan{scanReply(r)})
			}
			if !w.done(0) {
				t.Error("not done once every call was answered")
			}
			amb := newWaitFor(nil, mustInspect(append(fs, call(ids[0]))))
			if !amb.ambiguous {
				t.Error("an id used twice is ambiguous")
			}
		})
	}
}

func mustInspect(fs []string) []frameInfo {
	infos, _ := inspect(frames(fs...), nil)
	return infos
}

// TestJudgeMemo: the memo answers what oracle.JudgeFuzzReply answers, for
// repeated and changing arguments alike.
func TestJudgeMemo(t *testing.T) {
	type call struct {
		frame, reply string
		class        oracle.RequestClass
		got          bool
	}
	calls := []call{
		{notif, "", oracle.Notification, false},
		{notif, "", oracle.Notification, false},
		{notif, invalid, oracle.Notification, true},
		{notif, invalid, oracle.Notification, true},
		{call1, res1, oracle.Call, true},
		{call1, res2, oracle.Call, true},
		{call1, res2, oracle.Call, true},
		{call1, "", oracle.Call, false},
		{call1, "", oracle.Call, true},
		{call2, res2, oracle.Call, true},
		{`{}`, invalid, oracle.InvalidRequest, true},
		{`{}`, invalid, oracle.Call, true},
	}
	var jm judgeMemo
	for i, c := range calls {
		var reply []byte
		if c.reply != "" || c.got {
			reply = []byte(c.reply)
		}
		if c.reply == "" && c.got {
			reply = []byte{} // an empty body, not none
		}
		gotR, gotN := jm.judge([]byte(c.frame), c.class, reply, c.got)
		wantR, wantN := oracle.JudgeFuzzReply([]byte(c.frame), c.class, reply, c.got)
		if gotR != wantR || gotN != wantN {
			t.Errorf("call %d: memo %v %q, check %v %q", i, gotR, gotN, wantR, wantN)
		}
	}
}

// TestFloodVerdict: a flood's verdict has what its frames judged one by one
// have, with one tuple per distinct piece.
func TestFloodVerdict(t *testing.T) {
	fs := []string{call1}
	for range 100 {
		fs = append(fs, notif)
	}
	c := frames(fs...)
	infos, _ := inspect(c, nil)
	o := outcome{replies: [][]byte{[]byte(res1)}}
	v := judgeOutcome(c, infos, &o, nil)
	if v.rules != 0 || len(v.tuples) != 2 {
		t.Errorf("rules %v, tuples %v: want none broken, one tuple for the reply and one for the notifications", v.rules, v.tuples)
	}
	ho := outcome{perFrame: true, sent: len(fs), httpStatus: slices.Repeat([]int{200}, len(fs)), frameReplies: make([][][]byte, len(fs))}
	ho.frameReplies[0] = [][]byte{[]byte(res1)}
	hv := judgeOutcome(c, infos, &ho, nil)
	if hv.rules != 0 || len(hv.tuples) != 2 {
		t.Errorf("HTTP: rules %v, tuples %v", hv.rules, hv.tuples)
	}
}

// TestAppendSync: the sync request is built in place as appendCall builds
// any request with a raw id.
func TestAppendSync(t *testing.T) {
	buf := []byte("stale bytes that must go")
	for _, seq := range []uint64{1, 42, 1 << 63} {
		id := append(strconv.AppendUint(bytes.Clone(syncPrefix), seq, 10), '"')
		want := appendCall(nil, id, "rpcfuzz.sync", nil)
		buf = appendSync(buf[:0], seq)
		if !bytes.Equal(buf, want) {
			t.Errorf("appendSync(%d) = %s, want %s", seq, buf, want)
		}
	}
}
