package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rpcload/rpcload/internal/testsrv"
)

// TestCompare: two real result files side by side, with ratios; a file of
// another schema is refused, named.
func TestCompare(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	dir := t.TempDir()
	var files []string
	for _, name := range []string{"a.json", "b.json"} {
		out := filepath.Join(dir, name)
		c := runBinary(t, childLimit, "run", tcpURL, "--method", "echo", "--rate", "500", "--duration", "200ms", "-q", "-o", out)
		if c.code != exitOK {
			t.Fatalf("run: %v", c)
		}
		files = append(files, out)
	}
	c := runBinary(t, childLimit, append([]string{"compare"}, files...)...)
	if c.code != exitOK {
		t.Fatalf("compare: %v", c)
	}
	mustContain(t, "comparison", c.stdout, "all methods", "method echo", "a.json", "b.json", "×)", "answered/s", "p99.9")

	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"schema":"rpcload.result/v9"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c = runBinary(t, childLimit, "compare", files[0], other)
	if c.code != exitUsage {
		t.Fatalf("want exit %d; %v", exitUsage, c)
	}
	mustContain(t, "stderr", c.stderr, "other.json", "v9")
	if c := runBinary(t, childLimit, "compare", files[0]); c.code != exitUsage {
		t.Errorf("one file: %v", c)
	}
}
