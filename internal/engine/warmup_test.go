package engine

import (
	"context"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/testsrv"
)

// TestWarmupCountedApart runs 1000 requests of which the first 400 are
// scheduled in the warm-up: those are counted in Result.Warmup, the rest in
// the run's figures, and the achieved rate is over the measured part only.
func TestWarmupCountedApart(t *testing.T) {
	_, httpURL, tcpURL := startServer(t, testsrv.Config{})
	for _, url := range []string{tcpURL, httpURL} {
		t.Run(url[:4], func(t *testing.T) {
			cfg := baseConfig(target(t, url)) // 5000/s for 200 ms: 1000 requests
			cfg.Warmup = 80 * time.Millisecond
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Warmup == nil {
				t.Fatal("no warmup section")
			}
			w, q := res.Warmup.Requests, res.Requests
			// Ticks at k/5000 s for k = 0..999: k < 400 are intended before 80 ms.
			if w.Sent != 400 || w.OK != 400 || q.Sent != 600 || q.OK != 600 {
				t.Errorf("warm-up sent %d ok %d, measured sent %d ok %d; want 400/400 and 600/600", w.Sent, w.OK, q.Sent, q.OK)
			}
			if res.Latency.Corrected.Count != 600 {
				t.Errorf("corrected latency count %d, want 600", res.Latency.Corrected.Count)
			}
			if res.Warmup.DurationS != 0.08 {
				t.Errorf("warm-up duration %g s, want 0.08", res.Warmup.DurationS)
			}
			// The sending phase ends after the last tick's intended time,
			// 999/5000 s, however late on a loaded machine.
			if res.DurationS < 0.1998-0.08 {
				t.Errorf("measured duration %g s, want at least the 0.12 s after the warm-up", res.DurationS)
			}
			if want := float64(q.Messages) / res.DurationS; res.Rate.Achieved != want {
				t.Errorf("achieved %g/s, want the measured part's %g/s", res.Rate.Achieved, want)
			}
			var seriesSent uint64
			for _, p := range res.Series {
				seriesSent += p.Sent
			}
			if seriesSent != 1000 {
				t.Errorf("the series counts %d sent, want all 1000 (warm-up included)", seriesSent)
			}
		})
	}
}

func TestWarmupRefused(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	for _, warm := range []time.Duration{-time.Millisecond, 200 * time.Millisecond, time.Second} {
		cfg := baseConfig(target(t, tcpURL))
		cfg.Warmup = warm
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("warm-up %s of a 200 ms run: no error", warm)
		}
	}
}
