package fuzz

import (
	"bytes"
	"context"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/fuzztarget"
	"github.com/rpcload/rpcload/internal/transport"
)

// tickingClock is a clock that moves on a microsecond at every reading: the
// time split then counts readings, whatever the machine's load, and a part
// the run went through is never zero.
func tickingClock() func() time.Time {
	var n atomic.Int64
	base := time.Unix(1_700_000_000, 0)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Microsecond) }
}

// TestTimeSplit: summary.json's time split adds up to the workers' busy
// time, which fits in the run's duration times the workers, and a child
// that dies at every parse error spends time on each part a dying child
// costs (restarts, confirming, minimizing) besides sending and waiting.
func TestTimeSplit(t *testing.T) {
	die, err := transport.CommandTarget([]string{os.Args[0], "-test.run=^$"}, transport.Newline)
	if err != nil {
		t.Fatal(err)
	}
	tcp, _ := plantedTarget(t, fuzztarget.DuplicateKey, "tcp")
	for _, tc := range []struct {
		name    string
		target  transport.Target
		child   transport.ChildOptions
		workers int
		want    []string // parts that must not be zero
	}{
		{"stdio parse error exits", die, transport.ChildOptions{Env: []string{childEnv + "=parsedie"}, Grace: time.Second}, 1,
			[]string{"send", "wait", "judge", "restart", "confirm", "minimize", "other"}},
		{"tcp planted crash", tcp, transport.ChildOptions{}, 2, []string{"send", "wait", "judge", "other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Target: tc.target, Child: tc.child, Workers: tc.workers, Execs: 150, Seed: 1, OutDir: t.TempDir(),
				Timeout: time.Second, MinimizeBudget: 20, Now: tickingClock()}
			s, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			ts := s.TimeSplit
			sum, shares := 0.0, 0.0
			nonzero := map[string]bool{}
			for _, p := range ts.parts() {
				sum += p.sh.S
				shares += p.sh.Share
				nonzero[p.name] = p.sh.S > 0
			}
			t.Logf("%d execs, %d restarts, findings %v; split %+v", s.Execs, s.Restarts, s.FindingsByRule, ts)
			if ts.BusyS <= 0 || math.Abs(sum-ts.BusyS) > 1e-9*ts.BusyS || math.Abs(shares-1) > 1e-9 {
				t.Errorf("parts sum to %gs (shares %g), busy %gs", sum, shares, ts.BusyS)
			}
			if limit := float64(tc.workers) * s.DurationS; ts.BusyS > limit {
				t.Errorf("busy %gs, over %d workers × the run's %gs", ts.BusyS, tc.workers, s.DurationS)
			}
			for _, name := range tc.want {
				if !nonzero[name] {
					t.Errorf("%s: 0s, want some", name)
				}
			}
			var text bytes.Buffer
			if err := WriteText(&text, s); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(text.String(), "\n  time: send "); n != 1 {
				t.Errorf("the text summary has %d time split lines, want 1:\n%s", n, text.String())
			}
		})
	}
}

// TestMinimizeShare: a run's minimizations take half of --duration per
// worker at most, together; each is still bounded by --minimize-time.
func TestMinimizeShare(t *testing.T) {
	for _, tc := range []struct {
		duration   time.Duration
		workers    int
		used, want time.Duration
	}{
		{0, 1, time.Hour, 30 * time.Second}, // no --duration: no cap
		{time.Minute, 1, 0, 30 * time.Second},
		{time.Minute, 1, 20 * time.Second, 10 * time.Second},
		{time.Minute, 1, 40 * time.Second, 0},
		{time.Minute, 8, 200 * time.Second, 30 * time.Second},
		{10 * time.Second, 1, 0, 5 * time.Second},
	} {
		r := &run{cfg: &Config{Duration: tc.duration, Workers: tc.workers}}
		r.minimizing.Store(int64(tc.used))
		if got := r.minimizeShare(30 * time.Second); got != tc.want {
			t.Errorf("duration %s, %d workers, %s used: %s, want %s", tc.duration, tc.workers, tc.used, got, tc.want)
		}
	}
}
