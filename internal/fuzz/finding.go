package fuzz

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
)

// FindingSchema is the version tag of finding.json.
const FindingSchema = "rpcfuzz.finding/v1"

// CaseSchema is the version tag of case.json.
const CaseSchema = "rpcfuzz.case/v1"

// Finding is one distinct failure: finding.json in its directory, and an
// entry of summary.json.
type Finding struct {
	Schema         string   `json:"schema,omitempty"`
	ID             string   `json:"id"`   // the rule and a hash of Key, e.g. crash-3fa2c1d0aa
	Rule           string   `json:"rule"` // a rule id of package check
	Severity       string   `json:"severity"`
	Spec           string   `json:"spec,omitempty"`
	Key            string   `json:"key"` // rule|error code|reply shape (or stderr line): what dedups findings
	ErrorCode      int64    `json:"error_code,omitempty"`
	Note           string   `json:"note,omitempty"`
	InputBytes     int      `json:"input_bytes"`
	MinimizedBytes int      `json:"minimized_bytes"`
	TimeToFindS    float64  `json:"time_to_find_s"`
	ExecsToFind    uint64   `json:"execs_to_find"`
	Ops            []string `json:"ops"`
	Seed           uint64   `json:"seed"`
	Hits           uint64   `json:"hits"` // inputs of the run that broke it the same way
	Dir            string   `json:"dir"`
	// Suspects name the files (case.json's format) of the other inputs in
	// flight when a network server died, one per worker: any of them, or
	// the input itself, may have killed it (see run.gone).
	Suspects []string `json:"suspects,omitempty"`
	// Target is what the finding was found against; replay uses it unless
	// told otherwise.
	Target   TargetInfo     `json:"target"`
	Minimize MinimizeReport `json:"minimize"`
	// Reproduce holds one-line reproducers: rpcfuzz replay, then a curl,
	// nc or shell line.
	Reproduce []string `json:"reproduce"`
	GoTest    string   `json:"go_test,omitempty"` // set by export-go
	// Method is the API method (or "tool NAME") the minimized input
	// calls, and Params the params (a tool's arguments) it calls it with,
	// when the run knew the target's API: "tool search" with
	// {"query":""}.
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

// TargetInfo describes a target in finding.json.
type TargetInfo struct {
	URL       string   `json:"url,omitempty"`
	Command   []string `json:"command,omitempty"`
	Framing   string   `json:"framing"`
	Profile   string   `json:"profile"`
	TimeoutMS int64    `json:"timeout_ms"`
	// SlowOverMS is the latency above which the input counted as slow
	// (slow_input findings).
	SlowOverMS float64 `json:"slow_over_ms,omitempty"`

	// ServerCommand is the server process rpcfuzz started for URL
	// (Config.ServerCommand): replay and minimize start it again.
	ServerCommand []string `json:"server_command,omitempty"`
	// Workspace is the LSP workspace the run's connections opened
	// (profile.Options.Workspace): an API call about one of its documents
	// means nothing to a server that was not given it, so replay and
	// minimize open it again.
	Workspace string `json:"workspace,omitempty"`
}

// MinimizeReport says how the input was shrunk.
type MinimizeReport struct {
	Checks     int     `json:"checks"` // reproduction attempts
	DurationS  float64 `json:"duration_s"`
	Reproduced bool    `json:"reproduced"` // the original input broke the rule again before shrinking
	Complete   bool    `json:"complete"`   // every pass ran to its end within the budget
}

// findingID names a finding: its rule and a short hash of its key.
func findingID(rule check.Rule, key string) string {
	h := sha256.Sum256([]byte(key))
	return rule.String() + "-" + hex.EncodeToString(h[:5])
}

func severity(r check.Rule) string {
	if r.Warning() {
		return "warning"
	}
	return "failure"
}

// findingSet holds the findings of a run, claimed by the worker that found
// each while it is being confirmed and minimized.
type findingSet struct {
	mu       sync.Mutex
	byID     map[string]*Finding
	order    []string
	base     map[string]*Baselined
	baseIDs  []string
	unconf   map[string]int // dedup key -> candidates that did not reproduce
	pending  int            // claimed, not yet written
	failures int            // written findings of severity failure
	// pendingFailures are claimed failures not yet written, so that with
	// stopAfter (--stop-after) no more failures are claimed than it takes
	// to stop: workers that found others meanwhile do not confirm and
	// minimize theirs after the run has what it asked for.
	pendingFailures int
	stopAfter       int
	dropped         int
	unconfed        int
	// alias maps the id of a traced finding's original key to the id its
	// minimized input got (see run.rekey): later inputs with the original
	// key are hits of that finding, not minimized again.
	alias map[string]string
}

// Baselined is a finding the baseline accepts: counted, not written.
type Baselined struct {
	ID   string `json:"id"`
	Rule string `json:"rule"`
	Hits uint64 `json:"hits"`
}

// newFindingSet returns an empty set; stopAfter is --stop-after (0: none).
func newFindingSet(stopAfter int) *findingSet {
	return &findingSet{byID: map[string]*Finding{}, base: map[string]*Baselined{}, unconf: map[string]int{}, stopAfter: stopAfter,
		alias: map[string]string{}}
}

// resolve returns the id a key's id stands for: itself, or the id of the
// minimized input of a finding first seen with it.
func (s *findingSet) resolve(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range 8 { // (an alias chain is as long as the re-minimizations of one cause)
		a, ok := s.alias[id]
		if !ok {
			break
		}
		id = a
	}
	return id
}

// rekey moves the claim on old to id, the id of its minimized input's key,
// and reports whether the caller still writes it: not when id is written,
// claimed or baselined already (base), where the claim's hits go.
func (s *findingSet) rekey(old, id string, base bool, rule check.Rule, failure bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.byID[old]
	delete(s.byID, old)
	s.alias[old] = id
	g, known := s.byID[id]
	if !known && !base {
		f.ID = id
		s.byID[id] = f
		return true
	}
	s.pending--
	if failure {
		s.pendingFailures--
	}
	if known {
		g.Hits += f.Hits
		return false
	}
	b, ok := s.base[id]
	if !ok {
		b = &Baselined{ID: id, Rule: rule.String()}
		s.base[id] = b
		s.baseIDs = append(s.baseIDs, id)
	}
	b.Hits += f.Hits
	return false
}

// hit counts another input for a known finding and reports whether id is
// known (written or being written).
func (s *findingSet) hit(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.byID[id]; ok {
		f.Hits++
		return true
	}
	return false
}

func (s *findingSet) baselined(id string, rule check.Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.base[id]
	if !ok {
		b = &Baselined{ID: id, Rule: rule.String()}
		s.base[id] = b
		s.baseIDs = append(s.baseIDs, id)
	}
	b.Hits++
}

// claim reserves id, a failure or not, for the caller, or reports why not.
func (s *findingSet) claim(id, key string, max int, failure bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.byID[id]; ok {
		f.Hits++
		return false
	}
	if s.unconf[key] >= unconfirmedLimit {
		return false
	}
	if failure && s.stopAfter > 0 && s.failures+s.pendingFailures >= s.stopAfter {
		return false // the ones claimed stop the run once written
	}
	if failure {
		s.pendingFailures++
	}
	if len(s.byID) >= max {
		s.dropped++
		return false
	}
	s.byID[id] = &Finding{ID: id, Hits: 1}
	s.pending++
	return true
}

// release gives a claim back: the candidate did not reproduce.
func (s *findingSet) release(id, key string, failure bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if failure {
		s.pendingFailures--
	}
	delete(s.byID, id)
	s.pending--
	s.unconf[key]++
	s.unconfed++
}

func (s *findingSet) unconfirmed(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unconf[key]++
	s.unconfed++
}

// complete records a written finding and returns how many failures (not
// warnings) are written.
func (s *findingSet) complete(f Finding) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	hits := s.byID[f.ID].Hits
	f.Hits = hits
	*s.byID[f.ID] = f
	s.order = append(s.order, f.ID)
	s.pending--
	if f.Severity == "failure" {
		s.failures++
		s.pendingFailures--
	}
	return s.failures
}

func (s *findingSet) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.order) + len(s.base)
}

// all returns the written findings in the order found, and the baselined.
func (s *findingSet) all() ([]Finding, []Baselined) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := make([]Finding, 0, len(s.order))
	for _, id := range s.order {
		fs = append(fs, *s.byID[id])
	}
	bs := make([]Baselined, 0, len(s.baseIDs))
	for _, id := range s.baseIDs {
		bs = append(bs, *s.base[id])
	}
	return fs, bs
}

// candidate is a failure on its way to becoming a finding.
type candidate struct {
	in         mutate.Case
	applied    []int
	v          verdict
	key, id    string
	execN      uint64
	confirmed  bool // it was reproduced already (a canary's blame search)
	fromCanary bool // found by a canary: no canary after it
	note       string
	slowOver   time.Duration
	// check re-runs an input and reports whether it fails the same way;
	// nil: not minimized.
	check func(ctx context.Context, c mutate.Case) bool
	// evidence is the verdict of check's last success: the reply and note
	// of the minimized input.
	evidence *evidence
	// confirming, while set, makes check use a fresh connection (see
	// confirm); shared by the candidate's copies.
	confirming *bool
	// coarse and traits are causeKey's: a traced finding reproduces with
	// its coarse key and no trait the original lacks ("" coarse: the same
	// key).
	coarse, traits string
	// suspects are the other inputs in flight when a server died
	// (server.go): tried when in does not reproduce, or, when nothing can
	// be re-checked, written beside it.
	suspects []mutate.Case
}

// evidence is what the last reproduction of a candidate showed.
type evidence struct {
	v   verdict
	set bool
	// answered: a check of a reply called missing got it, late; no
	// other try can make the original verdict anything but too hasty.
	answered bool
}

// finding handles an input that broke a rule in the main loop.
func (r *run) finding(w *worker, in mutate.Case, applied []int, res *result, execN uint64) {
	v := res.v
	cand := candidate{in: in, applied: applied, v: v, key: dedupKey(v), execN: execN}
	cand.coarse, cand.traits = causeKey(&v)
	cand.id = r.found.resolve(findingID(v.rule, cand.key))
	if r.cfg.Baseline[cand.id] {
		r.found.baselined(cand.id, v.rule)
		return
	}
	if r.found.hit(cand.id) || r.gone(w, in, res) {
		return
	}
	r.serverSuspects(&cand, res)
	cand.check = r.reproducer(w, &cand)
	r.report(w, cand)
}

// slowerThanControl reports whether an input answered in took is slow
// beside the canary, sent right after it on the same connection: more
// than --slow-factor times the canary's latency. A machine loaded for a
// while (other builds and tests on the same cores) makes every exchange
// slow, the canary's too, where an input the server is slow on leaves the
// canary fast: against the reference server on a 2-core machine at load
// 9, inputs answered in 104 to 164 ms passed the two slow re-runs of
// their confirmation, and their minimization took 43 % of the run. With
// no canary, there is no control, and the input is slow.
func (r *run) slowerThanControl(ctx context.Context, w *worker, took time.Duration) bool {
	if r.canary == nil {
		return true
	}
	res := r.canaryOn(ctx, w, false)
	if !res.tells() || !r.canary.answered(res) {
		return true // (the canary says nothing of speed; the input's own checks go on)
	}
	return float64(took) > r.cfg.SlowFactor*float64(res.o.latency)
}

// reproducer returns the check that an input fails the same way: the same
// dedup key, on a fresh connection (a child process is reused while it
// lives: restarting one per check would be slow, and a crash restarts it).
func (r *run) reproducer(w *worker, cand *candidate) func(ctx context.Context, c mutate.Case) bool {
	fresh := r.cfg.Target.Scheme != transport.Stdio
	confirming := new(bool)
	cand.confirming = confirming
	key := cand.key
	ev := &evidence{}
	cand.evidence = ev
	if cand.v.rule == check.SlowInput {
		over := cand.slowOver
		if over == 0 {
			over = w.lat.Limit(oracle.InputSize(cand.in))
			cand.slowOver = over
		}
		return func(ctx context.Context, c mutate.Case) bool {
			res := w.exec(ctx, c, fresh || *confirming)
			r.checks.Add(1)
			if res.o.end != endNone || res.v.rules != 0 || res.o.latency <= over || !r.slowerThanControl(ctx, w, res.o.latency) {
				return false
			}
			rep := firstReply(&res.o)
			v := verdict{rule: check.SlowInput, code: firstCode(&res.o), shape: replyShape(rep), reply: rep,
				note: fmt.Sprintf("answered in %s (slow above %s)", res.o.latency.Round(time.Microsecond), over)}
			if dedupKey(v) != key {
				return false
			}
			ev.v, ev.set = v, true
			return true
		}
	}
	// An id null is waited for until the timeout: a server that answers
	// late is not silent.
	patient := cand.v.rule == check.NullIDUnanswered
	hang := cand.v.rule == check.Hang
	// A missing reply other than a hang's (judged once the grace after the
	// sync reply passed) is confirmed waiting the whole timeout for it.
	silent := !hang && !patient && cand.v.shape == "none"
	return func(ctx context.Context, c mutate.Case) bool {
		w.patient = patient
		if (hang || silent) && *confirming {
			// (A big batch on a loaded machine is slow in proportion: a
			// batch of 65,625 elements, answered with an array of 8 MB
			// past --timeout beside other work, was "no reply to a
			// batch", and its replay saw the array.)
			w.patience = hangPatience(r.cfg.Timeout) + 10*writeAllowance(caseSize(c))
		}
		w.patientAll = silent && *confirming
		// (Not for a crash or a hang, whose verdict is not about replies:
		// lingering on a connection before closing it gave jrpc2 the time
		// to finish what its close-time panic needs unfinished, and its
		// crash replayed 2/3.)
		w.linger = *confirming && !hang && cand.v.rule != check.Crash
		res := w.exec(ctx, c, fresh || *confirming)
		w.patient, w.patientAll, w.patience, w.linger = false, false, 0, false
		r.checks.Add(1)
		if res.o.end == endInterrupted || !cand.reproduces(&res.v, key, *confirming) {
			if patient && *confirming && res.o.end == endNone && !res.v.rules.Has(check.NullIDUnanswered) {
				// Answered, only later than the input's grace: the verdict
				// is explained, and that method's id null is waited for
				// as long from now on.
				ev.answered = true
				r.d.noteSlowNull(cand.v.in, res.o.latency)
			}
			return false
		}
		ev.v, ev.set = res.v, true
		return true
	}
}

// reproduces reports whether v is the candidate's failure again: the same
// key, or for a traced finding the same key but for traits the original
// input had too. While a candidate is minimized (not confirming), a
// verdict that is a guess does not count: confirmation settled the
// candidate's own (settleGuess), and a smaller input must not bring the
// doubt back ([[]] and a notification batch answered [-32600] and
// [-32700] by jrpc2, which one the -32700 answers a guess, was the
// minimized input of a finding whose original verdict was in no doubt).
func (cand *candidate) reproduces(v *verdict, key string, confirming bool) bool {
	if v.guess && !confirming {
		return false
	}
	if cand.coarse == "" {
		return dedupKey(*v) == key
	}
	c, t := causeKey(v)
	return c == cand.coarse && traitsWithin(t, cand.traits)
}

// rekey gives a candidate whose minimized input has another key than the
// original (a traced finding that lost traits) that key, and reports
// whether it is still to be written: not when that key's finding is known
// or baselined.
func (r *run) rekey(cand *candidate, failure bool) bool {
	key := dedupKey(cand.v)
	if key == cand.key {
		return true
	}
	id := findingID(cand.v.rule, key)
	if !r.found.rekey(cand.id, id, r.cfg.Baseline[id], cand.v.rule, failure) {
		return false
	}
	cand.key, cand.id = key, id
	return true
}

// report confirms, minimizes and writes a candidate, unless it is known.
func (r *run) report(w *worker, cand candidate) {
	failure := severity(cand.v.rule) == "failure"
	if !r.found.claim(cand.id, cand.key, r.cfg.MaxFindings, failure) {
		return
	}
	if release := r.holdServer(w, &cand); release != nil {
		defer release()
	}
	ctx := r.boundCtx()
	found := r.cfg.Now()
	mini := cand.in
	var mr MinimizeReport
	saved := w.sw.begin(phaseConfirm)
	defer w.sw.end(saved)
	if cand.check != nil {
		if !cand.confirmed {
			cand.confirmed = r.confirm(ctx, &cand) || r.confirmSuspect(ctx, &cand)
			if !cand.confirmed && !r.cfg.KeepUnconfirmed {
				r.found.release(cand.id, cand.key, failure)
				return
			}
		}
	}
	if cand.check != nil && !cand.confirmed {
		// Kept as found (Config.KeepUnconfirmed): nothing to minimize
		// against.
		cand.check = nil
		cand.note = joinNotes(cand.note, "did not happen again when its input was sent alone: found under load, where what the other connections were doing may have been part of the cause; not minimized")
	}
	if cand.check != nil {
		w.sw.begin(phaseMinimize)
		start := time.Now()
		var res minimizeResult
		budget, limit := minimizeBounds(r.cfg, cand.v.rule)
		limit = r.minimizeShare(limit)
		var api bool
		if mini, res, api = r.minimizeCall(ctx, cand.in, cand.check, budget, start.Add(limit)); !api {
			tried := res.checks
			mini, res = minimize(ctx, cand.in, cand.check, budget-tried, start.Add(limit))
			res.checks += tried
		}
		took := time.Since(start)
		r.minimizing.Add(int64(took))
		mr = MinimizeReport{Checks: res.checks, DurationS: took.Seconds(), Reproduced: true, Complete: res.complete}
		if cand.v.rule == check.Hang && caseSize(mini) < caseSize(cand.in) && !r.hangsStill(ctx, &cand, mini) {
			mini, mr.Complete = cand.in, false
			cand.note = joinNotes(cand.note, "not minimized: the smaller inputs found were answered when given more time")
		}
	}
	w.sw.begin(phaseMinimize) // writing the finding (a candidate not re-checked has nothing else)
	if ev := cand.evidence; ev != nil && ev.set {
		// The input written is the last one that reproduced (the
		// minimized one): its exchange gives the reply, the note and the
		// code, never another exchange's.
		cand.v.reply, cand.v.note, cand.v.code, cand.v.shape = ev.v.reply, ev.v.note, ev.v.code, ev.v.shape
		cand.v.in, cand.v.inClass = ev.v.in, ev.v.inClass
		if !r.rekey(&cand, failure) {
			return
		}
	}
	f := Finding{
		Schema: FindingSchema, ID: cand.id, Rule: cand.v.rule.String(), Severity: severity(cand.v.rule), Spec: check.SpecRef(cand.v.rule),
		Key: cand.key, ErrorCode: cand.v.code, Note: joinNotes(cand.v.note, cand.note),
		InputBytes: caseSize(cand.in), MinimizedBytes: caseSize(mini),
		TimeToFindS: found.Sub(r.start).Seconds(), ExecsToFind: cand.execN, Ops: r.opNames(cand.applied), Seed: r.cfg.Seed,
		Target: targetInfo(r.cfg), Minimize: mr,
	}
	if cand.slowOver > 0 {
		f.Target.SlowOverMS = float64(cand.slowOver.Microseconds()) / 1000
	}
	dir := filepath.Join(r.cfg.OutDir, cand.id)
	f.Dir = dir
	f.Reproduce = reproducers(r.cfg.Target, dir, mini)
	if cand.check == nil {
		if err := writeSuspects(dir, &f, cand.suspects); err != nil {
			r.warn("finding %s: %v", cand.id, err)
		}
	}
	apiJSON := r.describeCall(&f, mini)
	if err := writeFindingDir(dir, &f, mini, cand.v.reply); err != nil {
		r.warn("finding %s: %v", cand.id, err)
	}
	if apiJSON != nil {
		if err := stats.WriteFileAtomic(filepath.Join(dir, "api.json"), apiJSON); err != nil {
			r.warn("finding %s: %v", cand.id, err)
		}
	}
	r.agg.KeepSample(cand.v.rule, 0, firstFrame0(mini), f.Note)
	if failures := r.found.complete(f); r.cfg.StopAfter > 0 && failures >= r.cfg.StopAfter {
		r.fatal(fmt.Sprintf("%d failures found (--stop-after %d)", failures, r.cfg.StopAfter))
	}
	if r.cfg.Log != nil {
		fmt.Fprintf(r.cfg.Log, "rpcfuzz: %s %s (%s): %d -> %d bytes in %s\n", f.Severity, f.ID, f.Rule, f.InputBytes, f.MinimizedBytes, dir)
	}
	if !cand.fromCanary && cand.v.shape != "unreachable" {
		r.checkCanary(w)
	}
}

// Bounds of a slow_input's minimization. Each of its checks waits for a
// reply slower than the threshold (100 ms and up), and most fail for being
// fast this time: with the run's budget (2,000) it took the whole
// --minimize-time (30 s) per finding. A slow input is a warning and its
// cause is rarely in one byte: the tree passes (messages, elements,
// members, nesting, strings) fit in this budget, the byte passes mostly
// do not.
const (
	slowMinimizeBudget = 48
	slowMinimizeTime   = 5 * time.Second
)

// minimizeBounds returns the check budget and the time a finding of rule
// may spend being minimized.
func minimizeBounds(cfg *Config, rule check.Rule) (int, time.Duration) {
	if rule == check.SlowInput {
		return min(cfg.MinimizeBudget, slowMinimizeBudget), min(cfg.MinimizeTime, slowMinimizeTime)
	}
	return cfg.MinimizeBudget, cfg.MinimizeTime
}

// hangPatience is the timeout a hang is confirmed with: on a loaded
// machine a reply that took longer than --timeout once made a false hang,
// which its replay did not reproduce (a minimization checked at the
// timeout alone ended on such an input); a server that hangs stays silent
// however long it is given.
func hangPatience(timeout time.Duration) time.Duration {
	return max(3*timeout, timeout+time.Second)
}

// hangsStill confirms a hang's minimized input as the candidate was
// confirmed (given hangPatience); when it does not hang, the candidate's
// own input is checked again, so that the evidence written is its.
func (r *run) hangsStill(ctx context.Context, cand *candidate, mini mutate.Case) bool {
	v := *cand
	v.in = mini
	if r.confirm(ctx, &v) {
		return true
	}
	r.confirm(ctx, cand)
	return false
}

// confirm re-runs a candidate's input: once failing the same way is enough,
// except for slow_input, which must be slow every time (a loaded machine
// makes any input slow now and then).
func (r *run) confirm(ctx context.Context, cand *candidate) bool {
	if cand.confirming != nil {
		// On a fresh connection (a child process too): replies an earlier
		// input still had coming, which a server that answers out of
		// order may send at any time, are no part of it.
		*cand.confirming = true
		defer func() { *cand.confirming = false }()
	}
	for range confirmTries {
		ok := cand.check(ctx, cand.in)
		if ctx.Err() != nil || !ok && cand.evidence != nil && cand.evidence.answered {
			return false
		}
		if ok != (cand.v.rule == check.SlowInput) {
			return ok && cand.settleGuess(ctx)
		}
	}
	return cand.v.rule == check.SlowInput
}

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func firstFrame0(c mutate.Case) []byte {
	if c.Wire != nil {
		return c.Wire
	}
	if len(c.Frames) > 0 {
		return c.Frames[0]
	}
	return nil
}

func (r *run) opNames(applied []int) []string {
	names := []string{}
	for _, i := range applied {
		if i >= 0 && i < len(r.ops) {
			names = append(names, r.ops[i].Name)
		}
	}
	return names
}

func targetInfo(cfg *Config) TargetInfo {
	t := TargetInfo{Framing: cfg.Target.Framing.String(), Profile: string(cfg.Profile), TimeoutMS: cfg.Timeout.Milliseconds(),
		Workspace: cfg.ProfileOptions.Workspace}
	if cfg.Target.Scheme == transport.Stdio {
		t.Command = cfg.Target.Command
	} else {
		t.URL = cfg.Target.URL
		t.ServerCommand = cfg.ServerCommand
	}
	return t
}
