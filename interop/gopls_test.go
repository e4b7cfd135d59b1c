package interop

// rpcload against a real language server: gopls (golang.org/x/tools/gopls,
// the version below, installed as a binary by .ci/interop-deps), on stdio
// with the LSP's Content-Length framing, opening the tiny module in
// testdata/lspws.
//
// What gopls does, seen by hand with gopls v0.23.0 and go1.26.8, given
// rpcload's initialize (capabilities workspace.configuration,
// workspace.workspaceFolders, window.workDoneProgress; rootUri and one
// workspace folder):
//
//   - initialize is answered at once with its capabilities (serverInfo
//     gopls); after initialized it sends, in this order, the requests
//     window/workDoneProgress/create {token} and workspace/configuration
//     {items:[{scopeUri, section:"gopls"}]}, and it does not load the
//     workspace until the client has answered them: a client that leaves
//     them unanswered never gets a reply to documentSymbol. Then $/progress
//     begin ("Setting up workspace") and end, and window/logMessage
//     notifications (type 3) for the view it created and each
//     go/packages.Load. It sends no client/registerCapability, since
//     rpcload declares no dynamicRegistration capability (an editor that
//     declares workspace.didChangeWatchedFiles.dynamicRegistration gets
//     one).
//   - textDocument/didOpen is followed by textDocument/publishDiagnostics
//     for the file (an empty list for this workspace). The text in didOpen
//     is what gopls works on: a didOpen without text (or with "") makes the
//     file empty for gopls (a syntax diagnostic, documentSymbol [] and hover
//     error code 0 "line number 32 out of range 0-1").
//   - hover on TotalArea returns markdown with its signature and doc
//     comment; an error for a file outside the workspace has code 0 ("no
//     package metadata for file ..."), a code JSON-RPC allows.
//   - shutdown is answered with null, then exit ends the process (status 0);
//     it also exits when its stdin closes.
//
// gopls runs `go list` and keeps caches: the tests start it through env(1)
// with HOME, the XDG directories, GOPATH, GOCACHE and GOMODCACHE in a
// temporary directory, GOENV=off, GOFLAGS cleared, GOPROXY=off,
// GOTOOLCHAIN=local and GOWORK=off, and Go telemetry off there (else gopls
// forks a telemetry child of itself that outlives it by a second or two), so
// it downloads nothing, starts no other gopls and writes nothing outside
// that directory; the test checks that the workspace's files are unchanged
// afterwards.

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const goplsVersion = "v0.23.0"

// findGopls finds the gopls binary of goplsVersion on PATH, in GOBIN or in
// GOPATH/bin, or skips (see missingDep).
func findGopls(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	var candidates []string
	if p, err := exec.LookPath("gopls"); err == nil {
		candidates = append(candidates, p)
	}
	out, err := exec.Command(goTool, "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) >= 1 && strings.TrimSpace(lines[0]) != "" {
		candidates = append(candidates, filepath.Join(strings.TrimSpace(lines[0]), "gopls"))
	}
	if len(lines) >= 2 {
		for _, dir := range filepath.SplitList(strings.TrimSpace(lines[1])) {
			candidates = append(candidates, filepath.Join(dir, "bin", "gopls"))
		}
	}
	var seen []string
	for _, p := range candidates {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, err := exec.CommandContext(ctx, p, "version").Output()
		cancel()
		if err != nil {
			continue
		}
		// "golang.org/x/tools/gopls v0.23.0" (and build info on later lines)
		first, _, _ := strings.Cut(string(out), "\n")
		if strings.TrimSpace(first) == "golang.org/x/tools/gopls "+goplsVersion {
			return p
		}
		seen = append(seen, fmt.Sprintf("%s: %q", p, strings.TrimSpace(first)))
	}
	if len(seen) > 0 {
		missingDep(t, "gopls %s is not installed (found %s)", goplsVersion, strings.Join(seen, "; "))
	}
	missingDep(t, "gopls %s is not on PATH nor in GOBIN or GOPATH/bin", goplsVersion)
	return ""
}

// goplsCommand returns the command line that starts gopls through env(1) with
// its Go environment and caches in a fresh temporary directory.
func goplsCommand(t *testing.T, gopls string) []string {
	t.Helper()
	envTool, err := exec.LookPath("env")
	if err != nil {
		t.Fatalf("env(1) is not on PATH: %v", err)
	}
	home := t.TempDir()
	// Telemetry off (what `go telemetry off` writes): otherwise gopls keeps
	// counters and forks a telemetry child of itself, which outlives it.
	modeFile := filepath.Join(home, ".config", "go", "telemetry", "mode")
	if err := os.MkdirAll(filepath.Dir(modeFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(modeFile, []byte("off"), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{envTool,
		"HOME=" + home,
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),   // gopls' file cache, goimports' index
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), // the telemetry mode
		"GOPATH=" + filepath.Join(home, "go"),
		"GOMODCACHE=" + filepath.Join(home, "go", "pkg", "mod"),
		"GOCACHE=" + filepath.Join(home, ".cache", "go-build"),
		"GOENV=off", // no `go env -w` settings of the user
		"GOFLAGS=",
		"GOPROXY=off",
		"GOTOOLCHAIN=local",
		"GOWORK=off",
		gopls,
	}
}

// snapshotDir returns the name, size, mode and modification time of every
// file and directory under dir, one per line.
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(&b, "%s %d %v %d\n", rel, info.Size(), info.Mode(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return b.String()
}

// TestGopls runs rpcload with the lsp profile against gopls on stdio
// (Content-Length framing): textDocument/documentSymbol with the default
// params (the opened file), and textDocument/hover on a function name.
// rpcload must answer the requests gopls sends (without the answers gopls
// never loads the workspace) and count them and its notifications as server
// messages. gopls breaks no rule rpcload checks.
func TestGopls(t *testing.T) {
	gopls := findGopls(t)
	ws, err := filepath.Abs(filepath.Join("testdata", "lspws"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ws, "shapes.go")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// The position of the name in "func TotalArea(": line and UTF-16
	// character, both from 0 (the file is ASCII).
	line, char := -1, -1
	for i, l := range bytes.Split(src, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(l, []byte("func TotalArea(")); ok {
			line, char = i, len(l)-len(rest)-len("TotalArea(")
			break
		}
	}
	if line < 0 {
		t.Fatalf("%s has no func TotalArea", file)
	}
	uri := "file://" + filepath.ToSlash(file) // the path has no character to escape
	hoverParams := fmt.Sprintf(`{"textDocument":{"uri":%q},"position":{"line":%d,"character":%d}}`, uri, line, char)

	before := snapshotDir(t, ws)
	t.Cleanup(func() {
		if after := snapshotDir(t, ws); after != before {
			t.Errorf("gopls changed the workspace %s:\nbefore:\n%safter:\n%s", ws, before, after)
		}
	})
	lsp := func(extra ...string) []string {
		a := []string{"--profile", "lsp", "--framing", "content-length", "--workspace", ws, "--open", file}
		return append(a, extra...)
	}
	cases := []profileCase{
		{loadCase: loadCase{name: "documentSymbol", args: lsp("--method", "textDocument/documentSymbol",
			"--concurrency", "4", "--duration", "2s")}},
		{loadCase: loadCase{name: "hover", args: lsp("--method", "textDocument/hover", "--params", hoverParams,
			"--concurrency", "4", "--duration", "2s")}},
	}
	for _, c := range cases {
		c.command = goplsCommand(t, gopls)
		c.profile = "lsp"
		c.minHandshakes = 1
		// window/workDoneProgress/create and workspace/configuration.
		c.minAnswered = 2
		c.serverMethods = map[string]int64{
			"window/workDoneProgress/create":  1,
			"workspace/configuration":         1,
			"$/progress":                      2, // begin, end
			"window/logMessage":               1,
			"textDocument/publishDiagnostics": 1, // after didOpen
		}
		t.Run(c.name, func(t *testing.T) {
			// One after another: gopls is heavy for two cores.
			c.run(t)
		})
	}
}
