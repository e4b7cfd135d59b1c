package report

import (
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/golden"
	"github.com/rpcload/rpcload/internal/stats"
)

// apiFixture is the coverage of an rpcfuzz run of an API of four methods:
// one with a finding and errors of two codes, one answered every time, a
// tool the server does not know (only -32601 came back) and one never
// called.
func apiFixture() *stats.APICoverage {
	return &stats.APICoverage{
		Methods: []stats.MethodCoverage{
			{Name: "countdown", Kind: "method", Source: "openrpc", CallsValid: 1200, CallsInvalid: 30, CallsUnjudged: 2, Results: 1197,
				NoReply: 3, ErrorsByCode: map[string]uint64{"-32602": 30, "-32603": 2}, Findings: []string{"crash-0a1b2c3d4e", "hang-5f6a7b8c9d"}},
			{Name: "now", Kind: "method", Source: "openrpc", CallsValid: 12, Results: 12, ErrorsByCode: map[string]uint64{}, Findings: []string{}},
			{Name: "tool search", Kind: "tool", Source: "mcp", CallsUnjudged: 5, ErrorsByCode: map[string]uint64{"-32601": 5}, Findings: []string{}},
			{Name: "rpc.ping", Kind: "method", Source: "flag", ErrorsByCode: map[string]uint64{}, Findings: []string{}},
		},
		NeverReached: []string{"rpc.ping", "tool search"},
		Notes:        []string{"left out: method 3 is not an object"},
	}
}

// apiResult is the latency.json of an rpcfuzz run with coverage c: its
// findings' rules are the violations, with one sample each.
func apiResult(c *stats.APICoverage) *stats.Result {
	return &stats.Result{Schema: stats.Schema, Tool: "rpcfuzz", Target: "tcp://127.0.0.1:9091", StartedAt: "2026-01-02T03:04:05Z", DurationS: 10,
		Settings:   map[string]any{"seed": 1.0, "workers": 4.0, "profile": "jsonrpc"},
		Requests:   stats.Requests{Sent: 1252, Answered: 1249, OK: 1209, RPCErrors: 37, InvalidReplies: 3, Timeouts: 3, Messages: 1252},
		Violations: map[string]uint64{"crash": 1, "hang": 2},
		ViolationSamples: map[string][]stats.FrameSample{
			"crash": {{Method: "fuzz", Frame: `{"jsonrpc":"2.0","id":1,"method":"countdown","params":{"n":-1}}`, Note: "the connection closed"}},
		},
		ErrorCodes: map[string]uint64{"-32602": 30, "-32603": 2, "-32601": 5},
		API:        c,
	}
}

// TestAPIGolden: the page of an rpcfuzz run with API coverage, byte for
// byte.
func TestAPIGolden(t *testing.T) {
	page := render(t, Input{Name: "latency.json", Result: apiResult(apiFixture())})
	golden.Check(t, "api.golden.html", []byte(page))
}

// nbsp joins an error code to its count in the table.
const nbsp = "\u00a0"

// apiHTML is the API coverage section of a page, "" when it has none.
func apiHTML(page string) string {
	_, rest, ok := strings.Cut(page, "<h3>API coverage</h3>")
	if !ok {
		return ""
	}
	sec, _, _ := strings.Cut(rest, "<h3>")
	sec, _, _ = strings.Cut(sec, "</section>")
	return sec
}

// TestAPISection: what the section shows of a run's coverage, and that a
// result without coverage has none.
func TestAPISection(t *testing.T) {
	allReached := apiFixture()
	allReached.Methods, allReached.NeverReached, allReached.Notes = allReached.Methods[:2], []string{}, nil
	noMethods := &stats.APICoverage{Methods: []stats.MethodCoverage{}, NeverReached: []string{}}
	cases := []struct {
		name string
		c    *stats.APICoverage
		want []string // in the section's HTML, in this order
		not  []string
	}{
		{"none", nil, nil, nil},
		{"four methods", apiFixture(), []string{
			"2 of 4 methods reached. Never reached: rpc.ping, tool search.",
			"-32601 (method not found)",
			`<td class="key name">countdown</td><td>method</td><td>openrpc</td><td>yes</td><td class="num">1,200</td><td class="num">30</td><td class="num">2</td><td class="num">1,197</td><td>-32602` + nbsp + `×30, -32603` + nbsp + `×2</td><td class="num warn">3</td>` +
				`<td><div class="sample"><pre>crash-0a1b2c3d4e` + "\n" + `hang-5f6a7b8c9d</pre></div></td>`,
			`<td class="key name">now</td><td>method</td><td>openrpc</td><td>yes</td><td class="num">12</td><td class="num">0</td><td class="num">0</td><td class="num">12</td><td>none</td><td class="num">0</td><td>none</td>`,
			`<td class="key name">tool search</td><td>tool</td><td>mcp</td><td class="warn">never reached</td>`,
			`<td>-32601` + nbsp + `×5</td>`,
			`<td class="key name">rpc.ping</td><td>method</td><td>flag</td><td class="warn">never reached</td>`,
			`<div class="notes"><p>What the API&#39;s sources left out, and why:</p><p>left out: method 3 is not an object</p></div>`,
		}, nil},
		{"all reached", allReached, []string{"All 2 methods of the API were reached.", `<td class="key name">now</td>`},
			[]string{"never reached", `class="notes"`}},
		{"no methods", noMethods, []string{"The API has no methods."}, []string{"<table"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			page := render(t, Input{Name: "latency.json", Result: apiResult(tc.c)})
			sec := apiHTML(page)
			if (sec != "") != (tc.c != nil) {
				t.Fatalf("the page has an API coverage section: %v; want %v", sec != "", tc.c != nil)
			}
			rest := sec
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("the section lacks %q (or has it out of order):\n%s", w, sec)
				}
				rest = rest[i+len(w):]
			}
			for _, w := range tc.not {
				if strings.Contains(sec, w) {
					t.Errorf("the section has %q:\n%s", w, sec)
				}
			}
		})
	}
}

// TestAPIPlace: the section follows the findings' rules (Violations) and
// comes before the settings.
func TestAPIPlace(t *testing.T) {
	page := render(t, Input{Name: "latency.json", Result: apiResult(apiFixture())})
	v, a, s := strings.Index(page, "<h3>Violations</h3>"), strings.Index(page, "<h3>API coverage</h3>"), strings.Index(page, "<h3>Settings</h3>")
	if v < 0 || a < v || s < a {
		t.Errorf("sections at %d (violations), %d (API coverage), %d (settings); want them in that order", v, a, s)
	}
}

// TestAPIEscaping: a method name (the server's string), and every other
// string of the coverage, is text on the page, never markup.
func TestAPIEscaping(t *testing.T) {
	hostile := func(s string) *stats.Result {
		c := apiFixture()
		for i := range c.Methods {
			m := &c.Methods[i]
			m.Name, m.Kind, m.Source = m.Name+s, "k"+s, "src"+s
			m.ErrorsByCode["c"+s] = 1
			if len(m.Findings) > 0 {
				m.Findings[0] += s
			}
		}
		c.NeverReached = []string{"rpc.ping" + s, "tool search" + s}
		c.Notes = append(c.Notes, "note"+s)
		return apiResult(c)
	}
	want := skeleton(render(t, Input{Name: "n-benign", Result: hostile("benign")}))
	for _, s := range []string{`<script>alert(1)</script>`, `"quoted" and 'single' </td></tr></table>`, `"><img src=x onerror=alert(1)>`, "a\nb"} {
		page := render(t, Input{Name: "n" + s, Result: hostile(s)})
		if got := skeleton(page); !equal(got, want) {
			t.Errorf("%q: the page's tags depend on the coverage's strings: %s", s, firstDifference(want, got))
		}
		if strings.Contains(strings.ToLower(page), "<script") || strings.Contains(page, "<img") {
			t.Errorf("%q: markup got through", s)
		}
		text := visibleText(page)
		for _, w := range []string{"countdown" + s, "k" + s, "src" + s, "c" + s + nbsp + "×1", "crash-0a1b2c3d4e" + s, "Never reached: rpc.ping" + s + ", tool search" + s, "note" + s} {
			if !strings.Contains(text, w) {
				t.Errorf("%q: visible text lacks %q", s, w)
			}
		}
	}
}
