package fuzz

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/fuzztarget"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/transport"
)

// fixedClock makes latencies zero, so a one-worker run with a seed is the
// same run every time (the feedback tuples do not depend on timing).
func fixedClock() time.Time { return time.Unix(1_700_000_000, 0) }

// refServer serves the fault-free reference server on 127.0.0.1 over tcp,
// http or ws and returns its target.
func refServer(t testing.TB, over string) transport.Target {
	t.Helper()
	srv, err := testsrv.New(testsrv.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := testsrv.Addrs{TCP: "127.0.0.1:0"}
	if over == "http" || over == "ws" {
		addrs = testsrv.Addrs{HTTP: "127.0.0.1:0"}
	}
	bound, err := srv.Listen(ctx, addrs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); srv.Close() })
	url := map[string]string{"tcp": "tcp://" + bound.TCP, "http": "http://" + bound.HTTP, "ws": "ws://" + bound.HTTP + "/ws"}[over]
	tg, err := transport.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestPlantedBugsReplay runs a planted bug over each transport, then replays
// and minimizes the finding from its directory alone.
func TestPlantedBugsReplay(t *testing.T) {
	for _, over := range []string{"tcp", "http", "stdio"} {
		t.Run(over, func(t *testing.T) {
			tg, child := plantedTarget(t, fuzztarget.DuplicateKey, over)
			cfg := Config{Target: tg, Child: child, Workers: 1, Execs: 2000, Seed: 1, OutDir: t.TempDir(),
				Timeout: time.Second, StopAfter: 1, MinimizeBudget: 1, Now: fixedClock}
			s, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Findings) != 1 || s.Findings[0].Rule != "crash" {
				t.Fatalf("findings %+v, want one crash", s.Findings)
			}
			dir := s.Findings[0].Dir
			before := s.Findings[0].MinimizedBytes
			res, err := Replay(context.Background(), dir, ReplayOptions{Child: child})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Verdict(); got != "REPRODUCED (3/3)" {
				t.Fatalf("replay: %s %q", got, res.Seen)
			}
			f, err := MinimizeFinding(context.Background(), dir, ReplayOptions{Child: child}, 60, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: minimize: %d -> %d bytes in %d checks; replay %q", s.Findings[0].ID, before, f.MinimizedBytes, f.Minimize.Checks, res.Seen)
			if f.MinimizedBytes >= before || f.Minimize.Checks == 0 {
				t.Errorf("minimize: %d -> %d bytes in %d checks", before, f.MinimizedBytes, f.Minimize.Checks)
			}
			// The minimized input still replays, from the rewritten files.
			res, err = Replay(context.Background(), dir, ReplayOptions{Child: child, Times: 1})
			if err != nil || res.Reproduced != 1 {
				t.Fatalf("replay after minimize: %v %+v", err, res)
			}
			// Against a server without the bug, the same input does not fail.
			clean, cleanChild := plantedTarget(t, 0, over)
			res, err = Replay(context.Background(), dir, ReplayOptions{Target: &clean, Child: cleanChild, Times: 2})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Verdict(); got != "NOT REPRODUCED (0/2)" {
				t.Errorf("replay against a fixed server: %s %q", got, res.Seen)
			}
		})
	}
}

// TestReferenceServerClean fuzzes the fault-free reference server: nothing
// it answers breaks a rule.
func TestReferenceServerClean(t *testing.T) {
	for _, over := range []string{"tcp", "http", "ws"} {
		t.Run(over, func(t *testing.T) {
			t.Parallel() // the reference server's convert and lookup_weather take 100 and 300 ms
			out := t.TempDir()
			cfg := Config{Target: refServer(t, over), Workers: 1, Execs: 3000, Seed: 7, OutDir: out,
				Timeout: 2 * time.Second, CanaryEvery: 200, Now: fixedClock}
			s, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range s.Findings {
				t.Errorf("finding %s: %s", f.ID, f.Note)
			}
			if s.Execs != 3000 || s.Canary == "" || s.DistinctTuples < 10 {
				t.Errorf("execs %d, canary %q, tuples %d", s.Execs, s.Canary, s.DistinctTuples)
			}
		})
	}
}

// TestDiesAtEveryInput: a child that exits at every input is reported once
// and the run stops: after --max-restarts+1 crashes in a row, fresh
// children die on a known-good request (the first seed call) too,
// --max-restarts+1 times.
func TestDiesAtEveryInput(t *testing.T) {
	tg, err := transport.CommandTarget([]string{os.Args[0], "-test.run=^$"}, transport.Newline)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Target: tg, Child: transport.ChildOptions{Env: []string{childEnv + "=die"}, Grace: time.Second},
		Execs: 1000, Seed: 1, OutDir: t.TempDir(), Timeout: time.Second, MaxRestarts: 2, MinimizeBudget: 20, Now: fixedClock}
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Findings) != 1 || s.Findings[0].Rule != "crash" {
		t.Fatalf("findings %+v, want one crash", s.Findings)
	}
	if s.Execs > 10 || s.Stopped == "" {
		t.Errorf("execs %d, stopped %q: the run should stop after 3 crashes in a row", s.Execs, s.Stopped)
	}
	if s.Canary != "" {
		t.Errorf("canary %q: nothing gets an answer from this server", s.Canary)
	}
	tail, err := os.ReadFile(filepath.Join(s.Findings[0].Dir, "reply.txt"))
	if err != nil || !slices.Contains(splitLines(tail), "fatal error: this server dies at every input") {
		t.Errorf("reply.txt should hold the stderr tail, got %q (%v)", tail, err)
	}
	if want := "crash|stderr:fatal error: this server dies at every input"; s.Findings[0].Key != want {
		t.Errorf("key %q, want %q", s.Findings[0].Key, want)
	}
}

// TestCrashesGoOn: a child that ends its session on every parse error
// (a real finding, one crash class) is restarted as often as inputs kill
// it, and the run goes on to its bound: --max-restarts stops only a child
// that cannot start or dies on a known-good request. Before, six parse
// errors in a row stopped the run (an MCP server's run ended after 3.6 s).
func TestCrashesGoOn(t *testing.T) {
	tg, err := transport.CommandTarget([]string{os.Args[0], "-test.run=^$"}, transport.Newline)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Target: tg, Child: transport.ChildOptions{Env: []string{childEnv + "=parsedie"}, Grace: time.Second},
		Execs: 300, Seed: 1, OutDir: t.TempDir(), Timeout: time.Second, MaxRestarts: 1, MinimizeBudget: 20, Now: fixedClock}
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d execs, %d restarts, %d checks, findings %v", s.Execs, s.Restarts, s.Checks, s.FindingsByRule)
	if s.Stopped != "" || s.Execs != cfg.Execs {
		t.Errorf("stopped %q after %d execs, want all %d", s.Stopped, s.Execs, cfg.Execs)
	}
	if len(s.Findings) != 1 || s.Findings[0].Rule != "crash" || s.Findings[0].Hits < 10 {
		t.Errorf("findings %+v, want one crash hit many times", s.Findings)
	}
	if s.Restarts < 10 {
		t.Errorf("%d restarts, want one per crash", s.Restarts)
	}
}

func splitLines(b []byte) []string { return strings.Split(strings.TrimRight(string(b), "\n"), "\n") }

// TestDedupAndBaseline: one crash site hit by many inputs is one finding;
// with that finding in the baseline the run finds nothing and passes.
func TestDedupAndBaseline(t *testing.T) {
	tg, child := plantedTarget(t, fuzztarget.LoneSurrogate, "tcp")
	cfg := Config{Target: tg, Child: child, Workers: 1, Execs: 800, Seed: 3, Timeout: time.Second,
		MinimizeBudget: 50, Now: fixedClock, OutDir: t.TempDir()}
	first, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Findings) != 1 || first.Findings[0].Hits < 2 {
		t.Fatalf("findings %+v: want one crash hit by several inputs", first.Findings)
	}
	id := first.Findings[0].ID
	for _, baseline := range []string{"summary", "ids"} {
		t.Run(baseline, func(t *testing.T) {
			path := filepath.Join(cfg.OutDir, "summary.json")
			if baseline == "ids" {
				path = filepath.Join(t.TempDir(), "accepted.txt")
				if err := os.WriteFile(path, []byte("# accepted\n"+id+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ids, err := ReadBaseline(path)
			if err != nil {
				t.Fatal(err)
			}
			again := cfg
			again.OutDir, again.Baseline = t.TempDir(), ids
			s, err := Run(context.Background(), again)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Findings) != 0 || s.Failures != 0 {
				t.Errorf("findings %+v: the baseline accepts them", s.Findings)
			}
			if len(s.Baselined) != 1 || s.Baselined[0].ID != id || s.Baselined[0].Hits != first.Findings[0].Hits {
				t.Errorf("baselined %+v, want %s hit %d times", s.Baselined, id, first.Findings[0].Hits)
			}
			if _, err := os.Stat(filepath.Join(again.OutDir, id)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a baselined finding got a directory (%v)", err)
			}
		})
	}
}

// TestOutputFiles checks summary.json against its schema, the files of a
// finding, and that latency.json is a result file rpcload report reads.
func TestOutputFiles(t *testing.T) {
	tg, child := plantedTarget(t, fuzztarget.HugeID, "http")
	out := t.TempDir()
	cfg := Config{Target: tg, Child: child, Workers: 1, Execs: 1000, Seed: 1, Timeout: time.Second, StopAfter: 1,
		MinimizeBudget: 100, Now: fixedClock, OutDir: out}
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "execs", "duration_s", "execs_per_s", "distinct_tuples", "findings", "findings_by_rule", "ops", "baselined", "interrupted"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary.json has no %q", k)
		}
	}
	if sum["schema"] != SummarySchema {
		t.Errorf("schema %v", sum["schema"])
	}
	findings, _ := sum["findings"].([]any)
	if len(findings) != 1 {
		t.Fatalf("findings %v", sum["findings"])
	}
	f0, _ := findings[0].(map[string]any)
	for _, k := range []string{"id", "rule", "severity", "input_bytes", "minimized_bytes", "dir", "spec", "time_to_find_s", "execs_to_find", "ops", "seed", "reproduce"} {
		if _, ok := f0[k]; !ok {
			t.Errorf("summary finding has no %q", k)
		}
	}
	if byRule, _ := sum["findings_by_rule"].(map[string]any); byRule["crash"] != 1.0 {
		t.Errorf("findings_by_rule %v", sum["findings_by_rule"])
	}
	f := s.Findings[0]
	for _, name := range []string{"input.bin", "case.json", "reply.txt", "finding.json"} {
		if _, err := os.Stat(filepath.Join(f.Dir, name)); err != nil {
			t.Error(err)
		}
	}
	input, _ := os.ReadFile(filepath.Join(f.Dir, "input.bin"))
	if len(input) != f.MinimizedBytes {
		t.Errorf("input.bin holds %d bytes, finding says %d", len(input), f.MinimizedBytes)
	}
	if f.Spec != check.SpecRef(check.Crash) || f.Severity != "failure" || len(f.Ops) == 0 || f.Seed != 1 {
		t.Errorf("finding %+v", f)
	}
	if len(f.Reproduce) != 2 || f.Reproduce[0] != "rpcfuzz replay "+f.Dir {
		t.Errorf("reproducers %q", f.Reproduce)
	}
	lat, err := stats.ReadJSONFile(filepath.Join(out, "latency.json"))
	if err != nil {
		t.Fatal(err)
	}
	if lat.Tool != "rpcfuzz" || lat.Methods["fuzz"].Requests.Sent == 0 || lat.Latency.Service.HDR == "" {
		t.Errorf("latency.json: tool %q, requests %+v", lat.Tool, lat.Methods["fuzz"].Requests)
	}
}

// TestUnreachable: nothing listening is ErrUnreachable, before any input.
func TestUnreachable(t *testing.T) {
	tg, err := transport.ParseTarget("tcp://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Config{Target: tg, Execs: 10, OutDir: t.TempDir()})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err %v, want ErrUnreachable", err)
	}
}

// TestInterrupted: a cancelled run still writes its summary.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out := t.TempDir()
	cfg := Config{Target: refServer(t, "tcp"), Workers: 2, Duration: time.Minute, OutDir: out, Timeout: time.Second,
		OnStatus: func(Status) { cancel() }, Interval: 10 * time.Millisecond}
	s, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Interrupted {
		t.Error("not marked interrupted")
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
		t.Error(err)
	}
}

// TestProfilesClean fuzzes the reference server in its MCP and LSP modes
// with those profiles (handshake on each connection, their seeds, their
// rules): a correct server breaks nothing, however the inputs start, end
// or cancel its sessions.
func TestProfilesClean(t *testing.T) {
	for _, tc := range []struct {
		mode testsrv.Profile
		name profile.Name
		lsp  bool
	}{{testsrv.ProfileMCP, profile.MCP, false}, {testsrv.ProfileLSP, profile.LSP, true}} {
		t.Run(string(tc.name), func(t *testing.T) {
			t.Parallel()
			srv, err := testsrv.New(testsrv.Config{Profile: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(func() { cancel(); srv.Close() })
			addrs, url := testsrv.Addrs{TCP: "127.0.0.1:0"}, "tcp://"
			if tc.lsp {
				addrs, url = testsrv.Addrs{TCPLSP: "127.0.0.1:0"}, "tcp+lsp://"
			}
			bound, err := srv.Listen(ctx, addrs)
			if err != nil {
				t.Fatal(err)
			}
			tg, err := transport.ParseTarget(url + bound.TCP + bound.TCPLSP)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Target: tg, Profile: tc.name, Workers: 1, Execs: 3000, Seed: 1, OutDir: t.TempDir(),
				Timeout: 2 * time.Second, Now: fixedClock}
			s, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range s.Findings {
				t.Errorf("finding %s: %s", f.ID, f.Note)
			}
			if s.Execs != 3000 || s.Canary == "" {
				t.Errorf("execs %d, canary %q", s.Execs, s.Canary)
			}
		})
	}
}

// TestStopAfterRun: with --stop-after 1 and several workers meeting
// several planted crashes at once, one failure is written and the run
// stops (a run with --stop-after 1 wrote four).
func TestStopAfterRun(t *testing.T) {
	tg, _ := plantedTarget(t, fuzztarget.AllBugs&^fuzztarget.Hang, "tcp")
	cfg := Config{Target: tg, Workers: 4, Execs: 50_000, Seed: 3, OutDir: t.TempDir(), Timeout: time.Second,
		StopAfter: 1, MinimizeBudget: 50}
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join(cfg.OutDir, "*", "finding.json"))
	if err != nil {
		t.Fatal(err)
	}
	failures := 0
	for _, f := range s.Findings {
		if f.Severity == "failure" {
			failures++
		}
	}
	t.Logf("%d execs, findings %v, %d directories, stopped %q", s.Execs, s.FindingsByRule, len(dirs), s.Stopped)
	if failures != 1 || s.Failures != 1 || !strings.Contains(s.Stopped, "--stop-after 1") {
		t.Errorf("%d failures written (summary: %d), stopped %q: want 1, stopped by --stop-after", failures, s.Failures, s.Stopped)
	}
	if len(dirs) != len(s.Findings) {
		t.Errorf("%d finding directories, %d findings", len(dirs), len(s.Findings))
	}
}

// TestStopAfterClaims: with --stop-after N, no more failures are claimed
// than it takes to stop, so workers that meet other failures while the
// first is confirmed and minimized do not write theirs (a run with
// --stop-after 1 wrote four and ran 25 s); a claim given back frees its
// place, and warnings are not limited.
func TestStopAfterClaims(t *testing.T) {
	s := newFindingSet(1)
	steps := []struct {
		do   string // claim, release, complete
		id   string
		fail bool
		want bool // claim's answer
	}{
		{"claim", "a", true, true},
		{"claim", "b", true, false}, // a is being minimized
		{"claim", "w", false, true}, // a warning
		{"release", "a", true, false},
		{"claim", "b", true, true}, // a did not reproduce: b may go on
		{"complete", "b", true, false},
		{"claim", "c", true, false}, // the run stops
	}
	for k, st := range steps {
		switch st.do {
		case "claim":
			if got := s.claim(st.id, st.id, 100, st.fail); got != st.want {
				t.Errorf("step %d: claim %s = %v, want %v", k, st.id, got, st.want)
			}
		case "release":
			s.release(st.id, st.id, st.fail)
		case "complete":
			if n := s.complete(Finding{ID: st.id, Severity: "failure"}); n != 1 {
				t.Errorf("step %d: %d failures written, want 1", k, n)
			}
		}
	}
}
