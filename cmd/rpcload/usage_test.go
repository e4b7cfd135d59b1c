package main

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/workload"
)

// Every target in these tables is a closed loopback port, so a case that
// wrongly passed validation would end quickly (exit 3) instead of hanging.
const (
	deadTCP  = "tcp://127.0.0.1:1"
	deadHTTP = "http://127.0.0.1:1/"
)

func TestUsageErrors(t *testing.T) {
	run := func(extra ...string) []string {
		return append([]string{"run", deadTCP, "--method", "echo", "--duration", "100ms"}, extra...)
	}
	runHTTP := func(extra ...string) []string {
		return append([]string{"run", deadHTTP, "--method", "echo", "--duration", "100ms"}, extra...)
	}
	tests := []struct {
		name string
		args []string
		want []string // substrings of stderr
	}{
		{"unknown flag", run("--bogus"), []string{"unknown flag", "--bogus"}},
		{"unknown shorthand", run("-Z"), []string{"unknown shorthand", "Z"}},
		{"flag without value", run("--rate"), []string{"--rate"}},
		{"rate not a number", run("--rate", "fast"), []string{"--rate", "fast"}},
		{"negative rate", run("--rate", "-1"), []string{"--rate", "negative"}},
		{"zero rate alone", run("--rate", "0"), []string{"--rate", "--concurrency"}},
		{"rate too high", run("--rate", "2e7"), []string{"--rate", "10,000,000"}},
		{"rate with a bad unit", run("--rate", "50/fortnight"), []string{"--rate", "50/fortnight", "positive duration"}},
		{"requests not a count", run("-n", "many"), []string{"--requests", "many"}},
		{"requests with diff", []string{"run", "--target", deadTCP, "--target", deadHTTP, "--diff", "--method", "echo", "-n", "5"}, []string{"--diff-requests", "--requests"}},
		{"rate and concurrency", run("--rate", "10", "--concurrency", "4"), []string{"--rate", "--concurrency", "exclude"}},
		{"negative concurrency", run("--concurrency", "-1"), []string{"--concurrency"}},
		{"max-rate with rate", run("--rate", "10", "--max-rate", "5"), []string{"--max-rate caps a closed loop", "intended times"}},
		{"max-rate alone", run("--max-rate", "5"), []string{"--max-rate caps a closed loop (--concurrency)"}},
		{"negative max-rate", run("--concurrency", "4", "--max-rate", "-1"), []string{"--max-rate must be a number of messages per second, 0 or more"}},
		{"zero conns", run("--conns", "0"), []string{"--conns", "at least 1"}},
		{"zero duration", run("--duration", "0"), []string{"--duration", "positive"}},
		{"negative duration", run("--duration", "-1s"), []string{"--duration", "positive"}},
		{"bad duration", run("--duration", "soon"), []string{"--duration", "soon"}},
		{"negative timeout", run("--timeout", "-1s"), []string{"--timeout", "positive"}},
		{"zero timeout", run("--timeout", "0"), []string{"--timeout", "positive"}},
		{"negative drain", run("--drain", "-1s"), []string{"--drain", "negative"}},
		{"zero max-inflight", run("--max-inflight", "0"), []string{"--max-inflight", "at least 1"}},
		{"negative notify-every", run("--notify-every", "-1"), []string{"--notify-every"}},
		{"zero interval", run("--interval", "0"), []string{"--interval", "positive"}},
		{"quiet without a soak", run("--soak-quiet", "5s"), []string{"--soak-quiet", "give --soak too"}},
		{"negative quiet", run("--soak", "--hlog", "x.hlog", "--soak-quiet", "-1s"), []string{"--soak-quiet", "negative"}},
		{"metrics over tcp", run("--server-metrics", "tcp://127.0.0.1:1/metrics"), []string{"--server-metrics", "http:// or https://"}},
		{"metrics without a host", run("--server-metrics", "http:///metrics"), []string{"--server-metrics", "no host"}},
		{"gauge without an endpoint", run("--server-metric", "go_threads"), []string{"--server-metric", "give --server-metrics URL too"}},
		{"gauge that does not parse", run("--server-metrics", "http://127.0.0.1:1/metrics", "--server-metric", `x{a="1"`), []string{"--server-metric", `x{a=\"1\"`, "column"}},
		{"gauge with a regexp", run("--server-metrics", "http://127.0.0.1:1/metrics", "--server-metric", `x{a=~"1"}`), []string{"--server-metric", "double-quoted"}},
		{"zero pid", run("--server-pid", "0"), []string{"--server-pid", "process id"}},
		{"no such pid", run("--server-pid", "2147483646"), []string{"--server-pid 2147483646", "no process 2147483646"}},
		{"hex ids", run("--id-format", "hex"), []string{"--id-format", "hex"}},
		{"scalar params", run("--params", "7"), []string{"--params", "array or object"}},
		{"string params", run("--params", `"a"`), []string{"--params", "array or object"}},
		{"null params", run("--params", "null"), []string{"--params", "array or object"}},
		{"blank params", run("--params", "  "), []string{"--params", "array or object"}},
		{"broken object params", run("--params", "{bad"), []string{"--params", "array or object"}},
		{"unterminated array params", run("--params", "[1,"), []string{"--params", "array or object"}},
		{"zero max-frame", run("--max-frame", "0"), []string{"--max-frame", `"0"`}},
		{"bad unit max-frame", run("--max-frame", "12XB"), []string{"--max-frame", "12XB"}},
		{"huge max-frame", run("--max-frame", "2000GiB"), []string{"--max-frame", "too large"}},
		{"overflowing max-frame", run("--max-frame", "99999999999999999999"), []string{"--max-frame", "99999999999999999999"}},
		{"tiny max-frame", run("--max-frame", "10"), []string{"--max-frame", "64"}},
		{"header without colon", runHTTP("-H", "NoColon"), []string{"--header", "header 1 has no ':'"}},
		{"header empty name", runHTTP("-H", ": v"), []string{"--header"}},
		{"header CRLF in value", runHTTP("-H", "X-A: a\r\nX-B: b"), []string{"--header", "line break"}},
		{"header LF in value", runHTTP("-H", "X-A: a\nb"), []string{"--header", "line break"}},
		{"header CR in name", runHTTP("-H", "X\rA: b"), []string{"--header"}},
		{"header space in name", runHTTP("-H", "X A: b"), []string{"--header"}},
		{"header separator in name", runHTTP("-H", "X(A): b"), []string{"--header", "X(A)"}},
		{"header NUL in value", runHTTP("-H", "X-A: a\x00b"), []string{"--header", "control character"}},
		{"header DEL in value", runHTTP("-H", "X-A: a\x7fb"), []string{"--header", "control character"}},
		{"header on tcp target", run("-H", "X-A: b"), []string{"--header", "http", "tcp"}},
		{"missing method", []string{"run", deadTCP}, []string{"--method", "required"}},
		{"no target", []string{"run", "--method", "echo"}, []string{"TARGET", "got 0"}},
		{"two targets", []string{"run", deadTCP, deadHTTP, "--method", "echo"}, []string{"TARGET", "got 2"}},
		{"empty target", []string{"run", "", "--method", "echo"}, []string{"empty target"}},
		{"ftp scheme", []string{"run", "ftp://127.0.0.1:21", "--method", "echo"}, []string{"scheme", "ftp"}},
		{"no scheme", []string{"run", "127.0.0.1:9090", "--method", "echo"}, []string{"127.0.0.1:9090"}},
		{"tcp without port", []string{"run", "tcp://127.0.0.1", "--method", "echo"}, []string{"host:port"}},
		{"tcp bad port", []string{"run", "tcp://127.0.0.1:99999", "--method", "echo"}, []string{"port"}},
		{"tcp with path", []string{"run", "tcp://127.0.0.1:9/x", "--method", "echo"}, []string{"only host:port"}},
		{"http without host", []string{"run", "http:///x", "--method", "echo"}, []string{"no host"}},
		{"unknown profile", run("--profile", "grpc"), []string{"profile", "grpc"}},
		{"mcp era without mcp", run("--mcp-era", "legacy"), []string{"--mcp-era", "--profile mcp"}},
		{"unknown mcp era", run("--profile", "mcp", "--mcp-era", "1999-01-01"), []string{"MCP era", "1999-01-01"}},
		{"tool without mcp", []string{"run", deadTCP, "--tool", "echo"}, []string{"--tool", "--profile mcp"}},
		{"tool and method", []string{"run", deadTCP, "--profile", "mcp", "--tool", "echo", "--method", "x"}, []string{"--tool", "--method x"}},
		{"tool and params", []string{"run", deadTCP, "--profile", "mcp", "--tool", "echo", "--params", "{}"}, []string{"--tool", "--params"}},
		{"args not an object", []string{"run", deadTCP, "--profile", "mcp", "--tool", "echo", "--args", "[1]"}, []string{"--args", "JSON object"}},
		{"args without tool", run("--profile", "mcp", "--args", "{}"), []string{"--args", "--tool"}},
		{"mcp batch", run("--profile", "mcp", "--batch", "4"), []string{"--batch", "mcp"}},
		{"eth string ids", run("--profile", "eth", "--id-format", "string"), []string{"--id-format", "eth"}},
		{"lsp over http", runHTTP("--profile", "lsp"), []string{"lsp", "stream target"}},
		{"workspace without lsp", run("--workspace", "."), []string{"--workspace", "--profile lsp"}},
		{"workspace missing", run("--profile", "lsp", "--workspace", "/no/such/dir"), []string{"--workspace", "/no/such/dir"}},
		{"open missing file", run("--profile", "lsp", "--open", "/no/such/file.go"), []string{"--open", "/no/such/file.go"}},
		{"open without lsp", run("--open", "x.go"), []string{"--open", "--profile lsp"}},
		{"unknown subcommand", []string{"frobnicate"}, []string{"unknown command", "frobnicate"}},
		{"serve unknown fault", []string{"serve", "--fault", "nosuchfault"}, []string{"--fault", "nosuchfault"}},
		{"serve fault prob 2", []string{"serve", "--fault", "drop=2"}, []string{"--fault", "drop=2"}},
		{"serve fault-prob 0", []string{"serve", "--fault", "drop", "--fault-prob", "0"}, []string{"--fault-prob"}},
		{"serve stall junk", []string{"serve", "--stall", "junk"}, []string{"--stall", "junk"}},
		{"serve stall no for", []string{"serve", "--stall", "0s@1s"}, []string{"--stall"}},
		{"serve stall negative at", []string{"serve", "--stall", "1s@-1s"}, []string{"--stall"}},
		{"serve fault-delay 0", []string{"serve", "--fault-delay", "0"}, []string{"--fault-delay"}},
		{"serve max-frame", []string{"serve", "--max-frame", "lots"}, []string{"--max-frame", "lots"}},
		{"serve argument", []string{"serve", "extra"}, []string{"no arguments", "extra"}},
		{"serve unknown flag", []string{"serve", "--bogus"}, []string{"unknown flag", "--bogus"}},
		{"demo argument", []string{"--duration", "1s", "extra"}, []string{"unexpected argument", "extra"}},
		{"demo transport", []string{"--transport", "udp"}, []string{"--transport", "udp"}},
		{"demo unknown fault", []string{"--fault", "nosuchfault"}, []string{"--fault", "nosuchfault"}},
		{"demo zero duration", []string{"--duration", "0"}, []string{"--duration", "positive"}},
		{"demo unknown flag", []string{"--bogus"}, []string{"unknown flag", "--bogus"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := realMain(tt.args, &stdout, &stderr)
			if code != exitUsage {
				t.Fatalf("realMain(%q) = %d, want %d\nstdout:\n%s\nstderr:\n%s", tt.args, code, exitUsage, &stdout, &stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr does not mention %q:\n%s", w, &stderr)
				}
			}
			if !strings.Contains(stderr.String(), "rpcload: ") {
				t.Errorf("stderr has no rpcload: error line:\n%s", &stderr)
			}
		})
	}
}

func TestInfoCommands(t *testing.T) {
	tests := []struct {
		args       []string
		stdoutHas  string
		stderrHas  string
		wantStdout bool
	}{
		{[]string{"version"}, "rpcload " + version, "", true},
		{[]string{"--version"}, "rpcload " + version, "", true},
		{[]string{"help"}, "usage:", "", true},
		{[]string{"-h"}, "usage:", "", true},
		{[]string{"--help"}, "usage:", "", true},
		{[]string{"run", "--help"}, "--method", "", true},
		{[]string{"serve", "--help"}, "--fault", "", true},
		{[]string{"demo", "--help"}, "--transport", "", true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := realMain(tt.args, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d, want 0; stderr:\n%s", code, &stderr)
			}
			if !strings.Contains(stdout.String(), tt.stdoutHas) || !strings.Contains(stderr.String(), tt.stderrHas) {
				t.Errorf("stdout %q / stderr %q: want %q / %q", &stdout, &stderr, tt.stdoutHas, tt.stderrHas)
			}
			if tt.wantStdout && stdout.Len() == 0 {
				t.Error("nothing on stdout")
			}
		})
	}
}

// TestSubcommandHelp: every subcommand's --help (and -h) prints the one
// style on stdout (usage line, what it does, its flags, examples) and
// exits 0; a subcommand's help lists only the flags that apply to it.
func TestSubcommandHelp(t *testing.T) {
	tests := []struct {
		args    []string
		has     []string
		hasNot  []string
		noFlags bool // the command has subcommands, not flags
	}{
		{args: []string{"run"}, has: []string{"usage: rpcload run TARGET", "-c, --concurrency", "-r, --rate", "-d, --duration", "-n, --requests"}},
		{args: []string{"demo"}, has: []string{"usage: rpcload [flags]", "--transport", "(default 5000 unless"}, hasNot: []string{"(default 1000 unless"}},
		{args: []string{"serve"}, has: []string{"usage: rpcload serve", "--fault"}},
		{args: []string{"compare"}, has: []string{"usage: rpcload compare A.json B.json", "--html"}, hasNot: []string{"Usage of"}},
		{args: []string{"merge"}, has: []string{"usage: rpcload merge", "-o, --output"}},
		{args: []string{"check"}, has: []string{"usage: rpcload check", "--threshold"}},
		{args: []string{"report"}, has: []string{"usage: rpcload report", "--html"}},
		{args: []string{"kubernetes"}, has: []string{"usage: rpcload kubernetes --shards N --image IMAGE", "--start-in", "--pod-monitor"}, hasNot: []string{"--max-inflight"}},
		{args: []string{"scenario"}, has: []string{"usage: rpcload scenario from-openrpc", "rpcload scenario from-mcp"}, noFlags: true},
		{args: []string{"scenario", "from-openrpc"}, has: []string{"usage: rpcload scenario from-openrpc FILE", "--discover"}, hasNot: []string{"--mcp-era", "Usage of"}},
		{args: []string{"scenario", "from-mcp"}, has: []string{"usage: rpcload scenario from-mcp TARGET", "--mcp-era"}, hasNot: []string{"--discover", "Usage of"}},
	}
	for _, tt := range tests {
		for _, help := range []string{"--help", "-h"} {
			args := append(slices.Clone(tt.args), help)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				if code := realMain(args, &stdout, &stderr); code != exitOK {
					t.Fatalf("exit %d, want 0; stderr:\n%s", code, &stderr)
				}
				if stderr.Len() > 0 {
					t.Errorf("help wrote to stderr:\n%s", &stderr)
				}
				out := stdout.String()
				want := append([]string{"usage: rpcload", "\nexamples:\n  rpcload"}, tt.has...)
				if !tt.noFlags {
					want = append(want, "\nflags:\n")
				}
				for _, w := range want {
					if !strings.Contains(out, w) {
						t.Errorf("help lacks %q:\n%s", w, out)
					}
				}
				for _, w := range tt.hasNot {
					if strings.Contains(out, w) {
						t.Errorf("help has %q:\n%s", w, out)
					}
				}
				// usage, a blank line, then what the command does
				if before, _, ok := strings.Cut(out, "\n\n"); !ok || strings.Contains(before, "flags:") {
					t.Errorf("help does not start with usage lines and a blank line:\n%s", out)
				}
			})
		}
	}
}

// TestConfigDefaults checks what runFlags.config fills in when a flag is not
// given, per transport and loop.
func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		target   string
		args     []string
		rate     float64
		conc     int
		conns    int
		drainIs  string
		maxFrame int
	}{
		{deadTCP, nil, 1000, 0, 4, "10s", 16 << 20},
		{deadHTTP, nil, 1000, 0, 64, "10s", 16 << 20},
		{deadHTTP, []string{"--concurrency", "7"}, 0, 7, 7, "10s", 16 << 20},
		{deadTCP, []string{"--concurrency", "7"}, 0, 7, 4, "10s", 16 << 20},
		{deadTCP, []string{"--timeout", "2s"}, 1000, 0, 4, "2s", 16 << 20},
		{deadTCP, []string{"--timeout", "2s", "--drain", "0"}, 1000, 0, 4, "0s", 16 << 20},
		{deadTCP, []string{"--rate", "5", "--conns", "2", "--max-frame", "1KiB"}, 5, 0, 2, "10s", 1024},
	}
	for _, tt := range tests {
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		var f runFlags
		f.register(fs)
		if err := fs.Parse(append([]string{"--method", "echo"}, tt.args...)); err != nil {
			t.Fatal(err)
		}
		c, err := f.config(fs, tt.target)
		if err != nil {
			t.Errorf("%s %q: %v", tt.target, tt.args, err)
			continue
		}
		if c.Rate != tt.rate || c.Concurrency != tt.conc || c.Conns != tt.conns || c.Drain.String() != tt.drainIs || c.MaxFrame != tt.maxFrame {
			t.Errorf("%s %q: rate %g conc %d conns %d drain %s max-frame %d; want %g %d %d %s %d",
				tt.target, tt.args, c.Rate, c.Concurrency, c.Conns, c.Drain, c.MaxFrame, tt.rate, tt.conc, tt.conns, tt.drainIs, tt.maxFrame)
		}
	}
}

// TestRunShorthands: the short flags load-tool users expect, and rates
// with a unit, reach the plan.
func TestRunShorthands(t *testing.T) {
	tests := []struct {
		args     []string
		rate     float64
		conc     int
		maxRate  float64
		duration time.Duration
		requests uint64
	}{
		{[]string{"-r", "50"}, 50, 0, 0, 10 * time.Second, 0},
		{[]string{"-r", "50/1s", "-d", "2s"}, 50, 0, 0, 2 * time.Second, 0},
		{[]string{"--rate", "3000/m", "-n", "100"}, 50, 0, 0, workload.OpenEnded, 100},
		{[]string{"--rate=10/100ms", "-n", "100", "-d", "1s"}, 100, 0, 0, time.Second, 100},
		{[]string{"-c", "7", "--max-rate", "60/m"}, 0, 7, 1, 10 * time.Second, 0},
		{[]string{"-c7", "-n5"}, 0, 7, 0, workload.OpenEnded, 5},
	}
	for _, tt := range tests {
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		var f runFlags
		f.register(fs)
		if err := fs.Parse(append([]string{"--method", "echo"}, tt.args...)); err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		c, err := f.config(fs, deadTCP)
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if c.Rate != tt.rate || c.Concurrency != tt.conc || c.MaxRate != tt.maxRate || c.Duration != tt.duration || c.Requests != tt.requests {
			t.Errorf("%q: rate %g conc %d max-rate %g duration %s requests %d; want %g %d %g %s %d",
				tt.args, c.Rate, c.Concurrency, c.MaxRate, c.Duration, c.Requests, tt.rate, tt.conc, tt.maxRate, tt.duration, tt.requests)
		}
	}
}

// TestSettingsHeaderNamesSorted: the result file lists header names (never
// values) in a stable order, so two runs with the same flags write the same
// settings.
func TestSettingsHeaderNamesSorted(t *testing.T) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	var f runFlags
	f.register(fs)
	args := []string{"--method", "echo"}
	for _, h := range []string{"X-E: 5", "X-D: 4", "Authorization: secret", "X-C: 3", "X-B: 2", "X-A: 1"} {
		args = append(args, "-H", h)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	c, err := f.config(fs, deadHTTP)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Authorization", "X-A", "X-B", "X-C", "X-D", "X-E"}
	for range 20 { // map order is random: a missing sort shows within a few tries
		s := settings(c)
		if got := s["header_names"]; !reflect.DeepEqual(got, want) {
			t.Fatalf("header_names = %v, want %v", got, want)
		}
		for k, v := range s {
			if str, ok := v.(string); ok && strings.Contains(str, "secret") {
				t.Fatalf("settings[%q] leaks a header value: %q", k, str)
			}
		}
	}
}
