package clitest

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"
)

// Start starts bin with args under ctx, its stdout going into a buffer
// (read it after cmd.Wait) and its stderr read as Lines; the test fails
// if it cannot start. Wait gives the child's pipes a second after it
// exits.
func Start(ctx context.Context, t testing.TB, bin string, args ...string) (cmd *exec.Cmd, stdout *bytes.Buffer, stderr *Lines) {
	t.Helper()
	cmd = exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = time.Second
	stdout = &bytes.Buffer{}
	cmd.Stdout = stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdout, Read(pipe)
}
