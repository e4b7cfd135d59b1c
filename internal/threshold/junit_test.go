package threshold

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/stats"
)

// The report as a CI server reads it; declared apart from the writer's
// types so a renamed element or attribute shows up here.
type readSuites struct {
	XMLName  xml.Name    `xml:"testsuites"`
	Tests    string      `xml:"tests,attr"`
	Failures string      `xml:"failures,attr"`
	Suites   []readSuite `xml:"testsuite"`
}

type readSuite struct {
	Name      string     `xml:"name,attr"`
	Tests     string     `xml:"tests,attr"`
	Failures  string     `xml:"failures,attr"`
	Time      string     `xml:"time,attr"`
	Timestamp string     `xml:"timestamp,attr"`
	Cases     []readCase `xml:"testcase"`
}

type readCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Time      string `xml:"time,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	SystemOut *string `xml:"system-out"`
}

func TestWriteJUnit(t *testing.T) {
	res := sampleResult()
	// A frame with markup, a control character and a byte that is not
	// UTF-8: all must come out as well-formed XML.
	frame := "{\"jsonrpc\":\"2.0\",\"id\":999,\"result\":\"<a>&</a>\x01\xff\"}"
	res.ViolationSamples = map[string][]stats.FrameSample{
		"unknown_id":      {{Method: "eth_call", Frame: frame, Note: "id 999 was never sent"}, {Method: "eth_call", Frame: "second"}},
		"mcp_legacy_code": {{Method: "tools/call", Frame: `{"error":{"code":-32001}}`}},
	}
	res.Violations["rule_from_the_future"] = 1
	for _, e := range []string{"p99<5ms", "p99<=5ms", "p99{method=eth_silent}<1s", "error_rate<=1%"} {
		th, err := Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		res.Thresholds = append(res.Thresholds, th.Eval(res))
	}

	var buf bytes.Buffer
	if err := WriteJUnit(&buf, res, "nightly load"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), xml.Header) {
		t.Errorf("no XML declaration:\n%s", buf.String())
	}
	var got readSuites
	dec := xml.NewDecoder(&buf)
	dec.Strict = true
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("report is not well-formed XML: %v", err)
	}

	wantTests := 4 + int(check.NumRules) + 1
	wantFailures := 2 + 1 + 1 // p99<5ms, eth_silent; unknown_id; rule_from_the_future
	if len(got.Suites) != 1 {
		t.Fatalf("%d testsuites, want 1", len(got.Suites))
	}
	s := got.Suites[0]
	for what, v := range map[string]string{"testsuites tests": got.Tests, "testsuite tests": s.Tests} {
		if v != strconv.Itoa(wantTests) {
			t.Errorf("%s = %s, want %d", what, v, wantTests)
		}
	}
	for what, v := range map[string]string{"testsuites failures": got.Failures, "testsuite failures": s.Failures} {
		if v != strconv.Itoa(wantFailures) {
			t.Errorf("%s = %s, want %d", what, v, wantFailures)
		}
	}
	if len(s.Cases) != wantTests {
		t.Fatalf("%d testcases, want %d", len(s.Cases), wantTests)
	}
	if s.Name != "nightly load" || s.Time != "10.250" || s.Timestamp != "2026-03-01T11:00:00" {
		t.Errorf("suite name %q time %q timestamp %q", s.Name, s.Time, s.Timestamp)
	}
	failures := 0
	byName := map[string]readCase{}
	for _, c := range s.Cases {
		byName[c.Name] = c
		if c.Failure != nil {
			failures++
		}
		if c.Classname == "" || c.Time != "0" {
			t.Errorf("testcase %q: classname %q time %q", c.Name, c.Classname, c.Time)
		}
	}
	if failures != wantFailures {
		t.Errorf("%d failure elements, want %d", failures, wantFailures)
	}

	// Thresholds, in order, failing with their detail.
	for i, v := range res.Thresholds {
		c := s.Cases[i]
		if c.Name != v.Expr || c.Classname != "nightly load.thresholds" {
			t.Errorf("case %d: %q (%s), want threshold %q", i, c.Name, c.Classname, v.Expr)
		}
		switch {
		case v.Pass && c.Failure != nil:
			t.Errorf("%s passed but its testcase fails", v.Expr)
		case !v.Pass && (c.Failure == nil || c.Failure.Text != v.Detail || c.Failure.Message != v.Detail):
			t.Errorf("%s failed; testcase failure %+v, want the detail %q", v.Expr, c.Failure, v.Detail)
		}
	}
	// Rules: one case each, in check's order after the thresholds.
	for r := range check.NumRules {
		c := s.Cases[4+int(r)]
		if c.Name != r.String() || c.Classname != "nightly load.rules" {
			t.Errorf("case for rule %s is %q (%s)", r, c.Name, c.Classname)
		}
	}
	uid := byName["unknown_id"]
	if uid.Failure == nil {
		t.Fatal("unknown_id broken twice but its testcase passes")
	}
	wantText := "unknown_id broken 2 times\nfirst sample, method eth_call:\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":999,\"result\":\"<a>&</a>\uFFFD\uFFFD\"}" + // the control character and the bad byte replaced
		"\nnote: id 999 was never sent\n"
	if uid.Failure.Text != wantText || uid.Failure.Message != "unknown_id broken 2 times" || uid.Failure.Type != "violation" {
		t.Errorf("unknown_id failure %+v\nwant text %q", uid.Failure, wantText)
	}
	legacy := byName["mcp_legacy_code"]
	if legacy.Failure != nil || legacy.SystemOut == nil || !strings.Contains(*legacy.SystemOut, "mcp_legacy_code broken 7 times (a warning") ||
		!strings.Contains(*legacy.SystemOut, `{"error":{"code":-32001}}`) {
		t.Errorf("warning rule: %+v", legacy)
	}
	if c := byName["duplicate_reply"]; c.Failure != nil || c.SystemOut != nil {
		t.Errorf("unbroken rule: %+v", c)
	}
	if c := byName["rule_from_the_future"]; c.Failure == nil || !strings.Contains(c.Failure.Text, "no sample frame was kept") {
		t.Errorf("unknown rule name: %+v", c)
	}
}

// TestWriteJUnitEmpty: a clean run without thresholds is one passing
// testcase per rule, under the default suite name.
func TestWriteJUnitEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, &stats.Result{}, ""); err != nil {
		t.Fatal(err)
	}
	var got readSuites
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Suites) != 1 || got.Suites[0].Name != "rpcload" || got.Failures != "0" ||
		len(got.Suites[0].Cases) != int(check.NumRules) || got.Suites[0].Timestamp != "" {
		t.Errorf("got %+v", got)
	}
}

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after <= 0 {
		return 0, errors.New("disk full")
	}
	w.after--
	return len(p), nil
}

// TestWriteJUnitError: a failing writer's error comes back.
func TestWriteJUnitError(t *testing.T) {
	for after := range 3 {
		err := WriteJUnit(&failingWriter{after: after}, sampleResult(), "x")
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("after %d writes: error %v", after, err)
		}
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc… (6 bytes in all)"},
		{"aéb", 2, "a… (4 bytes in all)"}, // é is 2 bytes: not split
	}
	for _, tt := range tests {
		if got := cut(tt.s, tt.n); got != tt.want {
			t.Errorf("cut(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
