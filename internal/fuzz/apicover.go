package fuzz

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/rpcload/rpcload/internal/apispec"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/wire"
)

// APICoverage is how much of the API a run reached (summary.json's "api",
// and latency.json's): the type lives in stats, with the result it is part
// of.
type APICoverage = stats.APICoverage

// MethodCoverage is one method's share of a run (see stats.MethodCoverage).
type MethodCoverage = stats.MethodCoverage

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
