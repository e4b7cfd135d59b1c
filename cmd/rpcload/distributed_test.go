package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcload/rpcload/cmd/internal/clitest"
	"github.com/rpcload/rpcload/internal/shardhttp"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// The distributed protocol on one machine: shards of one run, each
// serving its result (run --serve-result), and the merge fetching them
// (merge --from), all as processes of the real binary on loopback.

// shardProc is one process of a distributed test.
type shardProc struct {
	addr   string // its --serve-result address (shards), "" for others
	cmd    *exec.Cmd
	stdout *bytes.Buffer
	stderr *clitest.Lines
}

// startProc starts the binary with args; the test's cleanup kills it (by
// its PID) if it is still running, after limit at the latest.
func startProc(t *testing.T, limit time.Duration, args ...string) *shardProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	cmd, stdout, stderr := clitest.Start(ctx, t, binary(t), args...)
	t.Cleanup(func() {
		cancel() // kills the process if it has not exited
		_ = cmd.Wait()
	})
	return &shardProc{cmd: cmd, stdout: stdout, stderr: stderr}
}

// exit waits at most limit for p to exit and returns its exit code and
// how long the wait took.
func (p *shardProc) exit(t *testing.T, limit time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("%q: %v", p.cmd.Args, err)
		}
		return p.cmd.ProcessState.ExitCode(), time.Since(start)
	case <-time.After(limit):
		t.Fatalf("%q did not exit within %s\nstderr:\n%s", p.cmd.Args[1:], limit, p.stderr)
	}
	return 0, 0
}

// startShards starts n shards of the run runArgs describes, each serving
// its result on a free loopback port, and writing part-i.json in dir;
// target(i) is shard i's target.
func startShards(t *testing.T, n int, dir string, target func(i int) string, runArgs ...string) []*shardProc {
	t.Helper()
	var shards []*shardProc
	for i := 1; i <= n; i++ {
		addr := clitest.FreeAddr(t)
		args := append([]string{"run", target(i)}, runArgs...)
		args = append(args, "--shard", fmt.Sprintf("%d/%d", i, n), "--serve-result", addr, "--serve-result-timeout", "2m",
			"-o", filepath.Join(dir, fmt.Sprintf("part-%d.json", i)))
		p := startProc(t, 3*time.Minute, args...)
		p.addr = addr
		shards = append(shards, p)
	}
	return shards
}

func fromArgs(shards []*shardProc) []string {
	var args []string
	for _, s := range shards {
		args = append(args, "--from", s.addr)
	}
	return args
}

// TestDistributedMergeEqualsOneRun: three shards serving their results,
// merged by merge --from, count for count what one process sending the
// same load counts: the requests of every kind, per method too, and the
// values in every latency histogram. (The latency values themselves, the
// durations and rates are measured and differ run to run; those are
// not compared.) The merge over HTTP is the file merge: merging the
// shards' own -o files gives the same result but for the parts' names.
// Once the merge has its result, every shard exits 0.
func TestDistributedMergeEqualsOneRun(t *testing.T) {
	target := startServeBinary(t)
	dir := t.TempDir()
	startAt := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	// A fixed count, split exactly: shard i sends ticks i, i+3, ... of the
	// first 1,500, so the shards together send what the single run sends.
	load := []string{"--method", "echo", "--params", `[1,"a"]`, "--rate", "500", "--requests", "1500", "--start-at", startAt, "-q"}
	shards := startShards(t, 3, dir, func(int) string { return target }, load...)
	single := filepath.Join(dir, "single.json")
	one := startProc(t, time.Minute, append(append([]string{"run", target}, load...), "-o", single)...)

	total := filepath.Join(dir, "total.json")
	args := append([]string{"merge", "-o", total}, fromArgs(shards)...)
	c := runBinary(t, 2*time.Minute, args...)
	if c.code != exitOK {
		t.Fatalf("merge: %v", c)
	}
	mustContain(t, "merge report", c.stdout, "merged 3 results into "+total, shards[1].addr+" (shard 2/3)", "requests    sent 1500", "violations  none")
	mustContain(t, "merge log", c.stderr, "shard 3/3 at "+shards[2].addr+": done (exit code 0); result fetched")
	for i, s := range shards {
		if code, took := s.exit(t, 30*time.Second); code != exitOK {
			t.Errorf("shard %d: exit %d after %s; want 0\nstderr:\n%s", i+1, code, took, s.stderr)
		}
		mustContain(t, fmt.Sprintf("shard %d's stderr", i+1), s.stderr.String(), "acknowledged the result")
	}
	if code, _ := one.exit(t, time.Minute); code != exitOK {
		t.Fatalf("the single run: exit %d\nstderr:\n%s", code, one.stderr)
	}

	merged, whole := readResult(t, total), readResult(t, single)
	if merged.Requests != whole.Requests || merged.Requests.Sent != 1500 || merged.Requests.OK != 1500 {
		t.Errorf("requests\nmerged %+v\nsingle %+v", merged.Requests, whole.Requests)
	}
	sameCounts := func(what string, m, w stats.LatencySet) {
		if m.Corrected.Count != w.Corrected.Count || m.Service.Count != w.Service.Count || m.Lag.Count != w.Lag.Count {
			t.Errorf("%s: histogram counts %d/%d/%d merged, %d/%d/%d single", what,
				m.Corrected.Count, m.Service.Count, m.Lag.Count, w.Corrected.Count, w.Service.Count, w.Lag.Count)
		}
	}
	sameCounts("latency", merged.Latency, whole.Latency)
	if !reflect.DeepEqual(stats.SortedKeys(merged.Methods), stats.SortedKeys(whole.Methods)) {
		t.Fatalf("methods %v merged, %v single", stats.SortedKeys(merged.Methods), stats.SortedKeys(whole.Methods))
	}
	for name, w := range whole.Methods {
		m := merged.Methods[name]
		if m.Requests != w.Requests || !reflect.DeepEqual(m.Violations, w.Violations) || !reflect.DeepEqual(m.ErrorCodes, w.ErrorCodes) {
			t.Errorf("method %s: merged %+v, single %+v", name, m, w)
		}
		sameCounts("method "+name, m.Latency, w.Latency)
	}
	if !reflect.DeepEqual(merged.Violations, whole.Violations) || !reflect.DeepEqual(merged.ErrorCodes, whole.ErrorCodes) {
		t.Errorf("violations %v, error codes %v merged; %v, %v single", merged.Violations, merged.ErrorCodes, whole.Violations, whole.ErrorCodes)
	}
	if merged.Partial != nil || len(merged.MergedFrom) != 3 || merged.MergedFrom[1].Path != shards[1].addr {
		t.Errorf("partial %+v, merged from %+v", merged.Partial, merged.MergedFrom)
	}

	// The same merge from the shards' files.
	files := filepath.Join(dir, "files.json")
	var parts []string
	for i := range shards {
		parts = append(parts, filepath.Join(dir, fmt.Sprintf("part-%d.json", i+1)))
	}
	if c := runBinary(t, childLimit, append(append([]string{"merge"}, parts...), "-o", files)...); c.code != exitOK {
		t.Fatalf("file merge: %v", c)
	}
	fromFiles := readResult(t, files)
	for i := range merged.MergedFrom {
		merged.MergedFrom[i].Path, fromFiles.MergedFrom[i].Path = "", ""
	}
	a, _ := json.Marshal(merged)
	b, _ := json.Marshal(fromFiles)
	if !bytes.Equal(a, b) {
		t.Errorf("the merge over HTTP differs from the merge of the files:\n%.3000s\n%.3000s", a, b)
	}
}

// TestDistributedKilledShard: a shard killed (SIGKILL) in the middle of
// the run makes the merge fail within 5 s of the kill, naming the shard.
func TestDistributedKilledShard(t *testing.T) {
	target := startServeBinary(t)
	dir := t.TempDir()
	startAt := time.Now().Add(time.Second).UTC().Format(time.RFC3339)
	shards := startShards(t, 3, dir, func(int) string { return target },
		"--method", "echo", "--rate", "90", "--duration", "2m", "--start-at", startAt, "-q")
	merger := startProc(t, 3*time.Minute, append([]string{"merge", "-o", filepath.Join(dir, "total.json")}, fromArgs(shards)...)...)
	victim := shards[1]
	// The merge hears of the shards in any order.
	running := map[string]bool{}
	for range shards {
		merger.stderr.Wait(t, time.Minute, "the merge seeing every shard run", func(l string) bool {
			for _, s := range shards {
				if strings.HasSuffix(l, " at "+s.addr+": running") && !running[s.addr] {
					running[s.addr] = true
					return true
				}
			}
			return false
		})
	}
	killed := time.Now()
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	code, _ := merger.exit(t, 30*time.Second)
	took := time.Since(killed)
	t.Logf("the merge failed %s after the kill", took.Round(time.Millisecond))
	if code != exitIncomplete || took > 5*time.Second {
		t.Errorf("the merge exited %d %s after the kill; want %d within 5s\nstderr:\n%s", code, took, exitIncomplete, merger.stderr)
	}
	mustContain(t, "the merge's error", merger.stderr.String(), "shard 2/3 at "+victim.addr+" stopped answering", "killed?")
	if _, err := os.Stat(filepath.Join(dir, "total.json")); err == nil {
		t.Error("a failed merge wrote its result")
	}
	// The others are still running: an interrupt ends them (exit 130).
	for _, s := range []*shardProc{shards[0], shards[2]} {
		if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if code, _ := s.exit(t, 30*time.Second); code != exitInterrupted {
			t.Errorf("an interrupted shard exited %d; want %d\nstderr:\n%s", code, exitInterrupted, s.stderr)
		}
	}
}

// TestDistributedFailedShard: a shard that fails (its target unreachable,
// exit 3) fails the merge at once, named with its exit code and error;
// with --allow-missing the merge has the other shards, marked partial,
// and then every shard exits with its own code.
func TestDistributedFailedShard(t *testing.T) {
	target := startServeBinary(t)
	dead := "tcp://" + clitest.FreeAddr(t)
	dir := t.TempDir()
	startAt := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	shards := startShards(t, 3, dir, func(i int) string {
		if i == 2 {
			return dead
		}
		return target
	}, "--method", "echo", "--rate", "200", "--requests", "600", "--start-at", startAt, "-q")

	start := time.Now()
	c := runBinary(t, time.Minute, append([]string{"merge", "-o", filepath.Join(dir, "refused.json")}, fromArgs(shards)...)...)
	if c.code != exitIncomplete || c.elapsed > 10*time.Second {
		t.Errorf("merge without --allow-missing: exit %d after %s; want %d within seconds\n%v", c.code, time.Since(start), exitIncomplete, c)
	}
	mustContain(t, "the merge's error", c.stderr, "shard 2/3 at "+shards[1].addr+" failed with exit code 3: target unreachable", "--allow-missing")

	total := filepath.Join(dir, "total.json")
	c = runBinary(t, 2*time.Minute, append([]string{"merge", "--allow-missing", "-o", total}, fromArgs(shards)...)...)
	if c.code != exitOK {
		t.Fatalf("merge --allow-missing: %v", c)
	}
	mustContain(t, "the partial merge's report", c.stdout, "partial     shard 2/3 missing", "failed with exit code 3")
	for i, want := range []int{exitOK, exitUnreachable, exitOK} {
		if code, _ := shards[i].exit(t, 30*time.Second); code != want {
			t.Errorf("shard %d/3 exited %d; want %d\nstderr:\n%s", i+1, code, want, shards[i].stderr)
		}
	}
	merged := readResult(t, total)
	p1, p3 := readResult(t, filepath.Join(dir, "part-1.json")), readResult(t, filepath.Join(dir, "part-3.json"))
	if p := merged.Partial; p == nil || !reflect.DeepEqual(p.Missing, []string{"2/3"}) || len(p.Reasons) != 1 ||
		!strings.Contains(p.Reasons[0], "shard 2/3 at "+shards[1].addr+" failed with exit code 3") {
		t.Errorf("partial %+v; want shard 2/3 missing, with why", merged.Partial)
	}
	if merged.Requests.Sent != p1.Requests.Sent+p3.Requests.Sent || len(merged.MergedFrom) != 2 {
		t.Errorf("merged sent %d from %d parts; shards 1 and 3 sent %d and %d", merged.Requests.Sent, len(merged.MergedFrom), p1.Requests.Sent, p3.Requests.Sent)
	}
	var out bytes.Buffer
	if code, err := checkCmd([]string{total, "--threshold", "violations==0"}, &out, &out); code != exitOK || err != nil {
		t.Errorf("check: exit %d, %v\n%s", code, err, &out)
	}
	mustContain(t, "check", out.String(), "NOTE "+total+" is a partial merge (shard 2/3 missing)")
}

// TestDistributedFlags: what --serve-result and merge's new flags refuse,
// in process.
func TestDistributedFlags(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "s1.json")
	writePart(t, part, 10, 0, &stats.ShardInfo{Index: 1, Count: 2})
	run := func(extra ...string) []string {
		return append([]string{"run", deadTCP, "--method", "echo", "--duration", "100ms"}, extra...)
	}
	tests := []struct {
		args []string
		want string
	}{
		{run("--serve-result-timeout", "1s"), "--serve-result-timeout goes with --serve-result ADDR"},
		{run("--serve-result-any-host"), "--serve-result-any-host goes with --serve-result ADDR"},
		{run("--serve-result", "0.0.0.0:0"), `--serve-result: result address "0.0.0.0:0": host "0.0.0.0" is not a loopback address`},
		{run("--serve-result", "127.0.0.1"), "want host:port"},
		{run("--serve-result", "127.0.0.1:0", "--serve-result-timeout", "0s"), "--serve-result-timeout must be positive"},
		{run("--serve-result", "127.0.0.1:0", "--dry-run", "3"), "--dry-run sends nothing"},
		{[]string{"run", "--target", deadTCP, "--target", deadHTTP, "--rounds", "2", "--method", "echo", "--serve-result", "127.0.0.1:0"}, "not with --target"},
		{[]string{"merge", "--from", "127.0.0.1:1", part}, "give result files or --from addresses, not both"},
		{[]string{"merge", "--wait", "1s", part, "-o", filepath.Join(dir, "x.json")}, "--wait applies to --from"},
		{[]string{"merge", "--from", "127.0.0.1:1", "--wait", "0s"}, "--wait must be positive"},
		{[]string{"merge", "--from", "ftp://127.0.0.1:1"}, "--from: \"ftp://127.0.0.1:1\": a shard serves http://, not ftp://"},
		{[]string{"merge", "--from", "127.0.0.1:1,127.0.0.1:1"}, "are the same shard"},
		{[]string{"merge", "--from", "127.0.0.1:1", "--upload", "/tmp/total.json"}, "--upload: /tmp/total.json is not an http:// or https:// URL"},
		{[]string{"merge"}, "one or more result files, or --from"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := realMain(tt.args, &stdout, &stderr); code != exitUsage {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", code, exitUsage, &stderr)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, &stderr)
			}
		})
	}
}

// TestServeResultServesFailure: a run that fails after --serve-result is
// up (here a bad --rate, exit 2) serves the failure, its exit code and
// error, until a merger acknowledges it; then it exits with that code,
// having printed the error once, before the wait.
func TestServeResultServesFailure(t *testing.T) {
	addr := clitest.FreeAddr(t)
	type exit struct {
		code           int
		stdout, stderr string
	}
	done := make(chan exit, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		code := realMain([]string{"run", deadTCP, "--method", "echo", "--rate", "-1", "--shard", "2/3", "--serve-result", addr, "--serve-result-timeout", "1m"}, &stdout, &stderr)
		done <- exit{code, stdout.String(), stderr.String()}
	}()
	client := shardhttp.NewHTTPClient(2 * time.Second)
	base := "http://" + addr
	var st shardhttp.Status
	for deadline := time.Now().Add(20 * time.Second); ; {
		var err error
		if st, err = client.Status(context.Background(), base); err == nil && st.State != shardhttp.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failure served within 20s: %+v, %v", st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st.State != shardhttp.Failed || st.Shard != "2/3" || st.ExitCode == nil || *st.ExitCode != exitUsage || !strings.Contains(st.Error, "--rate") {
		t.Errorf("status %+v; want shard 2/3 failed with exit 2 and the --rate error", st)
	}
	select {
	case e := <-done:
		t.Fatalf("exited (%d) before a merger acknowledged the failure:\n%s", e.code, e.stderr)
	default:
	}
	if err := client.Ack(context.Background(), base, ""); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-done:
		if e.code != exitUsage || strings.Count(e.stderr, "--rate") != 1 {
			t.Errorf("exit %d; want %d, with the error printed once:\n%s", e.code, exitUsage, e.stderr)
		}
		mustContain(t, "stderr", e.stderr, "waiting up to 1m0s for a merger to learn of the failure", "acknowledged the failure")
	case <-time.After(20 * time.Second):
		t.Fatal("still waiting 20s after the acknowledgement")
	}
}

// TestMergeMissingAndUpload: a file merge that lacks shards is refused
// unless --allow-missing, which marks it partial; --upload PUTs the bytes
// -o writes, and an upload refused is exit 4; --from an address where
// nothing answers gives up after --wait.
func TestMergeMissingAndUpload(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	writePart(t, at("s1.json"), 10, 0, &stats.ShardInfo{Index: 1, Count: 3})
	writePart(t, at("s3.json"), 30, 0, &stats.ShardInfo{Index: 3, Count: 3})
	var uploaded []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || r.URL.Path == "/denied" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		uploaded, _ = io.ReadAll(r.Body)
	}))
	defer up.Close()

	merge := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code, err := mergeCmd(context.Background(), args, &stdout, &stderr)
		if err != nil {
			fmt.Fprint(&stderr, err)
		}
		return code, stdout.String(), stderr.String()
	}
	code, _, stderr := merge(at("s1.json"), at("s3.json"), "-o", at("x.json"))
	if code != exitUsage || !strings.Contains(stderr, "shard 2/3 missing: the merge would cover only part of the run (--allow-missing") {
		t.Errorf("a merge lacking a shard: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(at("x.json")); err == nil {
		t.Error("a refused merge wrote its file")
	}
	code, stdout, stderr := merge("--allow-missing", at("s1.json"), at("s3.json"), "-o", at("total.json"), "--upload", up.URL+"/total.json?sig=1")
	if code != exitOK {
		t.Fatalf("merge --allow-missing --upload: exit %d\n%s", code, stderr)
	}
	mustContain(t, "report", stdout, "partial     shard 2/3 missing")
	mustContain(t, "stderr", stderr, "uploaded the merged result to "+up.URL+"/total.json?…")
	written, err := os.ReadFile(at("total.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(uploaded, written) {
		t.Errorf("uploaded %d bytes, -o wrote %d; want the same bytes", len(uploaded), len(written))
	}
	if r := readResult(t, at("total.json")); r.Partial == nil || r.Requests.Sent != 40 {
		t.Errorf("partial %+v, sent %d; want shard 2/3 missing, 40", r.Partial, r.Requests.Sent)
	}
	code, _, stderr = merge("--allow-missing", at("s1.json"), at("s3.json"), "-o", at("total2.json"), "--upload", up.URL+"/denied")
	if code != exitIncomplete || !strings.Contains(stderr, "403 Forbidden") {
		t.Errorf("a refused upload: exit %d\n%s", code, stderr)
	}

	start := time.Now()
	code, _, stderr = merge("--from", clitest.FreeAddr(t), "--wait", "1s")
	if code != exitIncomplete || !strings.Contains(stderr, "did not answer within 1s") || time.Since(start) > 10*time.Second {
		t.Errorf("--from an address where nothing answers: exit %d after %s\n%s", code, time.Since(start), stderr)
	}
}

// TestServeResultServesTheFile: a shard's /result is its -o file byte for
// byte; acknowledged, the shard exits with the run's code at once; with
// no merger, it exits at --serve-result-timeout.
func TestServeResultServesTheFile(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	out := filepath.Join(t.TempDir(), "part.json")
	addr := clitest.FreeAddr(t)
	type exit struct {
		code   int
		stderr string
	}
	done := make(chan exit, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		code := realMain([]string{"run", tcpURL, "--method", "echo", "-n", "20", "--rate", "200", "-q", "-o", out, "--shard", "1/1",
			"--serve-result", addr, "--serve-result-timeout", "1m"}, &stdout, &stderr)
		done <- exit{code, stderr.String()}
	}()
	client := shardhttp.NewHTTPClient(2 * time.Second)
	base := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, err := client.Status(context.Background(), base)
		if err == nil && st.State == shardhttp.Done {
			if *st.ExitCode != exitOK || st.Shard != "1/1" {
				t.Errorf("status %+v; want shard 1/1 done, exit 0", st)
			}
			break
		}
		if err == nil && st.State == shardhttp.Failed || time.Now().After(deadline) {
			t.Fatalf("the run was not done within 20s: %+v, %v", st, err)
		}
	}
	data, etag, err := client.Result(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, file) {
		t.Errorf("/result is %d bytes, not the %d bytes of the -o file", len(data), len(file))
	}
	if err := client.Ack(context.Background(), base, etag); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-done:
		if e.code != exitOK || !strings.Contains(e.stderr, "acknowledged the result") {
			t.Errorf("exit %d; want 0 after the acknowledgement\n%s", e.code, e.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("still waiting 20s after the acknowledgement")
	}

	// No merger: the wait ends at the timeout.
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := realMain([]string{"run", tcpURL, "--method", "echo", "-n", "5", "--rate", "100", "-q",
		"--serve-result", "127.0.0.1:0", "--serve-result-timeout", "300ms"}, &stdout, &stderr)
	if code != exitOK || time.Since(start) < 300*time.Millisecond || !strings.Contains(stderr.String(), "no merger acknowledged the result within 300ms; exiting") {
		t.Errorf("exit %d after %s; want 0 after the 300ms wait\n%s", code, time.Since(start), &stderr)
	}
}

// TestServeResultBesideLinger: a shard with --metrics-linger offers its
// result as soon as the run is done, while its metrics endpoint lingers:
// the merge is not held up for the linger, and the shard exits once both
// are over (before, the result was offered only after the linger).
func TestServeResultBesideLinger(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	addr, metrics := clitest.FreeAddr(t), clitest.FreeAddr(t)
	const linger = 3 * time.Second
	done := make(chan int, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		done <- realMain([]string{"run", tcpURL, "--method", "echo", "-n", "20", "--rate", "200", "-q", "--shard", "1/1",
			"--serve-result", addr, "--serve-result-timeout", "1m", "--metrics-addr", metrics, "--metrics-linger", linger.String()}, &stdout, &stderr)
	}()
	client := shardhttp.NewHTTPClient(2 * time.Second)
	base := "http://" + addr
	var st shardhttp.Status
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if st, err = client.Status(context.Background(), base); err == nil && st.State != shardhttp.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run was not done within 20s: %+v, %v", st, err)
		}
	}
	resp, err := http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatalf("the result is offered (%s), but the metrics endpoint is gone: %v; want it still lingering", st.State, err)
	}
	resp.Body.Close()
	_, etag, err := client.Result(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Ack(context.Background(), base, etag); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d; want 0", code)
		}
	case <-time.After(linger + 20*time.Second):
		t.Fatal("the shard did not exit after its linger and the acknowledgement")
	}
}
