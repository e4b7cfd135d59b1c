package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/testsrv"
)

// lspStdioEnv makes this test binary the reference server's LSP mode on
// stdin and stdout (Content-Length framing), as `rpcload serve --stdio
// --profile lsp` runs it: a language server as a child process.
const lspStdioEnv = "RPCFUZZ_CLI_TEST_LSP"

func init() {
	if os.Getenv(lspStdioEnv) != "" {
		os.Exit(serveLSPStdio())
	}
}

func serveLSPStdio() int {
	srv, err := testsrv.New(testsrv.Config{Profile: testsrv.ProfileLSP})
	if err == nil {
		err = srv.ServeStdio(os.Stdin, os.Stdout, testsrv.FramingContentLength)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// lspWorkspace writes a workspace of two documents and a file of no
// known language, and returns its directory.
func lspWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"shapes.go": "package shapes\n\n// Area is the area.\nfunc Area(w, h int) int { return w * h }\n",
		"tool.py":   "def main():\n    print('hi')\n",
		"NOTES":     "not opened",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAPIFuzzLSPChild runs `rpcfuzz run --profile lsp --workspace DIR --
// SERVER` end to end against the reference server's LSP mode as a child
// process: discovery is on by default, the API is the requests the
// server's capabilities announce, each called and answered, and the run
// is clean (exit 0). Without --workspace the run is what it was before
// (no API).
func TestAPIFuzzLSPChild(t *testing.T) {
	t.Setenv(lspStdioEnv, "1")
	dir := lspWorkspace(t)
	out := t.TempDir()
	// (--timeout 5s: the child is this test binary, slow to start under
	// -race beside the other packages' tests.)
	code, stdout, stderr := run("run", "--profile", "lsp", "--workspace", dir, "--out", out, "--execs", "400", "-q", "--timeout", "5s", "--slow-min", "1h",
		"--seed", "1", "--", os.Args[0], "-test.run=^$")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, out)
	if s.API == nil {
		t.Fatalf("no API in the summary:\n%s", stdout)
	}
	var names []string
	for _, m := range s.API.Methods {
		names = append(names, m.Name)
		if m.Source != "lsp" || m.CallsValid == 0 || m.CallsInvalid == 0 || m.Results == 0 {
			t.Errorf("%s: %+v", m.Name, m)
		}
	}
	slices.Sort(names)
	if want := []string{"textDocument/definition", "textDocument/documentSymbol", "textDocument/hover"}; !slices.Equal(names, want) {
		t.Errorf("the API has %q, want %q", names, want)
	}
	if len(s.API.NeverReached) > 0 || len(s.Findings) > 0 {
		t.Errorf("never reached %q, findings %+v", s.API.NeverReached, s.Findings)
	}
	if !strings.Contains(stdout, "API: 3 methods, 0 never reached") {
		t.Errorf("the text summary has no API lines:\n%s", stdout)
	}

	out = t.TempDir()
	code, stdout, stderr = run("run", "--profile", "lsp", "--out", out, "--execs", "50", "-q", "--timeout", "5s", "--seed", "1", "--", os.Args[0], "-test.run=^$")
	if s := readSummary(t, out); code != 0 || s.API != nil {
		t.Errorf("without --workspace: exit %d, API %+v\n%s\n%s", code, s.API, stdout, stderr)
	}
}

// TestWorkspaceUsage: --workspace is refused outside --profile lsp and
// when it is no directory; --discover with --profile lsp needs it. Each
// error names the flag, before anything is started.
func TestWorkspaceUsage(t *testing.T) {
	dir := lspWorkspace(t)
	file := filepath.Join(dir, "shapes.go")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--profile", "lsp", "--discover"}, "--discover with --profile lsp needs --workspace DIR"},
		{[]string{"--profile", "mcp", "--workspace", dir}, "--workspace applies to --profile lsp"},
		{[]string{"--workspace", dir}, "--workspace applies to --profile lsp"},
		{[]string{"--profile", "lsp", "--workspace", file}, "--workspace " + file + ": not a directory"},
		{[]string{"--profile", "lsp", "--workspace", filepath.Join(dir, "gone")}, "--workspace " + filepath.Join(dir, "gone") + ":"},
	} {
		args := append([]string{"run", "--out", t.TempDir(), "--execs", "1"}, tc.args...)
		args = append(args, "--", "/nonexistent/server")
		code, _, stderr := run(args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
