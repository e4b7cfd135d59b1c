package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// reportFixture writes a small result file with a hostile error message
// and returns its path.
// It sent and answered 200 requests in durationS seconds.
func reportFixture(t *testing.T, dir, name string, durationS float64) string {
	t.Helper()
	r := &stats.Result{Schema: stats.Schema, Tool: "rpcload", Target: "tcp://127.0.0.1:9", DurationS: durationS,
		Rate: stats.Rate{Target: 100, Achieved: 200 / durationS}, Requests: stats.Requests{Sent: 200, Answered: 200, OK: 199, RPCErrors: 1},
		ErrorCodes:    map[string]uint64{"-32000": 1},
		ErrorMessages: map[string][]string{"-32000": {"<script>alert(1)</script>"}},
		Series:        []stats.Point{{T: 1, Sent: 100, Answered: 100}, {T: 2, Sent: 100, Answered: 100}},
	}
	path := filepath.Join(dir, name)
	if err := stats.WriteJSONFile(path, r); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReportCmd: the report subcommand's arguments, its two outputs and its
// errors, run in process.
func TestReportCmd(t *testing.T) {
	dir := t.TempDir()
	a := reportFixture(t, dir, "a.json", 2)
	b := reportFixture(t, dir, "b.json", 4)
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	sameBase := reportFixture(t, sub, "a.json", 3)
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"schema":"rpcload.result/v9"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.html")
	cases := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // substrings of stdout
		stderr   []string // substrings of the error
		htmlHas  []string // substrings of the HTML file written to out
		htmlNone bool     // no HTML file may be written
	}{
		{name: "no files", args: nil, code: exitUsage, stderr: []string{"one or more result files"}, htmlNone: true},
		{name: "missing file", args: []string{filepath.Join(dir, "nope.json"), "--html", out}, code: exitUsage, stderr: []string{"nope.json"}, htmlNone: true},
		{name: "other schema", args: []string{a, other, "--html", out}, code: exitUsage, stderr: []string{"other.json", "v9"}, htmlNone: true},
		{name: "empty --html", args: []string{a, "--html="}, code: exitUsage, stderr: []string{"--html needs a file name"}, htmlNone: true},
		{name: "unknown flag", args: []string{a, "--htm", out}, code: exitUsage, stderr: []string{"unknown flag: --htm"}, htmlNone: true},
		{name: "directory missing", args: []string{a, "--html", filepath.Join(dir, "no", "r.html")}, code: exitUsage,
			stderr: []string{filepath.Join(dir, "no", "r.html")}, htmlNone: true},
		{name: "help", args: []string{"--help"}, code: exitOK, htmlNone: true},
		{name: "text of one file", args: []string{a}, code: exitOK, stdout: []string{"target      tcp://127.0.0.1:9", "rate        target 100.0 req/s"}, htmlNone: true},
		{name: "text of two files", args: []string{a, b}, code: exitOK, stdout: []string{"== " + a, "== " + b, "achieved 50.0 req/s"}, htmlNone: true},
		{name: "html of one file", args: []string{a, "--html", out}, code: exitOK,
			htmlHas: []string{"<!DOCTYPE html>", "a.json", "&lt;script&gt;alert(1)&lt;/script&gt;", `id="plot-throughput"`}},
		{name: "html of two files, flag first", args: []string{"--html", out, a, b}, code: exitOK,
			htmlHas: []string{"a.json", "b.json", `id="comparison"`, "(0.50×)"}},
		{name: "same base names are told apart", args: []string{a, sameBase, "--html", out}, code: exitOK,
			htmlHas: []string{">" + a + "<", ">" + sameBase + "<"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(out)
			var stdout, stderr bytes.Buffer
			code, err := reportCmd(c.args, &stdout, &stderr)
			if err != nil {
				stderr.WriteString(err.Error()) // as realMain prints it
			}
			if code != c.code {
				t.Fatalf("exit %d, want %d; err %v\nstderr: %s", code, c.code, err, stderr.String())
			}
			mustContain(t, "stdout", stdout.String(), c.stdout...)
			mustContain(t, "stderr", stderr.String(), c.stderr...)
			html, rerr := os.ReadFile(out)
			switch {
			case c.htmlNone && rerr == nil:
				t.Errorf("wrote %s", out)
			case !c.htmlNone && rerr != nil:
				t.Fatalf("no HTML file: %v", rerr)
			}
			mustContain(t, "the HTML", string(html), c.htmlHas...)
			if strings.Contains(string(html), "<script>") {
				t.Error("the HTML holds an unescaped script tag")
			}
			leftovers, _ := filepath.Glob(filepath.Join(dir, ".report.html.tmp-*"))
			if len(leftovers) > 0 {
				t.Errorf("temporary files left: %v", leftovers)
			}
		})
	}
}

// TestWriteHTMLReport: the function run --html calls refuses names that do
// not match the results, and replaces an existing file.
func TestWriteHTMLReport(t *testing.T) {
	dir := t.TempDir()
	r, err := stats.ReadJSONFile(reportFixture(t, dir, "a.json", 2))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "r.html")
	if err := writeHTMLReport(path, []string{"a", "b"}, []*stats.Result{r}); err == nil || !strings.Contains(err.Error(), "2 names for 1 results") {
		t.Errorf("mismatched names: err = %v", err)
	}
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeHTMLReport(path, []string{"run.json"}, []*stats.Result{r}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "the HTML", string(got), "<!DOCTYPE html>", "run.json")
}

// TestReportBinary: a real run's result file through the binary, as text
// and as HTML, and compare --html of two runs.
func TestReportBinary(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	dir := t.TempDir()
	var files []string
	for _, name := range []string{"a.json", "b.json"} {
		out := filepath.Join(dir, name)
		c := runBinary(t, childLimit, "run", tcpURL, "--method", "echo", "--rate", "500", "--duration", "300ms", "--interval", "100ms", "-q", "-o", out)
		if c.code != exitOK {
			t.Fatalf("run: %v", c)
		}
		files = append(files, out)
	}
	c := runBinary(t, childLimit, "report", files[0])
	if c.code != exitOK {
		t.Fatalf("report: %v", c)
	}
	mustContain(t, "text report", c.stdout, "target      "+tcpURL, "latency     (corrected")

	page := filepath.Join(dir, "report.html")
	if c := runBinary(t, childLimit, "report", files[0], "--html", page); c.code != exitOK || c.stdout != "" {
		t.Fatalf("report --html: %v", c)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "the HTML", string(html), "a.json", "Content-Security-Policy", `id="plot-spectrum"`, "<polyline points=", ">echo<")

	cmpPage := filepath.Join(dir, "compare.html")
	c = runBinary(t, childLimit, append([]string{"compare", "--html", cmpPage}, files...)...)
	if c.code != exitOK {
		t.Fatalf("compare --html: %v", c)
	}
	mustContain(t, "comparison", c.stdout, "all methods", "a.json", "b.json")
	html, err = os.ReadFile(cmpPage)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "the comparison's HTML", string(html), "a.json", "b.json", `id="comparison"`, "×)")
	if c := runBinary(t, childLimit, "compare", "--html=", files[0], files[1]); c.code != exitUsage {
		t.Errorf("compare --html= : %v", c)
	}
}
