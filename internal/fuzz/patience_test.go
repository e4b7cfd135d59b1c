package fuzz

import (
	"context"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// startSlowBatchServer is a scripted server (startScriptedServer) that
// answers a batch with its array (-32600 for each element) after delay,
// as a server slowed down by a huge batch on a loaded machine does, and
// nothing else.
func startSlowBatchServer(t *testing.T, delay time.Duration) transport.Target {
	t.Helper()
	return startScriptedServer(t, func(m *wire.Message, reply scriptedReply) {
		if m.Kind == wire.KindBatch {
			reply(`[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}]`, delay)
		}
	})
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
