package report

import (
	"fmt"
	"strings"

	"github.com/rpcload/rpcload/internal/stats"
)

// apiCoverageNote says what the API coverage table counts, as
// docs/report.md does.
const apiCoverageNote = "Per method of the target's API: the calls of the run's inputs (fresh calls and mutated ones), " +
	"by what the method's params schema says of their params (not judged: no schema, or params a server could read otherwise than the validator), " +
	"and how they were answered; the exchanges that confirmed and minimized findings are not counted. " +
	"A method is reached when a call was answered with a result or with an error other than -32601 (method not found)."

// apiSection is the API coverage of an rpcfuzz run (its latency.json):
// one row per method in the API's order, the methods never reached flagged
// and listed, then what the API's sources left out. Every name is the
// server's string; the template escapes it like any other.
func apiSection(c *stats.APICoverage) section {
	sec := section{Title: "API coverage", Paras: []string{apiReachedPara(c), apiCoverageNote}}
	if len(c.Notes) > 0 {
		sec.Notes = append([]string{"What the API's sources left out, and why:"}, c.Notes...)
	}
	if len(c.Methods) == 0 {
		return sec
	}
	never := map[string]bool{}
	for _, name := range c.NeverReached {
		never[name] = true
	}
	t := table{Head: []cell{txt("method"), txt("kind"), txt("source"), txt("reached"), txt("valid calls"), txt("invalid calls"), txt("not judged"),
		txt("results"), txt("errors by code"), txt("no reply"), txt("findings")}}
	for _, m := range c.Methods {
		reached := txt("yes")
		if never[m.Name] {
			reached = cell{Text: "never reached", Class: "warn"}
		}
		noReply := num(fmtCount(m.NoReply))
		if m.NoReply > 0 {
			noReply.Class = "num warn"
		}
		findings := txt("none")
		if len(m.Findings) > 0 {
			// One id a line, as the directories under rpcfuzz's --out are
			// named: an id broken at its hyphen would read as two.
			findings = cell{Blocks: []block{{Pre: strings.Join(m.Findings, "\n")}}}
		}
		t.Rows = append(t.Rows, []cell{{Text: m.Name, Class: "key name"}, txt(m.Kind), txt(m.Source), reached,
			num(fmtCount(m.CallsValid)), num(fmtCount(m.CallsInvalid)), num(fmtCount(m.CallsUnjudged)), num(fmtCount(m.Results)),
			txt(errorsByCode(m.ErrorsByCode)), noReply, findings})
	}
	sec.Tables = []table{t}
	return sec
}

// apiReachedPara says how many methods the run reached and names those it
// never did.
func apiReachedPara(c *stats.APICoverage) string {
	switch {
	case len(c.Methods) == 0:
		return "The API has no methods."
	case len(c.NeverReached) == 0:
		return fmt.Sprintf("All %d methods of the API were reached.", len(c.Methods))
	}
	return fmt.Sprintf("%d of %d methods reached. Never reached: %s.",
		max(len(c.Methods)-len(c.NeverReached), 0), len(c.Methods), strings.Join(c.NeverReached, ", "))
}

// errorsByCode lists error codes with their counts, "-32602 ×30, -32603
// ×2", in the order of the codes (as the Error codes section has them);
// "none" when there were none. A code and its count are joined by a
// no-break space, so a narrow column wraps between codes only.
func errorsByCode(codes map[string]uint64) string {
	var parts []string
	for _, code := range stats.SortedKeys(codes) {
		if n := codes[code]; n > 0 {
			parts = append(parts, code+"\u00a0×"+fmtCount(n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
