//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/cmd/internal/clitest"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// TestInterruptTwice: a second SIGINT while the run drains after the first
// exits at once with 130. Every file the run writes is then complete or
// absent: the result and the HTML page parse if they exist, the interval
// files hold only whole lines, and no temporary file is left.
func TestInterruptTwice(t *testing.T) {
	bin := binary(t)
	// Nothing is ever answered, so the run is still draining when the
	// second signal comes.
	_, _, tcpURL := startServer(t, testsrv.Config{Faults: []testsrv.FaultSpec{{Fault: testsrv.FaultDrop, Prob: 1}}})
	for _, second := range []os.Signal{os.Interrupt} {
		t.Run(second.String(), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "result.json")
			ctx, cancel := context.WithTimeout(context.Background(), childLimit)
			defer cancel()
			cmd, stdout, l := clitest.Start(ctx, t, bin, "run", tcpURL, "--method", "echo", "--params", "[1]", "--rate", "200",
				"--duration", "1h", "--interval", "100ms", "--timeout", "30s", "-o", out, "--soak", "--html", filepath.Join(dir, "r.html"))
			l.Wait(t, childLimit, "a progress line showing requests sent", sendingProgress)
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			l.Wait(t, childLimit, "the interrupted line", func(s string) bool { return strings.Contains(s, "interrupted; draining") })
			if err := cmd.Process.Signal(second); err != nil && !errors.Is(err, os.ErrProcessDone) {
				t.Fatal(err)
			}
			<-l.Done()
			err := cmd.Wait()
			var ee *exec.ExitError
			if ctx.Err() != nil || (err != nil && !errors.As(err, &ee)) {
				t.Fatalf("rpcload did not exit by itself (%v)\nstderr:\n%s", err, l)
			}
			if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
				t.Fatalf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, stdout, l)
			}
			checkFilesWhole(t, dir)
		})
	}
}

// checkFilesWhole fails on a temporary file, a JSON file that does not
// parse, an HTML page without its end, or an interval file whose last
// line is torn.
func checkFilesWhole(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", path)
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(path, ".jsonl"):
			for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
				if len(line) > 0 && !json.Valid(line) {
					t.Errorf("%s line %d is torn: %q", path, i+1, line)
				}
			}
			if len(b) > 0 && b[len(b)-1] != '\n' {
				t.Errorf("%s ends in half a line", path)
			}
		case strings.HasSuffix(path, ".json"):
			if !json.Valid(b) {
				t.Errorf("%s is not complete JSON", path)
			}
		case strings.HasSuffix(path, ".html"):
			if !bytes.Contains(b, []byte("</html>")) {
				t.Errorf("%s has no end", path)
			}
		case strings.HasSuffix(path, ".hlog"):
			if len(b) > 0 && b[len(b)-1] != '\n' {
				t.Errorf("%s ends in half a line", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
