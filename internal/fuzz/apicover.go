package fuzz

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcload/rpcload/internal/apispec"
	"github.com/rpcload/rpcload/internal/wire"
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

// methodCov is MethodCoverage's counts, kept by each worker.
type methodCov struct {
	valid, invalid, unjudged, results, noReply uint64
	errors                                     map[int64]uint64
}

// cover counts an exchange's calls of the API.
func (w *worker) cover(calls []apiCall) {
	if len(calls) == 0 {
		return
	}
	if w.cov == nil {
		w.cov = make([]methodCov, w.r.api.api.Len())
	}
	for _, c := range calls {
		mc := &w.cov[c.method]
		switch c.params {
		case apispec.Valid:
			mc.valid++
		case apispec.Invalid:
			mc.invalid++
		default:
			mc.unjudged++
		}
		switch {
		case !c.replied:
			mc.noReply++
		case c.kind == wire.KindResult:
			mc.results++
		case c.kind == wire.KindError:
			if mc.errors == nil {
				mc.errors = map[int64]uint64{}
			}
			mc.errors[c.code]++
		}
	}
}

// mergeCoverage adds a worker's counts to the run's (r.mu held).
func (r *run) mergeCoverage(cov []methodCov) {
	if len(cov) == 0 {
		return
	}
	if r.cov == nil {
		r.cov = make([]methodCov, len(cov))
	}
	for i, c := range cov {
		t := &r.cov[i]
		t.valid += c.valid
		t.invalid += c.invalid
		t.unjudged += c.unjudged
		t.results += c.results
		t.noReply += c.noReply
		for code, n := range c.errors {
			if t.errors == nil {
				t.errors = map[int64]uint64{}
			}
			t.errors[code] += n
		}
	}
}

// apiCoverage is summary.json's "api" (nil without an API).
func (r *run) apiCoverage(findings []Finding) *APICoverage {
	if r.api == nil {
		return nil
	}
	api := r.api.api
	out := &APICoverage{Methods: make([]MethodCoverage, api.Len()), NeverReached: []string{}, Notes: api.Notes}
	for i, m := range api.Methods {
		mc := MethodCoverage{Name: m.Name, Kind: m.Kind.String(), Source: m.Source, ErrorsByCode: map[string]uint64{}, Findings: []string{}}
		reached := false
		if i < len(r.cov) {
			c := r.cov[i]
			mc.CallsValid, mc.CallsInvalid, mc.CallsUnjudged, mc.Results, mc.NoReply = c.valid, c.invalid, c.unjudged, c.results, c.noReply
			reached = c.results > 0
			for code, n := range c.errors {
				mc.ErrorsByCode[strconv.FormatInt(code, 10)] = n
				reached = reached || code != -32601
			}
		}
		for _, f := range findings {
			if f.Method == m.Name {
				mc.Findings = append(mc.Findings, f.ID)
			}
		}
		if !reached {
			out.NeverReached = append(out.NeverReached, m.Name)
		}
		out.Methods[i] = mc
	}
	slices.Sort(out.NeverReached)
	return out
}

func paramsOrNone(p json.RawMessage) []byte {
	if p == nil {
		return []byte("no params")
	}
	return p
}

// writeAPICoverage writes the text summary's API lines: per method the
// calls by their params, the replies, and the findings.
func writeAPICoverage(w io.Writer, c *APICoverage) {
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
		fmt.Fprintf(w, "  %-32s %6d valid %6d invalid %6d unjudged calls; %6d results, %s, %d unanswered; %d findings\n",
			oneLine(m.Name, 32), m.CallsValid, m.CallsInvalid, m.CallsUnjudged, m.Results, errs, m.NoReply, len(m.Findings))
	}
	if len(c.NeverReached) > 0 {
		fmt.Fprintf(w, "  never reached: %s\n", strings.Join(c.NeverReached, ", "))
	}
}
