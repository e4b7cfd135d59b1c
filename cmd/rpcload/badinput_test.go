package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
)

// TestBadInput: malformed flags, URLs, scenario files, result files and
// threshold expressions are refused with exit 2 and a message that names
// what is wrong and where: the flag, file:line:col of a scenario, the line
// and column or JSON path in a result file; a result file of another
// schema version is refused by every command that reads one; no message
// quotes a header value.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	write := func(name, content string) string {
		if err := os.WriteFile(at(name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return at(name)
	}
	good := at("good.json")
	if err := stats.WriteJSONFile(good, &stats.Result{Schema: stats.Schema, Tool: "rpcload", Target: deadTCP}); err != nil {
		t.Fatal(err)
	}
	v2 := write("v2.json", `{"schema":"rpcload.result/v2","requests":[1,2,3]}`)
	torn := write("torn.json", "{\n  \"schema\": \""+stats.Schema+"\",\n  \"requests\": {\"sent\": 1")
	typed := write("typed.json", "{\"schema\": \""+stats.Schema+"\",\n \"duration_s\": \"long\"}")
	empty := write("empty.json", "")
	scen := write("bad.yaml", "version: 1\nmix:\n  - method: echo\n    weight: -2\n")
	scenTab := write("tab.yaml", "version: 1\nload:\n  rate: fast\nmix: [{method: echo}]\n")
	const secret = "Bearer sekrit-value-123"
	run := func(extra ...string) []string {
		return append([]string{"run", deadTCP, "--method", "echo", "--duration", "100ms"}, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		// Result files, in each command that reads them.
		{"merge other schema", []string{"merge", good, v2, "-o", at("m.json")}, []string{"v2.json", `schema "rpcload.result/v2"`, `reads "` + stats.Schema + `"`}},
		{"compare other schema", []string{"compare", good, v2}, []string{"v2.json", "rpcload.result/v2", "another rpcload version"}},
		{"report other schema", []string{"report", v2}, []string{"v2.json", "rpcload.result/v2"}},
		{"check other schema", []string{"check", v2, "--threshold", "p99<1s"}, []string{"v2.json", "rpcload.result/v2"}},
		{"report torn", []string{"report", torn}, []string{"torn.json", "line 3", "column"}},
		{"merge torn", []string{"merge", good, torn, "-o", at("m.json")}, []string{"torn.json", "line 3"}},
		{"compare wrong type", []string{"compare", good, typed}, []string{"typed.json", "$.duration_s", "line 2"}},
		{"check empty", []string{"check", empty, "--threshold", "p99<1s"}, []string{"empty.json", "empty"}},
		{"report missing", []string{"report", at("absent.json")}, []string{"absent.json", "no such file"}},
		// Threshold expressions: the flag and the column.
		{"threshold operator", run("--threshold", "p99<<5ms"), []string{"--threshold", "column 5"}},
		{"threshold unit", run("--threshold", "p99<5 parsecs"), []string{"--threshold", "parsecs"}},
		{"threshold figure", []string{"check", good, "--threshold", "p101<5ms"}, []string{"--threshold", "p101"}},
		// Scenario files: file:line:col.
		{"scenario weight", []string{"run", "-f", scen}, []string{"bad.yaml:4:", "weight"}},
		{"scenario rate", []string{"run", "-f", scenTab}, []string{"tab.yaml:3:", "rate"}},
		{"scenario missing", []string{"run", "-f", at("nope.yaml")}, []string{"nope.yaml"}},
		// URLs.
		{"url no scheme", []string{"run", "127.0.0.1:80", "--method", "echo"}, []string{"127.0.0.1:80", "no scheme"}},
		{"url bad port", []string{"run", "http://127.0.0.1:0x50/", "--method", "echo"}, []string{"port"}},
		{"url tcp path", []string{"run", "tcp://127.0.0.1:1/x", "--method", "echo"}, []string{"host:port"}},
		// Flags of this task.
		{"secret-header empty", run("--secret-header", ""), []string{"--secret-header", "not a header name"}},
		{"secret-header colon", run("--secret-header", "X-A: b"), []string{"--secret-header", "not a header name"}},
		{"header no colon", []string{"run", deadHTTP, "--method", "echo", "-H", secret}, []string{"--header", "header 1 has no ':'"}},
		{"header second bad", []string{"run", deadHTTP, "--method", "echo", "-H", "X-A: 1", "-H", "Authorization=" + secret}, []string{"--header", "header 2"}},
		{"header space in name", []string{"run", deadHTTP, "--method", "echo", "-H", secret + ": x"}, []string{"--header", "header 1", "space"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := realMain(tc.args, &out, &errOut)
			if code != exitUsage {
				t.Errorf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, &out, &errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr does not name %q:\n%s", w, &errOut)
				}
			}
			if strings.Contains(errOut.String(), "sekrit") {
				t.Errorf("a header value in the message:\n%s", &errOut)
			}
			if _, err := os.Stat(at("m.json")); err == nil {
				t.Errorf("a refused merge wrote its output")
			}
		})
	}
}

// argvCommands are the commands FuzzArgs drives: those that only read
// files given to them and write none unless every input is valid (serve,
// scenario and the demo listen, start processes or run for seconds).
var argvCommands = []string{"run", "compare", "merge", "check", "report", "version", "help"}

// FuzzArgs feeds arbitrary command lines to rpcload: whatever they hold,
// it must not panic, must exit with a documented code, and must say what
// is wrong on a usage error. run gets --dry-run 1 first (and fuzzed
// arguments may not name that flag), so it only builds its configuration
// and prints one message; paths are relative to a fresh directory; "--"
// (a command to start) is left out.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{
		"run\x00tcp://127.0.0.1:1\x00--method\x00echo",
		"run\x00http://u:p@127.0.0.1:1/\x00--method\x00m\x00-H\x00Authorization: Bearer x\x00--secret-header\x00X-A",
		"run\x00--rate\x00-1\x00--method",
		"run\x00tcp://a:1\x00--method\x00x\x00--threshold\x00p99<<1\x00--shard\x001/0\x00--start-at\x00yesterday",
		"run\x00-f\x00s.yaml",
		"run\x00ws://[::1\x00--method\x00x",
		"run\x00tcp://127.0.0.1:1\x00--method\x00x\x00--max-frame\x009999999TiB\x00--params\x00{",
		"merge\x00a.json\x00b.json\x00-o\x00a.json",
		"compare\x00x",
		"check\x00r.json\x00--threshold\x00",
		"report\x00--html",
		"version",
	} {
		f.Add(byte(0), s)
	}
	f.Chdir(f.TempDir())
	f.Fuzz(func(t *testing.T, cmd byte, joined string) {
		args := strings.Split(joined, "\x00")
		if len(args) > 40 || len(joined) > 2000 {
			return
		}
		for _, a := range args {
			if a == "--" || strings.Contains(a, "dry-run") || strings.ContainsAny(a, `/\`) && !strings.Contains(a, "://") {
				return
			}
		}
		name := argvCommands[int(cmd)%len(argvCommands)]
		if args[0] == name {
			args = args[1:]
		}
		argv := append([]string{name}, args...)
		if name == "run" {
			argv = slices.Concat([]string{"run", "--dry-run=1"}, args)
		}
		var out, errOut bytes.Buffer
		start := time.Now()
		code := realMain(argv, &out, &errOut)
		switch code {
		case exitOK, exitFindings, exitUsage, exitUnreachable, exitInterrupted:
		default:
			t.Fatalf("rpcload %q: exit %d, not a documented code", argv, code)
		}
		if code == exitUsage && !strings.HasPrefix(errOut.String(), "rpcload: ") && !strings.Contains(errOut.String(), "usage") {
			t.Errorf("rpcload %q: exit 2 without a message:\nstdout:\n%s\nstderr:\n%s", argv, &out, &errOut)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("rpcload %q took %s", argv, d)
		}
	})
}
