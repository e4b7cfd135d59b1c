package stats

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// APICoverage is how much of the API a run reached (summary.json's "api").
// Calls are the frames of the run's inputs that called a method of the API
// (fresh API calls and mutated ones alike; confirming and minimizing
// findings not counted), sorted by what its schema says of their params.
type APICoverage struct {
	Methods []MethodCoverage `json:"methods"`
	// NeverReached names the methods no call reached: none was answered
	// with a result or an error other than -32601 (method not found).
	NeverReached []string `json:"never_reached"`
	// Notes say what the API's sources left out and why.
	Notes []string `json:"notes,omitempty"`
}

// MethodCoverage is one method's share of a run.
type MethodCoverage struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`   // method, tool or prompt
	Source string `json:"source"` // openrpc, mcp or flag
	// CallsValid, CallsInvalid and CallsUnjudged count the calls by what
	// the method's params schema says of their params: accepted,
	// rejected, or not judged (no schema, or params a server could read
	// otherwise than the validator, see apispec).
	CallsValid    uint64 `json:"calls_valid"`
	CallsInvalid  uint64 `json:"calls_invalid"`
	CallsUnjudged uint64 `json:"calls_unjudged"`
	Results       uint64 `json:"results"`  // calls answered with a result
	NoReply       uint64 `json:"no_reply"` // calls that got no reply
	// ErrorsByCode counts the calls answered with an error, by code.
	ErrorsByCode map[string]uint64 `json:"errors_by_code"`
	// Findings are the ids of the findings about this method: an oracle of
	// the API's that fired on its call, or another rule whose input's
	// frame called it (a crash, a hang).
	Findings []string `json:"findings"`
}

// methodNotFound is the error code that does not reach a method: the server
// did not know it.
const methodNotFound = "-32601"

// reached reports whether a call reached m: one was answered with a result
// or with an error other than method not found.
func (m *MethodCoverage) reached() bool {
	if m.Results > 0 {
		return true
	}
	for code, n := range m.ErrorsByCode {
		if n > 0 && code != methodNotFound {
			return true
		}
	}
	return false
}

// WriteAPICoverage writes the text summary's API lines: per method the
// calls by their params, the replies, and the findings. A nil c writes
// nothing.
func WriteAPICoverage(w io.Writer, c *APICoverage) {
	if c == nil {
		return
	}
	fmt.Fprintf(w, "API: %d methods, %d never reached\n", len(c.Methods), len(c.NeverReached))
	for _, m := range c.Methods {
		codes := make([]string, 0, len(m.ErrorsByCode))
		for code, n := range m.ErrorsByCode {
			codes = append(codes, fmt.Sprintf("%s×%d", code, n))
		}
		slices.Sort(codes)
		errs := "no errors"
		if len(codes) > 0 {
			errs = "errors " + strings.Join(codes, " ")
		}
		// A method's name is the server's string: folded to one line so it
		// cannot break the table.
		name := OneLine(strings.Join(strings.Fields(m.Name), " "), 32)
		fmt.Fprintf(w, "  %-32s %6d valid %6d invalid %6d unjudged calls; %6d results, %s, %d unanswered; %d findings\n",
			name, m.CallsValid, m.CallsInvalid, m.CallsUnjudged, m.Results, errs, m.NoReply, len(m.Findings))
	}
	if len(c.NeverReached) > 0 {
		fmt.Fprintf(w, "  never reached: %s\n", strings.Join(c.NeverReached, ", "))
	}
}

// mergeAPICoverage adds up the API coverage of the parts of a merge, per
// method (by kind and name, in the order the parts list them): calls and
// replies add, findings and notes are united, and what was never reached
// is judged again on the sums, so a method one part reached is reached.
// Parts without coverage add nothing, and a note says the counts are not
// the whole merge's; so does one when the parts' APIs differ. It returns
// nil when no part has coverage.
func mergeAPICoverage(parts []*Result) *APICoverage {
	var out *APICoverage
	index := map[[2]string]int{} // kind and name → position in out.Methods
	with, apis := 0, map[string]bool{}
	for _, p := range parts {
		c := p.API
		if c == nil {
			continue
		}
		with++
		if out == nil {
			out = &APICoverage{Methods: []MethodCoverage{}, NeverReached: []string{}}
		}
		names := make([]string, 0, len(c.Methods))
		for _, m := range c.Methods {
			names = append(names, m.Kind+" "+m.Name)
			key := [2]string{m.Kind, m.Name}
			i, ok := index[key]
			if !ok {
				i = len(out.Methods)
				index[key] = i
				out.Methods = append(out.Methods, MethodCoverage{Name: m.Name, Kind: m.Kind, Source: m.Source,
					ErrorsByCode: map[string]uint64{}, Findings: []string{}})
			}
			addMethodCoverage(&out.Methods[i], m)
		}
		slices.Sort(names)
		apis[strings.Join(names, "\x00")] = true
		out.Notes = appendNew(out.Notes, c.Notes...)
	}
	if out == nil {
		return nil
	}
	for i := range out.Methods {
		if !out.Methods[i].reached() {
			out.NeverReached = append(out.NeverReached, out.Methods[i].Name)
		}
	}
	slices.Sort(out.NeverReached)
	if len(apis) > 1 {
		out.Notes = append(out.Notes, "the merged parts knew different APIs: a method counts the calls of the parts whose API had it")
	}
	if with < len(parts) {
		out.Notes = append(out.Notes, fmt.Sprintf("%d of the %d merged parts carried API coverage: the counts are theirs only", with, len(parts)))
	}
	return out
}

// addMethodCoverage adds m's counts, error codes and findings to dst.
func addMethodCoverage(dst *MethodCoverage, m MethodCoverage) {
	dst.CallsValid += m.CallsValid
	dst.CallsInvalid += m.CallsInvalid
	dst.CallsUnjudged += m.CallsUnjudged
	dst.Results += m.Results
	dst.NoReply += m.NoReply
	addCounts(dst.ErrorsByCode, m.ErrorsByCode)
	dst.Findings = appendNew(dst.Findings, m.Findings...)
}

// appendNew appends the strings of add that list does not hold yet.
func appendNew(list []string, add ...string) []string {
	for _, s := range add {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}
