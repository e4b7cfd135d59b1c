//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcload/rpcload/cmd/internal/clitest"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// progressLine matches a progress line that shows requests being sent.
var progressLine = regexp.MustCompile(`^\S+\s+sent\s+(\d+)/s\s`)

func sendingProgress(line string) bool {
	m := progressLine.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	n, _ := strconv.Atoi(m[1])
	return n > 0
}

// TestInterrupt: SIGINT or SIGTERM during an hour-long run stops it within
// a few seconds with exit 130, the report on stdout and a complete result
// file marked interrupted.
func TestInterrupt(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		for _, transport := range []string{"tcp", "http"} {
			t.Run(sig.String()+" "+transport, func(t *testing.T) {
				bin := binary(t)
				_, httpURL, tcpURL := startServer(t, testsrv.Config{})
				target := map[string]string{"tcp": tcpURL, "http": httpURL}[transport]
				out := filepath.Join(t.TempDir(), "result.json")
				ctx, cancel := context.WithTimeout(context.Background(), childLimit)
				defer cancel()
				cmd, stdout, w := clitest.Start(ctx, t, bin, "run", target, "--method", "echo", "--params", "[1]",
					"--rate", "200", "--duration", "1h", "--interval", "100ms", "-o", out)
				w.Wait(t, 10*time.Second, "progress line showing requests sent", sendingProgress)
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				signalled := time.Now()
				<-w.Done() // EOF: the child has exited (or was killed at childLimit)
				err := cmd.Wait()
				stopped := time.Since(signalled)
				var ee *exec.ExitError
				if ctx.Err() != nil || (err != nil && !errors.As(err, &ee)) {
					t.Fatalf("child did not exit by itself (%v) after %s\nstderr:\n%s", err, stopped, w)
				}
				if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
					t.Fatalf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, stdout, w)
				}
				if stopped > 5*time.Second {
					t.Errorf("took %s to stop after the signal", stopped)
				}
				mustContain(t, "stderr", w.String(), "interrupted; draining")
				mustContain(t, "report", stdout.String(), "(interrupted)", "violations", "latency")
				res := readResult(t, out)
				if !res.Interrupted || res.Requests.Sent == 0 {
					t.Errorf("interrupted %v, sent %d; want true and > 0", res.Interrupted, res.Requests.Sent)
				}
				if res.DurationS >= 3600 {
					t.Errorf("duration_s %g: the run was not cut short", res.DurationS)
				}
			})
		}
	}
}

// TestServeBinary: "rpcload serve" on :0 ports prints the bound URLs, serves
// a run, and on SIGINT stops with exit 0 and its frame count.
func TestServeBinary(t *testing.T) {
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), childLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0", "--fault", "duplicate=0.5")
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	w := clitest.Read(stdout)
	line := w.Wait(t, 10*time.Second, "serve's tcp:// line", func(line string) bool { return strings.Contains(line, "tcp://") })
	tcpURL := line[strings.Index(line, "tcp://"):]
	c := runBinary(t, childLimit, "run", tcpURL, "--method", "add", "--params", "[1,2]", "--rate", "200", "--duration", "200ms", "-q")
	if c.code != exitFindings {
		t.Errorf("a run against serve --fault duplicate=0.5: want exit 1; %v", c)
	}
	mustContain(t, "report", c.stdout, "duplicate_reply")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-w.Done()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGINT: %v\nstdout:\n%s\nstderr:\n%s", err, w, &stderr)
	}
	mustContain(t, "serve stdout", w.String(), "serving JSON-RPC over HTTP on http://127.0.0.1:", "stopped after", "duplicate:")
}

// TestInterruptDrain: SIGINT or SIGTERM while the run waits out a long
// drain (a server that never answers) cuts the wait to a second: exit 130,
// the report on stdout and the result file marked interrupted, with the
// requests still out counted leaked. The test waits for the drain's notice
// on stderr, not for a time.
func TestInterruptDrain(t *testing.T) {
	_, httpURL, tcpURL := startServer(t, testsrv.Config{Faults: []testsrv.FaultSpec{{Fault: testsrv.FaultDrop, Prob: 1}}})
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		for _, transport := range []string{"tcp", "http"} {
			t.Run(sig.String()+" "+transport, func(t *testing.T) {
				bin := binary(t)
				target := map[string]string{"tcp": tcpURL, "http": httpURL}[transport]
				out := filepath.Join(t.TempDir(), "result.json")
				ctx, cancel := context.WithTimeout(context.Background(), childLimit)
				defer cancel()
				cmd, stdout, w := clitest.Start(ctx, t, bin, "run", target, "--method", "echo", "--params", "[1]",
					"--rate", "100", "--duration", "300ms", "--timeout", "1h", "--drain", "1h", "--interval", "100ms", "-o", out)
				w.Wait(t, childLimit, "the drain's notice", func(s string) bool { return strings.Contains(s, "sending ended; waiting up to 1h0m0s") })
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				signalled := time.Now()
				<-w.Done()
				err := cmd.Wait()
				stopped := time.Since(signalled)
				var ee *exec.ExitError
				if ctx.Err() != nil || (err != nil && !errors.As(err, &ee)) {
					t.Fatalf("rpcload did not exit by itself (%v) after %s\nstderr:\n%s", err, stopped, w)
				}
				if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
					t.Fatalf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, stdout, w)
				}
				if stopped > 5*time.Second {
					t.Errorf("took %s to stop after the signal", stopped)
				}
				mustContain(t, "report", stdout.String(), "(interrupted)")
				res := readResult(t, out)
				if !res.Interrupted || res.Requests.Sent == 0 || res.Requests.Leaked != res.Requests.Sent {
					t.Errorf("interrupted %v, sent %d, leaked %d; want true, > 0 and all sent leaked", res.Interrupted, res.Requests.Sent, res.Requests.Leaked)
				}
				if res.DrainS > 60 {
					t.Errorf("drain_s %g: the drain was not cut short", res.DrainS)
				}
			})
		}
	}
}
