package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/testsrv"
)

// fuzzBinary builds rpcfuzz (once per test process) next to rpcload.
var (
	fuzzOnce  sync.Once
	fuzzPath  string
	fuzzError error
)

func fuzzBinary(t *testing.T) string {
	t.Helper()
	binary(t) // skips in -short mode, and makes binDir
	fuzzOnce.Do(func() {
		gobin, err := goTool()
		if err != nil {
			fuzzError = err
			return
		}
		fuzzPath = filepath.Join(binDir, "rpcfuzz")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, gobin, "build", "-o", fuzzPath, "../rpcfuzz").CombinedOutput(); err != nil {
			fuzzError = fmt.Errorf("go build rpcfuzz: %v\n%s", err, out)
		}
	})
	if fuzzError != nil {
		t.Fatal(fuzzError)
	}
	return fuzzPath
}

// The planted secrets all hold "planted", which no output may contain in
// any form (escaping leaves letters alone).
const (
	plantedAuth   = "Bearer planted-auth-Zq9+/x=="          // secret by default (Authorization)
	plantedCustom = "planted-custom-Hk2"                    // secret by --secret-header X-Trace-Ctx
	plantedEnv    = "planted-env-Wm4"                       // secret as a ${VAR} of a scenario
	plantedPW     = "planted-pw-Lx7"                        // secret as a URL's password
	plantedVar    = "RPCLOAD_TEST_PLANTED_TOKEN"            // the variable holding plantedEnv
	plantedWord   = "planted"                               // in every form of every secret
	echoHeaders   = "Authorization X-Trace-Ctx X-Tenant"    // what the echo server puts in its replies
	secretFlag    = "--secret-header=X-Trace-Ctx"           //
	customHeader  = "X-Trace-Ctx: " + plantedCustom         //
	authHeader    = "Authorization: " + plantedAuth         //
	badAuthHeader = "Authorization " + plantedAuth          // no colon: refused
	tenantValue   = "t-" + plantedEnv                       // X-Tenant after expansion
	tenantYAML    = "X-Tenant: \"t-${" + plantedVar + "}\"" // in the scenario
)

// echoServer answers every JSON-RPC request over HTTP with a reply that
// breaks the envelope rules (result and error both) and quotes the secret
// request headers back: the worst a server can do with them. It records
// the headers it saw, to prove the secrets were sent.
type echoServer struct {
	mu   sync.Mutex
	seen map[string]string
}

func (e *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var echoed []string
	e.mu.Lock()
	for _, name := range strings.Fields(echoHeaders) {
		v := r.Header.Get(name)
		if v != "" {
			e.seen[name] = v
		}
		echoed = append(echoed, v)
	}
	e.mu.Unlock()
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	id := json.RawMessage("null")
	if json.Unmarshal(body, &req) == nil && len(req.ID) > 0 {
		id = req.ID
	}
	msg, _ := json.Marshal("you sent " + strings.Join(echoed, " | "))
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s,"error":{"code":-32000,"message":%s}}`, id, msg, msg)
}

// TestSecretsNeverWritten plants secrets in headers (one secret by
// default, one by --secret-header), in an environment variable a scenario
// uses and in a target URL's password; runs both binaries against a server
// that echoes them back in broken replies, in passing, failing, refused
// and verbose runs, and in the commands that read results back; and finds
// none of them in any output file, stdout or stderr.
func TestSecretsNeverWritten(t *testing.T) {
	rpcload, rpcfuzz := binary(t), fuzzBinary(t)
	t.Setenv(plantedVar, plantedEnv)
	echo := &echoServer{seen: map[string]string{}}
	srv := httptest.NewServer(echo) // 127.0.0.1
	t.Cleanup(srv.Close)
	echoURL := strings.Replace(srv.URL, "http://", "http://bob:"+plantedPW+"@", 1) + "/"
	_, refURL, _ := startServer(t, testsrv.Config{})
	refURL = strings.Replace(refURL, "http://", "http://bob:"+plantedPW+"@", 1)

	out := t.TempDir()
	in := t.TempDir() // the scenario: not an output (it holds ${VAR}, not the value)
	scenario := filepath.Join(in, "s.yaml")
	yml := "version: 1\ntarget: " + echoURL + "\nheaders:\n  " + tenantYAML + "\nload: {rate: 40, duration: 300ms, timeout: 2s}\nmix: [{method: echo, params: [1]}]\n"
	if err := os.WriteFile(scenario, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return filepath.Join(out, name) }
	type run struct {
		name string
		bin  string
		args []string
		code int
	}
	runs := []run{
		{"rpcload passing, verbose, soak", rpcload, []string{"run", refURL, "--method", "echo", "--params", "[1]", "--rate", "50", "--duration", "400ms",
			"--interval", "100ms", "-H", authHeader, "-H", customHeader, secretFlag, "-o", p("pass.json"), "--soak", "--html", p("pass.html"),
			"--junit", p("pass.xml"), "--threshold", "p99<10s"}, exitOK},
		{"rpcload failing scenario", rpcload, []string{"run", "-f", scenario, "-H", authHeader, "-H", customHeader, secretFlag,
			"-o", p("fail.json"), "--html", p("fail.html"), "--junit", p("fail.xml"), "--threshold", "error_rate<0.001%",
			"--hlog", p("fail.hlog"), "--series", p("fail.series.jsonl"), "--interval", "100ms"}, exitFindings},
		{"rpcload refused header", rpcload, []string{"run", echoURL, "--method", "echo", "-H", badAuthHeader}, exitUsage},
		{"rpcload refused URL", rpcload, []string{"run", "http://bob:" + plantedPW + "@127.0.0.1:99999/", "--method", "echo", "-H", authHeader}, exitUsage},
		{"rpcload unreachable", rpcload, []string{"run", "http://bob:" + plantedPW + "@127.0.0.1:1/", "--method", "echo", "-H", authHeader,
			"--duration", "200ms", "--timeout", "1s", "-o", p("unreachable.json")}, -1},
		{"rpcload report", rpcload, []string{"report", p("fail.json"), p("pass.json"), "--html", p("report.html")}, exitOK},
		{"rpcload report text", rpcload, []string{"report", p("fail.json")}, exitOK},
		{"rpcload compare", rpcload, []string{"compare", p("pass.json"), p("fail.json"), "--html", p("compare.html")}, exitOK},
		{"rpcload check", rpcload, []string{"check", p("fail.json"), "--threshold", "p99<1ms", "--junit", p("check.xml")}, -1},
		{"rpcfuzz failing, verbose", rpcfuzz, []string{"run", echoURL, "--out", p("fuzz"), "-H", authHeader, "-H", customHeader, "-H", "X-Tenant: " + tenantValue,
			"--secret-header", "X-Trace-Ctx", "--secret-header", "X-Tenant", "--execs", "40", "--seed", "1", "--timeout", "2s", "--minimize-budget", "20"}, exitFindings},
		{"rpcfuzz refused header", rpcfuzz, []string{"run", echoURL, "--out", p("fuzz2"), "-H", badAuthHeader}, exitUsage},
		{"rpcfuzz refused URL", rpcfuzz, []string{"run", "http://bob:" + plantedPW + "@127.0.0.1:99999/", "--out", p("fuzz3")}, exitUsage},
	}
	var streams strings.Builder
	for _, r := range runs {
		c := runChild(r.bin, childLimit, r.args)
		if c.err != nil || c.code == -1 {
			t.Fatalf("%s: %v", r.name, c)
		}
		if r.code >= 0 && c.code != r.code {
			t.Errorf("%s: exit %d, want %d\n%v", r.name, c.code, r.code, c)
		}
		fmt.Fprintf(&streams, "== %s stdout\n%s\n== %s stderr\n%s\n", r.name, c.stdout, r.name, c.stderr)
	}
	// The fuzz finding's replay and minimize read the files back.
	findings, _ := filepath.Glob(p("fuzz/*/finding.json"))
	if len(findings) == 0 {
		t.Fatalf("rpcfuzz wrote no finding against the echo server\n%s", streams.String())
	}
	dir := filepath.Dir(findings[0])
	c := runChild(rpcfuzz, childLimit, []string{"replay", dir, "--target", echoURL, "-H", authHeader, "--times", "1"})
	fmt.Fprintf(&streams, "== replay\n%s\n%s\n", c.stdout, c.stderr)

	echo.mu.Lock()
	for name, want := range map[string]string{"Authorization": plantedAuth, "X-Trace-Ctx": plantedCustom, "X-Tenant": tenantValue} {
		if echo.seen[name] != want {
			t.Errorf("the server saw %s = %q, want %q: the secret was not sent", name, echo.seen[name], want)
		}
	}
	echo.mu.Unlock()

	if s := streams.String(); strings.Contains(s, plantedWord) {
		for _, line := range strings.Split(s, "\n") {
			if strings.Contains(line, plantedWord) {
				t.Errorf("a secret on stdout or stderr: %s", line)
			}
		}
	}
	files, redacted := 0, 0
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		if strings.Contains(string(b), "[REDACTED]") {
			redacted++
		}
		if i := strings.Index(string(b), plantedWord); i >= 0 {
			t.Errorf("a secret in %s: ...%s...", path, b[max(0, i-60):min(len(b), i+60)])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The check must have seen something: every kind of output, and the
	// echoed secrets scrubbed in some.
	for _, name := range []string{"pass.json", "pass.html", "pass.xml", "pass.hlog", "pass.series.jsonl", "fail.json", "fail.html", "fail.xml",
		"fail.hlog", "report.html", "compare.html", "check.xml", "fuzz/summary.json", "fuzz/latency.json"} {
		if _, err := os.Stat(p(name)); err != nil {
			t.Errorf("output %s missing: %v", name, err)
		}
	}
	if redacted < 4 {
		t.Errorf("only %d of %d files hold [REDACTED]: the echoed secrets did not reach the outputs, so the test proves little", redacted, files)
	}
	for _, want := range []string{"[REDACTED]", "header 1 has no ':'"} {
		if !strings.Contains(streams.String(), want) {
			t.Errorf("stdout/stderr never show %q", want)
		}
	}
}
