//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/cmd/internal/clitest"
	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/stats"
)

// childLimit bounds every child process of these tests.
const childLimit = 30 * time.Second

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// binaries builds rpcfuzz and rpcload (its reference server is the
// target) once per test process and returns their paths.
func binaries(t *testing.T) (rpcfuzz, rpcload string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binaries; skipped in -short mode")
	}
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "rpcfuzz-bin-"); buildErr != nil {
			return
		}
		gobin, err := exec.LookPath("go")
		if err != nil {
			gobin = "/usr/local/go/bin/go"
		}
		for _, b := range []struct{ out, pkg string }{{"rpcfuzz", "."}, {"rpcload", "../rpcload"}} {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			out, err := exec.CommandContext(ctx, gobin, "build", "-o", filepath.Join(buildDir, b.out), b.pkg).CombinedOutput()
			cancel()
			if err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "rpcfuzz"), filepath.Join(buildDir, "rpcload")
}

// serveRef starts "rpcload serve" on 127.0.0.1 and returns its tcp:// URL.
func serveRef(t *testing.T, rpcload string) string {
	t.Helper()
	cmd := exec.Command(rpcload, "serve", "--tcp", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	l := clitest.Read(stdout)
	line := l.Wait(t, childLimit, "serve's tcp:// line", func(s string) bool { return strings.Contains(s, "tcp://") })
	return line[strings.Index(line, "tcp://"):]
}

var execsLine = regexp.MustCompile(`\bexecs (\d+)\b`)

// TestSignals: SIGINT or SIGTERM during an hour-long fuzz run stops it with
// exit 130, the summary on stdout, and summary.json and latency.json
// complete and marked interrupted; a second SIGINT right after the first
// exits at once, still 130, leaving every file complete or absent and no
// temporary file.
func TestSignals(t *testing.T) {
	rpcfuzz, rpcload := binaries(t)
	target := serveRef(t, rpcload)
	for _, tc := range []struct {
		name  string
		sigs  []os.Signal
		twice bool
	}{
		{"SIGINT", []os.Signal{os.Interrupt}, false},
		{"SIGTERM", []os.Signal{syscall.SIGTERM}, false},
		{"SIGINT twice", []os.Signal{os.Interrupt, os.Interrupt}, true},
		{"SIGTERM then SIGINT", []os.Signal{syscall.SIGTERM, os.Interrupt}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			ctx, cancel := context.WithTimeout(context.Background(), childLimit)
			defer cancel()
			cmd, stdout, l := clitest.Start(ctx, t, rpcfuzz, "run", target, "--out", out, "--duration", "1h", "--seed", "7", "--workers", "2")
			l.Wait(t, childLimit, "a status line with inputs sent", func(s string) bool {
				m := execsLine.FindStringSubmatch(s)
				if m == nil {
					return false
				}
				n, _ := strconv.Atoi(m[1])
				return n > 0
			})
			if err := cmd.Process.Signal(tc.sigs[0]); err != nil {
				t.Fatal(err)
			}
			signalled := time.Now()
			if tc.twice {
				l.Wait(t, childLimit, "the interrupted line", func(s string) bool { return strings.Contains(s, "interrupted;") })
				if err := cmd.Process.Signal(tc.sigs[1]); err != nil && !errors.Is(err, os.ErrProcessDone) {
					t.Fatal(err)
				}
			}
			<-l.Done()
			err := cmd.Wait()
			stopped := time.Since(signalled)
			var ee *exec.ExitError
			if ctx.Err() != nil || (err != nil && !errors.As(err, &ee)) {
				t.Fatalf("rpcfuzz did not exit by itself (%v) after %s\nstderr:\n%s", err, stopped, l)
			}
			if code := cmd.ProcessState.ExitCode(); code != cli.ExitInterrupted {
				t.Fatalf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, stdout, l)
			}
			if stopped > 10*time.Second {
				t.Errorf("took %s to stop after the signal", stopped)
			}
			if !strings.Contains(l.String(), "interrupted; writing the findings so far") {
				t.Errorf("stderr does not say it was interrupted:\n%s", l)
			}
			checkOutDir(t, out, !tc.twice)
		})
	}
}

// checkOutDir checks every file under out is complete (each JSON file
// parses) and that no temporary file is left; complete requires
// summary.json and latency.json, marked interrupted.
func checkOutDir(t *testing.T, out string, complete bool) {
	t.Helper()
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", path)
		}
		if strings.HasSuffix(path, ".json") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if !json.Valid(b) {
				t.Errorf("%s is not complete JSON:\n%.500s", path, b)
			}
		}
		return nil
	})
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && !complete) {
		t.Fatal(err)
	}
	if !complete {
		return
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum fuzz.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted || sum.Execs == 0 {
		t.Errorf("summary.json: interrupted %v, execs %d; want true and > 0", sum.Interrupted, sum.Execs)
	}
	lat, err := stats.ReadJSONFile(filepath.Join(out, "latency.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !lat.Interrupted {
		t.Error("latency.json is not marked interrupted")
	}
}

// TestSecondInterruptEndsServer: a second SIGINT, which exits at once,
// ends the server rpcfuzz started with --server-cmd too. The server lives
// in a process group of its own, out of reach of a terminal's Ctrl-C, so
// nothing else would end it.
func TestSecondInterruptEndsServer(t *testing.T) {
	rpcfuzz, rpcload := binaries(t)
	addr := clitest.FreeAddr(t)
	pidFile := filepath.Join(t.TempDir(), "server.pid")
	server := fmt.Sprintf(`sh -c 'echo $$ > %s; exec %s serve --tcp %s'`, pidFile, rpcload, addr)
	ctx, cancel := context.WithTimeout(context.Background(), childLimit)
	defer cancel()
	cmd, _, l := clitest.Start(ctx, t, rpcfuzz, "run", "tcp://"+addr, "--server-cmd", server,
		"--out", filepath.Join(t.TempDir(), "out"), "--duration", "1h", "--seed", "7", "--workers", "2")
	l.Wait(t, childLimit, "a status line with inputs sent", func(s string) bool {
		m := execsLine.FindStringSubmatch(s)
		n := 0
		if m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		return n > 0
	})
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// (Whatever happens, the server does not outlive the test.)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	// (Two signals sent at once may arrive as one.)
	l.Wait(t, childLimit, "the interrupted line", func(s string) bool { return strings.Contains(s, "interrupted;") })
	if err := cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	<-l.Done()
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != cli.ExitInterrupted {
		t.Fatalf("exit %d, want 130\nstderr:\n%s", code, l)
	}
	// SIGKILL is delivered at once, but the exit is the kernel's to
	// finish: a bounded wait for it, polled.
	deadline := time.Now().Add(5 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the server (pid %d) still runs 5 s after rpcfuzz exited on a second interrupt\nstderr:\n%s", pid, l)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processAlive reports whether pid runs (a zombie, dead but not yet
// reaped by its new parent, does not).
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil // (no /proc: a zombie counts as alive)
	}
	// The state follows the command name, which is in parentheses.
	rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}
