package fuzz

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// nullIDCall is a request with id null: JSON-RPC 2.0 makes it a request,
// JSON-RPC 1.0 made it a notification.
const nullIDCall = `{"jsonrpc":"2.0","id":null,"method":"x"}`

// scriptedReply writes a reply line of a scripted server: at once (after
// 0), or after a delay from a goroutine of its own, as a server serving
// messages concurrently does.
type scriptedReply func(line string, after time.Duration)

// startScriptedServer serves newline-delimited JSON-RPC on 127.0.0.1: the
// fuzzer's own requests (ids "rpcfuzz-…") get a result at once, and every
// other message is answered by answer, through reply.
func startScriptedServer(t *testing.T, answer func(m *wire.Message, reply scriptedReply)) transport.Target {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { serveScripted(c, answer) })
		}
	})
	tg, err := transport.ParseTarget("tcp://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func serveScripted(c net.Conn, answer func(m *wire.Message, reply scriptedReply)) {
	defer c.Close()
	var mu sync.Mutex
	write := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		c.Write([]byte(line + "\n"))
	}
	var late sync.WaitGroup
	defer late.Wait()
	reply := func(line string, after time.Duration) {
		if after <= 0 {
			write(line)
			return
		}
		late.Go(func() {
			t := time.NewTimer(after)
			defer t.Stop()
			<-t.C
			write(line)
		})
	}
	r := bufio.NewScanner(c)
	var m wire.Message
	for r.Scan() {
		wire.Scan(r.Bytes(), &m)
		if m.IDKind == wire.IDString && bytes.HasPrefix(m.ID, []byte(`"rpcfuzz-`)) {
			write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
			continue
		}
		answer(&m, reply)
	}
}

// startNullIDServer is a scripted server (startScriptedServer) that
// answers a request with id null with a result with id null after delay
// (never when delay is negative), and every other message with an error
// -32600 with id null at once.
func startNullIDServer(t *testing.T, delay time.Duration) transport.Target {
	t.Helper()
	return startScriptedServer(t, func(m *wire.Message, reply scriptedReply) {
		switch {
		case m.IDKind == wire.IDNull && m.Kind == wire.KindRequest:
			if delay >= 0 {
				reply(`{"jsonrpc":"2.0","id":null,"result":1}`, delay)
			}
		default:
			reply(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`, 0)
		}
	})
}

// TestNullIDUnanswered: a server that reads id null as a notification gets
// the warning null_id_unanswered, also when another message's id-null
// reply came (the pairing gives it to the message that must have it);
// one that answers id null late, within the timeout, is not called silent
// by the checks that confirm, minimize and replay the finding, which wait
// the timeout for it.
func TestNullIDUnanswered(t *testing.T) {
	const late = 300 * time.Millisecond // beyond the grace of a quiet server (50 ms), well within the timeout (5 s)
	for _, tc := range []struct {
		name   string
		delay  time.Duration
		frames []string
		warn   bool
	}{
		{"never answered", -1, []string{nullIDCall}, true},
		{"never answered, beside an invalid request", -1, []string{`{}`, nullIDCall}, true},
		{"answered late", late, []string{nullIDCall}, false},
		{"answered late, beside an invalid request", late, []string{nullIDCall, `{}`}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := startNullIDServer(t, tc.delay)
			r, w := scriptedWorker(t, tg, profile.JSONRPC)
			in := frames(tc.frames...)
			// The main loop's exchange waits a grace only: the late reply
			// misses it too, and the verdict is the candidate.
			first := w.exec(context.Background(), in, true)
			if first.v.rule != check.NullIDUnanswered {
				t.Fatalf("first exchange: %s (%v) %q, want the candidate null_id_unanswered", first.v.rule, first.v.rules, first.v.note)
			}
			cand := candidate{v: first.v}
			cand.key = dedupKey(cand.v)
			reproduces := r.reproducer(w, &cand)
			// (As confirmation checks it: which of the two frames went
			// without a reply is a guess there, settled by sending the
			// call alone, and minimization takes no guess.)
			*cand.confirming = true
			if got := reproduces(context.Background(), in); got != tc.warn {
				t.Errorf("the check reproduces %v, want %v: %s %q (replies %q)", got, tc.warn, w.last.v.rule, w.last.v.note, w.last.o.replies)
			}
			res := w.last
			if tc.warn {
				if res.v.rule != check.NullIDUnanswered || res.v.rules.Failures() != 0 || res.o.end != endNone {
					t.Errorf("verdict %s (%v), end %s: %s; want the warning alone, the connection kept", res.v.rule, res.v.rules, res.o.end, res.v.note)
				}
				if severity(res.v.rule) != "warning" {
					t.Errorf("severity %s", severity(res.v.rule))
				}
				return
			}
			if res.v.rules != 0 || len(res.o.replies) != len(tc.frames) {
				t.Errorf("verdict %v: %s; replies %q", res.v.rules, res.v.note, res.o.replies)
			}
		})
	}
}
