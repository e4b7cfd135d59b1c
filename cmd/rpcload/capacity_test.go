package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/capacity"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// quickSearch are the flags that keep a search short: one-second steps
// after a short warm-up, a two-second confirmation.
var quickSearch = []string{"--step-duration", "1s", "--warmup", "300ms", "--confirm-duration", "2s", "--quiet"}

// measuredSearch are the flags of the searches whose answer a test checks:
// steps long enough that 5% over a server's capacity builds a queue of
// over 100 ms (5% of 2.5 s), well past what a busy machine's scheduling
// adds to a p99.
var measuredSearch = []string{"--step-duration", "2s", "--warmup", "500ms", "--confirm-duration", "2s", "--quiet"}

// checkAnswer checks a search's answer against the server's true capacity
// want. Blamed on the server, it must be want within tol. On a machine
// too busy to measure on (a crowded CI runner), the search may stop early,
// blaming the machine or the load generator: the answer is then a lower
// bound, and the step that ended the search must show why (the machine's
// CPUs busy, or rpcload behind its schedule), and when there is no answer
// at all the exit code is 1. Either way no number is laid on the server
// that is not its own.
func checkAnswer(t *testing.T, rep *stats.CapacityReport, want, tol float64, c child) {
	t.Helper()
	if wantCode := map[bool]int{true: exitFindings, false: exitOK}[rep.Rate == 0]; c.code != wantCode {
		t.Fatalf("answer %g/s, exit %d; want exit %d\n%s", rep.Rate, c.code, wantCode, c)
	}
	switch rep.LimitedBy {
	case capacity.BlameServer:
		if rep.Rate < want*(1-tol) || rep.Rate > want*(1+tol) || !rep.Confirmed {
			t.Fatalf("answer %g/s (confirmed %v), want %g/s ±%g%%\n%s", rep.Rate, rep.Confirmed, want, 100*tol, c)
		}
	case capacity.BlameMachine, capacity.BlameLoadGenerator:
		if rep.Rate > want*(1+tol) {
			t.Fatalf("lower bound %g/s above the capacity %g/s\n%s", rep.Rate, want, c)
		}
		for _, s := range rep.Steps {
			if s.Blame == rep.LimitedBy {
				if s.MachineBusy < 0.9 && s.LagP99us <= rep.LatencyLimitUs {
					t.Fatalf("step at %g/s blamed on %s with the machine %.0f%% busy and lag p99 %dus\n%s", s.Offered, s.Blame, 100*s.MachineBusy, s.LagP99us, c)
				}
				t.Logf("a busy machine: the search stopped at %g/s (%s): %q", s.Offered, s.Blame, s.Reasons)
				return
			}
		}
		t.Fatalf("limited by %s, but no step was\n%s", rep.LimitedBy, c)
	default:
		t.Fatalf("limited by %q\n%s", rep.LimitedBy, c)
	}
}

// TestCapacityKnownServer: a server that is one worker taking S per
// request sustains exactly 1/S requests a second; the search finds it
// within 10%, over TCP and HTTP, and the result file carries every step
// with its histogram for check, compare and report.
func TestCapacityKnownServer(t *testing.T) {
	tests := []struct {
		service time.Duration
		start   string
	}{
		{500 * time.Microsecond, "400"},
		{2 * time.Millisecond, "100"},
	}
	for _, tt := range tests {
		_, httpURL, tcpURL := startServer(t, testsrv.Config{ServiceTime: tt.service})
		want := 1 / tt.service.Seconds()
		for _, url := range []string{tcpURL, httpURL} {
			t.Run(fmt.Sprintf("%s/%s", tt.service, url[:4]), func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "capacity.json")
				args := append([]string{"capacity", url, "--method", "echo", "--slo", "p99<100ms", "--start-rate", tt.start, "-o", out}, measuredSearch...)
				c := runBinary(t, 3*time.Minute, args...)
				res := readResult(t, out)
				rep := res.Capacity
				if rep == nil {
					t.Fatalf("no capacity section in the result file\n%s", c)
				}
				checkAnswer(t, rep, want, 0.1, c)
				if rep.Rate == 0 {
					return // a machine too busy to measure on: checkAnswer said why
				}
				if rep.LimitedBy == capacity.BlameServer {
					mustContain(t, "stdout", c.stdout, "sustains "+stats.FormatRate(rep.Rate)+" req/s with p99<100ms", "the server broke it")
				}
				for i, s := range rep.Steps {
					if s.Latency.HDR == "" || s.Latency.Count == 0 {
						t.Errorf("step %d has no histogram", i+1)
					}
				}
				if res.Warmup == nil || rep.Confirmed && math.Abs(res.Rate.Target-rep.Rate) > 1e-6*rep.Rate {
					t.Errorf("the result's body is not the confirming run at %g/s: target %g, warm-up %v", rep.Rate, res.Rate.Target, res.Warmup)
				}
				gate := runBinary(t, 30*time.Second, "check", out, "--threshold", fmt.Sprintf("capacity>=%g", rep.Rate))
				mustContain(t, "check", gate.stdout, "PASS capacity>=")
				if gate.code != exitOK {
					t.Errorf("check: %s", gate)
				}
				gate = runBinary(t, 30*time.Second, "check", out, "--threshold", fmt.Sprintf("capacity>=%g", 2*want))
				if gate.code != exitFindings {
					t.Errorf("check of twice the capacity: %s", gate)
				}
			})
		}
	}
}

// kneeServer answers newline-delimited JSON-RPC over TCP in 1 ms while
// requests arrive at less than knee a second, and in 250 ms once they
// arrive faster: its p99 crosses a 100 ms SLO at knee, though its
// throughput has no limit. The arrival rate is each live connection's
// requests over its age since it was accepted, summed: a load generator
// dials before its schedule starts and never sends ahead of it, so the
// estimate never overstates the offered rate, however late some requests
// are written on a busy machine.
func kneeServer(t *testing.T, knee float64) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	type connRate struct {
		accepted time.Time
		count    int
	}
	var mu sync.Mutex
	live := map[*connRate]struct{}{}
	slow := func(c *connRate) bool {
		mu.Lock()
		defer mu.Unlock()
		c.count++
		now := time.Now()
		rate := 0.0
		for o := range live {
			if age := now.Sub(o.accepted).Seconds(); age > 0 {
				rate += float64(o.count) / age
			}
		}
		return rate > knee
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c := &connRate{accepted: time.Now()}
			mu.Lock()
			live[c] = struct{}{}
			mu.Unlock()
			go func() {
				defer func() {
					mu.Lock()
					delete(live, c)
					mu.Unlock()
					conn.Close()
				}()
				var wmu sync.Mutex
				sc := bufio.NewScanner(conn)
				for sc.Scan() {
					var req struct {
						ID json.RawMessage `json:"id"`
					}
					if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
						continue
					}
					delay := time.Millisecond
					if slow(c) {
						delay = 250 * time.Millisecond
					}
					reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":true}`+"\n", req.ID)
					time.AfterFunc(delay, func() {
						wmu.Lock()
						defer wmu.Unlock()
						_, _ = conn.Write([]byte(reply))
					})
				}
			}()
		}
	}()
	return "tcp://" + ln.Addr().String()
}

// TestCapacityLatencyKnee: a server whose p99 crosses the SLO at a known
// rate gets that rate, within the precision.
func TestCapacityLatencyKnee(t *testing.T) {
	const knee = 1500
	url := kneeServer(t, knee)
	out := filepath.Join(t.TempDir(), "knee.json")
	args := append([]string{"capacity", url, "--method", "echo", "--slo", "p99<100ms", "--start-rate", "200", "-o", out}, measuredSearch...)
	c := runBinary(t, 3*time.Minute, args...)
	rep := readResult(t, out).Capacity
	checkAnswer(t, rep, knee, rep.Precision, c)
}

// TestCapacityStartRateBreaks: a server that cannot take even the start
// rate gets exit 1 and a verdict that says so.
func TestCapacityStartRateBreaks(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{ServiceTime: 20 * time.Millisecond}) // 50 req/s
	args := append([]string{"capacity", tcpURL, "--method", "echo", "--slo", "p99<50ms", "--start-rate", "100"}, quickSearch...)
	c := runBinary(t, time.Minute, args...)
	if c.code != exitFindings {
		t.Fatalf("want exit 1: %s", c)
	}
	mustContain(t, "stdout", c.stdout, "breaks the SLO (p99<50ms, error_rate<=0.1%) already at the start rate, 100 req/s")
}

// TestCapacityEmbeddedServer: with no target, the search runs against the
// embedded server in rpcload's own process, and no failure is laid on the
// server: the answer is limited by the load generator or the machine.
func TestCapacityEmbeddedServer(t *testing.T) {
	out := filepath.Join(t.TempDir(), "embedded.json")
	args := append([]string{"capacity", "--slo", "p99<300us", "--start-rate", "2000", "-o", out}, quickSearch...)
	c := runBinary(t, 2*time.Minute, args...)
	rep := readResult(t, out).Capacity
	if rep.LimitedBy != capacity.BlameMachine {
		t.Fatalf("limited by %q, want the machine\n%s", rep.LimitedBy, c)
	}
	for i, s := range rep.Steps {
		if s.Blame == capacity.BlameServer {
			t.Errorf("step %d blamed on the embedded server: %q", i+1, s.Reasons)
		}
	}
	mustContain(t, "stdout", c.stdout, "the load generator or the machine")
	want := exitOK
	if rep.Rate == 0 {
		want = exitFindings
	}
	if c.code != want {
		t.Errorf("exit %d, want %d", c.code, want)
	}
}

func TestCapacityBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--method", "echo"}, "--slo is required"},
		{[]string{"--slo", "error_rate<1%"}, "--slo needs a latency bound"},
		{[]string{"--slo", "p99<<1ms"}, "--slo: threshold"},
		{[]string{"--slo", "p99<1ms", "--rate", "100"}, "--rate does not apply to capacity"},
		{[]string{"--slo", "p99<1ms", "-c", "10"}, "--concurrency does not apply to capacity"},
		{[]string{"--slo", "p99<1ms", "--precision", "0"}, "--precision, --growth and --start-rate must be positive (got 0%"},
		{[]string{"--slo", "p99<1ms", "--precision", "100%"}, "--precision must be between 0 and 1"},
		{[]string{"--slo", "p99<1ms", "--growth", "1"}, "--growth must be above 1"},
		{[]string{"--slo", "p99<1ms", "--max-error-rate", "lots"}, "--max-error-rate"},
		{[]string{"--slo", "p99<1ms", "--start-rate", "100", "--max-rate", "50"}, "--max-rate (50) must not be below --start-rate (100)"},
		{[]string{"--slo", "p99<1ms", "--transport", "carrier-pigeon"}, "--transport must be tcp or http"},
	}
	scen := filepath.Join(t.TempDir(), "raw.yaml")
	if err := os.WriteFile(scen, []byte("version: 1\ntarget: tcp://127.0.0.1:9\nmix: [{method: a}, {raw: x}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests = append(tests, struct {
		args []string
		want string
	}{[]string{"--slo", "p99<1ms", "-f", scen}, "capacity searches the well-formed load"})
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := realMain(append([]string{"capacity"}, tt.args...), &stdout, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr.String(), tt.want)
			}
		})
	}
}
