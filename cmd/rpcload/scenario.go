package main

import (
	"github.com/rpcload/rpcload/cmd/internal/cli"

	"fmt"
	"io"
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

// load reads the scenario file and lets its transport, profile and headers
// stand in for the flags that were not given (its load, seed and mix go
// into the plan: workload.Build). It returns the target or command the
// scenario names (the command line's own wins).
func (f *scenarioFlags) load(fs *pflag.FlagSet, rf *runFlags) (target string, command []string, err error) {
	if f.file == "" {
		return "", nil, nil
	}
	sc, err := scenario.Load(f.file, os.LookupEnv)
	if err != nil {
		return "", nil, cli.UsageError{Err: err}
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
	return sc.Target, sc.Command, nil
}

// gives reports whether the scenario gives the setting whose flag is key
// and the command line does not.
func (f *scenarioFlags) gives(fs *pflag.FlagSet, key string) bool {
	return f.sc != nil && workload.SettingName(f.sc, fs.Changed, key) != "--"+key
}

// dryRunTo prints the messages the configured run would send.
func (f *scenarioFlags) dryRunTo(c engine.Config, w io.Writer) (int, error) {
	if err := engine.DryRun(c, f.dryRun, w); err != nil {
		return exitUsage, cli.UsageError{Err: err}
	}
	fmt.Fprintf(w, "# seed %d\n", c.Seed)
	return exitOK, nil
}
