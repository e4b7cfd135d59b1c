package main

import (
	"regexp"
	"testing"

	"github.com/rpcload/rpcload/internal/testsrv"
)

// TestBatchRatesApart: with --batch, the report, the status line and the
// result file keep batches and requests apart: the schedule's rate counts
// batches, the requests they carried have a rate of their own; and a closed
// loop whose concurrency is not a multiple of the batch fills it in whole
// batches over the connections and says why the rest stays idle.
func TestBatchRatesApart(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantOut    []string
		wantOutRE  string
		wantStatus string
	}{
		{"open loop", []string{"--method", "echo", "--rate", "100", "--duration", "500ms", "--batch", "5"},
			[]string{"requests    sent 250 in 50 messages, 50 of them batches\n"},
			`rate        target 100\.0 batches/s, achieved [0-9.]+ batches/s \([0-9.]+%\), [0-9.]+ req/s\n`,
			`sent [0-9]+ req/s in [0-9]+ batches/s \(target 100/s\)`},
		{"closed loop", []string{"--method", "sleep", "--params", "[500]", "--concurrency", "32", "--batch", "5", "--duration", "200ms"},
			[]string{"in flight   max 30\n", "requests    sent 30 in 6 messages, 6 of them batches\n",
				"WARNING: --concurrency 32 is not a multiple of --batch 5: a batch is sent only when 5 more requests may be in flight, so at most 30 requests (6 batches) were in flight at once\n"},
			`rate        achieved [0-9.]+ batches/s, [0-9.]+ req/s\n`,
			`sent [0-9]+ req/s in [0-9]+ batches/s  answered`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, tcpURL := startServer(t, testsrv.Config{})
			args := append([]string{"run", tcpURL, "--interval", "100ms"}, tc.args...)
			c := runBinary(t, childLimit, args...)
			if c.code != exitOK {
				t.Fatalf("want exit 0; %v", c)
			}
			mustContain(t, "report", c.stdout, tc.wantOut...)
			if !regexp.MustCompile(tc.wantOutRE).MatchString(c.stdout) {
				t.Errorf("report lacks %s\n%s", tc.wantOutRE, c.stdout)
			}
			if !regexp.MustCompile(tc.wantStatus).MatchString(c.stderr) {
				t.Errorf("status lines lack %s\n%s", tc.wantStatus, c.stderr)
			}
		})
	}
}
