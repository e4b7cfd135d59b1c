package fuzz

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/transport"
)

// TestSpareChild: once a worker's child has died, each restart takes the
// child started ahead and starts the next one, so k inputs that each kill
// the child start k children and one spare (not 2k: every spare is used);
// the spare left at the end is closed and not counted. A worker whose
// child has not died yet has no spare.
func TestSpareChild(t *testing.T) {
	tg, err := transport.CommandTarget([]string{os.Args[0], "-test.run=^$"}, transport.Newline)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Target: tg, Child: transport.ChildOptions{Env: []string{childEnv + "=parsedie"}, Grace: time.Second},
		Execs: 1, OutDir: t.TempDir(), Timeout: 2 * time.Second, Now: fixedClock}
	if err := cfg.fill(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := newRun(ctx, &cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := r.newWorker(0)
	w.spare.on = true
	good := mutate.Case{Frames: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`)}}
	bad := mutate.Case{Frames: [][]byte{[]byte(`{"jsonrpc":`)}}
	if res := w.exec(ctx, good, false); res.o.end != endNone || w.spare.pending != nil {
		t.Fatalf("first input: %s %q, spare %v: want an answer and no spare", res.o.end, res.o.note, w.spare.pending != nil)
	}
	const kills = 4
	for k := 1; k <= kills; k++ {
		if res := w.exec(ctx, bad, false); res.o.end != endExited {
			t.Fatalf("input %d: %s %q, want the child's exit", k, res.o.end, res.o.note)
		}
	}
	// The first child, then one per restart after the first: each of
	// those restarts took the spare and started another.
	if n := r.d.children.Load(); n != kills+1 || w.spare.pending == nil {
		t.Errorf("%d children started (a spare pending: %v), want %d", n, w.spare.pending != nil, kills+1)
	}
	if res := w.exec(ctx, good, false); res.o.end != endNone {
		t.Fatalf("on the spare: %s %q", res.o.end, res.o.note)
	}
	w.spare.drop(r.d)
	w.closeConn()
	if n := r.d.children.Load(); n != kills+1 {
		t.Errorf("%d children counted after the spare was dropped, want %d", n, kills+1)
	}
}
