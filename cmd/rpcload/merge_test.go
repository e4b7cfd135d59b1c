package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/stats"
)

// writePart writes a small result file: sent requests of method echo, all
// answered, and violations broken rules; shard "" is a whole run.
func writePart(t *testing.T, path string, sent, violations int, shard *stats.ShardInfo) {
	t.Helper()
	agg := stats.NewAggregator([]string{"echo"})
	rec := agg.NewRecorder()
	for i := range sent {
		rec.Record(stats.Sample{Kind: stats.Sent, A: int64(i) * 1000})
		rec.Record(stats.Sample{Kind: stats.MessageSent})
		rec.Record(stats.Sample{Kind: stats.OK, A: int64(i+1) * 1_000_000, B: int64(i+1) * 500_000})
	}
	for range violations {
		rec.Record(stats.Sample{Kind: stats.Violation, Rule: check.UnknownID, Method: 1})
	}
	agg.Tick(1, 0)
	r := &stats.Result{Tool: "rpcload", Target: "tcp://127.0.0.1:9", StartedAt: "2030-01-01T00:00:00Z", DurationS: 1,
		Settings: map[string]any{}, Shard: shard, Warnings: []string{}}
	if err := agg.Fill(r); err != nil {
		t.Fatal(err)
	}
	if err := stats.WriteJSONFile(path, r); err != nil {
		t.Fatal(err)
	}
}

// rewritePart changes a result file written by writePart.
func rewritePart(t *testing.T, path string, change func(r *stats.Result)) {
	t.Helper()
	r, err := stats.ReadJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	change(r)
	if err := stats.WriteJSONFile(path, r); err != nil {
		t.Fatal(err)
	}
}

// TestMergeCmd: the merge command's arguments, its refusals (each naming
// the file at fault) and its exit codes, in process.
func TestMergeCmd(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	writePart(t, at("s1.json"), 10, 0, &stats.ShardInfo{Index: 1, Count: 2})
	writePart(t, at("s2.json"), 20, 0, &stats.ShardInfo{Index: 2, Count: 2})
	// Runs that are not shards of one run: two whole runs, a shard 2/2 of
	// another rate, of another target, and one of another seed (which the
	// shards of one run draw each their own of).
	writePart(t, at("whole1.json"), 10, 0, nil)
	writePart(t, at("whole2.json"), 20, 0, nil)
	for name, change := range map[string]func(r *stats.Result){
		"s2-rate.json":   func(r *stats.Result) { r.Settings["rate"], r.Settings["duration"] = 200.0, "5s" },
		"s2-target.json": func(r *stats.Result) { r.Target = "tcp://127.0.0.1:10" },
		"s2-seed.json":   func(r *stats.Result) { r.Settings["seed"] = "8" },
	} {
		writePart(t, at(name), 20, 0, &stats.ShardInfo{Index: 2, Count: 2})
		rewritePart(t, at(name), change)
	}
	writePart(t, at("s1of3.json"), 5, 0, &stats.ShardInfo{Index: 1, Count: 3})
	writePart(t, at("bad1.json"), 5, 2, &stats.ShardInfo{Index: 1, Count: 2})
	if err := os.WriteFile(at("notjson.json"), []byte("sent 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(at("v9.json"), []byte(`{"schema":"rpcload.result/v9"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string // the error's text, or what the command printed to stderr
		sent   uint64   // of the merged file, when one is written
	}{
		{"two shards", []string{at("s1.json"), at("s2.json"), "-o", at("total.json")}, exitOK,
			[]string{"merged 2 results into " + at("total.json"), "s1.json (shard 1/2)", "s2.json (shard 2/2)", "requests    sent 30", "violations  none"}, nil, 30},
		{"findings fail the merge as they fail a run", []string{at("bad1.json"), at("s2.json"), "--output", at("total-bad.json")}, exitFindings,
			[]string{"unknown_id"}, nil, 25},
		{"help", []string{"--help"}, exitOK, []string{"usage: rpcload merge", "--output", "examples:"}, nil, 0},
		{"no output", []string{at("s1.json"), at("s2.json")}, exitUsage, nil, []string{"-o FILE"}, 0},
		{"no files", []string{"-o", at("x.json")}, exitUsage, nil, []string{"one or more result files"}, 0},
		{"unknown flag", []string{"--bogus", at("s1.json"), "-o", at("x.json")}, exitUsage, nil, []string{"--bogus"}, 0},
		{"missing file", []string{at("s1.json"), at("nope.json"), "-o", at("x.json")}, exitUsage, nil, []string{"nope.json"}, 0},
		{"not json", []string{at("notjson.json"), at("s2.json"), "-o", at("x.json")}, exitUsage, nil, []string{"notjson.json", "not a result file"}, 0},
		{"other schema", []string{at("s1.json"), at("v9.json"), "-o", at("x.json")}, exitUsage, nil, []string{"v9.json", "rpcload.result/v9"}, 0},
		{"shards of different runs", []string{at("s1.json"), at("s1of3.json"), "-o", at("x.json")}, exitUsage, nil,
			[]string{"s1.json is shard 1/2", "s1of3.json is shard 1/3"}, 0},
		{"the same shard twice", []string{at("s1.json"), at("bad1.json"), "-o", at("x.json")}, exitUsage, nil,
			[]string{"s1.json and", "bad1.json are both shard 1/2"}, 0},
		{"whole runs are not shards of one run", []string{at("whole1.json"), at("whole2.json"), "-o", at("x.json")}, exitUsage, nil,
			[]string{"whole1.json is not a shard (its run had no --shard i/n)", "--force merges them"}, 0},
		{"shards of runs with other settings", []string{at("s1.json"), at("s2-rate.json"), "-o", at("x.json")}, exitUsage, nil,
			[]string{"s1.json and", "s2-rate.json are not shards of one run: duration none against 5s; rate none against 200"}, 0},
		{"shards of runs against other targets", []string{at("s1.json"), at("s2-target.json"), "-o", at("x.json")}, exitUsage, nil,
			[]string{"target tcp://127.0.0.1:9 against tcp://127.0.0.1:10"}, 0},
		{"shards that drew their own seeds", []string{at("s1.json"), at("s2-seed.json"), "-o", at("total-seed.json")}, exitOK,
			[]string{"merged 2 results"}, nil, 30},
		{"--force merges whole runs", []string{"--force", at("whole1.json"), at("whole2.json"), "-o", at("total-forced.json")}, exitOK,
			[]string{"merged with --force: ", "whole1.json is not a shard"}, nil, 30},
		{"output over an input", []string{at("s1.json"), at("s2.json"), "-o", filepath.Join(dir, ".", "s2.json")}, exitUsage, nil,
			[]string{"s2.json is one of the files to merge"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code, err := mergeCmd(context.Background(), tc.args, &stdout, &stderr)
			if err != nil {
				fmt.Fprint(&stderr, err)
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d; error %v\nstdout:\n%s\nstderr:\n%s", code, tc.code, err, &stdout, &stderr)
			}
			if code == exitUsage && err == nil && !slices.Contains(tc.args, "--help") {
				t.Errorf("exit 2 without an error")
			}
			mustContain(t, "stdout", stdout.String(), tc.stdout...)
			mustContain(t, "stderr", stderr.String(), tc.stderr...)
			if tc.sent == 0 {
				if _, err := os.Stat(at("x.json")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a refused merge wrote x.json (%v)", err)
				}
				return
			}
			out := tc.args[len(tc.args)-1]
			r := readResult(t, out)
			if r.Requests.Sent != tc.sent || len(r.MergedFrom) != 2 {
				t.Errorf("merged file: sent %d, merged from %d; want %d and 2", r.Requests.Sent, len(r.MergedFrom), tc.sent)
			}
		})
	}
	// The inputs are untouched.
	if r := readResult(t, at("s2.json")); r.Requests.Sent != 20 || r.Shard == nil {
		t.Errorf("s2.json changed: %+v", r.Requests)
	}
}

// startServeBinary runs "rpcload serve" on a loopback TCP port and returns
// its tcp:// URL; the test's cleanup interrupts it.
func startServeBinary(t *testing.T) string {
	t.Helper()
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmd := exec.CommandContext(ctx, bin, "serve", "--tcp", "127.0.0.1:0")
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		cancel()
	})
	const prefix = "serving JSON-RPC over TCP on "
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, prefix) {
				found <- strings.TrimPrefix(line, prefix)
				break
			}
		}
		close(found)
		_, _ = io.Copy(io.Discard, out) // until serve exits
	}()
	select {
	case url, ok := <-found:
		if !ok {
			t.Fatalf("rpcload serve said no address; stderr:\n%s", &stderr)
		}
		return url
	case <-time.After(childLimit):
		t.Fatalf("rpcload serve printed no address within %s", childLimit)
	}
	return ""
}

// TestMergeShards is the end-to-end merge: three shards of one run
// (--shard i/3, the same --start-at) against one reference server, merged
// by "rpcload merge", against the same run as one process at the same
// time: the same schedule, so the same requests sent (within a tick), all
// answered, the same target rate, and percentiles that are those of the
// shards' histograms merged.
func TestMergeShards(t *testing.T) {
	bin := binary(t)
	target := startServeBinary(t)
	dir := t.TempDir()
	const rate, shards = "300", 3
	startAt := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339)
	runArgs := func(out string, extra ...string) []string {
		return append([]string{"run", target, "--method", "echo", "--params", "[1]", "--rate", rate, "--duration", "3s",
			"--start-at", startAt, "-q", "-o", out}, extra...)
	}
	var runs [][]string
	var parts []string
	for i := 1; i <= shards; i++ {
		part := filepath.Join(dir, fmt.Sprintf("part-%d.json", i))
		parts = append(parts, part)
		runs = append(runs, runArgs(part, "--shard", fmt.Sprintf("%d/%d", i, shards)))
	}
	single := filepath.Join(dir, "single.json")
	runs = append(runs, runArgs(single))

	// All four at once: the shards must run concurrently, and the single
	// run alongside them keeps the test short; the server has room for both.
	children := make([]child, len(runs))
	var wg sync.WaitGroup
	for i, args := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			children[i] = runChild(bin, time.Minute, args)
		}()
	}
	wg.Wait()
	for i, c := range children {
		if c.code != exitOK {
			t.Fatalf("rpcload %q: %v", runs[i], c)
		}
	}

	total := filepath.Join(dir, "total.json")
	c := runBinary(t, childLimit, append(append([]string{"merge"}, parts...), "-o", total)...)
	if c.code != exitOK {
		t.Fatalf("merge: %v", c)
	}
	mustContain(t, "merge report", c.stdout, "merged 3 results", "part-2.json (shard 2/3)", "target      "+target, "violations  none")
	merged, whole := readResult(t, total), readResult(t, single)

	q, w := merged.Requests, whole.Requests
	t.Logf("merged: sent %d over %.3fs, %d series points, p99 %dµs; single run: sent %d over %.3fs, %d points, p99 %dµs",
		q.Sent, merged.DurationS, len(merged.Series), merged.Latency.Corrected.P99us, w.Sent, whole.DurationS, len(whole.Series), whole.Latency.Corrected.P99us)
	if d := int64(q.Sent) - int64(w.Sent); d < -1 || d > 1 || q.Sent == 0 {
		t.Errorf("merged shards sent %d, the single run %d; want the same within a tick", q.Sent, w.Sent)
	}
	if q.Answered != q.Sent || q.OK != q.Sent || q.Timeouts+q.TransportErrors+q.Leaked+q.Dropped != 0 || len(merged.Violations) != 0 {
		t.Errorf("merged requests %+v, violations %v; want every request answered and nothing else", q, merged.Violations)
	}
	if merged.Rate.Target != whole.Rate.Target {
		t.Errorf("merged target rate %g; the single run's %g", merged.Rate.Target, whole.Rate.Target)
	}
	if merged.Target != target || merged.Shard != nil || merged.Settings["shard"] != nil || len(merged.MergedFrom) != shards {
		t.Errorf("target %q shard %v settings.shard %v merged_from %+v", merged.Target, merged.Shard, merged.Settings["shard"], merged.MergedFrom)
	}
	var seriesSent uint64
	for _, p := range merged.Series {
		seriesSent += p.Sent
	}
	if seriesSent != q.Sent+q.Notifications {
		t.Errorf("the merged series holds %d sent; the totals say %d", seriesSent, q.Sent+q.Notifications)
	}

	// The merged percentiles are those of the shards' histograms merged.
	var results []*stats.Result
	for _, p := range parts {
		r := readResult(t, p)
		if r.Shard == nil || r.Shard.Count != shards {
			t.Fatalf("%s: shard %+v; want one of %d", p, r.Shard, shards)
		}
		results = append(results, r)
	}
	for _, x := range []struct {
		name string
		get  func(r *stats.Result) stats.Latency
	}{
		{"corrected", func(r *stats.Result) stats.Latency { return r.Latency.Corrected }},
		{"service", func(r *stats.Result) stats.Latency { return r.Latency.Service }},
		{"lag", func(r *stats.Result) stats.Latency { return r.Latency.Lag }},
		{"echo corrected", func(r *stats.Result) stats.Latency { return r.Methods["echo"].Latency.Corrected }},
	} {
		h := hdr.New(1, 3_600_000_000, 3) // the range rpcload records
		for i, r := range results {
			if dropped := h.Merge(decodeHDR(t, parts[i], x.get(r))); dropped != 0 {
				t.Fatalf("%s of %s: %d values out of range", x.name, parts[i], dropped)
			}
		}
		l := x.get(merged)
		if !h.Equals(decodeHDR(t, total, l)) {
			t.Errorf("%s: the merged file's histogram is not the shards' merged", x.name)
		}
		want := stats.Latency{Count: h.TotalCount(), MinUs: h.Min(), MeanUs: h.Mean(), P50us: h.ValueAtQuantile(50), P90us: h.ValueAtQuantile(90), P95us: h.ValueAtQuantile(95),
			P99us: h.ValueAtQuantile(99), P999us: h.ValueAtQuantile(99.9), MaxUs: h.Max(), HDR: l.HDR}
		if l != want {
			t.Errorf("%s\n got %+v\nwant %+v (from the shards' histograms)", x.name, l, want)
		}
	}
}

func decodeHDR(t *testing.T, path string, l stats.Latency) *hdr.Histogram {
	t.Helper()
	h, err := hdr.Decode([]byte(l.HDR))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return h
}
