package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// smokeEnv enables TestSmoke: "1" runs comparisons 2, 4, 6 and 7 in quick
// mode (about a minute), "all" runs every comparison in quick mode
// (a few minutes, and it installs missing tools). CI leaves it unset.
const smokeEnv = "RPCLOAD_BENCH_SMOKE"

// TestSmoke builds the suite and runs it end to end in quick mode against
// the real binaries, then checks the report it wrote.
func TestSmoke(t *testing.T) {
	mode := os.Getenv(smokeEnv)
	if mode == "" {
		t.Skipf("set %s=1 (or =all) to run the benchmark suite in quick mode", smokeEnv)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	md, js := filepath.Join(dir, "benchmarks.md"), filepath.Join(dir, "results.json")
	args := []string{"--quick", "--no-micro", "--profile", "never", "--out", md, "--json", js}
	sections := []string{"## 2. ", "## 4. ", "## 6. ", "## 7. "}
	if mode == "all" {
		sections = []string{"## 1. ", "## 2. ", "## 3. ", "## 4. ", "## 5. ", "## 6. ", "## 7. "}
	} else {
		args = append(args, "--only", "2,4,6,7", "--no-install")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = ".." // the repository root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	for _, want := range append(sections, "## Goals", "## Machine and versions", "resolution: p50 of a 1 ms busy-wait", "stall test: corrected p99",
		"rpcfuzz execs/s, tcp, 8 workers", "rpcfuzz execs/s, stdio, 1 worker", "| http, 8 workers | rpcfuzz | execs/s |", "worker-seconds") {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if !strings.Contains(report, "| PASS |") && !strings.Contains(report, "| FAIL |") {
		t.Error("report has no verdict")
	}
	if strings.Contains(report, "stopped with an error") {
		t.Errorf("a comparison failed:\n%s", report)
	}
	if _, err := os.Stat(js); err != nil {
		t.Errorf("samples file: %v", err)
	}
}
