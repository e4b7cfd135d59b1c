package fuzz

import (
	"context"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/transport"
)

// startHostile serves each connection to 127.0.0.1 with handle until the
// test ends.
func startHostile(t *testing.T, handle func(c net.Conn, quit <-chan struct{})) transport.Target {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(quit); ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				handle(c, quit)
			})
		}
	})
	tg, err := transport.ParseTarget("tcp://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestRunBounded holds a run against servers that never answer right to
// --duration plus the documented bounds: the canary's selection
// (canarySelectTimeouts × --timeout) and the wind-down of the finding in
// progress (windDownTimeouts × --timeout), however large --minimize-time
// and --minimize-budget are. Before, the selection tried every seed call
// for a whole timeout and the last finding took its whole minimization.
func TestRunBounded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		handle func(c net.Conn, quit <-chan struct{})
	}{
		{"reads and never answers", func(c net.Conn, _ <-chan struct{}) { io.Copy(io.Discard, c) }},
		{"never reads", func(_ net.Conn, quit <-chan struct{}) { <-quit }},
		{"floods requests and never reads", func(c net.Conn, quit <-chan struct{}) {
			for i := 0; ; i++ {
				select {
				case <-quit:
					return
				default:
				}
				c.SetWriteDeadline(time.Now().Add(time.Second))
				if _, err := c.Write([]byte(`{"jsonrpc":"2.0","id":"s` + strconv.Itoa(i) + `","method":"ping"}` + "\n")); err != nil {
					return
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const timeout = 200 * time.Millisecond
			cfg := Config{Target: startHostile(t, tc.handle), Workers: 1, Duration: 300 * time.Millisecond, Seed: 1, Timeout: timeout,
				OutDir: t.TempDir(), MinimizeBudget: 10_000, MinimizeTime: time.Minute}
			start := time.Now()
			s, err := Run(context.Background(), cfg)
			elapsed := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			// One second of slack for a loaded machine (-race, parallel tests).
			limit := cfg.Duration + (canarySelectTimeouts+windDownTimeouts)*timeout + time.Second
			t.Logf("%d execs, %d findings %v, %s", s.Execs, len(s.Findings), s.FindingsByRule, elapsed.Round(time.Millisecond))
			if elapsed > limit {
				t.Errorf("the run took %s, over the %s its bounds allow", elapsed.Round(time.Millisecond), limit)
			}
			if s.FindingsByRule["hang"] == 0 {
				t.Errorf("findings %v, want a hang", s.FindingsByRule)
			}
		})
	}
}
