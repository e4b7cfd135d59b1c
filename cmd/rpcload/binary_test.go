package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// The integration tests run the real binary, built once per test process
// into binDir (made by TestMain, removed after the tests).
var (
	binDir   string
	binOnce  sync.Once
	binPath  string
	binError error
)

func TestMain(m *testing.M) {
	if path := os.Getenv(argvChildEnv); path != "" {
		os.Exit(argvChild(path)) // this process is a child of rpcload run (shell_test.go)
	}
	dir, err := os.MkdirTemp("", "rpcload-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// goTool finds the go command: on PATH, else where Go's installer puts it.
func goTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	p := "/usr/local/go/bin/go"
	if _, err := os.Stat(p); err != nil {
		return "", errors.New("no go command on PATH or in /usr/local/go/bin")
	}
	return p, nil
}

// binary returns the path of the rpcload binary, building it on first use.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped in -short mode")
	}
	binOnce.Do(func() {
		gobin, err := goTool()
		if err != nil {
			binError = err
			return
		}
		binPath = filepath.Join(binDir, "rpcload")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, gobin, "build", "-o", binPath, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			binError = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binError != nil {
		t.Fatal(binError)
	}
	return binPath
}

// result of one child run.
type child struct {
	code           int // -1: killed at its time limit, or not started
	stdout, stderr string
	elapsed        time.Duration
	state          *os.ProcessState
	peakRSS        int64 // bytes, sampled while it ran (Linux; 0: unknown)
	err            error // it could not be started
}

// runBinary runs the binary with args, killing it after limit (a test
// failure).
func runBinary(t *testing.T, limit time.Duration, args ...string) child {
	t.Helper()
	c := runChild(binary(t), limit, args)
	if c.err != nil {
		t.Fatalf("rpcload %q: %v", args, c.err)
	}
	if c.code == -1 {
		t.Fatalf("rpcload %q did not finish within %s\nstdout:\n%s\nstderr:\n%s", args, limit, c.stdout, c.stderr)
	}
	return c
}

// runChild runs the binary like runBinary, but reports a run that did not
// finish as exit -1 instead of failing the test, so it can run on any
// goroutine.
func runChild(bin string, limit time.Duration, args []string) child {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Start()
	var peak int64
	if err == nil {
		stop := make(chan struct{})
		rss := watchPeakRSS(cmd.Process.Pid, stop)
		err = cmd.Wait()
		close(stop)
		peak = <-rss
	}
	c := child{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start), state: cmd.ProcessState, peakRSS: peak}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		c.code = -1
		c.stderr += fmt.Sprintf("\n(killed after %s)", limit)
	case errors.As(err, &ee):
		c.code = ee.ExitCode()
	case err != nil:
		c.code, c.err = -1, err
		c.stderr += "\n" + err.Error()
	}
	return c
}

func (c child) String() string {
	return fmt.Sprintf("exit %d after %s\nstdout:\n%s\nstderr:\n%s", c.code, c.elapsed.Round(time.Millisecond), c.stdout, c.stderr)
}

// startServer serves a testsrv on loopback over HTTP and TCP and returns
// it with its http:// and tcp:// URLs; the test's cleanup closes it.
func startServer(t *testing.T, cfg testsrv.Config) (srv *testsrv.Server, httpURL, tcpURL string) {
	t.Helper()
	srv, err := testsrv.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); srv.Close() })
	h, tc, err := srv.ListenAndServe(ctx, "127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return srv, "http://" + h.String() + "/", "tcp://" + tc.String()
}

// readResult reads and checks a result file: valid JSON, the schema, and
// every latency histogram decodes to its stated count.
func readResult(t *testing.T, path string) *stats.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("result file: %v", err)
	}
	if !json.Valid(data) {
		t.Fatalf("result file %s is not valid JSON:\n%.2000s", path, data)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if string(raw["schema"]) != `"rpcload.result/v1"` {
		t.Fatalf("schema = %s, want \"rpcload.result/v1\"", raw["schema"])
	}
	res, err := stats.ReadJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string]stats.Latency{"corrected": res.Latency.Corrected, "service": res.Latency.Service, "lag": res.Latency.Lag} {
		if l.HDR == "" {
			t.Errorf("latency.%s.hdr is empty", name)
			continue
		}
		h, err := hdr.Decode([]byte(l.HDR))
		if err != nil {
			t.Errorf("latency.%s.hdr does not decode: %v", name, err)
			continue
		}
		if h.TotalCount() != l.Count {
			t.Errorf("latency.%s: hdr holds %d values, count says %d", name, h.TotalCount(), l.Count)
		}
	}
	return res
}

// wantFindingsExit is the exit code the documented rules give a finished,
// uninterrupted run without --allow-violations.
func wantFindingsExit(r *stats.Result) int {
	q := r.Requests
	if len(r.Violations) > 0 || q.Leaked > 0 || q.Timeouts > 0 || q.TransportErrors > 0 {
		return exitFindings
	}
	return exitOK
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}
