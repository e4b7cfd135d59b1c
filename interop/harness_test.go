package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The rpcload binary, built once per test run by TestMain.
var (
	rpcloadPath string // path of the built binary ("" when the build failed)
	buildErr    error  // why the build failed; every test reports it
)

// TestMain builds cmd/rpcload of the parent module once, runs the tests and
// removes the binary. A failed build does not stop the run here: each test
// then fails with the build's output, so nothing is skipped silently.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rpcload-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop: temp dir:", err)
		os.Exit(1)
	}
	start := time.Now()
	rpcloadPath, buildErr = buildRPCLoad(dir)
	if buildErr == nil {
		fmt.Fprintf(os.Stderr, "interop: built %s in %v\n", rpcloadPath, time.Since(start).Round(time.Millisecond))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildRPCLoad runs `go build -o DIR/rpcload ./cmd/rpcload` in the
// repository root (the parent of this module's directory), without a shell.
func buildRPCLoad(dir string) (string, error) {
	return buildParentCmd(dir, "rpcload")
}

// The rpcfuzz binary, built on first use by rpcfuzzBinary: only the fuzz
// tests need it, so a run of the load tests alone does not pay for it.
var (
	rpcfuzzOnce     sync.Once
	rpcfuzzPath     string
	rpcfuzzBuildErr error
)

// rpcfuzzBinary builds cmd/rpcfuzz of the parent module once, next to the
// rpcload binary (in the directory TestMain removes after the run), and
// returns its path. When rpcload did not build, it is built into
// t.TempDir() for this test alone, as gomcpServers does.
func rpcfuzzBinary(t *testing.T) string {
	t.Helper()
	if rpcloadPath == "" {
		p, err := buildParentCmd(t.TempDir(), "rpcfuzz")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	rpcfuzzOnce.Do(func() {
		start := time.Now()
		rpcfuzzPath, rpcfuzzBuildErr = buildParentCmd(filepath.Dir(rpcloadPath), "rpcfuzz")
		if rpcfuzzBuildErr == nil {
			fmt.Fprintf(os.Stderr, "interop: built %s in %v\n", rpcfuzzPath, time.Since(start).Round(time.Millisecond))
		}
	})
	if rpcfuzzBuildErr != nil {
		t.Fatal(rpcfuzzBuildErr)
	}
	return rpcfuzzPath
}

// buildParentCmd runs `go build -o DIR/NAME ./cmd/NAME` in the repository
// root (the parent of this module's directory), without a shell.
func buildParentCmd(dir, name string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("interop: working directory: %w", err)
	}
	root := filepath.Dir(wd)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("interop: repository root %s: %w", root, err)
	}
	if !bytes.Contains(gomod, []byte("module github.com/rpcload/rpcload\n")) {
		return "", fmt.Errorf("interop: %s/go.mod is not the rpcload module", root)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("interop: the go command is not on PATH: %w", err)
	}
	out := filepath.Join(dir, name)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", out, "./cmd/"+name)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("interop: go build ./cmd/%s in %s: %w\n%s", name, root, err, msg)
	}
	return out, nil
}

// result holds the fields of rpcload's result file (schema rpcload.result/v1)
// that these tests judge.
type result struct {
	Schema string `json:"schema"`
	Target string `json:"target"`
	Rate   struct {
		Target   float64 `json:"target"`
		Achieved float64 `json:"achieved"`
	} `json:"rate"`
	Requests struct {
		Sent            int64 `json:"sent"`
		Notifications   int64 `json:"notifications"`
		Answered        int64 `json:"answered"`
		OK              int64 `json:"ok"`
		RPCErrors       int64 `json:"rpc_errors"`
		InvalidReplies  int64 `json:"invalid_replies"`
		TransportErrors int64 `json:"transport_errors"`
		Timeouts        int64 `json:"timeouts"`
		Late            int64 `json:"late"`
		Leaked          int64 `json:"leaked"`
		Dropped         int64 `json:"dropped"`
		Messages        int64 `json:"messages"`
		ServerMessages  int64 `json:"server_messages"`
	} `json:"requests"`
	ServerMethods map[string]int64 `json:"server_methods"`
	Profile       *struct {
		Name                   string `json:"name"`
		Era                    string `json:"era"`
		Version                string `json:"version"`
		Handshakes             int64  `json:"handshakes"`
		ServerRequestsAnswered int64  `json:"server_requests_answered"`
		CancelsSent            int64  `json:"cancels_sent"`
	} `json:"profile"`
	Child *struct {
		Exits      []string `json:"exits"`
		StderrTail []string `json:"stderr_tail"`
	} `json:"child"`
	Violations       map[string]int64 `json:"violations"`
	ViolationSamples map[string][]struct {
		Method string `json:"method"`
		Frame  string `json:"frame"`
	} `json:"violation_samples"`
	ErrorCodes            map[string]int64 `json:"error_codes"`
	TransportErrorSamples []string         `json:"transport_error_samples"`
	Latency               struct {
		Corrected struct {
			P50us int64 `json:"p50_us"`
			P99us int64 `json:"p99_us"`
		} `json:"corrected"`
	} `json:"latency"`
}

// knownViolation is a spec rule a real server is known to break, kept here
// in the open instead of hidden behind --allow-violations.
type knownViolation struct {
	rule  string // rpcload's rule id, e.g. "reply_to_notification"
	count int64  // the exact count expected; 0 means "more than zero"
	why   string // the JSON-RPC 2.0 section broken, for the failure message
}

// loadCase is one rpcload run against a server.
type loadCase struct {
	name    string
	args    []string         // after "run"; -q, -o and --timeout are added
	notify  bool             // the run sends notifications: expect some
	batches bool             // the run sends batches: expect fewer messages than requests
	known   []knownViolation // the violations this server is expected to show
	// partial: a known violation leaves requests without an ok reply
	// (e.g. batch_missing_reply), so ok == sent is not asserted.
	partial bool
	// errorCode: every request must be answered with this JSON-RPC error
	// code (e.g. "-32601" for an unknown method) instead of a result.
	errorCode string
	// serverMethod: the server must have sent messages of this method
	// (e.g. eth_subscription), counted apart from the replies.
	serverMethod string
}

// runLoad runs `rpcload run ARGS -q -o FILE` with a hard time limit and
// returns the parsed result file, the exit code and the text report.
func runLoad(t *testing.T, args []string) (*result, int, string) {
	t.Helper()
	return runLoadCmd(t, args, nil)
}

// runLoadCmd is runLoad with a child-process target when child is not nil:
// `rpcload run ARGS -q --timeout 5s -o FILE -- CHILD...` (the flags go
// before "--", or they would be the child's arguments).
func runLoadCmd(t *testing.T, args, child []string) (*result, int, string) {
	t.Helper()
	if buildErr != nil {
		t.Fatalf("cannot run rpcload: %v", buildErr)
	}
	out := filepath.Join(t.TempDir(), "result.json")
	full := append([]string{"run"}, args...)
	full = append(full, "-q", "--timeout", "5s", "-o", out)
	if child != nil {
		full = append(append(full, "--"), child...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, rpcloadPath, full...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("rpcload %s: %v\nstderr:\n%s", strings.Join(full, " "), err, stderr.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("rpcload %s: killed after %v", strings.Join(full, " "), elapsed)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("rpcload %s exited %d without a result file: %v\nstdout:\n%s\nstderr:\n%s",
			strings.Join(full, " "), code, err, stdout.String(), stderr.String())
	}
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("result file: %v", err)
	}
	t.Logf("rpcload %s\n  exit %d in %v: sent %d, notifications %d, messages %d, answered %d, ok %d; achieved %.0f/s; p50 %dµs p99 %dµs; violations %v",
		strings.Join(args, " "), code, elapsed.Round(time.Millisecond),
		r.Requests.Sent, r.Requests.Notifications, r.Requests.Messages, r.Requests.Answered, r.Requests.OK,
		r.Rate.Achieved, r.Latency.Corrected.P50us, r.Latency.Corrected.P99us, r.Violations)
	return &r, code, stdout.String() + stderr.String()
}

// check runs c and asserts: the schema; answered > 0; notifications and
// batches were sent when asked for; every request sent got an ok result (or
// the error code c.errorCode), and no timeouts, leaks, late, invalid or
// dropped requests or transport errors (unless c.partial); exactly the known
// violations; exit code 0, or 1 when violations are expected.
func (c loadCase) check(t *testing.T) {
	t.Helper()
	r, code, report := runLoad(t, c.args)
	defer func() {
		if t.Failed() {
			t.Logf("rpcload's report:\n%s", report)
		}
	}()
	c.judge(t, r, code)
}

// judge asserts what check does about a result r and exit code that came
// from a run of c.
func (c loadCase) judge(t *testing.T, r *result, code int) {
	t.Helper()
	q := r.Requests
	if r.Schema != "rpcload.result/v1" {
		t.Errorf("schema = %q, want rpcload.result/v1", r.Schema)
	}
	if q.Answered <= 0 {
		t.Errorf("answered = %d, want > 0", q.Answered)
	}
	if c.notify && q.Notifications <= 0 {
		t.Errorf("notifications = %d, want > 0 with --notify-every", q.Notifications)
	}
	if c.serverMethod != "" && r.ServerMethods[c.serverMethod] == 0 {
		t.Errorf("server methods %v: want %s messages counted", r.ServerMethods, c.serverMethod)
	}
	if c.batches && q.Messages >= q.Sent+q.Notifications {
		t.Errorf("messages = %d for %d calls: batches were not sent as arrays", q.Messages, q.Sent+q.Notifications)
	}
	switch {
	case c.errorCode != "":
		if n := r.ErrorCodes[c.errorCode]; q.RPCErrors != q.Sent || q.Answered != q.Sent || n != q.Sent {
			t.Errorf("sent %d, answered %d, rpc errors %d, codes %v: want every request answered with error %s",
				q.Sent, q.Answered, q.RPCErrors, r.ErrorCodes, c.errorCode)
		}
	case !c.partial:
		if q.OK != q.Sent || q.Answered != q.Sent {
			t.Errorf("sent %d, answered %d, ok %d: want every request answered ok (error codes %v)",
				q.Sent, q.Answered, q.OK, r.ErrorCodes)
		}
	}
	if !c.partial {
		if q.Timeouts+q.Leaked+q.TransportErrors+q.Late+q.InvalidReplies+q.Dropped != 0 {
			t.Errorf("timeouts %d, leaked %d, transport errors %d %q, late %d, invalid %d, dropped %d: want 0",
				q.Timeouts, q.Leaked, q.TransportErrors, r.TransportErrorSamples, q.Late, q.InvalidReplies, q.Dropped)
		}
	}
	c.checkViolations(t, r)
	want := 0
	if len(c.known) > 0 {
		want = 1
	}
	if code != want {
		t.Errorf("exit code %d, want %d", code, want)
	}
}

// checkViolations asserts that r holds exactly the known violations.
func (c loadCase) checkViolations(t *testing.T, r *result) {
	t.Helper()
	expected := map[string]knownViolation{}
	for _, k := range c.known {
		expected[k.rule] = k
	}
	var rules []string
	for rule, n := range r.Violations {
		if n > 0 {
			rules = append(rules, rule)
		}
	}
	sort.Strings(rules)
	for _, rule := range rules {
		if _, ok := expected[rule]; !ok {
			sample := ""
			if s := r.ViolationSamples[rule]; len(s) > 0 {
				sample = fmt.Sprintf(" (e.g. %s: %s)", s[0].Method, s[0].Frame)
			}
			t.Errorf("unexpected violation %s: %d%s", rule, r.Violations[rule], sample)
		}
	}
	for _, k := range c.known {
		n := r.Violations[k.rule]
		switch {
		case k.count == 0 && n == 0:
			t.Errorf("known violation %s (%s) did not occur: has the server been fixed?", k.rule, k.why)
		case k.count > 0 && n != k.count:
			t.Errorf("known violation %s (%s): %d, want %d", k.rule, k.why, n, k.count)
		}
	}
}
