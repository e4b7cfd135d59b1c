package fuzz

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/fuzztarget"
	"github.com/rpcload/rpcload/internal/mutate"
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
// progress (windDown), EndBound, however large --minimize-time
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
			limit := EndBound(cfg.Duration, timeout) + time.Second
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

// TestRunBoundedMinimizing holds a run whose finding's minimization is cut
// by its deadline to the documented bound: --duration, the canary's
// selection and the wind-down (EndBound), whatever
// --minimize-time and --minimize-budget say. The server never answers a
// frame over 50,000 bytes, and the input is a batch of 8,000 calls: each
// check the minimizer makes of a big input waits out the timeout, and the
// passes walk thousands of elements, strings and numbers. Before, a pass
// went on through every one of them after the deadline, printing the whole
// tree for each (a hang's minimization took 530 s of --minimize-time 30s,
// and its run 597 s of a 120 s --duration); and an attempt in flight at
// the deadline went on to its timeout.
func TestRunBoundedMinimizing(t *testing.T) {
	srv := fuzztarget.New(0)
	tg := startHostile(t, func(c net.Conn, quit <-chan struct{}) {
		r := transport.NewRequestLineReader(c, 8<<20)
		for {
			f, err := r.Next()
			if err != nil {
				return
			}
			if len(f) > 50_000 {
				continue // never answered
			}
			if reply := srv.Handle(context.Background(), f); reply != nil {
				if _, err := c.Write(append(reply, '\n')); err != nil {
					return
				}
			}
		}
	})
	batch := []byte{'['}
	for i := range 8000 {
		if i > 0 {
			batch = append(batch, ',')
		}
		batch = fmt.Appendf(batch, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":["abcdefgh"]}`, i)
	}
	batch = append(batch, ']')
	const timeout = 200 * time.Millisecond
	cfg := Config{Target: tg, Workers: 1, Duration: 3 * time.Second, Seed: 1, Timeout: timeout, OutDir: t.TempDir(),
		MaxFrame: 4 << 20, Seeds: []mutate.Case{{Frames: [][]byte{batch}}},
		MinimizeBudget: 100_000, MinimizeTime: time.Second}
	start := time.Now()
	s, err := Run(context.Background(), cfg)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d execs, findings %v, %s; minimize %+v", s.Execs, s.FindingsByRule, elapsed.Round(time.Millisecond), minimizeReports(s))
	// Three seconds of slack: the bound's own parts are timeouts, but
	// printing and writing a 500 kB input takes its time on a loaded
	// machine (-race, parallel tests, other processes).
	limit := EndBound(cfg.Duration, timeout) + 3*time.Second
	if elapsed > limit {
		t.Errorf("the run took %s, over the %s its bounds allow", elapsed.Round(time.Millisecond), limit)
	}
	for _, f := range s.Findings {
		if f.Minimize.DurationS > (cfg.MinimizeTime + time.Second).Seconds() {
			t.Errorf("%s: minimized for %.1fs, over --minimize-time %s", f.ID, f.Minimize.DurationS, cfg.MinimizeTime)
		}
	}
}

func minimizeReports(s *Summary) []MinimizeReport {
	var out []MinimizeReport
	for _, f := range s.Findings {
		out = append(out, f.Minimize)
	}
	return out
}
