package fuzz

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// syncLine stands, in a script's answer, for the reply to the exchange's
// sync request.
const syncLine = "SYNC"

// scriptedServer is a newline-delimited JSON-RPC server on 127.0.0.1 whose
// replies a script decides: the frames of an input are collected until the
// fuzzer's sync request (or a request of its own, a canary or a handshake
// step), then answer gets them and returns the lines to write, in order,
// in one write (syncLine where the sync reply goes). Nothing waits on a
// timer: whatever a script sends after the sync reply is on the wire
// before the fuzzer reads the sync reply.
type scriptedServer struct {
	answer func(frames []string) []string
	mu     sync.Mutex
	conns  [][]string // the frames each connection received, in order
}

func startScripted(t *testing.T, answer func(frames []string) []string) (*scriptedServer, transport.Target) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scriptedServer{answer: answer}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, nil)
			n := len(s.conns) - 1
			s.mu.Unlock()
			wg.Go(func() { s.serve(c, n) })
		}
	})
	tg, err := transport.ParseTarget("tcp://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return s, tg
}

func (s *scriptedServer) serve(c net.Conn, n int) {
	defer c.Close()
	r := bufio.NewScanner(c)
	r.Buffer(nil, 1<<20)
	var pending, deferred []string
	var m wire.Message
	for r.Scan() {
		line := r.Text()
		s.mu.Lock()
		s.conns[n] = append(s.conns[n], line)
		s.mu.Unlock()
		wire.Scan([]byte(line), &m)
		own := m.IDKind == wire.IDString && bytes.HasPrefix(m.ID, []byte(`"rpcfuzz-`))
		if !own {
			pending = append(pending, line)
			continue
		}
		var out []string
		switch {
		case bytes.HasPrefix(m.ID, syncPrefix):
			out = s.answer(pending)
			// A canary is answered after the sync reply, as a server
			// serving messages concurrently may.
			out = append(out, deferred...)
			deferred = nil
		case bytes.HasPrefix(m.ID, []byte(canaryPrefix)):
			deferred = append(deferred, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{}}`)
			continue
		default:
			// A handshake step: a result, after the input's replies (the
			// script's, syncLine dropped).
			for _, l := range s.answer(pending) {
				if l != syncLine {
					out = append(out, l)
				}
			}
			out = append(out, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{}}`)
		}
		pending = nil
		var b strings.Builder
		for _, l := range out {
			if l == syncLine {
				l = `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"no such method"}}`
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
		if _, err := c.Write([]byte(b.String())); err != nil {
			return
		}
	}
}

// received returns the frames connection i received.
func (s *scriptedServer) received(i int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.conns) {
		return nil
	}
	return append([]string(nil), s.conns[i]...)
}

// scriptedWorker is a worker of a run against tg, for exchanges one by one.
func scriptedWorker(t *testing.T, tg transport.Target, prof profile.Name) (*run, *worker) {
	t.Helper()
	return testWorker(t, Config{Target: tg, Profile: prof, Execs: 1, OutDir: t.TempDir(), Timeout: 5 * time.Second, Now: fixedClock})
}

// testWorker is a run of cfg (filled) with one worker, its connection
// closed when the test ends.
func testWorker(t *testing.T, cfg Config) (*run, *worker) {
	t.Helper()
	if err := cfg.fill(); err != nil {
		t.Fatal(err)
	}
	r, err := newRun(context.Background(), &cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := r.newWorker(0)
	t.Cleanup(w.closeConn)
	return r, w
}

// TestConcurrentServerReplies holds the engine to servers that answer the
// messages of one input in any order, some after the sync reply (jrpc2,
// the reference server's slow methods): every reply is waited for and
// given to the message it answers, and none spills into the next input.
func TestConcurrentServerReplies(t *testing.T) {
	const (
		nullCall  = `{"jsonrpc":"2.0","id":null,"method":"lookup_weather","params":{}}`
		nullRes   = `{"jsonrpc":"2.0","id":null,"result":{"temp":1}}`
		emptyObj  = `{}`
		scalar    = `0`
		notifXtra = `{"jsonrpc":"2.0","method":"echo","extra":1}`
	)
	for _, tc := range []struct {
		name   string
		frames []string
		script []string // the replies to the input, syncLine where the sync reply goes
		// replies is how many replies the input must get (0: all of the
		// script's); the others may come in its exchange (queued with the
		// sync reply) or be set aside as late in the next input.
		replies int
	}{
		// Known false positive 1: {}'s -32600 (id null) came first; it was
		// given to the id-null call and {} called unanswered.
		// (The id-null call may stay silent: its reply is not waited for,
		// and set aside as late when it comes. Its silence is only the
		// candidate of a warning, null_id_unanswered, which its check
		// waits the timeout for: TestNullIDAnsweredLate.)
		{"id-null call answered after the sync reply", []string{nullCall, emptyObj}, []string{invalid, syncLine, nullRes}, 1},
		{"id-null call answered first", []string{nullCall, emptyObj}, []string{nullRes, invalid, syncLine}, 0},
		// Known false positive 2: an id-null reply after the sync reply was
		// not waited for, then landed in the next input.
		{"invalid request answered after the sync reply", []string{scalar, call1}, []string{res1, syncLine, invalid}, 0},
		{"parse error answered after the sync reply", []string{`}`, call1}, []string{res1, syncLine, parse}, 0},
		// Two batches, one holding a call answered after the sync reply:
		// the other batch's array does not stand for it.
		{"two batches, the call's late", []string{`[{}]`, `[` + call1 + `]`, `[]`}, []string{`[` + invalid + `]`, invalid, syncLine, `[` + res1 + `]`}, 0},
		// A notification refused (allowed) and an invalid request answered
		// after the sync reply: the reply both may take goes to the one
		// that must have it, the other is waited for.
		// The second reply may be the notification's, which may stay
		// silent: not waited for, and set aside as late when it comes.
		{"tolerated reply and a late one", []string{notifXtra, emptyObj}, []string{invalid, syncLine, invalid}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := []string{res2, syncLine}
			first := true
			_, tg := startScripted(t, func(frames []string) []string {
				if first {
					first = false
					return tc.script
				}
				return next
			})
			_, w := scriptedWorker(t, tg, profile.JSONRPC)
			res := w.exec(context.Background(), frames(tc.frames...), false)
			rules := res.v.rules
			if tc.replies != 0 {
				// A reply not waited for: an id null's silence is a
				// candidate until its check has waited the timeout.
				rules &^= check.Set(0).Add(check.NullIDUnanswered)
			}
			if res.o.end != endNone || rules != 0 {
				t.Fatalf("input: end %s, rules %v: %s (replies %q)", res.o.end, res.v.rules, res.v.note, res.o.replies)
			}
			want, all := cmp.Or(tc.replies, len(tc.script)-1), len(tc.script)-1
			if got := len(res.o.replies); got < want || got > all {
				t.Errorf("input: %d replies, want %d to %d: %q", got, want, all, res.o.replies)
			}
			res = w.exec(context.Background(), frames(call2), false)
			if res.o.end != endNone || res.v.rules != 0 || !slices.ContainsFunc(res.o.replies, func(r []byte) bool { return string(r) == res2 }) {
				t.Errorf("next input: end %s, rules %v: %s (replies %q)", res.o.end, res.v.rules, res.v.note, res.o.replies)
			}
		})
	}
}

// TestStaleReplies: replies the input before may still have had coming are
// set aside when they answer no frame of this input, never judged against
// it; without that history the same replies are findings.
func TestStaleReplies(t *testing.T) {
	one := frames(call1)
	for _, tc := range []struct {
		name      string
		o         outcome
		wantRules bool
	}{
		{"late id-null reply", outcome{replies: [][]byte{[]byte(parse), []byte(res1)}, staleNull: 1}, false},
		{"id-null reply, nothing owed before", outcome{replies: [][]byte{[]byte(parse), []byte(res1)}}, true},
		{"late reply with the last input's id", outcome{replies: [][]byte{[]byte(res2), []byte(res1)}, staleIDs: [][]byte{[]byte("2")}}, false},
		{"reply with an id nobody sent", outcome{replies: [][]byte{[]byte(res2), []byte(res1)}, staleIDs: [][]byte{[]byte("3")}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			infos, _ := inspect(one, nil)
			v := judgeOutcome(one, infos, &tc.o, nil)
			if (v.rules != 0) != tc.wantRules {
				t.Errorf("rules %v (%s), want some: %v", v.rules, v.note, tc.wantRules)
			}
			if !tc.wantRules && tc.o.late != 1 {
				t.Errorf("late = %d, want 1", tc.o.late)
			}
		})
	}
}

// TestLeftoverByInputOrder: a reply that answers no frame correctly is
// judged against the first frame, in the input's order, that could have
// had it, whatever order the replies came in.
func TestLeftoverByInputOrder(t *testing.T) {
	// "" is an invalid request, [] an empty batch; both take -32600 with
	// id null. A server answering "" with -32700 is wrong about "", not
	// about [], in either order.
	c := frames(`""`, `[]`)
	wrong := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"not an object"}}`
	for _, order := range [][]string{{invalid, wrong}, {wrong, invalid}} {
		infos, _ := inspect(c, nil)
		o := outcome{replies: [][]byte{[]byte(order[0]), []byte(order[1])}}
		v := judgeOutcome(c, infos, &o, nil)
		if v.rule != check.WrongErrorCode || !strings.Contains(v.note, "invalid request") {
			t.Errorf("replies %q: rule %s (%s), want wrong_error_code for the invalid request", order, v.rule, v.note)
		}
	}
}

// TestCanaryIgnoresLateReplies: a late reply to the input before, with the
// id the canary seed has, is not the canary's answer (the canary's own id
// is one of the fuzzer's) and does not end the wait for it.
func TestCanaryIgnoresLateReplies(t *testing.T) {
	const call6 = `{"jsonrpc":"2.0","id":6,"method":"echo"}`
	res6 := `{"jsonrpc":"2.0","id":6,"result":null}`
	step := 0
	_, tg := startScripted(t, func([]string) []string {
		step++
		switch step {
		case 1:
			return []string{res6, syncLine}
		case 2:
			// A second reply to id 6, late, with the canary's exchange.
			return []string{`{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"duplicate request ID"}}`, syncLine}
		}
		return []string{syncLine}
	})
	r, w := scriptedWorker(t, tg, profile.JSONRPC)
	r.canary = newCanary(frames(call6), wire.KindResult, 0)
	if res := w.exec(context.Background(), frames(call6), false); res.v.rules != 0 {
		t.Fatalf("input: %s", res.v.note)
	}
	res := r.canaryOn(context.Background(), w, false)
	if !r.canary.answered(res) {
		t.Fatalf("canary not answered: %s %q", res.o.end, res.o.replies)
	}
	if !bytes.HasPrefix(res.id, []byte(canaryPrefix)) {
		t.Errorf("canary id %s", res.id)
	}
	if again := r.canaryOn(context.Background(), w, false); bytes.Equal(again.id, res.id) || !r.canary.answered(again) {
		t.Errorf("second canary: id %s (first %s), replies %q", again.id, res.id, again.o.replies)
	}
}

// TestCanaryWaitsPastLateReplies: a reply without an id that the input
// before may still have had coming (a refused notification, answered late
// by a concurrent server) does not end the wait of the canary, whose own
// reply comes after the sync reply.
func TestCanaryWaitsPastLateReplies(t *testing.T) {
	refused := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"parameters must be array or object"}}`
	step := 0
	_, tg := startScripted(t, func([]string) []string {
		step++
		if step == 2 {
			// The first input's reply, late: it comes with the canary's
			// exchange, after that exchange dropped what had come between.
			return []string{refused, syncLine}
		}
		return []string{syncLine}
	})
	r, w := scriptedWorker(t, tg, profile.JSONRPC)
	r.canary = newCanary(frames(`{"jsonrpc":"2.0","id":6,"method":"echo"}`), wire.KindResult, 0)
	if res := w.exec(context.Background(), frames(`{"jsonrpc":"2.0","method":"echo","params":0}`), false); res.v.rules != 0 {
		t.Fatalf("input: %s", res.v.note)
	}
	res := r.canaryOn(context.Background(), w, false)
	if !r.canary.answered(res) || res.o.late != 1 {
		t.Errorf("canary: end %s, replies %q, late %d", res.o.end, res.o.replies, res.o.late)
	}
}

// TestProbeOnEveryConnection: with the MCP era detected (the probe), every
// new connection starts with the probe, so a server that wants it before
// anything else (the go-sdk) answers the canary on a fresh connection or a
// restarted child as it did on the first.
func TestProbeOnEveryConnection(t *testing.T) {
	srv, tg := startScripted(t, func([]string) []string { return []string{syncLine} })
	r, _ := scriptedWorker(t, tg, profile.MCP)
	for i := range 2 {
		c, err := r.d.dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		c.close()
		got := srv.received(i)
		if len(got) == 0 || !strings.Contains(got[0], `"server/discover"`) {
			t.Errorf("connection %d began with %q, want the server/discover probe", i, got)
		}
	}
	if era := profile.Era(r.d.era.Load()); era != profile.EraModern {
		t.Errorf("era %v, want modern", era)
	}
}

// TestSplitBodySSE: an SSE event without data (the priming event of MCP
// Streamable HTTP, an id for resumption) carries no message.
func TestSplitBodySSE(t *testing.T) {
	for _, tc := range []struct {
		body string
		want int
	}{
		{"id: 1\ndata:\n\nevent: message\ndata: " + res1 + "\n\n", 1},
		{"id: 7\ndata: \n\ndata: " + res1 + "\n\n", 1},
		{": keep-alive\n\ndata: " + res1 + "\n\ndata: " + res2 + "\n\n", 2},
		{"id: 1\ndata:\n\n", 0},
		{res1, 1},
		{"", 0},
	} {
		if got := splitBody([]byte(tc.body), 1<<20); len(got) != tc.want {
			t.Errorf("splitBody(%q) = %q, want %d messages", tc.body, got, tc.want)
		}
	}
}

// TestBrokenFramingExit: a child that exits when the framing of its stream
// is broken on purpose has nothing left to read a message from; that is no
// crash unless it panicked or was killed.
func TestBrokenFramingExit(t *testing.T) {
	wireCase := mutate.Case{Wire: []byte("Content-Length: 5\r\n\r\n{}")}
	for _, tc := range []struct {
		name   string
		o      outcome
		framed bool // the input's framing was intact
		crash  bool
	}{
		{"exit with a message", outcome{end: endExited, exitCode: 2, stderr: []string{"gopls: missing Content-Length header"}}, false, false},
		{"exit 1 after a log line", outcome{end: endExited, exitCode: 1, stderr: []string{"2026/01/02 03:04:05 invalid Content-Length: \"x\""}}, false, false},
		{"panic", outcome{end: endExited, exitCode: 2, stderr: []string{"panic: runtime error: slice bounds out of range", "goroutine 1 [running]:"}}, false, true},
		{"signal", outcome{end: endExited, exitCode: -1, note: "killed by signal SIGSEGV"}, false, true},
		{"intact framing: an exit is a crash", outcome{end: endExited, exitCode: 2, stderr: []string{"server: bad message"}}, true, true},
		// LSP 3.17: exit without shutdown ends the server with status 1.
		{"exit after the LSP exit notification", outcome{end: endExited, exitCode: 1, lifecycle: true}, true, false},
		{"panic after the LSP exit notification", outcome{end: endExited, exitCode: 2, lifecycle: true, stderr: []string{"panic: close of closed channel"}}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := wireCase
			o := tc.o
			o.wire = !tc.framed
			if tc.framed {
				c = frames(call1)
			}
			infos, _ := inspect(c, nil)
			v := judgeOutcome(c, infos, &o, nil)
			if got := v.rules.Has(check.Crash); got != tc.crash {
				t.Errorf("crash %v (%s), want %v", got, v.note, tc.crash)
			}
		})
	}
}

// TestDedupKeysConverge: the same deviation gives one key whatever the
// batch around it, the values in the note, or the numbers, paths and
// quoted bytes in a crash's stderr; different deviations give different
// keys.
func TestDedupKeysConverge(t *testing.T) {
	batch := func(reply, note string) verdict {
		return verdict{rule: check.DuplicateReply, shape: replyShape([]byte(reply)), note: note}
	}
	crash := func(lines ...string) verdict {
		return verdict{rule: check.Crash, shape: "stderr:" + stderrKey(lines)}
	}
	silent := func(note string) verdict {
		return verdict{rule: check.WrongErrorCode, shape: "none", note: note}
	}
	same := [][2]verdict{
		{batch(`[`+res1+`,`+res1+`]`, "reply element 1: a second response for id 1"),
			batch(`[`+res1+`,`+invalid+`,`+res1+`,`+parse+`]`, `reply element 2: a second response for id 12 (and 3 more)`)},
		{crash("panic: index out of range [5] with length 3", "goroutine 7 [running]:"),
			crash("panic: index out of range [70] with length 2", "goroutine 12 [running]:")},
		{crash(`gosdk: invalid character ',' looking for beginning of value`),
			crash(`gosdk: invalid character '}' looking for beginning of value`)},
		{crash(`2026/01/02 10:00:00 open /tmp/a/b.json: "x" not found at 0xc0001`),
			crash(`2027/11/12 11:11:11 open /var/x.json: "yy" not found at 0xc0ff`)},
		{silent("no reply to a call with id 5"), silent("no reply to a call with id 77")},
	}
	for _, p := range same {
		if a, b := dedupKey(p[0]), dedupKey(p[1]); a != b {
			t.Errorf("keys differ for one deviation:\n %s\n %s", a, b)
		}
	}
	differ := [][2]verdict{
		{silent("no reply to an invalid request; want error -32600 with id null"), silent("no reply to []; want one error -32600 with id null")},
		{batch(`[`+res1+`]`, "reply element 0: a second response for id 1"), batch(`[`+res1+`]`, "reply element 0 (id null) answers no request")},
		{crash("panic: nil map"), crash("panic: index out of range [1] with length 1")},
		{verdict{rule: check.WrongErrorCode, code: -32601, shape: "x", note: "an invalid request answered with error -32601; want error -32600"},
			verdict{rule: check.WrongErrorCode, code: -32601, shape: "x", note: "a request with scalar params answered with error -32700; want error -32602"}},
	}
	for _, p := range differ {
		if a, b := dedupKey(p[0]), dedupKey(p[1]); a == b {
			t.Errorf("two deviations share the key %s", a)
		}
	}
}

// TestDedupKeyLongElementID: a batch element whose id is cut in the note
// (an object holding strings) keys like any other element breaking the
// rule the same way; its note's open quote once hid the rest of the note
// from the key.
func TestDedupKeyLongElementID(t *testing.T) {
	key := func(frame string, replies ...string) string {
		c := frames(frame)
		infos, _ := inspect(c, nil)
		o := outcome{end: endNone}
		for _, r := range replies {
			o.replies = append(o.replies, []byte(r))
		}
		v := judgeOutcome(c, infos, &o, nil)
		if v.rule != check.WrongErrorCode {
			t.Fatalf("%s: %v (%s), want wrong_error_code", frame, v.rule, v.note)
		}
		return dedupKey(v)
	}
	e := func(code int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"m"}}`, code)
	}
	plain := key(`[0]`, `[`+e(-32700)+`]`)
	long := key(`[{"id":{"jsonrpc":"2.0","id":2.5,"method":"echo"}},{"id":{"jsonrpc":"2.0","id":2.5,"method":"echo"}}]`, `[`+e(-32600)+`,`+e(-32700)+`]`)
	if plain != long {
		t.Errorf("keys differ for one deviation:\n %s\n %s", plain, long)
	}
}

// TestReplayFraming: replay sends a finding's input in the framing it
// recorded, whatever framing the command given for the replay defaults to.
func TestReplayFraming(t *testing.T) {
	other, err := transport.CommandTarget([]string{"./server"}, transport.Newline)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		recorded string
		override *transport.Target
		want     transport.Framing
	}{
		{"content-length", &other, transport.ContentLength},
		{"newline", &other, transport.Newline},
		{"content-length", nil, transport.ContentLength},
	} {
		f := &Finding{Target: TargetInfo{Command: []string{"./orig"}, Framing: tc.recorded, Profile: "lsp"}}
		cfg, err := replayConfig(f, t.TempDir(), ReplayOptions{Target: tc.override})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Target.Framing != tc.want {
			t.Errorf("recorded %s, override %v: framing %s, want %s", tc.recorded, tc.override != nil, cfg.Target.Framing, tc.want)
		}
	}
}

// TestReplayWorkspace: an LSP finding records the workspace its run
// opened, and replay opens it again (its API call names a document of it),
// unless another is given or the replay is not with the lsp profile.
func TestReplayWorkspace(t *testing.T) {
	ws, other := t.TempDir(), t.TempDir()
	recorded := targetInfo(&Config{Target: transport.Target{Scheme: transport.Stdio, Command: []string{"./orig"}}, Profile: profile.LSP,
		ProfileOptions: profile.Options{Workspace: ws}})
	if recorded.Workspace != ws {
		t.Fatalf("finding.json's target records workspace %q, want %q", recorded.Workspace, ws)
	}
	for _, tc := range []struct {
		name string
		o    ReplayOptions
		want string
	}{
		{"the finding's", ReplayOptions{}, ws},
		{"another given", ReplayOptions{Workspace: other}, other},
		{"another profile", ReplayOptions{Profile: profile.JSONRPC}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := replayConfig(&Finding{Target: recorded}, t.TempDir(), tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ProfileOptions.Workspace != tc.want {
				t.Errorf("replay opens workspace %q, want %q", cfg.ProfileOptions.Workspace, tc.want)
			}
		})
	}
}

// TestSlowInputMinimizeBound measures what minimizing a slow_input costs
// in checks, each of which waits for a slow reply: with the run's budget
// (before) and with the bound slow inputs get (after).
func TestSlowInputMinimizeBound(t *testing.T) {
	cfg := &Config{MinimizeBudget: DefaultMinimizeBudget, MinimizeTime: DefaultMinimizeTime}
	budget, limit := minimizeBounds(cfg, check.SlowInput)
	if budget != slowMinimizeBudget || limit != slowMinimizeTime {
		t.Errorf("slow_input bounds %d, %s", budget, limit)
	}
	if b, l := minimizeBounds(cfg, check.Crash); b != DefaultMinimizeBudget || l != DefaultMinimizeTime {
		t.Errorf("crash bounds %d, %s: only slow_input is bounded more", b, l)
	}
	// A slow input of twenty messages, slow because of one of them; most
	// checks fail (fast this time), as on a real server.
	var fs []string
	for i := range 20 {
		fs = append(fs, `{"jsonrpc":"2.0","id":`+strings.Repeat("1", i+1)+`,"method":"echo","params":["`+strings.Repeat("a", 40)+`"]}`)
	}
	fs[13] = `{"jsonrpc":"2.0","id":1,"method":"slow","params":["` + strings.Repeat("b", 40) + `"]}`
	in := frames(fs...)
	checks := func(budget int) int {
		n := 0
		slow := func(_ context.Context, c mutate.Case) bool {
			n++
			for _, f := range c.Frames {
				if bytes.Contains(f, []byte(`"slow"`)) && n%3 == 0 {
					return true // slow one time in three
				}
			}
			return false
		}
		minimize(context.Background(), in, slow, budget, time.Time{})
		return n
	}
	before, after := checks(DefaultMinimizeBudget), checks(budget)
	t.Logf("slow_input minimization: %d checks with the run's budget, %d bounded (at 100 ms a check: %s -> %s)",
		before, after, time.Duration(before)*100*time.Millisecond, time.Duration(after)*100*time.Millisecond)
	if after > slowMinimizeBudget || after >= before {
		t.Errorf("bounded minimization took %d checks (unbounded %d)", after, before)
	}
}

// TestLeftoverPastAlignBound: a big input (once past the bound where the
// stream's own matching compared ids only) still pairs replies without an
// id with frames they answer correctly (a flood of notifications with null params, one of which is refused as
// the spec allows, an empty batch, an invalid request), never to a call
// whose id they do not carry (the reference server answered such a flood
// so, and rpcfuzz called the refusal an unexpected null id for the call).
func TestLeftoverPastAlignBound(t *testing.T) {
	var fs []string
	for range 600 {
		fs = append(fs, `{"jsonrpc":"2.0","method":"convert","params":null}`)
	}
	fs = append(fs, `[]`, `{"method":"convert"}`, `{"jsonrpc":"2.0","method":"convert","id":4}`, `{"jsonrpc":"2.0","method":"convert","params":null}`)
	c := frames(fs...)
	refused := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"bad_params"}}`
	res4 := `{"jsonrpc":"2.0","id":4,"result":42}`
	for _, order := range [][]string{{invalid, invalid, refused, res4}, {refused, res4, invalid, invalid}, {res4, refused, invalid, invalid}} {
		var reps [][]byte
		for _, r := range order {
			reps = append(reps, []byte(r))
		}
		infos, _ := inspect(c, nil)
		o := outcome{replies: reps}
		if v := judgeOutcome(c, infos, &o, nil); v.rules != 0 {
			t.Errorf("replies %q: %s (%s)", order, v.rule, v.note)
		}
	}
}

// TestOutOfOrderVerdicts holds the stream's pairing to the cases a
// concurrent server answered correctly and rpcfuzz still reported (issue
// 16): every permutation of the replies gets the same verdict, and it
// names only what is wrong.
func TestOutOfOrderVerdicts(t *testing.T) {
	errID := func(id string, code int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"m"}}`, id, code)
	}
	many := []string{`1`}
	replies := []string{errID("null", -32600)}
	for range 45 {
		many = append(many, `}`)
		replies = append(replies, errID("null", -32700))
	}
	// A thousand notifications a server may refuse (most refused), a
	// batch of two invalid elements and a call.
	var flood, floodReplies []string
	for k := range 1000 {
		flood = append(flood, `{"jsonrpc":"2.0","method":"echo","params":true}`)
		if k < 942 {
			floodReplies = append(floodReplies, errID("null", -32600))
		}
	}
	flood = append(flood, `[[{"jsonrpc":"2.0","method":"n","params":null}],[{"jsonrpc":"2.0","method":"n","params":null}]]`, `{"jsonrpc":"2.0","id":2.0,"method":"echo","params":true}`)
	floodReplies = append(floodReplies, `[`+errID("null", -32600)+`,`+errID("null", -32600)+`]`, errID("2.0", -32600))
	// Notifications with invalid UTF-8 in a member name (each refused
	// with -32700, allowed), a call so broken and a valid call sharing
	// its id: the budget went on notifications before the calls' replies
	// could be moved.
	var utf8Frames, utf8Replies []string
	for range 44 {
		utf8Frames = append(utf8Frames, "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"para\xffms\":{}}")
		utf8Replies = append(utf8Replies, errID("null", -32700))
	}
	utf8Frames = append(utf8Frames, "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"para\xffms\":{},\"id\":18446744073709551615}",
		`{"jsonrpc":"2.0","method":"","params":{},"id":18446744073709551615}`)
	utf8Replies = append(utf8Replies, errID("null", -32700), errID("18446744073709551615", -32601))
	// Refusable notifications (a repeated member), a parse error among
	// them, and the replies that had come: 300 refusals, not yet the
	// -32700. Walking the matched notifications behind the parse error
	// once per refusal ran the budget out, and refusals were called
	// replies to nothing (and one counted as the parse error's answer, so
	// the wait ended before its -32700 came).
	var dupFrames, dupReplies []string
	for k := range 692 {
		dupFrames = append(dupFrames, `{"jsonrpc":"2.0","method":"rpc.discover","method":"x"}`)
		if k == 661 {
			dupFrames = append(dupFrames, "{\"jsonrpc\":\"2.0\",\"method\":\"rpc.discover\",\"method\":\"x\x01\"}")
		}
		if k < 300 {
			dupReplies = append(dupReplies, errID("null", -32600))
		}
	}
	for _, tc := range []struct {
		name    string
		frames  []string
		replies []string
		want    check.Set // the rules of the verdict (0: clean)
		// timedOut: the exchange ended at the timeout (a reply still
		// missing is a hang), not with every reply the wait asked for.
		timedOut bool
		// stale: replies without an id the input before still lacked
		// (outcome.staleNull): one may come in this exchange.
		stale int
	}{
		// jrpc2 over TCP: one reply per message; it was a duplicate_reply.
		{"invalid version and []", []string{`{"jsonrpc":0,"id":0}`, `[]`}, []string{errID("null", -32600), errID("0", -32700)}, check.Set(0).Add(check.WrongErrorCode), false, 0},
		// An array answers the batch, not the id-null call before it.
		{"array after an id-null call", []string{`{"jsonrpc":"2.0","id":null,"method":"t"}`, `[{"id":0},[]]`}, []string{`[` + errID("0", -32600) + `,` + errID("null", -32600) + `]`, `{"jsonrpc":"2.0","id":null,"result":1}`}, 0, false, 0},
		// A changed id is unknown_id, not silence.
		{"id -1 wrapped", []string{`{"jsonrpc":"2.0","id":-1,"method":"x"}`}, []string{`{"jsonrpc":"2.0","id":18446744073709551615,"result":1}`}, check.Set(0).Add(check.UnknownID), false, 0},
		// Two requests share id 11: each reply goes where it is right.
		{"shared id", []string{`{"jsonrpc":"2.0","id":11,"method":"x","params":1}`, `{"jsonrpc":"2.0","id":11}`}, []string{errID("11", -32602), errID("11", -32600)}, 0, false, 0},
		// 46 messages answered in full (once past the old matching bound).
		{"46 messages", many, replies, 0, false, 0},
		// A batch of notifications needs no reply: an id-null -32700 is the
		// parse error's, though a refusable batch could take one too.
		{"notification batch and a parse error", []string{`[{"jsonrpc":"2.0","\ud801":0,"method":""}]`, `}`}, []string{errID("null", -32700)}, 0, false, 0},
		// A notification refused for its repeated params (allowed), and a
		// batch whose array has not come yet: the refusal stays the
		// notification's, never the batch's single-object answer.
		{"refused notification and a batch still owed", []string{`{"jsonrpc":"2.0","method":"","params":[],"params":[]}`, `[{"jsonrpc":"2.0","method":"convert","params":[0,0],"id":0}]`}, []string{errID("null", -32600)}, 0, false, 0},
		// A notification nested past the depth edge (a refusal allowed),
		// a call with invalid UTF-8 in its method and a parse error, all
		// three refused with -32700: the replies go to the frames that
		// must have one before the notification that may take one.
		{"refusals to a notification and a call", []string{`{"jsonrpc":"2.0","method":"m","params":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
			"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"\xc3\"}", `}`}, []string{errID("null", -32700), errID("null", -32700)}, 0, true, 0},
		{"refused notification and a batch answered", []string{`{"jsonrpc":"2.0","method":"","params":[],"params":[]}`, `[{"jsonrpc":"2.0","method":"convert","params":[0,0],"id":0}]`}, []string{errID("null", -32600), `[{"jsonrpc":"2.0","id":0,"result":0}]`}, 0, false, 0},
		// A batch of a notification that may be refused, a batch of an
		// invalid element, one array, and a reply the input before may
		// still send: the array is the invalid batch's.
		// Notifications with invalid UTF-8 (a parse error allowed), a
		// parse error, [], a scalar and a call, all answered: [] has its
		// -32600, though notifications may take one.
		{"refusable notifications, [] and a scalar", []string{"{\"jsonrpc\":\"2.\xc30\",\"method\":\"echo\",\"params\":{\"done\":true}}", "{\"jsonrpc\":\"2.\xc30\",\"method\":\"echo\",\"params\":{\"done\":true}}",
			`{"jsonrpc":"2.0","id":30,"method":"get_time"}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":","requestId":[]}}`, `[]`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"rpcfuzz","requestId":1e400}}`, `7`},
			[]string{errID("null", -32700), errID("null", -32700), errID("null", -32700), `{"jsonrpc":"2.0","id":30,"result":"15:50"}`, errID("null", -32600), errID("null", -32600)}, 0, false, 0},
		// The array must not go unpaired for the budget the refusals
		// used up.
		{"a batch among a thousand refused notifications", flood, floodReplies, 0, false, 0},
		{"refused notifications and two calls of one id", utf8Frames, utf8Replies, 0, false, 0},
		// jrpc2: an invalid request without an id answered -32700 (wrong)
		// and a batch its array: the -32700 took the batch by a tolerance
		// and left the array a second reply.
		// jrpc2 over TCP, one reply per line: the -32600 is the empty-method
		// notification's, the -32700s the invalid requests', but by fit
		// the -32600 goes to an invalid request, and the -32700 left over
		// was a reply to nothing or a second reply, by the order the
		// replies came in. It is the notification's now, in any order.
		{"jrpc2's replies to ten lines", []string{`n`, `{`, `0`, `}`, `e`, `{"method":0}`, `[`, `{"jsonrpc":"2.0","method":""}`, `{"jsonrpc":true,"id":5}`, `{"jsonrpc":"2.0","id":5,"method":"e","params":[],"params":[]}`},
			[]string{errID("null", -32700), errID("null", -32700), errID("null", -32700), errID("null", -32700), errID("null", -32700), errID("null", -32700), errID("null", -32700), errID("null", -32600), errID("5", -32700), errID("5", -32601)},
			check.Set(0).Add(check.ReplyToNotification).Add(check.WrongErrorCode), false, 0},
		{"refusals behind a parse error", dupFrames, dupReplies, check.Set(0).Add(check.WrongErrorCode), true, 0},
		// jrpc2: a batch of invalid elements and an invalid request, each
		// answered -32700 (the batch with an array): the single -32700 is
		// not the batch's second reply.
		{"an array and a single error", []string{`[0,0,1]`, `{"method":0}`}, []string{`[` + errID("null", -32700) + `,` + errID("null", -32700) + `,` + errID("null", -32700) + `]`, errID("null", -32700)}, check.Set(0).Add(check.WrongErrorCode), false, 0},
		// (Which of [] and 0 got the -32700 is a guess, settled by
		// confirmation: TestBlameInDoubt.)
		{"[], [0] and 0", []string{`[]`, `[0]`, `0`}, []string{errID("null", -32600), `[` + errID("null", -32700) + `]`, errID("null", -32700)}, check.Set(0).Add(check.WrongErrorCode).Add(check.EmptyBatchReplyWrong), false, 0},
		{"an array before an id-null error for a batch", []string{`{"method":0}`, `[{"params":null}]`}, []string{errID("null", -32700), `[` + errID("null", -32600) + `]`}, check.Set(0).Add(check.WrongErrorCode), false, 0},
		// Each array as long as its batch: the one-element refusal that
		// would do for the notification batch is [""]'s (it took the
		// batch of two when it came first: batch_extra_reply).
		{"arrays by length", []string{`[""]`, `[{"jsonrpc":"2.0","method":""},{"jsonrpc":"2.0","\udffd":0,"method":""}]`},
			[]string{`[` + errID("null", -32600) + `,` + errID("null", -32600) + `]`, `[` + errID("null", -32700) + `]`}, check.Set(0).Add(check.WrongErrorCode), false, 0},
		// The -32700 with id 0 is the invalid request's, which has id 0,
		// not the call's whose "id":"1","id":null takes any id (jrpc2
		// reads the last, null, and stays silent): it was "no reply to
		// an invalid request with id 0" at the timeout.
		{"an id held, beside a repeated id", []string{`{"jsonrpc":0,"method":0,"id":0}`, `{"jsonrpc":"2.0","method":"echo","params":[],"id":"1","id":null}`},
			[]string{errID("0", -32700)}, check.Set(0).Add(check.WrongErrorCode), true, 0},
		{"refusable notification batch and an invalid batch", []string{`[{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1e400]}]`, `[null]`}, []string{`[` + errID("null", -32600) + `]`}, 0, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := outcome{end: endNone, staleNull: tc.stale}
			if tc.timedOut {
				base.end = endTimeout
			}
			inOrders(tc.frames, tc.replies, base, func(perm []int, v verdict) {
				if v.rules != tc.want {
					t.Errorf("replies in order %v: rules %v (%s), want %v", perm, v.rules, v.note, tc.want)
				}
			})
		})
	}
}

// inOrders judges the stream exchange of frames whose replies came in
// each order permutations gives (up to 24), base giving the rest of the
// outcome, and hands each verdict to check.
func inOrders(frameTexts, replies []string, base outcome, check func(perm []int, v verdict)) {
	c := frames(frameTexts...)
	for _, perm := range permutations(len(replies), 24) {
		o := base
		o.replies = nil
		for _, k := range perm {
			o.replies = append(o.replies, []byte(replies[k]))
		}
		infos, _ := inspect(c, nil)
		check(perm, judgeOutcome(c, infos, &o, nil))
	}
}

// permutations returns up to limit orders of n items: the identity, its
// reverse, and rotations of both.
func permutations(n, limit int) [][]int {
	var out [][]int
	for r := 0; r < n && len(out) < limit; r++ {
		fwd, rev := make([]int, n), make([]int, n)
		for k := range n {
			fwd[k] = (k + r) % n
			rev[k] = (n - 1 - k + r) % n
		}
		out = append(out, fwd, rev)
	}
	return out
}
