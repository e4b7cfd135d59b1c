package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/fuzztarget"
)

// serverEnv makes this test binary an HTTP server: "ADDR/BUGS" serves
// fuzztarget with those bugs on ADDR until a planted crash ends the
// process (ExitOnCrash). An init function, so the package's tests need no
// TestMain.
const serverEnv = "RPCFUZZ_CLI_TEST_SERVER"

func init() {
	if spec := os.Getenv(serverEnv); spec != "" {
		os.Exit(serveUntilCrash(spec))
	}
}

func serveUntilCrash(spec string) int {
	addr, list, _ := strings.Cut(spec, "/")
	bugs, err := fuzztarget.ParseBugs(list)
	if err == nil {
		var l *fuzztarget.Listeners
		if l, err = fuzztarget.New(bugs).ExitOnCrash().Listen(context.Background(), fuzztarget.Addrs{HTTP: addr}, os.Stderr); err == nil {
			l.Wait()
			return 0
		}
	}
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// TestRunServerCommand: "rpcfuzz run URL -- COMMAND" starts the server,
// restarts it after the crash it finds, and writes a minimized finding
// that replay and minimize reproduce against a server they start again.
func TestRunServerCommand(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv(serverEnv, addr+"/"+fuzztarget.NullBatch.String())
	out := t.TempDir()
	code, stdout, stderr := run("run", "http://"+addr+"/", "--out", out, "--execs", "20000", "--seed", "1", "--workers", "2",
		"--stop-after", "1", "--minimize-budget", "300", "-q", "--", os.Args[0], "-test.run=^$")
	if code != cli.ExitFindings || !strings.Contains(stdout, "findings: 1 (crash 1)") ||
		!strings.Contains(stderr, "rpcfuzz: starting the server: "+os.Args[0]+" -test.run=^$ (again after each crash)") {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	dirs, err := fuzz.FindingDirs(out)
	if err != nil || len(dirs) != 1 {
		t.Fatalf("findings %q (%v)", dirs, err)
	}
	if in, err := os.ReadFile(filepath.Join(dirs[0], "input.bin")); err != nil || len(in) > 16 {
		t.Errorf("input.bin %q (%v): want at most 16 bytes", in, err)
	}
	code, stdout, stderr = run("replay", dirs[0])
	if code != cli.ExitFindings || !strings.Contains(stdout, "REPRODUCED (3/3) (crash)") ||
		!strings.Contains(stderr, "starting the server (a fresh process for each run): "+os.Args[0]) {
		t.Errorf("replay: exit %d, %q %q", code, stdout, stderr)
	}
	code, stdout, stderr = run("minimize", dirs[0], "--budget", "50", "--server-cmd", "'"+os.Args[0]+"' -test.run=^$")
	if code != cli.ExitOK || !strings.Contains(stdout, " bytes in ") || !strings.Contains(stderr, "starting the server") {
		t.Errorf("minimize: exit %d, %q %q", code, stdout, stderr)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("a server process outlived the commands that started it")
	}
}
