package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/fuzztarget"
)

// stdioEnv makes this test binary fuzztarget on stdin and stdout with the
// bugs it names: an MCP server as a child process, which a planted crash
// ends with status 2 and the panic's message, as a Go server's panic does.
const stdioEnv = "RPCFUZZ_CLI_TEST_STDIO"

func init() {
	if list, ok := os.LookupEnv(stdioEnv); ok {
		os.Exit(serveStdio(list))
	}
}

func serveStdio(list string) int {
	bugs, err := fuzztarget.ParseBugs(list)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	err = fuzztarget.New(bugs).ServeStream(context.Background(), os.Stdin, os.Stdout)
	if c, ok := err.(fuzztarget.Crash); ok {
		fmt.Fprintf(os.Stderr, "panic: %v\n", c)
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// compact is p without insignificant space (summary.json is indented).
func compact(t *testing.T, p json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, p); err != nil {
		t.Fatalf("params %s: %v", p, err)
	}
	return b.String()
}

// readSummary reads a run's summary.json.
func readSummary(t *testing.T, dir string) fuzz.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s fuzz.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAPIFuzzMCP is issue 18's MCP criterion: against an MCP server whose
// tool crashes on one argument shape, "rpcfuzz run --profile mcp --
// SERVER" finds the crash within 60 s, minimized to the arguments alone,
// and replay reproduces it. The tools come from the server's tools/list
// (no flag needed with --profile mcp).
func TestAPIFuzzMCP(t *testing.T) {
	for _, tc := range []struct {
		bug    string
		method string
		check  func(params string) bool
	}{
		{"empty_string", "tool search", func(p string) bool { return p == `{"query":""}` }},
		{"long_array", "tool sum", func(p string) bool {
			var args struct{ Values []json.Number }
			return json.Unmarshal([]byte(p), &args) == nil && len(args.Values) == 1001 && strings.HasPrefix(p, `{"values":[`)
		}},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			t.Setenv(stdioEnv, tc.bug)
			out := t.TempDir()
			code, stdout, stderr := run("run", "--profile", "mcp", "--out", out, "--duration", "60s", "--stop-after", "1", "--slow-min", "1h", "-q",
				"--seed", "1", "--", os.Args[0], "-test.run=^$")
			if code != 1 {
				t.Fatalf("exit %d, want 1 (a failure)\n%s\n%s", code, stdout, stderr)
			}
			s := readSummary(t, out)
			if len(s.Findings) != 1 {
				t.Fatalf("findings %+v", s.Findings)
			}
			f := s.Findings[0]
			if p := compact(t, f.Params); f.Key != "crash|stderr:panic: fuzztarget: planted bug "+tc.bug || f.Method != tc.method || !tc.check(p) || f.TimeToFindS > 60 {
				t.Errorf("finding %s key %q method %q params %.100s after %.1fs", f.ID, f.Key, f.Method, p, f.TimeToFindS)
			}
			if !strings.Contains(stdout, "calls "+tc.method+" with ") {
				t.Errorf("the summary does not name the call:\n%s", stdout)
			}
			if s.API == nil || len(s.API.Methods) != 2 {
				t.Errorf("API coverage %+v", s.API)
			}
			code, stdout, _ = run("replay", f.Dir)
			if code != 1 || !strings.Contains(stdout, "REPRODUCED (3/3)") {
				t.Errorf("replay: exit %d\n%s", code, stdout)
			}
		})
	}
}

// TestAPIFuzzOpenRPC is issue 18's OpenRPC criterion: against a server
// whose method panics on a negative integer, rpcfuzz finds it within 60 s
// from the server's own rpc.discover (--discover) and from a document
// given as a file (--openrpc), minimized to the params alone.
func TestAPIFuzzOpenRPC(t *testing.T) {
	url := serve(t, fuzztarget.NegativeInt)
	doc := filepath.Join(t.TempDir(), "openrpc.json")
	writeDiscoverDoc(t, doc)
	for _, how := range [][]string{{"--discover"}, {"--openrpc", doc}} {
		t.Run(how[0], func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"run", url, "--out", out, "--duration", "60s", "--stop-after", "1", "--slow-min", "1h", "-q", "--seed", "1"}, how...)
			code, stdout, stderr := run(args...)
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
			}
			s := readSummary(t, out)
			var crash *fuzz.Finding
			for i := range s.Findings {
				if s.Findings[i].Rule == "crash" {
					crash = &s.Findings[i]
				}
			}
			if crash == nil {
				t.Fatalf("no crash among %+v", s.Findings)
			}
			var params struct{ N *int64 }
			p := compact(t, crash.Params)
			if crash.Method != "countdown" || json.Unmarshal(crash.Params, &params) != nil || params.N == nil || *params.N >= 0 ||
				!strings.HasPrefix(p, `{"n":-`) || strings.Contains(p, ",") || crash.TimeToFindS > 60 {
				t.Errorf("crash %s: method %q params %s after %.1fs", crash.ID, crash.Method, p, crash.TimeToFindS)
			}
		})
	}
}

// writeDiscoverDoc writes fuzztarget's rpc.discover document to path, as
// a user would save a server's document to give it with --openrpc.
func writeDiscoverDoc(t *testing.T, path string) {
	t.Helper()
	reply := fuzztarget.New(0).Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}`))
	var r struct{ Result json.RawMessage }
	if err := json.Unmarshal(reply, &r); err != nil || r.Result == nil {
		t.Fatalf("rpc.discover: %s %v", reply, err)
	}
	if err := os.WriteFile(path, r.Result, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAPIFuzzScenario: -f reads a scenario's calls as the API: the params
// its templates render are the method's examples, its expect.result the
// result's schema; countdown's examples from {$int: [-5, 5]} reach the
// planted crash on a negative n.
func TestAPIFuzzScenario(t *testing.T) {
	url := serve(t, fuzztarget.NegativeInt)
	dir := t.TempDir()
	file := filepath.Join(dir, "api.yaml")
	scen := "version: 1\nload: {rate: 10, duration: 1s}\nmix:\n" +
		"  - method: countdown\n    params: {n: {$int: [-5, 5]}}\n    expect:\n      result: {type: array}\n" +
		"  - method: add\n    params: [1, 2]\n" +
		"  - method: echo\n    notify: true\n"
	if err := os.WriteFile(file, []byte(scen), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, stderr := run("run", url, "-f", file, "--out", out, "--duration", "60s", "--stop-after", "1", "--slow-min", "1h", "-q", "--seed", "1")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, out)
	var names []string
	for _, m := range s.API.Methods {
		names = append(names, m.Name+"/"+m.Source)
	}
	if strings.Join(names, ",") != "countdown/scenario,add/scenario" {
		t.Errorf("API %v: want countdown and add from the scenario (not the notification)", names)
	}
	if len(s.Findings) != 1 || s.Findings[0].Rule != "crash" || s.Findings[0].Method != "countdown" {
		t.Fatalf("findings %+v", s.Findings)
	}
	code, _, stderr = run("run", url, "-f", filepath.Join(dir, "missing.yaml"), "--out", out, "--execs", "1")
	if code != 2 || !strings.Contains(stderr, "missing.yaml") {
		t.Errorf("a missing scenario: exit %d %s", code, stderr)
	}
}
