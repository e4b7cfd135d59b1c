package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/engine"
	"github.com/rpcload/rpcload/internal/workload"
	"github.com/rpcload/rpcload/internal/workload/scenario"
)

// scenarioFlags are the flags of scenario files and of what only they
// configure (the seed, arrivals, the dry run).
type scenarioFlags struct {
	file    string
	dryRun  int
	seed    uint64
	arrival string
	sc      *scenario.Scenario // loaded from file
}

func (f *scenarioFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.file, "file", "f", "", "run the scenario in this YAML file (flags given as well override its values)")
	fs.IntVar(&f.dryRun, "dry-run", 0, "print the first N messages the run would send, and send nothing")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of every random choice (which call, generated params, Poisson arrivals); default: the scenario's, else random (printed in the result)")
	fs.StringVar(&f.arrival, "arrival", "uniform", "open loop: uniform (evenly spaced) or poisson arrivals")
}

// load reads the scenario file and lets its values stand in for the flags
// that were not given. It returns the target or command the scenario names
// (the command line's own wins).
func (f *scenarioFlags) load(fs *pflag.FlagSet, rf *runFlags) (target string, command []string, err error) {
	if f.file == "" {
		return "", nil, nil
	}
	sc, err := scenario.Load(f.file, os.LookupEnv)
	if err != nil {
		return "", nil, usageError{err}
	}
	f.sc = sc
	if rf.method != "" || rf.prof.tool != "" {
		return "", nil, usagef("--method and --tool name one call; %s has a mix: give one or the other", f.file)
	}
	set := func(name string, apply func()) {
		if !fs.Changed(name) {
			apply()
		}
	}
	t := sc.Transport
	if t.Conns > 0 {
		set("conns", func() { rf.conns = t.Conns })
	}
	if t.Framing != "" {
		set("framing", func() { rf.framing = t.Framing })
	}
	if t.MaxFrame > 0 {
		set("max-frame", func() { rf.maxFrame = strconv.Itoa(t.MaxFrame) })
	}
	if t.Grace > 0 {
		set("grace", func() { rf.grace = t.Grace })
	}
	if t.Stderr != "" {
		set("stderr", func() { rf.stderrPath = t.Stderr })
	}
	set("http2", func() { rf.http2 = rf.http2 || t.HTTP2 })
	set("insecure", func() { rf.insecure = rf.insecure || t.Insecure })
	set("restart", func() { rf.restart = rf.restart || t.Restart })
	p := sc.Profile
	for _, pf := range []struct {
		flag, value string
		dst         *string
	}{{"profile", p.Name, &rf.prof.name}, {"mcp-era", p.MCPEra, &rf.prof.mcpEra}, {"workspace", p.Workspace, &rf.prof.workspace}, {"open", p.Open, &rf.prof.open}} {
		if pf.value != "" {
			set(pf.flag, func() { *pf.dst = pf.value })
		}
	}
	for name, value := range sc.Headers {
		rf.headers = append([]string{name + ": " + value}, rf.headers...) // -H given later wins
	}
	l := sc.Load
	steady := fs.Changed("rate") || fs.Changed("concurrency")
	if !steady {
		rf.rate, rf.concurrency = l.Rate, l.Concurrency
	}
	if l.Duration > 0 {
		set("duration", func() { rf.duration = l.Duration })
	}
	if l.Timeout > 0 {
		set("timeout", func() { rf.timeout = l.Timeout })
	}
	if l.Drain != nil {
		set("drain", func() { rf.drain = *l.Drain; rf.drainFromFile = true })
	}
	if l.MaxInFlight > 0 {
		set("max-inflight", func() { rf.maxInFlight = l.MaxInFlight })
	}
	if l.Arrival != "" {
		set("arrival", func() { f.arrival = l.Arrival })
	}
	if sc.Seed != nil {
		set("seed", func() { f.seed = *sc.Seed })
	}
	return sc.Target, sc.Command, nil
}

// apply puts the scenario's mix and shape, the seed and the arrivals into c.
func (f *scenarioFlags) apply(fs *pflag.FlagSet, c *engine.Config) error {
	switch f.arrival {
	case "uniform", "": // "" when the flags are not registered (the demo)
	case "poisson":
		c.Poisson = true
	default:
		return usagef("--arrival must be uniform or poisson (got %q)", f.arrival)
	}
	c.Seed = f.seed
	if !fs.Changed("seed") && (f.sc == nil || f.sc.Seed == nil) {
		c.Seed = rand.Uint64() // a fresh run; the result records it for a replay
	}
	if f.sc == nil {
		return nil
	}
	sc := f.sc
	if !fs.Changed("rate") && !fs.Changed("concurrency") && len(sc.Load.Stages) > 0 {
		c.Rate, c.Concurrency = 0, 0
		c.StartRate, c.StartConcurrency = sc.Load.StartRate, sc.Load.StartConcurrency
		for _, st := range sc.Load.Stages {
			c.Stages = append(c.Stages, workload.Stage{Duration: st.Duration, Rate: st.Rate, Concurrency: st.Concurrency})
		}
	}
	c.Method, c.Params = "", nil
	for _, call := range sc.Mix {
		ec := workload.Call{Name: call.Name, Method: call.Method, Notify: call.Notify, Batch: call.Batch,
			Timeout: call.Timeout, Weight: call.Weight, IDReuse: call.IDReuse}
		if call.Params != nil {
			ec.Params = call.Params
		}
		e := call.Expect
		ec.Expect = workload.Expect{ResultEqualsParams: e.ResultEqualsParams, ErrorCode: e.ErrorCode, ResultEquals: e.ResultEquals}
		if e.Result != nil {
			ec.Expect.Result = e.Result
		}
		c.Calls = append(c.Calls, ec)
	}
	return nil
}

// dryRunTo prints the messages the configured run would send.
func (f *scenarioFlags) dryRunTo(c engine.Config, w io.Writer) (int, error) {
	if err := engine.DryRun(c, f.dryRun, w); err != nil {
		return exitUsage, usageError{err}
	}
	fmt.Fprintf(w, "# seed %d\n", c.Seed)
	return exitOK, nil
}
