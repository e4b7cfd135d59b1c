package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/transport"
)

// writeScenario writes a scenario file into a temporary directory.
func writeScenario(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunScenario runs the real binary on a scenario file against the
// reference server: the mix is sent by weight, each call counted under its
// name, expectations are checked, and flags override the file.
func TestRunScenario(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	path := writeScenario(t, `version: 1
target: `+tcpURL+`
seed: 5
load: {rate: 400, duration: 10s}
mix:
  - method: echo
    weight: 3
    params: {n: {$int: [1, 100]}, s: {$string: 8}}
    expect: {result_equals_params: true}
  - method: add
    params: [2, 3]
    expect: {result_equals: 5}
  - name: missing
    method: no_such_method
    expect: {error_code: -32601}
`)
	out := filepath.Join(t.TempDir(), "result.json")
	c := runBinary(t, childLimit, "run", "-f", path, "--duration", "300ms", "-q", "-o", out)
	if c.code != exitOK {
		t.Fatalf("want exit 0; %v", c)
	}
	res := readResult(t, out)
	if res.Requests.Sent != 120 || len(res.Violations) != 0 {
		t.Fatalf("requests %+v violations %v (the file's 10s must give way to --duration 300ms)", res.Requests, res.Violations)
	}
	for _, name := range []string{"echo", "add", "missing"} {
		if res.Methods[name].Requests.Sent == 0 {
			t.Errorf("call %s was never sent: %v", name, res.Methods)
		}
	}
	if res.Settings["seed"] != "5" {
		t.Errorf("settings seed %v, want the file's 5", res.Settings["seed"])
	}
}

// TestScenarioStagesCutByDuration: --duration over a file's stages ends
// them there (it was ignored: a 5-minute ramp ran in full); one longer than
// the stages is refused.
func TestScenarioStagesCutByDuration(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	path := writeScenario(t, `version: 1
target: `+tcpURL+`
load:
  start_rate: 100
  stages:
    - {duration: 1s, rate: 300}
    - {duration: 5m, rate: 300}
mix:
  - method: echo
`)
	out := filepath.Join(t.TempDir(), "result.json")
	c := runBinary(t, childLimit, "run", "-f", path, "--duration", "500ms", "-q", "-o", out)
	if c.code != exitOK {
		t.Fatalf("want exit 0; %v", c)
	}
	res := readResult(t, out)
	// The rate climbs from 100/s by 200/s each second: 75 calls in 0.5 s.
	if res.Requests.Sent != 75 || res.Settings["duration"] != "500ms" {
		t.Errorf("sent %d, settings duration %v; want 75 and 500ms", res.Requests.Sent, res.Settings["duration"])
	}
	stages, _ := json.Marshal(res.Settings["stages"])
	if want := `[{"concurrency":0,"duration":"500ms","rate":200}]`; string(stages) != want {
		t.Errorf("settings stages %s, want %s", stages, want)
	}

	c = runBinary(t, childLimit, "run", "-f", path, "--duration", "10m", "-q")
	if c.code != exitUsage || !strings.Contains(c.stderr, "--duration 10m0s is longer than the 5m1s of load.stages (") {
		t.Errorf("want exit 2 naming --duration and load.stages; %v", c)
	}
}

// TestDryRunScenario: --dry-run prints the messages without connecting
// (the target is a closed port), the same ones for the same seed.
func TestDryRunScenario(t *testing.T) {
	path := writeScenario(t, `version: 1
target: tcp://127.0.0.1:1
load: {rate: 10, duration: 1s}
mix:
  - method: eth_getBalance
    params: [{$hex: {bytes: 20}}, latest]
  - method: eth_blockNumber
`)
	a := runBinary(t, childLimit, "run", "-f", path, "--dry-run", "4", "--seed", "9")
	b := runBinary(t, childLimit, "run", "-f", path, "--dry-run", "4", "--seed", "9")
	if a.code != exitOK || a.stdout != b.stdout {
		t.Fatalf("dry runs differ or failed:\n%v\n%v", a, b)
	}
	lines := strings.Split(strings.TrimSpace(a.stdout), "\n")
	if len(lines) != 5 || lines[4] != "# seed 9" {
		t.Fatalf("dry run output:\n%s", a.stdout)
	}
	for _, l := range lines[:4] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Errorf("line %q: %v", l, err)
		}
	}
}

// TestScenarioUsageErrors: a broken file is reported with its position,
// and the flags that exclude a scenario say so.
func TestScenarioUsageErrors(t *testing.T) {
	good := writeScenario(t, "version: 1\ntarget: tcp://127.0.0.1:1\nload: {rate: 1, duration: 1s}\nmix:\n  - method: a\n")
	bad := writeScenario(t, "version: 1\nload: {rate: -1, duration: 1s}\nmix:\n  - method: a\n    wieght: 2\n")
	batchy := writeScenario(t, "version: 1\ntarget: tcp://127.0.0.1:1\nload: {concurrency: 2, duration: 1s}\nmix:\n  - method: a\n    batch: 5\n")
	mcpH2 := writeScenario(t, "version: 1\ntarget: http://127.0.0.1:1\nprofile: mcp\ntransport:\n  http2: true\nload: {rate: 1, duration: 1s}\nmix:\n  - method: tools/list\n")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"broken file", []string{"run", "-f", bad}, []string{"s.yaml:2:", "s.yaml:5:", "wieght"}},
		{"missing file", []string{"run", "-f", "/no/such/file.yaml"}, []string{"/no/such/file.yaml"}},
		{"method with a mix", []string{"run", "-f", good, "--method", "x"}, []string{"--method", "mix"}},
		{"bad arrival", []string{"run", "-f", good, "--arrival", "bursty"}, []string{"--arrival", "bursty"}},
		{"a file value named by its key and line", []string{"run", "-f", batchy}, []string{"load.concurrency (", "s.yaml:3) 2 cannot hold one batch of 5"}},
		{"a flag value named by its flag", []string{"run", "-f", batchy, "--concurrency", "3"}, []string{"--concurrency 3 cannot hold one batch of 5"}},
		{"a transport setting of the file named by its key and line", []string{"run", "-f", mcpH2}, []string{"transport.http2 (", "s.yaml:5): the mcp profile speaks Streamable HTTP"}},
		{"a transport flag named by its flag", []string{"run", "-f", mcpH2, "--http2"}, []string{"--http2: the mcp profile speaks Streamable HTTP"}},
		{"no target anywhere", []string{"run", "-f", writeScenario(t, "version: 1\nload: {rate: 1, duration: 1s}\nmix:\n  - method: a\n")}, []string{"TARGET"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := runBinary(t, childLimit, tc.args...)
			if c.code != exitUsage {
				t.Fatalf("want exit %d; %v", exitUsage, c)
			}
			mustContain(t, "stderr", c.stderr, tc.want...)
		})
	}
}

// TestExampleScenariosDryRun: every file in scenarios/ loads and generates
// requests as written (without a server: --dry-run connects to nothing).
func TestExampleScenariosDryRun(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil || len(files) < 6 {
		t.Fatalf("scenarios/: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c := runBinary(t, childLimit, "run", "-f", f, "--dry-run", "20", "--seed", "1")
			if c.code != exitOK {
				t.Fatalf("want exit 0; %v", c)
			}
			lines := strings.Split(strings.TrimSpace(c.stdout), "\n")
			if len(lines) != 21 {
				t.Fatalf("%d lines:\n%s", len(lines), c.stdout)
			}
			for _, l := range lines[:20] {
				if !json.Valid([]byte(l)) {
					t.Errorf("not JSON: %s", l)
				}
			}
		})
	}
}

// TestScenarioSettingNames: an error about a transport or profile setting
// names it as the user wrote it: its scenario key, file and line when the
// file gave it, its flag when the command line did.
func TestScenarioSettingNames(t *testing.T) {
	const target = "ws://127.0.0.1:1/"
	for _, tc := range []struct {
		name, file string
		args       []string
		want       string // in the error; FILE stands for the path
	}{
		{"http2 from the file", "transport:\n  http2: true\n", nil, "transport.http2 (FILE:3) applies to http:// and https:// targets only"},
		{"http2 from the flag", "transport:\n  http2: true\n", []string{"--http2"}, "--http2 applies to http:// and https:// targets only"},
		{"grace from the file", "transport:\n  grace: 1s\n", nil, "transport.grace (FILE:3) applies to a child process"},
		// (The file's own checks name the key, file, line and column.)
		{"max frame from the file", "transport:\n  max_frame: 1\n", nil, "FILE:3:14: transport.max_frame: 1 bytes is too small"},
		{"workspace from the file", "profile:\n  name: lsp\n  workspace: /no/such/dir\n", nil, "FILE:4:14: profile.workspace: /no/such/dir is not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeScenario(t, "version: 1\n"+tc.file+"load: {rate: 10, duration: 1s}\nmix:\n  - method: echo\n")
			args := append([]string{"-f", path}, tc.args...)
			code, _, _, err := runTargets(t, context.Background(), append(args, target)...)
			want := strings.ReplaceAll(tc.want, "FILE", path)
			if code != exitUsage || err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("exit %d, error %v; want exit %d and an error with %q", code, err, exitUsage, want)
			}
		})
	}
}

// TestChildFramingOfAFile: a scenario's transport.framing stands for the
// child's framing like --framing, --profile lsp's default (Content-Length)
// included: a file that says newline for an LSP child keeps newline (the
// default used to override it).
func TestChildFramingOfAFile(t *testing.T) {
	for _, tc := range []struct {
		file string
		args []string
		want transport.Framing
	}{
		{"transport:\n  framing: newline\nprofile:\n  name: lsp\n", nil, transport.Newline},
		{"profile:\n  name: lsp\n", nil, transport.ContentLength},
		{"profile:\n  name: lsp\n", []string{"--framing", "newline"}, transport.Newline},
		{"transport:\n  framing: content-length\n", nil, transport.ContentLength},
	} {
		path := writeScenario(t, "version: 1\n"+tc.file+"load: {rate: 10, duration: 1s}\nmix:\n  - method: hover\n")
		fs := newFlagSet("run", runHelp, io.Discard, io.Discard)
		var f runFlags
		f.register(fs)
		f.prof.register(fs)
		f.scen.register(fs)
		if err := fs.Parse(append(append([]string{"-f", path}, tc.args...), "--", "server")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.scen.load(fs, &f); err != nil {
			t.Fatal(err)
		}
		cfg, err := f.configCommand(fs, fs.Args())
		if err != nil || cfg.Target.Framing != tc.want {
			t.Errorf("%q %q: framing %v, error %v; want %v", tc.file, tc.args, cfg.Target.Framing, err, tc.want)
		}
	}
}
