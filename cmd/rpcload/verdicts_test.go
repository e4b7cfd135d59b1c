package main

import (
	"path/filepath"
	"testing"

	"github.com/rpcload/rpcload/internal/testsrv"
)

// TestBatchEchoScenario runs issue 15's scenario (item 1) through the
// binary: a batch call that expects its params echoed, against the
// reference server, whose echo is correct, breaks no expectation.
func TestBatchEchoScenario(t *testing.T) {
	_, httpURL, tcpURL := startServer(t, testsrv.Config{})
	for _, url := range []string{tcpURL, httpURL} {
		t.Run(url[:4], func(t *testing.T) {
			path := writeScenario(t, `version: 1
target: `+url+`
load: {rate: 100, duration: 2s}
mix:
  - method: echo
    batch: 2
    params: [{$int: [0, 1000000000]}]
    expect: {result_equals_params: true}
`)
			out := filepath.Join(t.TempDir(), "result.json")
			c := runBinary(t, childLimit, "run", "-f", path, "--duration", "500ms", "-q", "-o", out)
			res := readResult(t, out)
			if c.code != exitOK || len(res.Violations) != 0 || res.Requests.OK != 100 {
				t.Fatalf("requests %+v violations %v; %v", res.Requests, res.Violations, c)
			}
		})
	}
}
