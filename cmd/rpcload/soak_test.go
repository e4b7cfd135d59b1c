package main

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpcload/rpcload/cmd/internal/clitest"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// goroutineBookkeeping is what a parked goroutine costs besides its stack:
// the runtime's g and the sudog of its channel wait, 600 bytes on Go 1.26
// (runtime/metrics' heap objects, 10,000 goroutines parked).
const goroutineBookkeeping = 600

// leakPerRequest is the real size of the test server's leak per request:
// every 10th request parks a goroutine on a 4 KiB stack.
const leakPerRequest = (testsrv.LeakStack + goroutineBookkeeping) / 10.0

// soakServer starts rpcload serve --http on a free loopback port with
// args, as a process of its own (a soak reads its memory), and returns its
// http:// URL and pid; the test's cleanup interrupts it. It runs with
// GOGC=5: under Go's default of 100 the collector lets garbage grow with
// the live heap, so a leak shows in RSS about twice over (and stacks count
// toward the heap goal too); at 5% the RSS follows the memory the server
// really holds, which is what the test compares the slope with.
func soakServer(t *testing.T, args ...string) (url string, pid int) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Environ(), "GOGC=5")
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	const prefix = "serving JSON-RPC over HTTP on "
	line := clitest.Read(out).Wait(t, 20*time.Second, "the server's HTTP address", func(l string) bool { return strings.HasPrefix(l, prefix) })
	return strings.TrimSuffix(strings.TrimPrefix(line, prefix), "/"), cmd.Process.Pid
}

func soakGauge(t *testing.T, s *stats.SoakReport, name string) stats.GaugeGrowth {
	t.Helper()
	for _, g := range s.Gauges {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no gauge %s; verdict: %s", name, s.Verdict)
	return stats.GaugeGrowth{}
}

// within fails unless the gauge grew per request within 25% of want.
func within(t *testing.T, g stats.GaugeGrowth, want float64) {
	t.Helper()
	if g.PerRequest == nil || math.Abs(g.PerRequest.Slope-want) > 0.25*want {
		t.Errorf("%s per request: %+v, want %g ± 25%%\n%s", g.Name, g.PerRequest, want, g.Line)
	}
}

// TestSoakVerdicts soaks test servers for 60 s at 500 requests a second
// with the real binary, reading their gauges from their Prometheus
// endpoint or from /proc, and checks the verdicts: a server that leaks a
// goroutine on a 4 KiB stack every 10th request is a leak of 0.1
// goroutines and the leak's real size in RSS per request; the same server
// without the leak shows no steady growth; a bounded cache that fills and
// holds is a backlog/cache; with --server-pid alone, a leak that holds
// threads shows in the process's threads and RSS. The four run at once.
func TestSoakVerdicts(t *testing.T) {
	t.Parallel()
	binary(t)
	tests := []struct {
		name    string
		serve   []string
		pid     bool // --server-pid instead of --server-metrics
		finding string
		check   func(t *testing.T, s *stats.SoakReport)
	}{
		{name: "leak", serve: []string{"--leak", "10"}, finding: stats.VerdictLeak, check: func(t *testing.T, s *stats.SoakReport) {
			for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
				if g := soakGauge(t, s, name); g.Verdict != stats.VerdictLeak {
					t.Errorf("%s: %s, want leak", name, g.Line)
				}
			}
			within(t, soakGauge(t, s, "go_goroutines"), 0.1)
			within(t, soakGauge(t, s, "process_resident_memory_bytes"), leakPerRequest)
		}},
		{name: "no leak", finding: stats.VerdictNoGrowth},
		{name: "bounded cache", serve: []string{"--cache", "10000", "--cache-entry", "1KiB"}, finding: stats.VerdictBacklogCache, check: func(t *testing.T, s *stats.SoakReport) {
			if g := soakGauge(t, s, "process_resident_memory_bytes"); g.Verdict != stats.VerdictBacklogCache || !g.Plateau {
				t.Errorf("RSS: %s; want a backlog/cache that filled and held", g.Line)
			}
		}},
		{name: "leak by pid", serve: []string{"--leak", "10", "--leak-thread"}, pid: true, finding: stats.VerdictLeak, check: func(t *testing.T, s *stats.SoakReport) {
			threads, rss := soakGauge(t, s, "proc_threads"), soakGauge(t, s, "proc_rss_bytes")
			if threads.Verdict != stats.VerdictLeak || rss.Verdict != stats.VerdictLeak {
				t.Errorf("threads: %s\nRSS: %s\nwant both leaks", threads.Line, rss.Line)
			}
			within(t, threads, 0.1)
			if rss.PerRequest == nil || rss.PerRequest.Slope < leakPerRequest {
				t.Errorf("RSS per request %+v: a leaked thread holds its goroutine's stack and its own, over %g B per request", rss.PerRequest, leakPerRequest)
			}
		}},
	}
	// The runs go at once, whatever -parallel allows (it is GOMAXPROCS,
	// 2 on a small machine): four soaks of 70 s cost the suite a minute
	// and a bit, not four. Each is light (500 requests a second).
	type outcome struct {
		c    child
		path string
	}
	outs := make([]outcome, len(tests))
	var wg sync.WaitGroup
	for i, tt := range tests {
		url, pid := soakServer(t, tt.serve...)
		out := filepath.Join(t.TempDir(), "soak.json")
		args := []string{"run", url + "/", "--method", "echo", "--params", "[1]", "--rate", "500", "--duration", "60s",
			"--interval", "1s", "--soak", "--soak-quiet", "10s", "-q", "-o", out}
		if tt.pid {
			args = append(args, "--server-pid", strconv.Itoa(pid))
		} else {
			args = append(args, "--server-metrics", url+testsrv.MetricsPath)
		}
		outs[i].path = out
		bin := binary(t)
		wg.Go(func() { outs[i].c = runChild(bin, 3*time.Minute, args) })
	}
	wg.Wait()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := outs[i].c
			if c.code != exitOK {
				t.Fatalf("%s", c)
			}
			res := readResult(t, outs[i].path)
			s := res.Soak
			if s == nil || res.Quiet == nil || res.ServerGauges == nil {
				t.Fatalf("soak %+v, quiet %+v, server gauges %+v", s, res.Quiet, res.ServerGauges)
			}
			t.Logf("%d requests answered; %d reads of the server, %d failed\n%s", res.Requests.Answered, res.ServerGauges.Reads, res.ServerGauges.Failures, c.stdout[strings.Index(c.stdout, "soak "):])
			if s.Finding != tt.finding {
				t.Errorf("finding %q, want %q; verdict: %s", s.Finding, tt.finding, s.Verdict)
			}
			if !strings.Contains(s.Verdict, tt.finding+": ") {
				t.Errorf("verdict %q does not say %q", s.Verdict, tt.finding)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

// TestServerGaugeReads: an endpoint whose scrapes fail is counted, said
// once on stderr and in the report, and the run goes on to its end; a
// stdio child's threads and open files join its RSS in the series; and
// a good endpoint's gauges reach every point.
func TestServerGaugeReads(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	_, plain, _ := startServer(t, testsrv.Config{}) // no /metrics: GET is 405
	srv, err := testsrv.New(testsrv.Config{Metrics: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h, _, err := srv.ListenAndServe(ctx, "127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metrics := "http://" + h.String() + testsrv.MetricsPath
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, c child, res *stats.Result)
	}{
		{name: "failing endpoint", args: []string{plain, "--server-metrics", plain + "nope"}, check: func(t *testing.T, c child, res *stats.Result) {
			g := res.ServerGauges
			if g == nil || g.Reads < 5 || g.Failures != g.Reads || len(g.Errors) != 1 || !strings.Contains(g.Errors[0], "405") {
				t.Fatalf("server gauges %+v; want every read failed with a 405", g)
			}
			if res.DurationS < 1.9 {
				t.Errorf("the run stopped after %gs", res.DurationS)
			}
			if n := strings.Count(c.stderr, "reading the server's gauges"); n != 1 || !strings.Contains(c.stderr, "the run goes on") {
				t.Errorf("stderr says it %d times:\n%s", n, c.stderr)
			}
			if !strings.Contains(c.stdout, fmt.Sprintf("%d reads, %d failed", g.Reads, g.Failures)) {
				t.Errorf("the report does not count the failures:\n%s", c.stdout)
			}
		}},
		// (Intervals of a second, so a scrape has 500 ms: the endpoint is
		// served by this test's process, slow under -race.)
		{name: "good endpoint", args: []string{plain, "--server-metrics", metrics, "--server-metric", `rpcload_testsrv_frames_total`, "--interval", "1s"}, check: func(t *testing.T, c child, res *stats.Result) {
			// On a busy machine a scrape may still outlast its time: that
			// point lacks the gauges and counts the failure.
			read := 0
			for i, p := range res.Series {
				switch {
				case p.Server["go_goroutines"] > 0 && p.Server["process_resident_memory_bytes"] > 0:
					read++
				case p.ServerReadFailures == 0:
					t.Fatalf("point %d: %v, and no failed read", i, p.Server)
				}
			}
			if read < len(res.Series)/2 {
				t.Errorf("%d of %d points have the gauges", read, len(res.Series))
			}
			if last := res.Series[len(res.Series)-1].Server["rpcload_testsrv_frames_total"]; last != 0 {
				t.Errorf("the metrics server counted %g frames: its own, not the target's", last)
			}
			if g := res.ServerGauges; g == nil || len(g.Missing) != 0 || g.Reads != uint64(len(res.Series))+1 {
				t.Errorf("server gauges %+v; want a read per point and one before the run, none missing", g)
			}
		}},
		{name: "stdio child", args: []string{"--", bin, "serve", "--stdio"}, check: func(t *testing.T, c child, res *stats.Result) {
			// (Points that close after sending has ended may find the child
			// shut down.)
			for i, p := range res.Series {
				if p.T > res.DurationS {
					break
				}
				if p.ChildRSSBytes <= 0 || p.ChildThreads < 1 || p.ChildOpenFDs < 3 {
					t.Fatalf("point %d: RSS %d, threads %d, open files %d", i, p.ChildRSSBytes, p.ChildThreads, p.ChildOpenFDs)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "r.json")
			args := append([]string{"run", "--method", "echo", "--rate", "200", "--duration", "2s", "--interval", "200ms", "-o", out}, tt.args...)
			c := runBinary(t, time.Minute, args...)
			if c.code != exitOK {
				t.Fatalf("%s", c)
			}
			tt.check(t, c, readResult(t, out))
		})
	}
}
