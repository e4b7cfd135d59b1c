package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/fuzztarget"
	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/transport"
)

// serve starts fuzztarget with bugs on 127.0.0.1 and returns its tcp:// URL.
func serve(t *testing.T, bugs fuzztarget.Bug) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l, err := fuzztarget.New(bugs).Listen(ctx, fuzztarget.Addrs{TCP: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); l.Wait() })
	return "tcp://" + l.TCP
}

func refServer(t *testing.T) string {
	t.Helper()
	srv, err := testsrv.New(testsrv.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	bound, err := srv.Listen(ctx, testsrv.Addrs{HTTP: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); srv.Close() })
	return "http://" + bound.HTTP
}

func run(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := realMain(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{nil, "usage:"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run"}, "run needs a TARGET or a command after --"},
		{[]string{"run", "tcp://127.0.0.1:1"}, "--out DIR is required"},
		{[]string{"run", "127.0.0.1:9", "--out", dir}, "has no scheme"},
		{[]string{"run", "ftp://x:1", "--out", dir}, `unsupported scheme "ftp"`},
		{[]string{"run", "tcp://a:1", "tcp://b:2", "--out", dir}, "run takes one TARGET (got 2"},
		// A command after -- given with a TARGET is its server (--server-cmd).
		{[]string{"run", "tcp://a:1", "--out", dir, "--server-cmd", "srv", "--", "srv"}, "give the server command as --server-cmd or after --, not both"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--server-cmd", "srv 'open"}, "--server-cmd: unterminated single quote"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--server-start", "5s"}, "--server-start applies to a server command"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--server-start", "0s", "--", "srv"}, "must be positive (got 0s)"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--framing", "content-length", "--", "srv"}, "--framing applies to a child process"},
		{[]string{"run", "tcp://a:1", "tcp://b:1", "--out", dir, "--", "srv"}, "run takes one TARGET (got 2"},
		{[]string{"run", "--out", dir, "--"}, "no command after --"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--max-frame", "lots"}, `--max-frame: "lots" is not a positive size`},
		{[]string{"run", "tcp://a:1", "--out", dir, "--max-frame", "10"}, "--max-frame must be at least 64 bytes"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--seed", "-4"}, `--seed: "-4" is not a non-negative integer`},
		{[]string{"run", "tcp://a:1", "--out", dir, "--workers", "0"}, "--workers must be between 1 and 1024"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--max-rate", "-5"}, "--max-rate must be a number of inputs per second, 0 or more (got -5)"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--max-rate", "NaN"}, "--max-rate must be a number"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--max-reply", "lots"}, `--max-reply: "lots" is not a positive size`},
		{[]string{"run", "tcp://a:1", "--out", dir, "--max-reply", "32GiB"}, `--max-reply: "32GiB" is too large`},
		{[]string{"run", "tcp://a:1", "--out", dir, "--slow-factor", "0.5"}, "--slow-factor must be at least 1"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--canary-every", "-1"}, "--canary-every must not be negative"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--duration", "0s"}, "--duration 0 needs --execs"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--profile", "soap"}, "--profile"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--framing", "content-length"}, "--framing applies to a child process"},
		{[]string{"run", "tcp://a:1", "--out", dir, "-H", "X-A: 1"}, "--header applies to http(s) and ws(s) targets only"},
		{[]string{"run", "http://a:1", "--out", dir, "-H", "nocolon"}, "--header: header 1 has no ':'"},
		// The header rules are rpcload's (RFC 9110, what net/http sends);
		// rpcfuzz once took these and then failed every request.
		{[]string{"run", "http://a:1", "--out", dir, "-H", "X-A: 1", "-H", "X(A): v"}, "--header: header 2: name \"X(A)\" has characters not allowed"},
		{[]string{"run", "http://a:1", "--out", dir, "-H", "X-A: a\x1bb"}, `--header: header "X-A": value contains a control character`},
		{[]string{"run", "http://a:1", "--out", dir, "-H", "X-A: a\x7f"}, `--header: header "X-A": value contains a control character`},
		{[]string{"run", "http://a:1", "--out", dir, "--secret-header", "X(A)"}, `--secret-header "X(A)" is not a header name`},
		{[]string{"replay", dir, "-H", "X/A: v"}, "--header: header 1: name \"X/A\" has characters not allowed"},
		{[]string{"run", "--out", dir, "--framing", "xml", "--", "srv"}, "--framing must be newline or content-length"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--baseline", filepath.Join(dir, "nope")}, "--baseline:"},
		{[]string{"run", "tcp://a:1", "--out", dir, "--bogus"}, "unknown flag: --bogus"},
		{[]string{"replay"}, "replay takes one FINDING_DIR (got 0)"},
		{[]string{"replay", dir}, "is not a finding directory"},
		{[]string{"replay", dir, "--times", "0"}, "--times must be at least 1"},
		{[]string{"minimize", dir, "--budget", "0"}, "--budget must be at least 1"},
		{[]string{"export-go", dir}, "--findings DIR is required"},
		{[]string{"export-go", "--findings", dir}, "export-go takes one OUT_DIR (got 0)"},
		{[]string{"import-go", dir}, "--out DIR is required"},
	} {
		code, _, stderr := run(tc.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("rpcfuzz %q: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"run", "--help"}, {"replay", "-h"}, {"version"}} {
		if code, out, stderr := run(args...); code != cli.ExitOK || out+stderr == "" {
			t.Errorf("rpcfuzz %q: exit %d", args, code)
		}
	}
}

// TestRunExitCodes runs the whole CLI: a planted bug is exit 1 and a
// finding that replays (exit 1), minimizes, exports and imports; the clean
// reference server is exit 0; nothing listening is exit 3; an interrupted
// run is 130 with its summary written.
func TestRunExitCodes(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := run("run", serve(t, fuzztarget.LoneSurrogate), "--out", out, "--execs", "2000", "--seed", "1",
		"--workers", "1", "--stop-after", "1", "--minimize-budget", "100", "-q")
	if code != cli.ExitFindings {
		t.Fatalf("planted bug: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "findings: 1 (crash 1)") || !strings.Contains(stderr, "with seed 1 (repeat with --seed 1)") {
		t.Errorf("stdout %q\nstderr %q", stdout, stderr)
	}
	dirs, err := fuzz.FindingDirs(out)
	if err != nil || len(dirs) != 1 {
		t.Fatalf("findings %q (%v)", dirs, err)
	}
	code, stdout, _ = run("replay", dirs[0])
	if code != cli.ExitFindings || !strings.Contains(stdout, "REPRODUCED (3/3) (crash)") {
		t.Errorf("replay: exit %d, %q", code, stdout)
	}
	code, stdout, stderr = run("minimize", dirs[0], "--budget", "50")
	if code != cli.ExitOK || !strings.Contains(stdout, " bytes in ") {
		t.Errorf("minimize: exit %d, %q %q", code, stdout, stderr)
	}
	clean := serve(t, 0)
	code, stdout, _ = run("replay", dirs[0], "--target", clean, "--times", "2")
	if code != cli.ExitOK || !strings.Contains(stdout, "NOT REPRODUCED (0/2)") {
		t.Errorf("replay against a fixed server: exit %d, %q", code, stdout)
	}
	code, stdout, _ = run("minimize", dirs[0], "--target", clean)
	if code != cli.ExitFindings || !strings.Contains(stdout, "NOT REPRODUCED") {
		t.Errorf("minimize against a fixed server: exit %d, %q", code, stdout)
	}
	corpus := filepath.Join(t.TempDir(), "testdata", "fuzz", "FuzzServer")
	code, stdout, stderr = run("export-go", corpus, "--findings", out)
	if code != cli.ExitOK || !strings.Contains(stdout, "go test -run '^FuzzServer$/^crash-") {
		t.Errorf("export-go: exit %d, %q %q", code, stdout, stderr)
	}
	code, stdout, stderr = run("import-go", corpus, "--out", t.TempDir(), "--target", clean)
	if code != cli.ExitOK || !strings.Contains(stdout, "-> ") {
		t.Errorf("import-go: exit %d, %q %q", code, stdout, stderr)
	}

	code, stdout, stderr = run("run", refServer(t), "--out", t.TempDir(), "--execs", "500", "--seed", "2", "-q", "--timeout", "2s")
	if code != cli.ExitOK || !strings.Contains(stdout, "findings: none") {
		t.Errorf("reference server: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = run("run", "tcp://127.0.0.1:1", "--out", t.TempDir(), "--execs", "10", "-q")
	if code != cli.ExitUnreachable || !strings.Contains(stderr, "target unreachable") {
		t.Errorf("unreachable: exit %d, %q", code, stderr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	dir := t.TempDir()
	var sout, serr bytes.Buffer
	code, err = runCmd(ctx, []string{refServer(t), "--out", dir, "--duration", "1m", "-q"}, &sout, &serr)
	if code != cli.ExitInterrupted || err != nil || !strings.Contains(sout.String(), "interrupted") {
		t.Errorf("interrupted: exit %d, %v, %q", code, err, sout.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		t.Error(err)
	}
}

func TestStatusLine(t *testing.T) {
	var b bytes.Buffer
	s := newStatusLine(&b, time.Minute)
	s.update(fuzz.Status{Elapsed: 3 * time.Second, Execs: 1200, ExecsPerS: 400, Tuples: 9, Corpus: 30, Findings: 1, Restarts: 2})
	s.Write([]byte("rpcfuzz: failure crash-0123456789\n"))
	s.done()
	want := "3s/60s  execs 1200  400/s  tuples 9  corpus 30  findings 1  restarts 2\nrpcfuzz: failure crash-0123456789\n"
	if b.String() != want {
		t.Errorf("status %q, want %q", b.String(), want)
	}
}

// TestChildFramingFollowsProfile: a child after -- speaks Content-Length
// with --profile lsp unless --framing says otherwise (gopls on newline
// framing never answered initialize), as rpcload picks it.
func TestChildFramingFollowsProfile(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want transport.Framing
	}{
		{[]string{"--", "server"}, transport.Newline},
		{[]string{"--profile", "lsp", "--", "server"}, transport.ContentLength},
		{[]string{"--profile", "lsp", "--framing", "newline", "--", "server"}, transport.Newline},
		{[]string{"--framing", "content-length", "--", "server"}, transport.ContentLength},
	} {
		var tf targetFlags
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		tf.register(fs, time.Second)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		tg, err := tf.target(fs, nil, "")
		if err != nil || tg.Framing != tc.want {
			t.Errorf("%q: framing %v, error %v; want %v", tc.args, tg.Framing, err, tc.want)
		}
	}
}
