package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/cmd/internal/clitest"
	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// TestTLSFlags fuzzes the reference server behind TLS with a certificate
// of its own (not in the system's roots): verification is on by default,
// --ca-cert trusts it, --insecure skips it and summary.json says so, and
// the TLS flags are refused for a target without TLS.
func TestTLSFlags(t *testing.T) {
	srv, err := testsrv.New(testsrv.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tsURL, ca := clitest.TLSServer(t, srv.Handler())
	const warning = "TLS certificate verification was off (--insecure)"
	for _, tc := range []struct {
		name     string
		target   string
		flags    []string
		code     int
		want     string // in stdout + stderr
		insecure bool   // summary.json's insecure, when the run was made
	}{
		{"verified by default", tsURL, nil, cli.ExitUnreachable, "certificate signed by unknown authority", false},
		{"--ca-cert trusts the server's CA", tsURL, []string{"--ca-cert", ca}, cli.ExitOK, "findings: none", false},
		{"--insecure skips verification and says so", tsURL, []string{"--insecure"}, cli.ExitOK, warning, true},
		{"--ca-cert with a file that is no certificate", tsURL, []string{"--ca-cert", "/dev/null"}, cli.ExitUsage, "--ca-cert /dev/null: no PEM certificate", false},
		{"--client-key without --client-cert", tsURL, []string{"--client-key", ca}, cli.ExitUsage, "--client-key needs --client-cert", false},
		{"--insecure on plain http", "http://127.0.0.1:1/", []string{"--insecure"}, cli.ExitUsage, "--insecure applies to https:// and wss:// targets only", false},
		{"--ca-cert on tcp", "tcp://127.0.0.1:1", []string{"--ca-cert", ca}, cli.ExitUsage, "--ca-cert applies to https:// and wss:// targets only", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"run", tc.target, "--out", out, "--execs", "50", "--seed", "1", "--workers", "1", "--canary-every", "0", "-q"}, tc.flags...)
			code, stdout, stderr := run(args...)
			if all := stdout + stderr; code != tc.code || !strings.Contains(all, tc.want) {
				t.Fatalf("exit %d, want %d; output should contain %q:\n%s", code, tc.code, tc.want, all)
			}
			if code != cli.ExitOK {
				return
			}
			data, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var s fuzz.Summary
			if err := json.Unmarshal(data, &s); err != nil {
				t.Fatal(err)
			}
			if s.Insecure != tc.insecure || strings.Contains(strings.Join(s.Warnings, "\n"), warning) != tc.insecure {
				t.Errorf("summary insecure %v, warnings %q; want insecure %v", s.Insecure, s.Warnings, tc.insecure)
			}
		})
	}
}

// TestRunConfigSizes: --max-reply reaches the engine as given, its default
// is the engine's, and the default --workers is left to the engine (8; 1
// for a child process).
func TestRunConfigSizes(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		maxReply int
		workers  int
	}{
		{[]string{"tcp://127.0.0.1:1", "--out", "o"}, fuzz.DefaultMaxReply, 0},
		{[]string{"tcp://127.0.0.1:1", "--out", "o", "--max-reply", "64KiB"}, 64 << 10, 0},
		{[]string{"tcp://127.0.0.1:1", "--out", "o", "--max-reply", "1000000", "--workers", "2"}, 1_000_000, 2},
	} {
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f runFlags
		f.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := f.config(fs)
		if err != nil || cfg.MaxReply != tc.maxReply || cfg.Workers != tc.workers {
			t.Errorf("%q: max reply %d, workers %d (%v); want %d, %d", tc.args, cfg.MaxReply, cfg.Workers, err, tc.maxReply, tc.workers)
		}
	}
}
