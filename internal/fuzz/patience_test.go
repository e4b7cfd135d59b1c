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

// TestSlowNullMethodLearned: a server that answers a request with id null
// to a slow method after the grace (the reference server's convert sleeps
// 100 ms) made every such input a null_id_unanswered candidate, and each
// cost a confirmation of two tries on a fresh connection (a fresh child
// over stdio). Now one try that sees the reply settles it, and from then
// on the main loop waits for that method's id null as long, so the
// verdict is right the first time; a method not seen late still gets the
// grace only.
func TestSlowNullMethodLearned(t *testing.T) {
	const timeout = time.Second // maxGrace 250 ms
	const late = 600 * time.Millisecond
	tg := startScriptedServer(t, func(m *wire.Message, reply scriptedReply) {
		switch string(m.Method) {
		case `"slow"`, `"other"`:
			reply(`{"jsonrpc":"2.0","id":null,"result":1}`, late)
		}
	})
	r, w := testWorker(t, Config{Target: tg, Profile: profile.JSONRPC, Execs: 1, OutDir: t.TempDir(), Timeout: timeout}) // (the real clock: the lateness learned is measured)
	slow := frames(`{"jsonrpc":"2.0","method":"slow","id":null}`)
	first := w.exec(context.Background(), slow, true)
	if first.v.rule != check.NullIDUnanswered {
		t.Fatalf("first exchange: %s (%v) %q, want the candidate null_id_unanswered", first.v.rule, first.v.rules, first.v.note)
	}
	cand := candidate{in: slow, v: first.v}
	cand.key = dedupKey(cand.v)
	cand.check = r.reproducer(w, &cand)
	checks := r.checks.Load()
	if r.confirm(context.Background(), &cand) {
		t.Fatalf("confirmed; want the late reply seen (replies %q)", w.last.o.replies)
	}
	if n := r.checks.Load() - checks; n != 1 {
		t.Errorf("the confirmation sent the input %d times; want 1: a try that got the reply settles it", n)
	}
	again := w.exec(context.Background(), slow, false)
	if again.v.rules.Has(check.NullIDUnanswered) || len(again.o.replies) != 1 {
		t.Errorf("after the confirmation: %v %q (end %v), replies %q; want the reply waited for", again.v.rule, again.v.note, again.o.end, again.o.replies)
	}
	other := w.exec(context.Background(), frames(`{"jsonrpc":"2.0","method":"other","id":null}`), true)
	if !other.v.rules.Has(check.NullIDUnanswered) {
		t.Errorf("a method never seen late: %v, replies %q; want the grace only, so null_id_unanswered", other.v.rules, other.o.replies)
	}
}
