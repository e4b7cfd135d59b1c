package fuzz

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/ratecap"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
)

// ReplayOptions configure Replay and MinimizeFinding. Zero fields take the
// finding's own values.
type ReplayOptions struct {
	Target  *transport.Target // where to send the input (nil: the finding's target)
	Profile profile.Name
	Timeout time.Duration
	Times   int // replays (default 3)
	Header  http.Header
	TLS     transport.TLS // https, wss: verification and client certificate
	Child   transport.ChildOptions
	// ServerCommand starts the server of a network target (see
	// Config.ServerCommand); nil: the finding's own, unless Target is
	// given. ServerStart bounds its start.
	ServerCommand []string
	ServerStart   time.Duration
	// SlowFactor and SlowFloor judge slow_input as a run does.
	SlowFactor float64
	SlowFloor  time.Duration
	// Workspace is the LSP workspace to open (an absolute directory);
	// "": the finding's, when it is replayed with its own profile.
	Workspace string
}

// ReplayResult is what Replay saw.
type ReplayResult struct {
	Finding    *Finding
	Runs       int
	Reproduced int
	// Seen describes each run: the rules broken and the note, or "ok".
	Seen []string
}

// Verdict is REPRODUCED (n/n), FLAKY (k/n) or NOT REPRODUCED (0/n).
func (r *ReplayResult) Verdict() string {
	switch {
	case r.Reproduced == r.Runs && r.Runs > 0:
		return fmt.Sprintf("REPRODUCED (%d/%d)", r.Reproduced, r.Runs)
	case r.Reproduced > 0:
		return fmt.Sprintf("FLAKY (%d/%d)", r.Reproduced, r.Runs)
	}
	return fmt.Sprintf("NOT REPRODUCED (0/%d)", r.Runs)
}

// ErrNotReproduced is returned by MinimizeFinding when the input no longer
// fails the way the finding says.
var ErrNotReproduced = errors.New("the input does not fail the same way any more")

// ErrNoTarget is returned when neither the finding nor the options name a
// target (an input imported from a Go corpus).
var ErrNoTarget = errors.New("the finding names no target: give one")

// replayConfig is the run configuration a finding is replayed with.
func replayConfig(f *Finding, dir string, o ReplayOptions) (Config, error) {
	cfg := Config{Execs: 1, OutDir: dir, Header: o.Header, TLS: o.TLS, Child: o.Child, Workers: 1,
		SlowFactor: o.SlowFactor, SlowFloor: o.SlowFloor}
	fr := transport.Newline
	if f.Target.Framing == transport.ContentLength.String() {
		fr = transport.ContentLength
	}
	switch {
	case o.Target != nil:
		cfg.Target = *o.Target
		if cfg.Target.Scheme == transport.Stdio && f.Target.Framing != "" {
			// The input is bytes in the framing the finding recorded
			// (input.bin holds them so): another command gets them the
			// same way, whatever framing its flags default to.
			cfg.Target.Framing = fr
		}
	case len(f.Target.Command) > 0:
		t, err := transport.CommandTarget(f.Target.Command, fr)
		if err != nil {
			return cfg, fmt.Errorf("%s: %w", dir, err)
		}
		cfg.Target = t
	case f.Target.URL != "":
		t, err := transport.ParseTarget(f.Target.URL)
		if err != nil {
			return cfg, fmt.Errorf("%s: %w", dir, err)
		}
		cfg.Target = t
	default:
		return cfg, ErrNoTarget
	}
	cfg.ServerCommand, cfg.ServerStart = o.ServerCommand, o.ServerStart
	if cfg.ServerCommand == nil && o.Target == nil {
		cfg.ServerCommand = f.Target.ServerCommand
	}
	cfg.Profile = o.Profile
	if cfg.Profile == "" {
		cfg.Profile = profile.Name(f.Target.Profile)
	}
	if cfg.Profile == profile.LSP {
		cfg.ProfileOptions.Workspace = o.Workspace
		if o.Workspace == "" && f.Target.Profile == string(profile.LSP) {
			cfg.ProfileOptions.Workspace = f.Target.Workspace
		}
	}
	cfg.Timeout = o.Timeout
	if cfg.Timeout == 0 && f.Target.TimeoutMS > 0 {
		cfg.Timeout = time.Duration(f.Target.TimeoutMS) * time.Millisecond
	}
	return cfg, cfg.fill()
}

// profileRules is what the profile changes in judging a reply (nil:
// plain JSON-RPC); the same rules serve rpcfuzz.
type profileRules = profile.FuzzRules

// newProfileRules returns the rules of d's profile, judging in the era d
// detected.
func newProfileRules(d *dialer) *profileRules {
	return profile.NewFuzzRules(d.prof, func() profile.Era { return profile.Era(d.era.Load()) })
}

// newRun builds the shared state of a run (or a replay) without starting
// anything.
func newRun(ctx context.Context, cfg *Config, seeds []mutate.Case) (*run, error) {
	d, err := newDialer(cfg)
	if err != nil {
		return nil, err
	}
	d.base = ctx
	r := &run{pr: newProfileRules(d), maxRate: ratecap.New(cfg.MaxRate),
		cfg: cfg, d: d, mut: mutate.New(mutationEnv(cfg, seeds, nil)), ops: mutate.Ops(),
		corpus: newWorkCorpus(seeds, cfg.MaxCorpus, cfg.MaxCorpusBytes),
		tuples: newTupleSet(cfg.MaxTuples),
		recent: &recentRing{max: recentInputs, maxBytes: recentBytes},
		agg:    stats.NewAggregator([]string{"fuzz"}),
		found:  newFindingSet(cfg.StopAfter),
		parent: ctx,
		stop:   func() {},
		slots:  make([]inflightSlot, cfg.Workers),
	}
	if d.srv != nil {
		d.srv.inflight = r.inflight
	}
	return r, nil
}

// replaySession is a finding loaded with a connection to its target and the
// check that tells whether an input fails the same way.
type replaySession struct {
	f     *Finding
	in    mutate.Case
	r     *run
	w     *worker
	check func(context.Context, mutate.Case) bool
	used  bool // a check ran: the next one wants a fresh process
}

func openReplay(ctx context.Context, dir string, o ReplayOptions) (*replaySession, error) {
	f, in, err := ReadFinding(dir)
	if err != nil {
		return nil, err
	}
	cfg, err := replayConfig(f, dir, o)
	if err != nil {
		return nil, err
	}
	seeds := shippedSeeds(string(cfg.Profile))
	r, err := newRun(ctx, &cfg, seeds)
	if err != nil {
		return nil, err
	}
	// The call is held to its method's schemas as the run held it.
	if r.api, err = readAPIFile(dir); err != nil {
		return nil, err
	}
	w := r.newWorker(0)
	c, err := r.d.dial(ctx)
	if err != nil {
		r.d.srv.close()
		if errors.Is(err, ErrUnreachable) {
			return nil, err // the server command's own error
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrUnreachable, cfg.Target.URL, err)
	}
	w.c = c
	s := &replaySession{f: f, in: in, r: r, w: w}
	if err := s.prepare(ctx, seeds); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// close ends the session's connection and the server process it started.
func (s *replaySession) close() {
	s.w.closeConn()
	_ = s.r.d.srv.close()
}

// fresh makes the next check start on a fresh connection, and against a
// fresh process when there is one (a child, a server command's).
func (s *replaySession) fresh(ctx context.Context) error {
	if s.r.cfg.Target.Scheme == transport.Stdio {
		s.w.closeConn()
	}
	if srv := s.r.d.srv; srv != nil && s.used {
		s.w.closeConn()
		_, gen := srv.current()
		return srv.restart(ctx, gen)
	}
	s.used = true
	return nil
}

// prepare builds the check for the finding's rule: the same dedup key (any
// failure for an imported input, which has none), with the canary for
// canary_failed and the recorded latency bound for slow_input.
func (s *replaySession) prepare(ctx context.Context, seeds []mutate.Case) error {
	r, w, f := s.r, s.w, s.f
	switch f.Rule {
	case "":
		s.check = func(ctx context.Context, c mutate.Case) bool {
			res := w.exec(ctx, c, r.cfg.Target.Scheme != transport.Stdio)
			w.last = res
			for x := check.Rule(0); x < check.NumRules; x++ {
				if res.v.rules.Has(x) && !x.Warning() {
					return true
				}
			}
			return false
		}
		return nil
	case check.CanaryFailed.String():
		r.selectCanary(ctx, w, seeds)
		if r.canary == nil {
			return fmt.Errorf("%s: no seed call gets a correct reply from the target, so there is no canary to replay canary_failed with", f.Dir)
		}
		inner := r.canaryReproducer(w, f.Key, &evidence{})
		s.check = func(ctx context.Context, c mutate.Case) bool {
			ok := inner(ctx, c)
			return ok
		}
		return nil
	}
	rule, ok := check.ParseRule(f.Rule)
	if !ok {
		return fmt.Errorf("%s: unknown rule %q", f.Dir, f.Rule)
	}
	cand := candidate{v: verdict{rule: rule}, key: f.Key}
	if rule == check.SlowInput {
		// Slow against the median of the run that found it: replay holds
		// the input to the same latency.
		if f.Target.SlowOverMS <= 0 {
			return fmt.Errorf("%s: a slow_input finding without slow_over_ms", f.Dir)
		}
		cand.slowOver = time.Duration(f.Target.SlowOverMS * float64(time.Millisecond))
	}
	s.check = r.reproducer(w, &cand)
	// A replay checks as the run's confirmation did: the same patience
	// for missing replies and hangs, and the replies that may still come
	// after those waited for.
	*cand.confirming = true
	return nil
}

// Replay sends a finding's input again o.Times times (3 by default), each
// on a fresh connection (a fresh process for a child), and counts how
// often it fails the same way (the same dedup key; for an imported input,
// any failure).
func Replay(ctx context.Context, dir string, o ReplayOptions) (*ReplayResult, error) {
	s, err := openReplay(ctx, dir, o)
	if err != nil {
		return nil, err
	}
	defer s.close()
	times := o.Times
	if times <= 0 {
		times = 3
	}
	res := &ReplayResult{Finding: s.f, Runs: times}
	for range times {
		if err := s.fresh(ctx); err != nil {
			return res, err
		}
		ok := s.check(ctx, s.in)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if ok {
			res.Reproduced++
		}
		res.Seen = append(res.Seen, describeResult(&s.w.last))
	}
	return res, nil
}

// describeResult says what one exchange broke.
func describeResult(res *result) string {
	var rules []string
	for x := check.Rule(0); x < check.NumRules; x++ {
		if res.v.rules.Has(x) {
			rules = append(rules, x.String())
		}
	}
	if len(rules) == 0 {
		return "ok: no rule broken"
	}
	s := strings.Join(rules, ",")
	if res.v.note != "" {
		s += ": " + oneLine(res.v.note, 200)
	}
	return s
}

// MinimizeFinding shrinks a finding's input against its target within
// budget reproduction attempts (and before deadline, when not zero), and
// rewrites the finding's files with the result. The input must fail the
// same way before anything is shrunk.
func MinimizeFinding(ctx context.Context, dir string, o ReplayOptions, budget int, deadline time.Time) (*Finding, error) {
	if budget <= 0 {
		budget = DefaultMinimizeBudget
	}
	s, err := openReplay(ctx, dir, o)
	if err != nil {
		return nil, err
	}
	defer s.close()
	reproduced := false
	for range confirmTries {
		if reproduced = s.check(ctx, s.in); reproduced || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if !reproduced {
		return nil, fmt.Errorf("%s: %w (%s): nothing to minimize", dir, ErrNotReproduced, describeResult(&s.w.last))
	}
	start := time.Now()
	mini, mr, api := s.r.minimizeCall(ctx, s.in, s.check, budget, deadline)
	if !api {
		tried := mr.checks
		mini, mr = minimize(ctx, s.in, s.check, budget-tried, deadline)
		mr.checks += tried
	}
	f := s.f
	f.MinimizedBytes = caseSize(mini)
	f.Minimize = MinimizeReport{Checks: mr.checks, DurationS: time.Since(start).Seconds(), Reproduced: true, Complete: mr.complete}
	f.Dir = dir
	f.Reproduce = reproducers(s.r.cfg.Target, dir, mini)
	if f.GoTest != "" {
		f.GoTest = "" // the exported corpus file holds the input before this minimization
	}
	if err := removeInputFiles(dir); err != nil {
		return nil, err
	}
	if err := writeFindingDir(dir, f, mini, readReply(dir)); err != nil {
		return nil, err
	}
	return f, nil
}

func readReply(dir string) []byte {
	b, _ := os.ReadFile(filepath.Join(dir, "reply.txt"))
	return b
}

// removeInputFiles removes input.bin and input-N.bin, which a minimized
// case with fewer frames would leave stale.
func removeInputFiles(dir string) error {
	names, err := filepath.Glob(filepath.Join(dir, "input*.bin"))
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := os.Remove(n); err != nil {
			return err
		}
	}
	return nil
}
