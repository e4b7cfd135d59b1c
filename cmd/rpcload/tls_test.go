package main

import (
	"strings"
	"testing"

	"github.com/rpcload/rpcload/cmd/internal/clitest"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// TestTLSFlags runs the binary against the reference server behind TLS
// with a certificate of its own (not in the system's roots): verification
// is on by default, --ca-cert trusts it, --insecure skips it with a warning
// in the report, and the TLS flags are refused for a target without TLS.
func TestTLSFlags(t *testing.T) {
	srv, err := testsrv.New(testsrv.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tsURL, ca := clitest.TLSServer(t, srv.Handler())
	load := []string{"--method", "echo", "--params", "[1]", "--rate", "50", "--duration", "200ms", "--timeout", "2s", "-q"}
	const warning = "the server's TLS certificate was not verified"
	for _, tc := range []struct {
		name     string
		target   string
		flags    []string
		code     int
		want     string // in stdout + stderr
		unwanted string
	}{
		{"verified by default", tsURL, nil, exitUnreachable, "certificate signed by unknown authority", ""},
		{"--ca-cert trusts the server's CA", tsURL, []string{"--ca-cert", ca}, exitOK, "ok 10", warning},
		{"--insecure skips verification and says so", tsURL, []string{"--insecure"}, exitOK, warning, ""},
		{"--ca-cert with a file that is no certificate", tsURL, []string{"--ca-cert", "/dev/null"}, exitUsage, "--ca-cert /dev/null: no PEM certificate", ""},
		{"--insecure on plain http", "http://127.0.0.1:1/", []string{"--insecure"}, exitUsage, "--insecure applies to https:// and wss:// targets only", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := runBinary(t, childLimit, append(append([]string{"run", tc.target}, load...), tc.flags...)...)
			out := c.stdout + c.stderr
			if c.code != tc.code || !strings.Contains(out, tc.want) || (tc.unwanted != "" && strings.Contains(out, tc.unwanted)) {
				t.Errorf("exit %d, want %d; output should contain %q (and not %q):\n%s", c.code, tc.code, tc.want, tc.unwanted, out)
			}
		})
	}
}
