package fuzz

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"
)

// TestMaxRate: MaxRate caps 8 workers together within 2% over 10 s. The
// planted server without bugs answers every input at once, far above the
// cap, so only the cap sets the pace; achieved is the exchanges timed as
// they got their tokens, from the first to the last.
func TestMaxRate(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10 s run")
	}
	const maxRate = 200.0
	tg, _ := plantedTarget(t, 0, "tcp")
	var mu sync.Mutex
	var times []time.Time
	cfg := Config{Target: tg, Workers: 8, Duration: 10 * time.Second, Seed: 3, OutDir: t.TempDir(),
		Timeout: 2 * time.Second, MaxRate: maxRate,
		sent: func() {
			mu.Lock()
			times = append(times, time.Now())
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
	got := float64(n-1) / times[n-1].Sub(times[0]).Seconds()
	t.Logf("%d exchanges (%d inputs) at %.2f/s", n, s.Execs, got)
	if math.Abs(got-maxRate)/maxRate > 0.02 {
		t.Errorf("%d exchanges at %.1f/s, want %.0f/s within 2%%", n, got, maxRate)
	}
}
