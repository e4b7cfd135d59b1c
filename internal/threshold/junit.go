package threshold

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/stats"
)

// The JUnit elements Jenkins and GitLab read: testsuites, testsuite and
// testcase, with tests/failures counts and time in seconds.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// maxFrameText bounds the sample frame quoted in a failure: enough to see
// what was wrong, small enough for a CI page.
const maxFrameText = 4096

// WriteJUnit writes r as a JUnit XML report with one testsuite: a testcase
// per threshold verdict in r.Thresholds (so evaluate them first), failing
// with its Detail, then a testcase per protocol rule, failing when r counts
// breaks of it, with the count and the first sample frame. Warnings (see
// check.Rule.Warning) pass with a note in system-out. Rule names the
// running rpcload does not know (a result from a newer version) get a
// failing testcase each, so nothing found is dropped.
func WriteJUnit(w io.Writer, r *stats.Result, suiteName string) error {
	if suiteName == "" {
		suiteName = "rpcload"
	}
	suite := junitSuite{Name: suiteName, Time: seconds(r.DurationS + r.DrainS)}
	if t, err := time.Parse(time.RFC3339Nano, r.StartedAt); err == nil {
		// JUnit's schema wants local time without a zone; UTC is the one
		// unambiguous choice.
		suite.Timestamp = t.UTC().Format("2006-01-02T15:04:05")
	}
	for _, v := range r.Thresholds {
		c := junitCase{Name: v.Expr, Classname: suiteName + ".thresholds", Time: "0"}
		if !v.Pass {
			c.Failure = &junitFailure{Message: v.Detail, Type: "threshold", Text: v.Detail}
		} else {
			c.SystemOut = v.Detail
		}
		suite.Cases = append(suite.Cases, c)
	}
	known := map[string]bool{}
	rule := func(name string, warning bool) {
		known[name] = true
		c := junitCase{Name: name, Classname: suiteName + ".rules", Time: "0"}
		n := r.Violations[name]
		if n > 0 {
			text := ruleText(r, name, n, warning)
			if warning {
				c.SystemOut = text
			} else {
				c.Failure = &junitFailure{Message: fmt.Sprintf("%s broken %d times", name, n), Type: "violation", Text: text}
			}
		}
		suite.Cases = append(suite.Cases, c)
	}
	for rl := range check.NumRules {
		rule(rl.String(), rl.Warning())
	}
	for _, name := range stats.SortedKeys(r.Violations) {
		if !known[name] {
			rule(name, false)
		}
	}
	for _, c := range suite.Cases {
		suite.Tests++
		if c.Failure != nil {
			suite.Failures++
		}
	}
	doc := junitSuites{Name: suiteName, Tests: suite.Tests, Failures: suite.Failures, Time: suite.Time,
		Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	return nil
}

// ruleText is the body of a rule's testcase: the count and the first
// sample the run kept.
func ruleText(r *stats.Result, name string, n uint64, warning bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s broken %d times", name, n)
	if warning {
		b.WriteString(" (a warning: it does not fail the run)")
	}
	b.WriteByte('\n')
	samples := r.ViolationSamples[name]
	if len(samples) == 0 {
		b.WriteString("no sample frame was kept\n")
		return b.String()
	}
	s := samples[0]
	fmt.Fprintf(&b, "first sample, method %s:\n%s\n", s.Method, cut(s.Frame, maxFrameText))
	if s.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", s.Note)
	}
	return b.String()
}

// cut shortens s to at most n bytes on a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… (%d bytes in all)", len(s))
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", max(s, 0)) }
