package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/testsrv"
)

// TestQuietPhaseAndServerReads: every interval reads the server's gauges
// (ReadServer) into its point, and the quiet phase goes on closing
// intervals with nothing sent, for its length, after the drain; an
// interrupt cuts it short, and a run without one has none.
func TestQuietPhaseAndServerReads(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	tests := []struct {
		name      string
		quiet     time.Duration
		interrupt bool // cancel the run once the quiet phase starts
		wantQuiet bool
	}{
		{name: "quiet phase", quiet: 400 * time.Millisecond, wantQuiet: true},
		{name: "interrupted quiet phase", quiet: time.Minute, interrupt: true, wantQuiet: true},
		{name: "none", quiet: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := baseConfig(target(t, tcpURL))
			cfg.Rate, cfg.Duration, cfg.Interval = 200, 300*time.Millisecond, 50*time.Millisecond
			cfg.Quiet = tt.quiet
			var reads, failures atomic.Int64
			cfg.ReadServer = func(ctx context.Context) (map[string]float64, uint64) {
				n := reads.Add(1)
				if n%3 == 0 {
					failures.Add(1)
					return map[string]float64{}, 1
				}
				return map[string]float64{"g": float64(n)}, 0
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			quietStarted := make(chan time.Duration, 1)
			cfg.OnQuiet = func(d time.Duration) {
				quietStarted <- d
				if tt.interrupt {
					cancel()
				}
			}
			start := time.Now()
			res, err := Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if (res.Quiet != nil) != tt.wantQuiet {
				t.Fatalf("quiet phase %+v, want one: %v", res.Quiet, tt.wantQuiet)
			}
			var withGauge, failed int
			for _, p := range res.Series {
				if _, ok := p.Server["g"]; ok {
					withGauge++
				}
				failed += int(p.ServerReadFailures)
			}
			if withGauge == 0 || int64(failed) != failures.Load() {
				t.Errorf("%d points with the gauge, %d failed reads in the series, %d made", withGauge, failed, failures.Load())
			}
			if !tt.wantQuiet {
				if len(quietStarted) != 0 {
					t.Error("OnQuiet was called")
				}
				return
			}
			if d := <-quietStarted; d != tt.quiet {
				t.Errorf("OnQuiet(%v), want %v", d, tt.quiet)
			}
			q := res.Quiet
			if q.Cut != tt.interrupt {
				t.Errorf("cut %v, want %v", q.Cut, tt.interrupt)
			}
			if tt.interrupt {
				if took > 20*time.Second {
					t.Errorf("an interrupted quiet phase of a minute: the run took %v", took)
				}
				return
			}
			if q.DurationS < 0.39 || q.DurationS > 5 || q.StartS < 0.29 {
				t.Errorf("quiet phase %+v, want 0.4 s from after 0.3 s", q)
			}
			// (The first point after the start closes an interval that began
			// before it.)
			var quietPoints int
			for _, p := range res.Series {
				if p.T <= q.StartS {
					continue
				}
				quietPoints++
				if quietPoints > 1 && (p.Sent != 0 || p.Answered != 0) {
					t.Errorf("point at %.3fs of the quiet phase sent %d, answered %d", p.T, p.Sent, p.Answered)
				}
			}
			if quietPoints < 4 {
				t.Errorf("%d points in a quiet phase of 0.4 s at 50 ms intervals", quietPoints)
			}
		})
	}
}
