package fuzz

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/fuzztarget"
	"github.com/rpcload/rpcload/internal/mutate"
)

// exchange is one input and what the server did with it, for judging.
type exchange struct {
	c mutate.Case
	o outcome
}

// httpAbort: the POST of frame got no response (fuzztarget's HTTP handler
// panics: net/http aborts the connection).
func httpAbort(frame string) exchange {
	return exchange{frames(frame), outcome{perFrame: true, sent: 1, end: endClosed, note: "EOF", httpStatus: []int{0}, frameReplies: make([][][]byte, 1)}}
}

// http5xx: the POST of frame was answered with a 500 and a text body.
func http5xx(frame, body string) exchange {
	return exchange{frames(frame), outcome{perFrame: true, sent: 1, end: endReset, httpStatus: []int{500}, frameReplies: [][][]byte{{[]byte(body)}}}}
}

// httpHang: the POST of frame got no response within the timeout.
func httpHang(frame string) exchange {
	return exchange{frames(frame), outcome{perFrame: true, sent: 1, end: endTimeout, httpStatus: []int{0}, frameReplies: make([][][]byte, 1)}}
}

// childExit: a child exited with status 2 after frame, writing stderr.
func childExit(frame string, stderr ...string) exchange {
	return exchange{frames(frame), outcome{end: endExited, exitCode: 2, note: "exit status 2 after 5ms", stderr: stderr}}
}

// streamClosed: the server closed the stream after frame, unanswered.
func streamClosed(frame string) exchange {
	return exchange{frames(frame), outcome{end: endClosed, note: "EOF"}}
}

// answered: frame got reply on a stream.
func answered(frame, reply string) exchange {
	return exchange{frames(frame), outcome{replies: [][]byte{[]byte(reply)}}}
}

func (x exchange) verdict() verdict {
	infos, _ := inspect(x.c, nil)
	return judgeOutcome(x.c, infos, &x.o, nil)
}

// TestFindingKeys: the cases of issue 16 item 3. One cause is one finding
// (the same dedup key) however the input around it was spelled, and two
// causes are two, though they end alike.
func TestFindingKeys(t *testing.T) {
	var planted []exchange
	var planted5xx []exchange
	for _, b := range fuzztarget.Bugs() {
		if b != fuzztarget.Hang {
			planted = append(planted, httpAbort(string(fuzztarget.TriggerFrame(b))))
			planted5xx = append(planted5xx, http5xx(string(fuzztarget.TriggerFrame(b)), "Internal Server Error\n"))
		}
	}
	deep := strings.Repeat("[", 70) + strings.Repeat("]", 70)
	for _, tc := range []struct {
		name string
		rule check.Rule
		same bool // one key for all, or a key each
		xs   []exchange
	}{
		{"HTTP: the planted crashes are a finding each", check.Crash, false, append(planted,
			// bad UTF-8 in the method, and a 20-digit id
			httpAbort("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ec\xffho\"}"))},
		{"HTTP 500: the planted crashes are a finding each", check.Crash, false, planted5xx},
		{"HTTP: one crash site, whatever the message around it", check.Crash, true, []exchange{
			httpAbort(`{"jsonrpc":"2.0","id":1,"method":"echo","params":` + deep + `}`),
			httpAbort(`{"jsonrpc":"2.0","method":"echo","params":{"a":` + deep + `}}`),
			httpAbort(`{"jsonrpc":"2.0","id":"x","method":"add","params":[1,` + deep + `]}`),
		}},
		{"HTTP: the 20-digit id, however spelled", check.Crash, true, []exchange{
			httpAbort(`{"jsonrpc":"2.0","id":12345678901234567890,"method":"echo"}`),
			httpAbort(`{"jsonrpc":"2.0","id":-98765432109876543210,"method":"add","params":[1,2]}`),
		}},
		{"HTTP: hangs of different inputs", check.Hang, false, []exchange{
			httpHang(`{"jsonrpc":"2.0","id":-0,"method":""}`),
			httpHang(`{"jsonrpc":"2.0","id":1,"method":"sleep"}`),
			httpHang(`{"jsonrpc":"2.0","id":"a","method":"sleep"}`),
			httpHang(`[{"jsonrpc":"2.0","id":1,"method":"sleep"}]`),
			httpHang(`{"jsonrpc":"2.0","id":1,"method":"sleep","params":` + deep + `}`),
		}},
		{"stdio: one crash, the id spelled -0, 1.5, 1e3", check.Crash, true, []exchange{
			childExit(`{"jsonrpc":"2.0","id":-0,"method":"x"}`, "panic: cannot handle id -0", "", "goroutine 7 [running]:", "main.handle(...)", "\t/src/srv/main.go:123 +0x1d"),
			childExit(`{"jsonrpc":"2.0","id":1.5,"method":"x"}`, "panic: cannot handle id 1.5", "", "goroutine 12 [running]:"),
			childExit(`{"jsonrpc":"2.0","id":1e3,"method":"x"}`, "panic: cannot handle id 1e3"),
			childExit(`{"jsonrpc":"2.0","id":-2E+7,"method":"x"}`, "panic: cannot handle id -2E+7"),
			childExit(`{"jsonrpc":"2.0","id":12,"method":"x"}`, "panic: cannot handle id 12"),
		}},
		{"stdio: stderr made alike (addresses, positions, goroutines)", check.Crash, true, []exchange{
			childExit(`{"jsonrpc":"2.0","id":1,"method":"x"}`, "fatal error: bad pointer 0xc000123456 in handler.go:88 (goroutine 7)"),
			childExit(`{"jsonrpc":"2.0","id":2,"method":"y"}`, "fatal error: bad pointer 0xc0ffee in handler.go:1204 (goroutine 31)"),
			childExit(`{"jsonrpc":"2.0","id":3,"method":"z"}`, "fatal error: bad pointer 0x1 in handler.go:9:14 (goroutine 1)"),
		}},
		{"stdio: a language server's exit on a parse error, whatever its decoder said", check.Crash, true, []exchange{
			childExit(`g`, "gopls: unmarshaling jsonrpc message: invalid character 'g' looking for beginning of value"),
			childExit(`{"a":`, "gopls: unmarshaling jsonrpc message: unexpected end of JSON input"),
			childExit(`[1,`, "gopls: unmarshaling jsonrpc message: unexpected end of JSON input"),
			childExit(`{"jsonrpc":"2.0","id":1 "method":"x"}`, "gopls: unmarshaling jsonrpc message: invalid character '\"' after object key:value pair"),
			childExit(`{"jso"2.0","id":31}`, "gopls: unmarshaling jsonrpc message: invalid character '2' after object key"),
			childExit(`]`, "2026/01/02 10:00:00 gopls: unmarshaling jsonrpc message: invalid character ']' looking for beginning of value"),
			childExit(`{"id":-0e-0`, "gopls: unmarshaling jsonrpc message: unexpected end of JSON input"),
		}},
		{"a server that wraps negative ids to uint64", check.UnknownID, true, []exchange{
			answered(`{"jsonrpc":"2.0","id":-1,"method":"echo"}`, `{"jsonrpc":"2.0","id":18446744073709551615,"result":null}`),
			answered(`{"jsonrpc":"2.0","id":-2,"method":"echo","params":{"a":[1]}}`, `{"jsonrpc":"2.0","id":18446744073709551614,"result":{"a":[1]}}`),
			answered(`{"jsonrpc":"2.0","id":-1}`, `{"jsonrpc":"2.0","id":18446744073709551615,"error":{"code":-32600,"message":"Invalid Request"}}`),
			answered(`{"jsonrpc":"2.0","id":-7,"method":"add","params":3}`, `{"jsonrpc":"2.0","id":18446744073709551609,"error":{"code":-32602,"message":"bad params","data":"x"}}`),
			answered(`{"jsonrpc":"2.0","id":-1,"method":"nope"}`, `{"jsonrpc":"2.0","id":18446744073709551615,"error":{"code":-32601,"message":"Method not found"}}`),
		}},
		{"a server that echoes whatever id it got", check.InvalidEnvelope, true, []exchange{
			answered(`{"jsonrpc":"2.0","id":true}`, `{"jsonrpc":"2.0","id":true,"error":{"code":-32601,"message":"Method  not found"}}`),
			answered(`{"jsonrpc":"2.0","id":[]}`, `{"jsonrpc":"2.0","id":[],"error":{"code":-32601,"message":"Method  not found"}}`),
			answered(`{"jsonrpc":"2.0","id":{}}`, `{"jsonrpc":"2.0","id":{},"error":{"code":-32601,"message":"Method  not found"}}`),
			answered(`{"jsonrpc":"2.0","id":false,"method":"tools/call"}`, `{"jsonrpc":"2.0","id":false,"error":{"code":-32602,"message":"bad"}}`),
			answered(`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, `{"jsonrpc":"2.0","id":[1],"result":{}}`),
		}},
		{"an invalid request answered -32601, whatever its id", check.WrongErrorCode, true, []exchange{
			answered(`{"jsonrpc":"2.0","id":0}`, `{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}`),
			answered(`{"jsonrpc":"2.0","id":""}`, `{"jsonrpc":"2.0","id":"","error":{"code":-32601,"message":"Method not found"}}`),
			answered(`{"jsonrpc":"2.0","id":"abc","params":{}}`, `{"jsonrpc":"2.0","id":"abc","error":{"code":-32601,"message":"Method not found","data":{"x":1}}}`),
		}},
		{"a batch element with an id or without, answered -32700", check.WrongErrorCode, true, []exchange{
			answered(`[{"jsonrpc":"2.0","id":1,"method":"x"},{"jsonrpc":"2.0","id":7}]`,
				`[{"jsonrpc":"2.0","id":1,"result":0},{"jsonrpc":"2.0","id":7,"error":{"code":-32700,"message":"x"}}]`),
			answered(`[{"jsonrpc":"2.0","id":1,"method":"x"},{"jsonrpc":"2.0"}]`,
				`[{"jsonrpc":"2.0","id":1,"result":0},{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}]`),
			answered(`[{"jsonrpc":"2.0","id":1,"method":"x"},{"jsonrpc":"2.0","id":{}}]`,
				`[{"jsonrpc":"2.0","id":1,"result":0},{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}]`),
		}},
		{"a second message in one HTTP response, whatever it is", check.DuplicateReply, true, []exchange{
			{frames(`{"jsonrpc":"2.0","id":1}`), outcome{perFrame: true, sent: 1, httpStatus: []int{200}, frameReplies: [][][]byte{{
				[]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"x"}}`), []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`)}}}},
			{frames(`{"jsonrpc":"2.0","id":2}`), outcome{perFrame: true, sent: 1, httpStatus: []int{200}, frameReplies: [][][]byte{{
				[]byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"x"}}`), []byte(`{"jsonrpc":"2.0","id":2,"result":{}}`)}}}},
		}},
		{"the connection closed on a parse error, and on []", check.Crash, false, []exchange{
			streamClosed(`{"jsonrpc":`),
			streamClosed(`[]`),
			streamClosed(`{"jsonrpc":"2.0","id":1}`),
			streamClosed(`{"jsonrpc":"2.0","id":1,"method":"echo"}`),
		}},
		{"the connection closed on a parse error, however broken", check.Crash, true, []exchange{
			streamClosed(`{"jsonrpc":`),
			streamClosed(`}`),
			streamClosed(`{"jsonrpc":"2.0","id":1,"method":"echo",}`),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]int{}
			for i, x := range tc.xs {
				v := x.verdict()
				if v.rule != tc.rule {
					t.Fatalf("exchange %d (%q): rule %s (%s), want %s", i, x.c.Frames, v.rule, v.note, tc.rule)
				}
				k := dedupKey(v)
				if j, ok := seen[k]; ok && !tc.same {
					t.Errorf("exchanges %d and %d share the key %s", j, i, k)
				}
				seen[k] = i
			}
			if tc.same && len(seen) != 1 {
				t.Errorf("%d keys for one cause: %v", len(seen), seen)
			}
		})
	}
}

// TestRekeyHits: a traced finding whose minimized input has another key
// moves its claim and its hits there, and later inputs with the original
// key count as hits of that finding (of the baselined one when the
// baseline accepts it), from any number of workers at once.
func TestRekeyHits(t *testing.T) {
	for _, tc := range []struct {
		name      string
		written   bool // the minimized key's finding is written already, with 5 hits
		base      bool // the baseline accepts the minimized key
		wantWrite bool
		wantHits  uint64
	}{
		{"new key", false, false, true, 3 + 40},
		{"known key", true, false, false, 5 + 3 + 40},
		{"baselined key", false, true, false, 3 + 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFindingSet(0)
			if tc.written {
				s.claim("crash-new", "k2", 10, true)
				s.byID["crash-new"].Hits = 5
				s.complete(Finding{ID: "crash-new", Severity: "failure"})
			}
			if !s.claim("crash-old", "k1", 10, true) {
				t.Fatal("claim refused")
			}
			s.hit("crash-old")
			s.hit("crash-old")
			if got := s.rekey("crash-old", "crash-new", tc.base, check.Crash, true); got != tc.wantWrite {
				t.Fatalf("rekey: %v, want %v", got, tc.wantWrite)
			}
			if tc.wantWrite {
				s.complete(Finding{ID: "crash-new", Severity: "failure"})
			}
			done := make(chan bool)
			for range 4 {
				go func() {
					for range 10 {
						id := s.resolve("crash-old")
						if !s.hit(id) {
							s.baselined(id, check.Crash)
						}
					}
					done <- true
				}()
			}
			for range 4 {
				<-done
			}
			fs, bs := s.all()
			var hits uint64
			for _, f := range fs {
				if f.ID != "crash-new" {
					t.Errorf("finding %s written", f.ID)
				}
				hits += f.Hits
			}
			for _, b := range bs {
				hits += b.Hits
			}
			if hits != tc.wantHits || len(fs)+len(bs) != 1 {
				t.Errorf("findings %+v, baselined %+v: want one with %d hits", fs, bs, tc.wantHits)
			}
			if s.pending != 0 || s.pendingFailures != 0 {
				t.Errorf("pending %d, pending failures %d: want 0", s.pending, s.pendingFailures)
			}
		})
	}
}

// TestNoteClassCutQuote checks that a note cut inside a quoted text (an id
// of many multi-byte characters, cut in the middle of one) gives the same
// key as the whole note: the cut text is blanked, and no broken character
// is left in the key.
func TestNoteClassCutQuote(t *testing.T) {
	whole := noteClass(`element 0 (id null): a reply with id "` + strings.Repeat("é", 200) + `" answers no request`)
	for _, cut := range []int{60, 61, 62, 63} {
		note := `element 0 (id null): a reply with id "` + strings.Repeat("é", 200)
		note = note[:cut]
		got := noteClass(note)
		if !utf8.ValidString(got) || strings.Contains(got, "é") {
			t.Errorf("cut at %d: %q keeps the cut text", cut, got)
		}
		if !strings.HasPrefix(whole, got) {
			t.Errorf("cut at %d: %q, not a prefix of the whole note's %q", cut, got, whole)
		}
	}
}
