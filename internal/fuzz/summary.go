package fuzz

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/stats"
)

// SummarySchema is the version tag of summary.json.
const SummarySchema = "rpcfuzz.summary/v1"

// Summary is what a run did and found: summary.json.
type Summary struct {
	Schema    string  `json:"schema"`
	Tool      string  `json:"tool"`
	Target    string  `json:"target"`
	Profile   string  `json:"profile"`
	Seed      uint64  `json:"seed"`
	Workers   int     `json:"workers"`
	StartedAt string  `json:"started_at"`
	DurationS float64 `json:"duration_s"`
	Execs     uint64  `json:"execs"` // fuzz inputs sent
	ExecsPerS float64 `json:"execs_per_s"`
	// Checks counts the exchanges spent on canaries, confirming and
	// minimizing findings (not in Execs).
	Checks         uint64 `json:"checks"`
	DistinctTuples int    `json:"distinct_tuples"`
	CorpusSize     int    `json:"corpus_size"`
	Restarts       int64  `json:"restarts"`         // child processes started again after one ended
	Canary         string `json:"canary,omitempty"` // the known-good request, "" when off
	// Insecure says the server's certificate was not verified (--insecure):
	// what was fuzzed may not have been the server meant.
	Insecure bool `json:"insecure"`
	// Findings are the distinct failures and warnings written under the
	// output directory, in the order found.
	Findings       []Finding      `json:"findings"`
	FindingsByRule map[string]int `json:"findings_by_rule"`
	Failures       int            `json:"failures"` // findings of severity failure
	// Baselined are findings the baseline accepted: counted, not written.
	Baselined       []Baselined `json:"baselined"`
	Unconfirmed     int         `json:"unconfirmed"`      // failures that did not happen again when re-run
	FindingsDropped int         `json:"findings_dropped"` // distinct failures past --max-findings
	Ops             []OpReport  `json:"ops"`              // the mutation ops that took part, with the findings each helped make
	Stopped         string      `json:"stopped,omitempty"`
	Interrupted     bool        `json:"interrupted"`
	Warnings        []string    `json:"warnings"`

	// TimeSplit is where the workers' time went (see TimeSplit).
	TimeSplit TimeSplit `json:"time_split"`
	// Hits counts, per rule, the frames (each with its reply or its
	// missing reply) and the extra replies that broke it, over every
	// exchange judged: the inputs, and the confirmations and minimizing
	// of findings, which sent their frames again.
	Hits map[string]uint64 `json:"hits_by_rule"`
	// ParseErrorIDs counts, of those, the replies to unparseable frames
	// that carried an id other than null (wrong_error_code).
	ParseErrorIDs uint64 `json:"parse_error_ids"`

	// API is how much of the target's API the run reached (nil: no API
	// was known).
	API *APICoverage `json:"api,omitempty"`

	// Latency is latency.json: the inputs' latencies and how each input
	// ended, its verdict counted once under its main rule.
	Latency *stats.Result `json:"-"`
}

// OpReport is one mutation op's record in a run.
type OpReport struct {
	Name     string `json:"name"`
	Class    string `json:"class"`
	Applied  uint64 `json:"applied"`  // inputs it took part in
	Rewarded uint64 `json:"rewarded"` // of those, inputs that produced a new tuple
	Findings int    `json:"findings"` // findings whose input it took part in
}

// finish writes the summary, the latency result and the final hit counts.
func (r *run) finish() (*Summary, error) {
	end := r.cfg.Now()
	dur := end.Sub(r.start)
	fs, bs := r.found.all()
	for i := range fs {
		if fs[i].Dir != "" {
			if err := writeFindingJSON(fs[i].Dir, &fs[i]); err != nil {
				r.warn("finding %s: %v", fs[i].ID, err)
			}
		}
	}
	s := &Summary{
		Schema: SummarySchema, Tool: "rpcfuzz", Target: r.cfg.Target.URL, Profile: string(r.cfg.Profile), Seed: r.cfg.Seed,
		Workers: r.cfg.Workers, StartedAt: r.start.UTC().Format(time.RFC3339Nano), DurationS: dur.Seconds(),
		Execs: r.execCount(), Checks: r.checks.Load(), DistinctTuples: r.tuples.len(), CorpusSize: r.corpus.len(),
		Restarts: r.restarts(), Findings: fs, FindingsByRule: map[string]int{}, Baselined: bs,
		Interrupted: r.parent.Err() != nil, Insecure: r.cfg.TLS.Insecure,
	}
	if s.Findings == nil {
		s.Findings = []Finding{}
	}
	if dur > 0 {
		s.ExecsPerS = float64(s.Execs) / dur.Seconds()
	}
	if r.canary != nil {
		s.Canary = string(r.canary.c.Frames[0])
	}
	byOp := map[string]int{}
	for _, f := range fs {
		s.FindingsByRule[f.Rule]++
		if f.Severity == "failure" {
			s.Failures++
		}
		seen := map[string]bool{}
		for _, op := range f.Ops {
			if !seen[op] {
				seen[op] = true
				byOp[op]++
			}
		}
	}
	r.found.mu.Lock()
	s.Unconfirmed, s.FindingsDropped = r.found.unconfed, r.found.dropped
	r.found.mu.Unlock()
	s.Ops = []OpReport{}
	for _, st := range r.mut.Stats() {
		if st.Applied == 0 {
			continue
		}
		s.Ops = append(s.Ops, OpReport{Name: st.Name, Class: st.Class.String(), Applied: st.Applied, Rewarded: st.Rewarded, Findings: byOp[st.Name]})
	}
	r.mu.Lock()
	s.TimeSplit = timeSplit(r.split)
	s.Stopped = r.reason
	s.Warnings = append([]string{}, r.warnings...)
	r.mu.Unlock()

	lat := &stats.Result{
		Tool: "rpcfuzz", Target: r.cfg.Target.URL, StartedAt: s.StartedAt, DurationS: s.DurationS,
		Settings: map[string]any{"seed": r.cfg.Seed, "workers": r.cfg.Workers, "profile": s.Profile, "timeout_s": r.cfg.Timeout.Seconds()},
		Rate:     stats.Rate{Achieved: s.ExecsPerS}, Interrupted: s.Interrupted, Warnings: s.Warnings,
	}
	if err := r.agg.Fill(lat); err != nil {
		return s, fmt.Errorf("latency.json: %w", err)
	}
	s.Latency = lat
	s.ParseErrorIDs = r.parseIDs.Load()
	s.API = r.apiCoverage(s.Findings)
	lat.API = s.API // so the HTML report of latency.json shows it too
	s.Hits = map[string]uint64{}
	for rule := range r.hits {
		if n := r.hits[rule].Load(); n > 0 {
			s.Hits[check.Rule(rule).String()] = n
		}
	}
	if err := stats.WriteJSONFile(filepath.Join(r.cfg.OutDir, "latency.json"), lat); err != nil {
		return s, err
	}
	return s, WriteSummary(filepath.Join(r.cfg.OutDir, "summary.json"), s)
}

// WriteSummary writes s as JSON to path atomically.
func WriteSummary(path string, s *Summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return stats.WriteFileAtomic(path, append(b, '\n'))
}

// WriteText prints the run summary for people.
func WriteText(w io.Writer, s *Summary) error {
	ew := &stats.ErrWriter{W: w}
	fmt.Fprintf(ew, "rpcfuzz %s (profile %s, seed %d, %d workers)\n", s.Target, s.Profile, s.Seed, s.Workers)
	fmt.Fprintf(ew, "  %d inputs in %.1fs: %.0f/s; %d more exchanges for canaries and minimizing\n", s.Execs, s.DurationS, s.ExecsPerS, s.Checks)
	fmt.Fprintf(ew, "  %d distinct reply tuples, %d inputs in the working corpus", s.DistinctTuples, s.CorpusSize)
	if s.Restarts > 0 {
		fmt.Fprintf(ew, ", %d restarts of the child process", s.Restarts)
	}
	fmt.Fprintln(ew)
	writeTimeSplit(ew, &s.TimeSplit)
	if s.Canary == "" {
		fmt.Fprintln(ew, "  canary: off")
	}
	switch {
	case s.Interrupted:
		fmt.Fprintln(ew, "  interrupted: the findings so far are written")
	case s.Stopped != "":
		fmt.Fprintf(ew, "  stopped: %s\n", s.Stopped)
	}
	if len(s.Findings) == 0 {
		fmt.Fprintln(ew, "findings: none")
	} else {
		rules := make([]string, 0, len(s.FindingsByRule))
		for r, n := range s.FindingsByRule {
			rules = append(rules, fmt.Sprintf("%s %d", r, n))
		}
		sort.Strings(rules)
		fmt.Fprintf(ew, "findings: %d (%s)\n", len(s.Findings), strings.Join(rules, ", "))
		for _, f := range s.Findings {
			fmt.Fprintf(ew, "  %-8s %-28s %6d -> %5d bytes  %dx  %s\n", f.Severity, f.ID, f.InputBytes, f.MinimizedBytes, f.Hits, f.Dir)
			if f.Method != "" {
				fmt.Fprintf(ew, "           calls %s with %s\n", f.Method, oneLine(string(paramsOrNone(f.Params)), 120))
			}
			if f.Note != "" {
				fmt.Fprintf(ew, "           %s\n", oneLine(f.Note, 160))
			}
			if len(f.Suspects) > 0 {
				fmt.Fprintf(ew, "           suspects (inputs in flight when the server died): input.bin, %s\n", strings.Join(f.Suspects, ", "))
			}
			if len(f.Reproduce) > 0 {
				fmt.Fprintf(ew, "           %s\n", f.Reproduce[0])
			}
		}
	}
	for _, b := range s.Baselined {
		fmt.Fprintf(ew, "  baseline %-28s %dx (accepted)\n", b.ID, b.Hits)
	}
	if s.Unconfirmed > 0 {
		fmt.Fprintf(ew, "  %d failures did not happen again when re-run (not reported)\n", s.Unconfirmed)
	}
	if s.FindingsDropped > 0 {
		fmt.Fprintf(ew, "  %d further distinct failures past --max-findings were not written\n", s.FindingsDropped)
	}
	stats.WriteAPICoverage(ew, s.API)
	if ops := productiveOps(s.Ops); len(ops) > 0 {
		fmt.Fprintf(ew, "ops that produced findings: %s\n", strings.Join(ops, ", "))
	}
	for _, wn := range s.Warnings {
		fmt.Fprintf(ew, "warning: %s\n", wn)
	}
	return ew.Err()
}

func productiveOps(ops []OpReport) []string {
	var out []OpReport
	for _, o := range ops {
		if o.Findings > 0 {
			out = append(out, o)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Findings > out[j].Findings })
	names := make([]string, len(out))
	for i, o := range out {
		names[i] = fmt.Sprintf("%s %d", o.Name, o.Findings)
	}
	return names
}

// oneLine folds the whitespace of a note or reply and cuts it to one line
// of stats.OneLine (which never splits a UTF-8 sequence).
func oneLine(s string, n int) string {
	return stats.OneLine(strings.Join(strings.Fields(s), " "), n)
}
