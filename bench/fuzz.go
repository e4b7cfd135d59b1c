package main

// Comparison 7: how fast rpcfuzz fuzzes the reference server, as a
// separate process over TCP, HTTP and stdio, and where its workers' time
// goes (summary.json's time_split).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// fuzzSeed is every fuzz run's --seed, so rounds draw the same inputs (in
// the same order with one worker; with eight, as far as their interleaving
// allows).
const fuzzSeed = "1"

// fuzzTransport is one row of comparison 7.
type fuzzTransport struct {
	name    string  // tcp, http or stdio
	workers int     // rpcfuzz --workers (its default for the transport)
	goal    float64 // execs/s to reach; 0: no goal
}

var fuzzTransports = []fuzzTransport{{"tcp", 8, 5000}, {"http", 8, 0}, {"stdio", 1, 1000}}

func (t fuzzTransport) caseName() string {
	return fmt.Sprintf("%s, %d worker%s", t.name, t.workers, plural(t.workers))
}

// fuzzPhases are the parts of summary.json's time_split, in the order
// rpcfuzz prints them.
var fuzzPhases = []string{"send", "wait", "judge", "restart", "confirm", "minimize", "canary", "other"}

// fuzzSummary is the part of rpcfuzz's summary.json the suite reads.
type fuzzSummary struct {
	Schema      string        `json:"schema"`
	Workers     int           `json:"workers"`
	DurationS   float64       `json:"duration_s"`
	Execs       uint64        `json:"execs"`
	ExecsPerS   float64       `json:"execs_per_s"`
	Checks      uint64        `json:"checks"`
	Restarts    int64         `json:"restarts"`
	Failures    int           `json:"failures"`
	Unconfirmed int           `json:"unconfirmed"`
	Stopped     string        `json:"stopped"`
	Warnings    []string      `json:"warnings"`
	TimeSplit   fuzzTimeSplit `json:"-"` // read by parseFuzzSummary
}

// fuzzTimeSplit is time_split: the workers' busy seconds and each phase's
// share of them.
type fuzzTimeSplit struct {
	BusyS  float64
	Shares map[string]float64 // by phase name
}

// parseFuzzSummary reads summary.json; a time_split that lacks one of
// fuzzPhases is an error, so a change of rpcfuzz's format shows.
func parseFuzzSummary(b []byte) (fuzzSummary, error) {
	var raw struct {
		fuzzSummary
		Split map[string]json.RawMessage `json:"time_split"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return fuzzSummary{}, fmt.Errorf("summary.json: %w", err)
	}
	sum := raw.fuzzSummary
	if sum.Schema != "rpcfuzz.summary/v1" {
		return sum, fmt.Errorf("summary.json: schema %q, want rpcfuzz.summary/v1", sum.Schema)
	}
	if err := json.Unmarshal(raw.Split["busy_s"], &sum.TimeSplit.BusyS); err != nil {
		return sum, fmt.Errorf("summary.json: time_split.busy_s: %w", err)
	}
	sum.TimeSplit.Shares = map[string]float64{}
	for _, p := range fuzzPhases {
		var part struct {
			Share *float64 `json:"share"`
		}
		if err := json.Unmarshal(raw.Split[p], &part); err != nil || part.Share == nil {
			return sum, fmt.Errorf("summary.json: time_split.%s has no share", p)
		}
		sum.TimeSplit.Shares[p] = *part.Share
	}
	return sum, nil
}

// ---- 7. rpcfuzz execs/s

func (s *suite) compareFuzz(ctx context.Context) error {
	const n = 7
	sec := s.section(n)
	d := s.dur.fuzz
	sec.Title = "rpcfuzz: execs/s against rpcload serve"
	sec.Intro = fmt.Sprintf("rpcfuzz (built from this tree, pinned to the load core) fuzzes a fresh reference server for %s per run: "+
		"`rpcload serve` started as a separate process with GOMAXPROCS=1 on the server's core, over newline-delimited TCP and over HTTP "+
		"with 8 workers (rpcfuzz's default), and as a child process that rpcfuzz starts itself and talks to on its stdin and stdout "+
		"(`rpcload serve --stdio`, with GOMAXPROCS=1 on the server's core too) with 1 worker (the default for a child). "+
		"Every run has --seed %s, so the rounds draw the same inputs, and --slow-min 1h, so the timing heuristic (slow_input) "+
		"finds nothing to minimize on a busy machine. execs/s is summary.json's execs_per_s: fuzz inputs a second, each sent "+
		"and its replies (or their absence) judged; the canaries and the re-runs that confirm a finding are exchanges too but not "+
		"counted in it. %s is rpcfuzz's CPU time (user + system) per input; over stdio it includes the child servers it started, "+
		"since their time is counted to it when it reaps them. %s is the server's, read from /proc around the run (TCP and HTTP). "+
		"HTTP has no goal: every input is a POST and its response, one round trip through the server's HTTP stack, "+
		"and its figure is shown beside the others as information. "+
		"The time split is summary.json's time_split: each worker's time from the start of its loop to its end, summed over workers, "+
		"charged to the phase it was in (docs/fuzzing.md, Output); wait is the time between an input written and its exchange ended, "+
		"which holds the server's work and the round trip.", d, fuzzSeed, fuzzCPUMetric, fuzzServerCPUMetric)
	splits := map[string][]fuzzTimeSplit{}
	for round := 1; round <= s.opt.rounds; round++ {
		for _, ft := range fuzzTransports {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			cas := ft.caseName()
			s.measure(sec, n, cas, "rpcfuzz", round, func() (map[string]float64, error) {
				sum, figs, err := s.fuzzRun(ctx, sec, ft, round, d)
				if err == nil {
					splits[cas] = append(splits[cas], sum.TimeSplit)
				}
				return figs, err
			})
		}
	}
	sec.Tables = append(sec.Tables, namedTable{"Where the workers' time went (time_split, the median share over rounds)", fuzzSplitTable(splits)})
	for _, ft := range fuzzTransports {
		if ft.goal > 0 {
			s.addGoal(s.fuzzGoal(n, ft, splits[ft.caseName()]))
		}
	}
	return nil
}

const (
	fuzzCPUMetric       = "CPU us/exec"
	fuzzServerCPUMetric = "server CPU us/exec"
)

// fuzzArgs is the rpcfuzz command line of one run: target is the
// server's URL, "" for a stdio child.
func (s *suite) fuzzArgs(ft fuzzTransport, target, out string, d time.Duration) []string {
	argv := []string{s.rpcfuzz, "run"}
	if target != "" {
		argv = append(argv, target)
	}
	argv = append(argv, "--out", out, "--duration", secs(d), "--seed", fuzzSeed, "--workers", fmt.Sprint(ft.workers),
		"--slow-min", "1h", "-q")
	if target == "" {
		// env (the same process: it execs) gives the child one P and
		// taskset its core, as the shared server has.
		argv = append(argv, "--", "env", serverEnv[0])
		argv = append(argv, s.pinned([]string{s.rpcload, "serve", "--stdio"}, s.srvCPU)...)
	}
	return argv
}

// fuzzRun starts a fresh server (not for stdio: rpcfuzz starts its
// child), runs rpcfuzz against it for d, and reads its summary.json.
func (s *suite) fuzzRun(ctx context.Context, sec *section, ft fuzzTransport, round int, d time.Duration) (fuzzSummary, map[string]float64, error) {
	rel := filepath.Join("fuzz", fmt.Sprintf("%s-%d", ft.name, round))
	out := filepath.Join(s.outDir, rel)
	if err := os.RemoveAll(out); err != nil { // an earlier suite's run of this round
		return fuzzSummary{}, nil, err
	}
	target, srvPID := "", 0
	if ft.name != "stdio" {
		srv, addrs, err := s.startServer(ctx, []string{"--" + ft.name, "127.0.0.1:0"})
		if err != nil {
			return fuzzSummary{}, nil, fmt.Errorf("starting the reference server: %w", err)
		}
		defer s.stopDaemon(srv)
		target, srvPID = ft.name+"://"+addrs[ft.name], srv.cmd.Process.Pid
		if ft.name == "http" {
			target += "/"
		}
	}
	c0, ok0 := procCPU(srvPID) // not ok for stdio: there is no pid 0 in /proc
	co, err := s.run(ctx, cmdSpec{Argv: s.fuzzArgs(ft, target, out, d), CPU: s.loadCPU, Timeout: d + time.Minute})
	c1, ok1 := procCPU(srvPID)
	b, rerr := os.ReadFile(filepath.Join(out, "summary.json"))
	var exit *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() == nil && rerr == nil && errors.As(err, &exit) && exit.ExitCode() == 1:
		// Exit status 1 is failures found: the run itself is whole.
		sec.note("%s, round %d: rpcfuzz found failures in the reference server (exit status 1): see bench/.out/%s",
			ft.caseName(), round, rel)
	default:
		return fuzzSummary{}, nil, err
	}
	if rerr != nil {
		return fuzzSummary{}, nil, rerr
	}
	sum, err := parseFuzzSummary(b)
	if err != nil {
		return sum, nil, err
	}
	if sum.Stopped != "" {
		sec.note("%s, round %d: the run stopped early: %s", ft.caseName(), round, sum.Stopped)
	}
	for _, w := range sum.Warnings {
		sec.note("%s: rpcfuzz warned: %s", ft.caseName(), w)
	}
	figs := map[string]float64{"execs/s": sum.ExecsPerS, fuzzCPUMetric: cpuPerReq(co, float64(sum.Execs)), "restarts": float64(sum.Restarts)}
	if srvPID != 0 && ok0 && ok1 && sum.Execs > 0 {
		figs[fuzzServerCPUMetric] = float64((c1 - c0).Microseconds()) / float64(sum.Execs)
	}
	return sum, figs, nil
}

// fuzzSplitTable lists the median share of each phase per transport, in
// fuzzTransports' order, with the median worker-seconds.
func fuzzSplitTable(splits map[string][]fuzzTimeSplit) table {
	t := table{Head: append(append([]string{"case"}, fuzzPhases...), "worker-seconds")}
	for _, ft := range fuzzTransports {
		rounds := splits[ft.caseName()]
		if len(rounds) == 0 {
			continue
		}
		row := []string{ft.caseName()}
		for _, p := range fuzzPhases {
			row = append(row, fmtShare(medianOf(rounds, func(ts fuzzTimeSplit) float64 { return ts.Shares[p] })))
		}
		t.Rows = append(t.Rows, append(row, fmtNum(medianOf(rounds, func(ts fuzzTimeSplit) float64 { return ts.BusyS }))))
	}
	return t
}

// medianOf is the median of f over the rounds' time splits.
func medianOf(rounds []fuzzTimeSplit, f func(fuzzTimeSplit) float64) float64 {
	v := make([]float64, len(rounds))
	for i, r := range rounds {
		v[i] = f(r)
	}
	return median(v)
}

// fmtShare prints a share (0..1) as a percentage with one decimal.
func fmtShare(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// fuzzGoal is the verdict on a transport's execs/s (the median over
// rounds), with the largest phases of its time split as the note.
func (s *suite) fuzzGoal(n int, ft fuzzTransport, splits []fuzzTimeSplit) goal {
	cas := ft.caseName()
	g := goal{Comparison: n, Name: "rpcfuzz execs/s, " + cas, Target: ">= " + fmtNum(ft.goal) + " execs/s"}
	v := median(s.store.values(seriesKey{n, cas, "rpcfuzz", "execs/s"}))
	if math.IsNaN(v) {
		g.Verdict, g.Measured = "SKIP", "not measured"
		return g
	}
	g.Measured, g.Verdict = fmtNum(v)+" execs/s", verdict(v >= ft.goal)
	var notes []string
	if len(splits) > 0 {
		var parts []string
		for _, p := range fuzzPhases {
			sh := medianOf(splits, func(ts fuzzTimeSplit) float64 { return ts.Shares[p] })
			if sh >= 0.05 {
				parts = append(parts, p+" "+fmtShare(sh))
			}
		}
		notes = append(notes, "time: "+strings.Join(parts, ", "))
	}
	if nz := s.noisy(seriesKey{n, cas, "rpcfuzz", "execs/s"}); nz != "" {
		notes = append(notes, nz)
	}
	g.Note = strings.Join(notes, "; ")
	return g
}
