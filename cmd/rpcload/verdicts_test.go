package main

import (
	"path/filepath"
	"strings"
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

// TestOneFaultOneCount runs the binary against the reference server with
// one fault planted in batches (issue 15, items 2 and 3): each planted
// fault is counted once, under its one rule, and nothing else is.
func TestOneFaultOneCount(t *testing.T) {
	tests := []struct {
		fault  testsrv.Fault
		scheme string
		args   []string
		rule   string
		each   uint64 // replies a planted fault breaks: duplicate sends the whole array twice
	}{
		{testsrv.FaultDuplicate, "tcp", nil, "duplicate_reply", 4},
		{testsrv.FaultUnknownID, "tcp", nil, "unknown_id", 1},
		{testsrv.FaultNullID, "http", nil, "unexpected_null_id", 1},
		{testsrv.FaultNotifyReply, "tcp", []string{"--notify-every", "4"}, "reply_to_notification", 1},
		{testsrv.FaultNotifyReplyNoID, "ws", []string{"--notify-every", "4"}, "reply_to_notification", 1},
		{testsrv.FaultNotifyReplyNoID, "http", []string{"--notify-every", "4"}, "reply_to_notification", 1},
	}
	for _, tc := range tests {
		t.Run(string(tc.fault)+"/"+tc.scheme, func(t *testing.T) {
			srv, httpURL, tcpURL := startServer(t, testsrv.Config{Faults: []testsrv.FaultSpec{{Fault: tc.fault, Prob: 0.2}}, Seed: 5})
			url := map[string]string{"tcp": tcpURL, "http": httpURL, "ws": "ws" + strings.TrimSuffix(strings.TrimPrefix(httpURL, "http"), "/") + "/ws"}[tc.scheme]
			out := filepath.Join(t.TempDir(), "result.json")
			args := append([]string{"run", url, "--method", "echo", "--params", "[1]", "--batch", "4", "--rate", "200",
				"--duration", "500ms", "--allow-violations", "-q", "-o", out}, tc.args...)
			c := runBinary(t, childLimit, args...)
			res := readResult(t, out)
			// The fault may hit the reply to the [] probe too, which is no request.
			n := srv.Injected()[tc.fault] - res.Violations["empty_batch_reply_wrong"]
			q := res.Requests
			if c.code != exitOK || n == 0 || res.Violations[tc.rule] != tc.each*n || len(res.Violations) > 2 || len(res.Violations) == 2 && res.Violations["empty_batch_reply_wrong"] == 0 {
				t.Fatalf("%d planted; violations %v; %v", n, res.Violations, c)
			}
			if q.Sent != q.Answered+q.Timeouts+q.Leaked+q.TransportErrors || q.Timeouts+q.Leaked+q.TransportErrors != 0 {
				t.Errorf("requests %+v: each request one fate, none lost", q)
			}
		})
	}
}
