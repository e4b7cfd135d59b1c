package fuzz

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/ratecap"
)

// TestMaxRate: MaxRate caps 8 workers together within 2% over 10 s. The
// planted server without bugs answers every input at once, far above the
// cap, so only the cap sets the pace; achieved is the exchanges timed as
// they got their tokens, from the first to the last. The cap never lets
// more through than its burst allows, whatever the machine does; whether
// it is reached depends on the workers keeping up, which a loaded machine
// may not: that half is judged only when the bucket was never full at a
// grant (a full bucket throws tokens away: the workers, not the cap, set
// the pace then; a bucket not full only saves them for the burst).
func TestMaxRate(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10 s run")
	}
	const maxRate = 200.0
	tg, _ := plantedTarget(t, 0, "tcp")
	var mu sync.Mutex
	var times []time.Time
	starved := 0 // grants that found the bucket full
	full := float64(ratecap.New(maxRate).Burst())
	cfg := Config{Target: tg, Workers: 8, Duration: 10 * time.Second, Seed: 3, OutDir: t.TempDir(),
		Timeout: 2 * time.Second, MaxRate: maxRate,
		sent: func(tokensLeft float64) {
			mu.Lock()
			times = append(times, time.Now())
			if tokensLeft >= full-1 {
				starved++
			}
			mu.Unlock()
		}}
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	n := len(times)
	// The counts also hold the inputs the end of the run cut short, one
	// per worker at most, before their token.
	if uint64(n) > s.Execs+s.Checks || uint64(n+cfg.Workers) < s.Execs+s.Checks {
		t.Errorf("%d exchanges timed, but %d inputs and %d checks counted", n, s.Execs, s.Checks)
	}
	if n < 2 {
		t.Fatalf("%d exchanges", n)
	}
	span := times[n-1].Sub(times[0]).Seconds()
	got := float64(n-1) / span
	t.Logf("%d exchanges (%d inputs) at %.2f/s; %d grants found the bucket full", n, s.Execs, got, starved)
	if limit := maxRate*(span+0.25) + 1; float64(n) > limit {
		t.Errorf("%d exchanges in %.2f s: more than the cap's %.0f", n, span, limit)
	}
	switch {
	case got > maxRate*1.02:
		t.Errorf("%d exchanges at %.1f/s, over %.0f/s by more than 2%%", n, got, maxRate)
	case starved > 1: // (the first grant finds the bucket as it starts)
		t.Logf("the workers did not keep up with the cap (%d of %d grants found the bucket full): its rate is not judged", starved, n)
	case got < maxRate*0.98:
		t.Errorf("%d exchanges at %.1f/s with the workers waiting for the cap, want %.0f/s within 2%%", n, got, maxRate)
	}
}
