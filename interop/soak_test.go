package interop

// A soak of go-ethereum's rpc.Server (servers/geth: a process of its own,
// with go-ethereum's metrics in Prometheus format, as geth --metrics serves
// them) read through its metrics endpoint and /proc.

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
)

// TestSoakGeth soaks go-ethereum's rpc server for 60 s at 500 requests a
// second (and a 10 s quiet phase), reading go-ethereum's own gauges of the
// process (system/cpu/goroutines, system/memory/used and held: heap in
// use and held from the OS) from its metrics endpoint and its RSS,
// threads and open files from /proc. A correct server keeps none of its
// requests: every gauge must come out as no steady growth.
func TestSoakGeth(t *testing.T) {
	t.Parallel() // a minute of load: beside the other tests, not after them
	if buildErr != nil {
		t.Fatalf("cannot run rpcload: %v", buildErr)
	}
	bin, err := buildModuleServer(t.TempDir(), "geth")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0")
	srv.WaitDelay = time.Second
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the server printed no URL: %v", err)
	}
	url := strings.TrimSpace(line)

	result := filepath.Join(t.TempDir(), "soak.json")
	args := []string{"run", url, "--method", "test_echo", "--params", `["a",1]`, "--rate", "500", "--duration", "60s",
		"--interval", "1s", "--soak", "--soak-quiet", "10s", "-q", "-o", result,
		"--server-metrics", strings.TrimSuffix(url, "/") + "/debug/metrics/prometheus",
		"--server-metric", "system_cpu_goroutines", "--server-metric", "system_memory_used", "--server-metric", "system_memory_held",
		"--server-pid", strconv.Itoa(srv.Process.Pid)}
	run := exec.CommandContext(ctx, rpcloadPath, args...)
	run.WaitDelay = 5 * time.Second
	report, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("rpcload %s: %v\n%s", strings.Join(args, " "), err, report)
	}
	res, err := stats.ReadJSONFile(result)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Soak
	if s == nil || res.ServerGauges == nil {
		t.Fatalf("no soak or server gauges in the result:\n%s", report)
	}
	t.Logf("%d requests answered; %d reads of the server, %d failed\n%s", res.Requests.Answered, res.ServerGauges.Reads, res.ServerGauges.Failures,
		report[strings.Index(string(report), "soak "):])
	want := []string{"proc_open_fds", "proc_rss_bytes", "proc_threads", "system_cpu_goroutines", "system_memory_held", "system_memory_used"}
	var got []string
	for _, g := range s.Gauges {
		got = append(got, g.Name)
		if g.Verdict != stats.VerdictNoGrowth {
			t.Errorf("%s: %s", g.Verdict, g.Line)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("gauges %v, want %v", got, want)
	}
	if s.Finding != stats.VerdictNoGrowth {
		t.Errorf("finding %q; verdict: %s", s.Finding, s.Verdict)
	}
	if res.ServerGauges.Failures > res.ServerGauges.Reads/10 {
		t.Errorf("%d of %d reads of the server failed: %q", res.ServerGauges.Failures, res.ServerGauges.Reads, res.ServerGauges.Errors)
	}
}
