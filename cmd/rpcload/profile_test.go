package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRunProfilesOverStdio runs the real binary against itself as a child
// process speaking MCP or LSP (rpcload serve --profile ... --stdio): the
// handshake, the tool call or the opened document's symbols, the profile
// section of the result, and a clean exit of the child.
func TestRunProfilesOverStdio(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "a.go")
	if err := os.WriteFile(file, []byte("package a\n\nfunc A() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		era      string
		answered int64 // server requests rpcload answered, at least
	}{
		{"mcp auto", []string{"--profile", "mcp", "--tool", "echo", "--args", `{"text":"hi"}`, "--", bin, "serve", "--profile", "mcp", "--stdio"}, "modern", 0},
		{"mcp legacy server", []string{"--profile", "mcp", "--tool", "echo", "--", bin, "serve", "--profile", "mcp", "--mcp-era", "legacy", "--server-messages", "--stdio"}, "legacy", 1},
		{"lsp", []string{"--profile", "lsp", "--workspace", dir, "--open", file, "--method", "textDocument/documentSymbol", "--", bin, "serve", "--profile", "lsp", "--stdio"}, "", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "result.json")
			args := append([]string{"run", "--concurrency", "4", "--duration", "300ms", "-q", "-o", out}, tc.args...)
			c := runBinary(t, childLimit, args...)
			if c.code != exitOK {
				t.Fatalf("want exit 0; %v", c)
			}
			res := readResult(t, out)
			q := res.Requests
			if q.Sent == 0 || q.OK != q.Sent || len(res.Violations) != 0 {
				t.Fatalf("requests %+v violations %v", q, res.Violations)
			}
			p := res.Profile
			if p == nil || p.Era != tc.era || p.Handshakes != 1 || p.ServerRequestsAnswered < tc.answered {
				t.Errorf("profile %+v, want era %q, 1 handshake, at least %d answers", p, tc.era, tc.answered)
			}
			if res.Child == nil || len(res.Child.Exits) != 1 || res.Child.Exits[0] == "" {
				t.Fatalf("child %+v", res.Child)
			}
			mustContain(t, "child exit", res.Child.Exits[0], "exit status 0")
		})
	}
}

// TestRunUnknownTool: a tool the server does not list stops the run before
// any load, with exit 2 and the tools it does offer.
func TestRunUnknownTool(t *testing.T) {
	bin := binary(t)
	c := runBinary(t, childLimit, "run", "--profile", "mcp", "--tool", "nope", "--duration", "300ms", "-q", "--", bin, "serve", "--profile", "mcp", "--stdio")
	if c.code != exitUsage {
		t.Fatalf("want exit %d; %v", exitUsage, c)
	}
	mustContain(t, "stderr", c.stderr, `no tool "nope"`, "echo")
}
