package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/rounds"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// runTargets runs "rpcload run" in process with args.
func runTargets(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	code, err = runCmd(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String(), err
}

func TestTargetsUsage(t *testing.T) {
	const a, b = "tcp://127.0.0.1:1", "tcp://127.0.0.1:2"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"one target", []string{"--target", a, "--method", "echo"}, "give two or more (got 1)"},
		{"a TARGET too", []string{"--target", a, "--target", b, "--method", "echo", a}, "as --target URL only, not as a TARGET too"},
		{"a command too", []string{"--target", a, "--target", b, "--method", "echo", "--", "rpcload", "serve", "--stdio"}, "a command after -- cannot be one of them"},
		{"rounds without targets", []string{"--rounds", "3", "--method", "echo", a}, "--rounds compares servers"},
		{"diff without targets", []string{"--diff", "--method", "echo", a}, "--diff compares servers"},
		{"zero rounds", []string{"--target", a, "--target", b, "--rounds", "0", "--method", "echo"}, "--rounds must be at least 1"},
		{"diff of three", []string{"--target", a, "--target", b, "--target", a, "--diff", "--method", "echo"}, "--diff compares two targets (got 3)"},
		{"diff and rounds", []string{"--target", a, "--target", b, "--diff", "--rounds", "3", "--method", "echo"}, "give one or the other"},
		{"ignore without diff", []string{"--target", a, "--target", b, "--diff-ignore", "$.x", "--method", "echo"}, "--diff-ignore goes with --diff"},
		{"bad ignore path", []string{"--target", a, "--target", b, "--diff", "--diff-ignore", "$.result[", "--method", "echo"}, `--diff-ignore: path "$.result[": column 10`},
		{"negative samples", []string{"--target", a, "--target", b, "--diff", "--diff-samples", "-1", "--method", "echo"}, "--diff-samples must not be negative"},
		{"no method", []string{"--target", a, "--target", b}, "--method is required"},
		{"a bad target", []string{"--target", a, "--target", "ftp://x", "--method", "echo"}, "--target ftp://x:"},
		{"dry run", []string{"--target", a, "--target", b, "--method", "echo", "--dry-run", "3"}, "--dry-run shows one run's messages"},
		{"rounds to stdout", []string{"--target", a, "--target", b, "--method", "echo", "-o", "-"}, "-o - writes one result to stdout; rounds write one per target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, _, err := runTargets(t, context.Background(), tt.args...)
			if code != exitUsage || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("exit %d, err %v; want exit 2 with %q", code, err, tt.want)
			}
		})
	}
}

func TestTargetsRounds(t *testing.T) {
	_, _, tcpA := startServer(t, testsrv.Config{})
	_, _, tcpB := startServer(t, testsrv.Config{})
	_, _, tcpDup := startServer(t, testsrv.Config{Faults: []testsrv.FaultSpec{{Fault: testsrv.FaultDuplicate, Prob: 1}}})
	load := []string{"--method", "echo", "--params", "[1]", "--rate", "500", "--duration", "100ms", "--drain", "200ms", "--seed", "7"}
	t.Run("clean", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.json")
		args := append([]string{"--target", tcpA, "--target", tcpB, "--rounds", "2", "-o", out}, load...)
		code, stdout, stderr, err := runTargets(t, context.Background(), args...)
		if code != exitOK || err != nil {
			t.Fatalf("exit %d, %v\n%s\n%s", code, err, stdout, stderr)
		}
		mustContain(t, "report", stdout, "A  "+tcpA, "B  "+tcpB, "2 of 2 rounds complete", "answered/s",
			"too few rounds to judge the noise (3 or more needed)", "neither A nor B had errors (2 rounds)")
		// One progress line per run, in the alternating order.
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		want := []string{"round 1/2  A", "round 1/2  B", "round 2/2  B", "round 2/2  A"}
		if len(lines) != len(want) {
			t.Fatalf("stderr has %d lines, want %d:\n%s", len(lines), len(want), stderr)
		}
		for i, w := range want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("stderr line %d = %q, want it to start with %q", i+1, lines[i], w)
			}
		}
		// -o holds the comparison and names the targets' result files.
		var cmp rounds.File
		if data, err := os.ReadFile(out); err != nil || json.Unmarshal(data, &cmp) != nil {
			t.Fatalf("%s: %v, %q; want the comparison", out, err, data)
		}
		wantFiles := []string{roundFileName(out, 0), roundFileName(out, 1)}
		if cmp.Schema != rounds.FileSchema || !slices.Equal(cmp.Results, wantFiles) || cmp.RoundsReport == nil ||
			len(cmp.Runs) != 4 || cmp.Completed != 2 || len(cmp.Ratios) == 0 || !slices.Equal(cmp.Targets, []string{tcpA, tcpB}) {
			t.Errorf("comparison file: %+v (report %+v); want schema %s, results %q, 4 runs, 2 rounds complete, ratios", cmp, cmp.RoundsReport, rounds.FileSchema, wantFiles)
		}
		for i, target := range []string{tcpA, tcpB} {
			res := readResult(t, filepath.Join(filepath.Dir(out), "out."+string(rune('A'+i))+".json"))
			if res.Target != target || res.Requests.Sent != 100 || res.Requests.OK != 100 || len(res.MergedFrom) != 2 {
				t.Errorf("target %d: %s sent %d ok %d from %d parts; want %s, 100, 100, 2", i, res.Target, res.Requests.Sent, res.Requests.OK, len(res.MergedFrom), target)
			}
			if res.Rounds == nil || len(res.Rounds.Runs) != 4 || res.Rounds.Completed != 2 {
				t.Errorf("target %d: rounds = %+v", i, res.Rounds)
			}
			// The sending time is the two runs', not the span that
			// includes the other target's runs.
			if res.DurationS < 0.19 || res.DurationS > 0.3 {
				t.Errorf("target %d: duration %.3f s, want about 0.2 s", i, res.DurationS)
			}
			for _, w := range res.Warnings {
				if strings.HasPrefix(w, stats.NotConcurrentWarning) {
					t.Errorf("target %d: warning %q: rounds run one after the other by design", i, w)
				}
			}
		}
	})
	t.Run("thresholds and html", func(t *testing.T) {
		dir := t.TempDir()
		html, junit := filepath.Join(dir, "r.html"), filepath.Join(dir, "j.xml")
		args := append([]string{"--target", tcpA, "--target", tcpB, "--rounds", "1", "-q", "--html", html,
			"--threshold", "p99<10s", "--threshold", "answered<1", "--junit", junit}, load...)
		code, stdout, stderr, err := runTargets(t, context.Background(), args...)
		if code != exitFindings || err != nil {
			t.Fatalf("a threshold fails for both targets: want exit 1; exit %d, %v\n%s\n%s", code, err, stdout, stderr)
		}
		mustContain(t, "report", stdout, "thresholds of A "+tcpA, "thresholds of B "+tcpB, "PASS p99<10s", "FAIL answered<1")
		for _, p := range []string{html, filepath.Join(dir, "j.A.xml"), filepath.Join(dir, "j.B.xml")} {
			if st, err := os.Stat(p); err != nil || st.Size() == 0 {
				t.Errorf("%s: %v", p, err)
			}
		}
		page, _ := os.ReadFile(html)
		mustContain(t, "html", string(page), "A "+tcpA, "B "+tcpB)
	})
	t.Run("findings", func(t *testing.T) {
		args := append([]string{"--target", tcpA, "--target", tcpDup, "-q"}, load...)
		code, stdout, stderr, err := runTargets(t, context.Background(), args...)
		if code != exitFindings || err != nil || stderr != "" {
			t.Errorf("exit %d, %v, stderr %q; want 1 (B answers twice) and no progress lines\n%s", code, err, stderr, stdout)
		}
		args = append(args, "--allow-violations")
		if code, _, _, err := runTargets(t, context.Background(), args...); code != exitOK || err != nil {
			t.Errorf("with --allow-violations: exit %d, %v; want 0", code, err)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		args := append([]string{"--target", tcpA, "--target", tcpB, "--rounds", "3"}, load...)
		code, stdout, _, err := runTargets(t, ctx, args...)
		if code != exitInterrupted || err != nil {
			t.Errorf("exit %d, %v; want 130", code, err)
		}
		mustContain(t, "report", stdout, "0 of 3 rounds complete (interrupted)")
	})
}

func TestTargetsDiff(t *testing.T) {
	fixed := func(h int) func() time.Time {
		return func() time.Time { return time.Date(2026, 1, 2, h, 0, 0, 0, time.UTC) }
	}
	_, _, tcpA := startServer(t, testsrv.Config{Now: fixed(10)})
	_, httpB, _ := startServer(t, testsrv.Config{Now: fixed(11)})
	base := []string{"--target", tcpA, "--target", httpB, "--diff", "--diff-requests", "20", "--concurrency", "2"}
	tests := []struct {
		name       string
		args       []string
		code       int
		mismatches uint64
		report     []string
	}{
		{"get_time differs", []string{"--method", "get_time", "--diff-samples", "1"}, exitFindings, 20,
			[]string{"compared 20, mismatches 20", "mismatch 1: get_time, call 1, differs at $.result", `"10:00"`, `"11:00"`}},
		{"ignored", []string{"--method", "get_time", "--diff-ignore", "$.result"}, exitOK, 0,
			[]string{"ignoring $.result", "compared 20, mismatches 0"}},
		{"echo is the same", []string{"--method", "echo", "--params", `{"a":[1,2.5,"\u00e9"]}`}, exitOK, 0,
			[]string{"compared 20, mismatches 0"}},
		{"errors compared too", []string{"--method", "no_such_method"}, exitOK, 0,
			[]string{"no_such_method        20           0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "diff.json")
			args := append(append(append([]string{}, base...), "-o", out), tt.args...)
			code, stdout, stderr, err := runTargets(t, context.Background(), args...)
			if code != tt.code || err != nil {
				t.Fatalf("exit %d, %v; want %d\n%s\n%s", code, err, tt.code, stdout, stderr)
			}
			mustContain(t, "report", stdout, tt.report...)
			res := readResult(t, out)
			if res.Diff == nil || res.Diff.Compared != 20 || res.Diff.Mismatches != tt.mismatches || res.Violations["result_mismatch"] != tt.mismatches {
				t.Errorf("diff %+v, violations %v; want 20 compared, %d mismatches", res.Diff, res.Violations, tt.mismatches)
			}
			if res.Target != tcpA+" vs "+httpB || res.Requests.Sent != 20 {
				t.Errorf("target %q, sent %d", res.Target, res.Requests.Sent)
			}
		})
	}
}

// TestTargetsDiffFileLoad: a diff takes its pace from the scenario file
// as it would from the flags (--diff -f FILE ignored the file's rate).
func TestTargetsDiffFileLoad(t *testing.T) {
	_, _, tcpA := startServer(t, testsrv.Config{})
	_, _, tcpB := startServer(t, testsrv.Config{})
	mix := "mix:\n  - method: echo\n    params: [1]\n"
	for _, tc := range []struct {
		name  string
		load  string
		flags []string
		rate  float64 // the diff's target rate; 0: unpaced
	}{
		{"the file's rate", "load: {rate: 400, duration: 10s}\n", nil, 400},
		{"the average of the file's stages", "load:\n  stages:\n    - {duration: 2s, rate: 200}\n    - {duration: 2s, rate: 200}\n", nil, 150},
		{"--rate over the file's", "load: {rate: 400, duration: 10s}\n", []string{"--rate", "500"}, 500},
		{"the file's concurrency: workers, unpaced", "load: {concurrency: 3, duration: 10s}\n", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeScenario(t, "version: 1\n"+tc.load+mix)
			out := filepath.Join(t.TempDir(), "diff.json")
			args := append([]string{"--target", tcpA, "--target", tcpB, "--diff", "--diff-requests", "20", "-f", path, "-q", "-o", out}, tc.flags...)
			code, stdout, stderr, err := runTargets(t, context.Background(), args...)
			if code != exitOK || err != nil {
				t.Fatalf("exit %d, %v\n%s\n%s", code, err, stdout, stderr)
			}
			res := readResult(t, out)
			if math.Abs(res.Rate.Target-tc.rate) > 1e-9 || res.Diff == nil || res.Diff.Compared != 20 {
				t.Errorf("rate.target %g, diff %+v; want %g and 20 compared", res.Rate.Target, res.Diff, tc.rate)
			}
		})
	}
}

func TestRoundFileName(t *testing.T) {
	for _, tt := range []struct {
		path   string
		target int
		want   string
	}{
		{"out.json", 0, "out.A.json"},
		{"dir/run.1.json", 1, "dir/run.1.B.json"},
		{"results", 2, "results.C.json"},
	} {
		if got := roundFileName(tt.path, tt.target); got != tt.want {
			t.Errorf("roundFileName(%q, %d) = %q, want %q", tt.path, tt.target, got, tt.want)
		}
	}
}
