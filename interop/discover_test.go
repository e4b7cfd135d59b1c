package interop

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDiscoverFromMCP writes a scenario from a real MCP server's tools/list
// (mcp-go over stdio and go-sdk over Streamable HTTP) with `rpcload scenario
// from-mcp`, then runs it against the same server: every tool is called,
// every call answered, no rule broken.
func TestDiscoverFromMCP(t *testing.T) {
	if buildErr != nil {
		t.Fatalf("cannot run rpcload: %v", buildErr)
	}
	dir := gomcpServers(t)
	httpURL := gomcpStartHTTP(t, filepath.Join(dir, "gosdk"))
	for _, tc := range []struct {
		name   string
		from   []string // after "scenario from-mcp"
		target []string // after the load flags of "run"
	}{
		{"mcp-go stdio", []string{"--", filepath.Join(dir, "mcpgo")}, nil},
		{"go-sdk http", []string{httpURL}, []string{httpURL}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "tools.yaml")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, rpcloadPath, append([]string{"scenario", "from-mcp", "-o", file}, tc.from...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("scenario from-mcp: %v\n%s", err, stderr.String())
			}
			yml, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range []string{"name: echo", "name: add"} {
				if !strings.Contains(string(yml), tool) {
					t.Errorf("the scenario lacks %q:\n%s", tool, yml)
				}
			}
			args := []string{"-f", file, "--duration", "1s", "--rate", "50"}
			var child []string
			if tc.target == nil {
				child = tc.from[1:]
			} else {
				args = append(args, tc.target...)
			}
			r, code, report := runLoadCmd(t, args, child)
			if code != 0 || r.Requests.Sent == 0 || r.Requests.OK != r.Requests.Sent || len(r.Violations) != 0 {
				t.Fatalf("exit %d, requests %+v, violations %v\n%s", code, r.Requests, r.Violations, report)
			}
		})
	}
}
