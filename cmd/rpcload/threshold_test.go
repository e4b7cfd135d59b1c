package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/stats"
)

// gateResult is a small result: p99 of 5 ms overall, 23.1 ms for
// eth_call, 1% errors, two unknown_id violations.
func gateResult() *stats.Result {
	return &stats.Result{
		Schema: stats.Schema, Tool: "rpcload", DurationS: 10,
		Rate:       stats.Rate{Target: 1000, Achieved: 990},
		Requests:   stats.Requests{Sent: 10000, Answered: 9900, OK: 9900, Timeouts: 100, Messages: 9900},
		Violations: map[string]uint64{"unknown_id": 2},
		ViolationSamples: map[string][]stats.FrameSample{
			"unknown_id": {{Method: "eth_call", Frame: `{"jsonrpc":"2.0","id":77,"result":1}`}},
		},
		Latency: stats.LatencySet{Corrected: stats.Latency{Count: 9900, P50us: 1000, P99us: 5000, MaxUs: 9000}},
		Methods: map[string]stats.MethodResult{
			"eth_call": {
				Requests: stats.Requests{Sent: 10000, Answered: 9900, OK: 9900, Timeouts: 100},
				Latency:  stats.LatencySet{Corrected: stats.Latency{Count: 9900, P99us: 23100}},
			},
		},
	}
}

func writeResult(t *testing.T, dir string, r *stats.Result) string {
	t.Helper()
	path := filepath.Join(dir, "result.json")
	if err := stats.WriteJSONFile(path, r); err != nil {
		t.Fatal(err)
	}
	return path
}

// readJUnit reads back the counts of a JUnit file.
func readJUnit(t *testing.T, path string) (tests, failures string, names []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("JUnit file: %v", err)
	}
	var doc struct {
		Tests    string `xml:"tests,attr"`
		Failures string `xml:"failures,attr"`
		Suite    struct {
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("JUnit file is not XML: %v\n%s", err, data)
	}
	for _, c := range doc.Suite.Cases {
		names = append(names, c.Name)
	}
	return doc.Tests, doc.Failures, names
}

func TestCheckCmd(t *testing.T) {
	dir := t.TempDir()
	resultPath := writeResult(t, dir, gateResult())
	notJSON := filepath.Join(dir, "notjson.json")
	if err := os.WriteFile(notJSON, []byte("p99 was fine"), 0o644); err != nil {
		t.Fatal(err)
	}
	junitPath := filepath.Join(dir, "junit.xml")
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     []string // lines, exactly
		errSubstrs []string // in the error (usage errors)
	}{
		{"all pass", []string{resultPath, "--threshold", "p99<=5ms", "--threshold", "error_rate<=1%"}, exitOK,
			[]string{"PASS p99<=5ms: p99 was 5ms, limit <= 5ms", "PASS error_rate<=1%: error_rate was 1%, limit <= 1%"}, nil},
		{"one fails", []string{"--threshold", "p99<5ms", resultPath, "--threshold", "p99{method=eth_call}<20ms", "--threshold", "rps>=990"}, exitFindings,
			[]string{"FAIL p99<5ms: p99 was 5ms, limit < 5ms", "FAIL p99{method=eth_call}<20ms: p99 of eth_call was 23.1ms, limit < 20ms",
				"PASS rps>=990: rps was 990/s, limit >= 990"}, nil},
		{"missing method fails", []string{resultPath, "--threshold", "p99{method=nope}<1s"}, exitFindings,
			[]string{"FAIL p99{method=nope}<1s: p99 of nope cannot be measured: the result has no method nope (it has eth_call)"}, nil},
		{"violations", []string{resultPath, "--threshold", "violations{rule=unknown_id}==0", "--threshold", "violations{rule=duplicate_reply}==0"}, exitFindings,
			[]string{"FAIL violations{rule=unknown_id}==0: violations for rule unknown_id was 2, limit == 0",
				"PASS violations{rule=duplicate_reply}==0: violations for rule duplicate_reply was 0, limit == 0"}, nil},
		{"with junit", []string{resultPath, "--threshold", "p99<=5ms", "--junit", junitPath}, exitOK,
			[]string{"PASS p99<=5ms: p99 was 5ms, limit <= 5ms"}, nil},
		{"no threshold", []string{resultPath}, exitUsage, nil, []string{"at least one --threshold"}},
		{"junit alone", []string{resultPath, "--junit", junitPath}, exitUsage, nil, []string{"at least one --threshold"}},
		{"no file", []string{"--threshold", "p99<1s"}, exitUsage, nil, []string{"exactly one result file (got 0)"}},
		{"two files", []string{resultPath, resultPath, "--threshold", "p99<1s"}, exitUsage, nil, []string{"exactly one result file (got 2)"}},
		{"unreadable file", []string{filepath.Join(dir, "absent.json"), "--threshold", "p99<1s"}, exitUsage, nil, []string{"absent.json", "no such file"}},
		{"not a result", []string{notJSON, "--threshold", "p99<1s"}, exitUsage, nil, []string{"notjson.json", "not a result file"}},
		{"bad expression", []string{resultPath, "--threshold", "p99<1s", "--threshold", "p99<<5ms"}, exitUsage, nil,
			[]string{`--threshold: threshold "p99<<5ms": column 5: expected a number`}},
		{"junit directory missing", []string{resultPath, "--threshold", "p99<1s", "--junit", filepath.Join(dir, "nope", "j.xml")}, exitUsage, nil,
			[]string{"--junit", "does not exist"}},
		{"unknown flag", []string{resultPath, "--thresold", "p99<1s"}, exitUsage, nil, []string{"--thresold"}},
		// --help: TestSubcommandHelp (the help goes to stdout, in every
		// subcommand's style).
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code, err := checkCmd(tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d (err %v)", code, tt.code, err)
			}
			var lines []string
			if s := strings.TrimSuffix(stdout.String(), "\n"); s != "" {
				lines = strings.Split(s, "\n")
			}
			if strings.Join(lines, "\n") != strings.Join(tt.stdout, "\n") {
				t.Errorf("stdout\n%s\nwant\n%s", stdout.String(), strings.Join(tt.stdout, "\n"))
			}
			if tt.errSubstrs == nil {
				if err != nil {
					t.Errorf("error %v", err)
				}
				return
			}
			var ue cli.UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v is not a usage error", err)
			}
			for _, s := range tt.errSubstrs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
	tests2, failures, names := readJUnit(t, junitPath)
	want := 1 + int(check.NumRules)
	if tests2 != strconv.Itoa(want) || failures != "1" || len(names) != want || names[0] != "p99<=5ms" || names[1] != "unknown_id" {
		t.Errorf("JUnit: tests %s failures %s cases %v; want %d tests, 1 failure (unknown_id)", tests2, failures, names, want)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, ".junit.xml.tmp-*")); len(matches) > 0 {
		t.Errorf("temporary files left: %v", matches)
	}
}

// TestGateFlags: the flags as run registers them; a bad expression is a
// usage error from parse, before any load; apply stores the verdicts in
// the result, prints them and writes the JUnit file.
func TestGateFlags(t *testing.T) {
	dir := t.TempDir()
	junitPath := filepath.Join(dir, "gates.xml")
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	var g gateFlags
	g.register(fs)
	if err := fs.Parse([]string{"--threshold", "error_rate<0.5%", "--threshold", "p99 < 10ms", "--junit", junitPath}); err != nil {
		t.Fatal(err)
	}
	if err := g.parse(); err != nil {
		t.Fatal(err)
	}
	res := gateResult()
	res.Thresholds = []stats.ThresholdVerdict{{Expr: "stale"}}
	var out bytes.Buffer
	failed, err := g.apply(res, &out)
	if err != nil || !failed {
		t.Fatalf("apply: failed=%v err=%v", failed, err)
	}
	wantOut := "FAIL error_rate<0.5%: error_rate was 1%, limit < 0.5%\nPASS p99 < 10ms: p99 was 5ms, limit < 10ms\n"
	if out.String() != wantOut {
		t.Errorf("output\n%s\nwant\n%s", out.String(), wantOut)
	}
	if len(res.Thresholds) != 2 || res.Thresholds[0].Pass || !res.Thresholds[1].Pass ||
		res.Thresholds[0].Value != 0.01 || res.Thresholds[1].Limit != 10000 || res.Thresholds[1].Expr != "p99 < 10ms" {
		t.Errorf("verdicts in the result: %+v", res.Thresholds)
	}
	if _, failures, names := readJUnit(t, junitPath); failures != "2" || names[0] != "error_rate<0.5%" {
		t.Errorf("JUnit: failures %s, cases %v", failures, names)
	}

	// Without thresholds: nothing printed, nothing failed, no JUnit file.
	var none gateFlags
	if err := none.parse(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if failed, err := none.apply(res, &out); failed || err != nil || out.Len() != 0 || res.Thresholds != nil {
		t.Errorf("no gates: failed=%v err=%v out %q verdicts %v", failed, err, out.String(), res.Thresholds)
	}

	bad := gateFlags{exprs: []string{"p99<1s", "p99<5%"}}
	err = bad.parse()
	var ue cli.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `--threshold: threshold "p99<5%": column 6: p99 is a duration`) {
		t.Errorf("bad expression: %v", err)
	}

	// A JUnit file that cannot be written is an error, after the verdicts.
	unwritable := gateFlags{exprs: []string{"p99<1s"}, junit: filepath.Join(dir, "gone", "j.xml")}
	if err := unwritable.parse(); err == nil {
		t.Error("parse accepted a --junit file in a missing directory")
	}
	unwritable.junit = dir // a directory: the rename over it fails
	out.Reset()
	if _, err := unwritable.apply(res, &out); err == nil || !strings.Contains(err.Error(), "--junit") || out.Len() == 0 {
		t.Errorf("unwritable JUnit file: err %v, out %q", err, out.String())
	}
}
