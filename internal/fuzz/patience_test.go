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

// startSlowBatchServer serves newline-delimited JSON-RPC on 127.0.0.1:
// the fuzzer's own requests get a result at once, and a batch gets its
// array (-32600 for each element) after delay, written by a goroutine of
// its own, as a server slowed down by a huge batch on a loaded machine
// answers.
func startSlowBatchServer(t *testing.T, delay time.Duration) transport.Target {
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
			wg.Go(func() { serveSlowBatch(c, delay) })
		}
	})
	tg, err := transport.ParseTarget("tcp://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func serveSlowBatch(c net.Conn, delay time.Duration) {
	defer c.Close()
	var mu sync.Mutex
	write := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		c.Write([]byte(line + "\n"))
	}
	var late sync.WaitGroup
	defer late.Wait()
	r := bufio.NewScanner(c)
	var m wire.Message
	for r.Scan() {
		wire.Scan(r.Bytes(), &m)
		switch {
		case m.IDKind == wire.IDString && bytes.HasPrefix(m.ID, []byte(`"rpcfuzz-`)):
			write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
		case m.Kind == wire.KindBatch:
			late.Go(func() {
				t := time.NewTimer(delay)
				defer t.Stop()
				<-t.C
				write(`[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}]`)
			})
		}
	}
}

// TestMissingReplyConfirmedWithPatience: a reply the main loop missed at
// --timeout, which comes well within the patience a hang is confirmed
// with, is no missing reply: the confirmation waits as long for it as
// for a hang's (before, it waited --timeout, and a huge batch answered
// late on a loaded machine was "no reply to a batch", which its replay
// did not reproduce).
func TestMissingReplyConfirmedWithPatience(t *testing.T) {
	const timeout = 300 * time.Millisecond
	const late = 800 * time.Millisecond // past the timeout, within hangPatience(timeout) = 1.3 s
	tg := startSlowBatchServer(t, late)
	r, w := testWorker(t, Config{Target: tg, Profile: profile.JSONRPC, Execs: 1, OutDir: t.TempDir(), Timeout: timeout, Now: fixedClock})
	in := frames(`[0]`)
	first := w.exec(context.Background(), in, true)
	if first.v.rule != check.WrongErrorCode || first.v.shape != "none" {
		t.Fatalf("first exchange: %s (%v) shape %q %q, want the candidate wrong_error_code, no reply", first.v.rule, first.v.rules, first.v.shape, first.v.note)
	}
	cand := candidate{v: first.v}
	cand.key = dedupKey(cand.v)
	reproduces := r.reproducer(w, &cand)
	*cand.confirming = true
	if reproduces(context.Background(), in) {
		t.Errorf("the confirmation reproduces %s %q; want the late array seen (replies %q)", w.last.v.rule, w.last.v.note, w.last.o.replies)
	}
}
