package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/testsrv"
)

// TestChildExitEndsRun: a child process that exits without --restart ends
// the run at once instead of leaving it to fail every call it cannot send
// for the rest of --duration (1h here: the test's time limit would kill a
// run that went on). What was still to be sent counts as dropped, not as
// transport errors; the report says why. A child that exits at once
// because rpcload's flags were written after -- gets exit 3 and a message
// with its exit status, its stderr and that advice.
func TestChildExitEndsRun(t *testing.T) {
	bin := binary(t)
	for _, tc := range []struct {
		name     string
		load     []string
		child    []string
		code     int
		stderr   []string // what rpcload's stderr must say
		answered bool     // some requests were answered before the exit
	}{
		{"rpcload flags after --", []string{"--rate", "100"}, []string{"serve", "--stdio", "--rate", "100"}, exitUnreachable,
			[]string{"exited within its first second: exit status 2", "unknown flag: --rate", "rpcload's own flags go before --"}, false},
		{"exit under open-loop load", []string{"--rate", "200"}, []string{"serve", "--stdio", "--fault", "close=0.05"}, exitFindings, nil, true},
		{"exit under closed-loop load", []string{"--concurrency", "8"}, []string{"serve", "--stdio", "--fault", "close=0.05"}, exitFindings, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			args := append([]string{"run", "--method", "echo", "--params", "[1]", "--duration", "1h", "-q", "-o", out}, tc.load...)
			args = append(append(args, "--", bin), tc.child...)
			c := runBinary(t, childLimit, args...)
			if c.code != tc.code {
				t.Fatalf("want exit %d; %v", tc.code, c)
			}
			mustContain(t, "stderr", c.stderr, tc.stderr...)
			mustContain(t, "report", c.stdout, "WARNING: the child process exited and --restart was not given: sending stopped at")
			res := readResult(t, out)
			q := res.Requests
			if !strings.Contains(res.EndedEarly, "--restart was not given") {
				t.Errorf("ended_early %q", res.EndedEarly)
			}
			if res.DurationS > 60 {
				t.Errorf("sending went on for %gs after the child exited", res.DurationS)
			}
			// Only the requests in flight when the child exited fail as
			// transport errors: at most the in-flight peak.
			if q.TransportErrors > uint64(res.InFlightMax) {
				t.Errorf("transport errors %d, in flight at most %d: calls not sent were counted as transport errors", q.TransportErrors, res.InFlightMax)
			}
			if tc.answered != (q.Answered > 0) {
				t.Errorf("answered %d", q.Answered)
			}
		})
	}
}

// TestHTTP2AgainstHTTP1: --http2 against a server that speaks HTTP/1.1
// only fails at connect with exit 3 and the reason, instead of running
// its whole --duration (1h here) on transport errors; against one that
// speaks h2c it runs.
func TestHTTP2AgainstHTTP1(t *testing.T) {
	srv, err := testsrv.New(testsrv.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h1 := httptest.NewServer(srv.Handler()) // HTTP/1.1 only
	t.Cleanup(h1.Close)
	out := filepath.Join(t.TempDir(), "r.json")
	c := runBinary(t, childLimit, "run", h1.URL+"/", "--http2", "--method", "echo", "--duration", "1h", "-q", "-o", out)
	if c.code != exitUnreachable {
		t.Fatalf("want exit 3; %v", c)
	}
	mustContain(t, "stderr", c.stderr, "cannot run against "+h1.URL+"/: --http2: the server does not speak HTTP/2",
		`answered the HTTP/2 connection preface with "HTTP/1.1 `)
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a run that could not start wrote %s (%v)", out, err)
	}
	_, h2URL, _ := startServer(t, testsrv.Config{})
	if c := runBinary(t, childLimit, "run", h2URL, "--http2", "--method", "echo", "--duration", "200ms", "-q"); c.code != exitOK {
		t.Errorf("--http2 against an h2c server: want exit 0; %v", c)
	}
}

// TestErrorReplies: a run every reply of which is an error (a misspelled
// method) warns with the method, the code and the message, and passes
// unless --max-error-rate (short for --threshold 'rpc_error_rate<=R')
// says otherwise.
func TestErrorReplies(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	warning := `WARNING: every reply to echoo was an error: -32601 "Method not found" (`
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		report []string
	}{
		{"misspelled method", []string{"--method", "echoo"}, exitOK, []string{warning}},
		{"misspelled, --max-error-rate 1%", []string{"--method", "echoo", "--max-error-rate", "1%"}, exitFindings,
			[]string{warning, "FAIL rpc_error_rate<=1%: rpc_error_rate was 100%"}},
		{"right method, --max-error-rate 0.5", []string{"--method", "echo", "--max-error-rate", "0.5"}, exitOK,
			[]string{"PASS rpc_error_rate<=0.5: rpc_error_rate was 0%"}},
		{"--max-error-rate in a duration", []string{"--method", "echo", "--max-error-rate", "5ms"}, exitUsage, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", tcpURL, "--rate", "200", "--duration", "200ms", "-q"}, tc.args...)
			c := runBinary(t, childLimit, args...)
			if c.code != tc.code {
				t.Fatalf("want exit %d; %v", tc.code, c)
			}
			mustContain(t, "report", c.stdout, tc.report...)
			if tc.code == exitUsage {
				mustContain(t, "stderr", c.stderr, "--max-error-rate 5ms")
			}
			if tc.code == exitOK && strings.Contains(tc.name, "right") && strings.Contains(c.stdout, "every reply to") {
				t.Errorf("a warning about error replies in a run without any:\n%s", c.stdout)
			}
		})
	}
}

// TestJSONRPCProfileAgainstMCP: the jsonrpc profile against a server that
// speaks MCP's Streamable HTTP (it answers in SSE, or refuses a client
// that does not accept SSE with 406) stops at the first reply with exit 3
// and the advice to use --profile mcp, rather than counting every body as
// invalid_json (or every request as a transport error) for the whole run.
func TestJSONRPCProfileAgainstMCP(t *testing.T) {
	sse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	}))
	t.Cleanup(sse.Close)
	mcp, err := testsrv.New(testsrv.Config{Profile: testsrv.ProfileMCP})
	if err != nil {
		t.Fatal(err)
	}
	refuses := httptest.NewServer(mcp.Handler())
	t.Cleanup(refuses.Close)
	for _, tc := range []struct {
		name, url, says string
	}{
		{"answers in SSE", sse.URL + "/", "the server answers with Content-Type text/event-stream"},
		{"406 without SSE in Accept", refuses.URL + testsrv.MCPPath, "the server refuses the request with 406 Not Acceptable unless it accepts text/event-stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			c := runBinary(t, childLimit, "run", tc.url, "--method", "tools/list", "--rate", "100", "--duration", "1h", "-q", "-o", out)
			if c.code != exitUnreachable {
				t.Fatalf("want exit 3; %v", c)
			}
			mustContain(t, "stderr", c.stderr, "cannot run against "+tc.url+": "+tc.says, "the jsonrpc profile reads JSON bodies only: use --profile mcp")
			res := readResult(t, out)
			if len(res.Violations) > 0 || res.EndedEarly == "" {
				t.Errorf("violations %v, ended_early %q: want none, and why", res.Violations, res.EndedEarly)
			}
		})
	}
}
