package fuzz

import (
	"context"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/wire"
)

// TestSlowerThanControl: a slow_input is confirmed only when the input is
// slower than --slow-factor times the canary sent right after it; with no
// canary there is no control. Against the reference server over TCP, the
// canary takes well under an hour and well over nothing.
func TestSlowerThanControl(t *testing.T) {
	ctx := context.Background()
	cfg := Config{Target: refServer(t, "tcp"), Execs: 1, OutDir: t.TempDir(), Timeout: 2 * time.Second}
	if err := cfg.fill(); err != nil {
		t.Fatal(err)
	}
	r, err := newRun(ctx, &cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := r.newWorker(1)
	defer w.closeConn()
	r.canary = nil
	if !r.slowerThanControl(ctx, w, 0) {
		t.Error("without a canary an input found slow was not kept slow")
	}
	r.canary = newCanary(frames(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`), wire.KindResult, 0)
	for _, tc := range []struct {
		took time.Duration
		slow bool
	}{
		{time.Hour, true},
		{0, false},
	} {
		if got := r.slowerThanControl(ctx, w, tc.took); got != tc.slow {
			t.Errorf("an input that took %v beside the canary: slow %v, want %v", tc.took, got, tc.slow)
		}
	}
}
