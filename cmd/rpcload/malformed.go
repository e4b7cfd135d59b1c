package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/engine"
	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/malformed"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
)

// malformedFlags are the flags of malformed traffic mixed into a load.
type malformedFlags struct {
	fraction cli.Fraction
	ops      []string
	conns    int
	out      string
	given    string // a flag of the malformed traffic given, for a run that has none
}

// malformedMinimizeTime bounds each finding's minimization in a load run:
// the load goes on meanwhile, and rpcfuzz minimize can go further.
const malformedMinimizeTime = 10 * time.Second

func (m *malformedFlags) register(fs *pflag.FlagSet) {
	fs.Var(&m.fraction, "mutate-fraction", "make this share of the calls malformed (e.g. 1% or 0.05): each is its own request put through rpcfuzz's mutation ops, sent on connections of its own and judged by the fuzz oracle, apart from the load's figures")
	fs.StringSliceVar(&m.ops, "mutate-ops", nil, "with --mutate-fraction: only these mutation ops (comma-separated names; default: every op the target's framing allows)")
	fs.IntVar(&m.conns, "mutate-conns", 2, "with --mutate-fraction: connections that carry the malformed inputs, one input at a time each")
	fs.StringVar(&m.out, "mutate-out", "", "with --mutate-fraction: directory of the findings, in rpcfuzz's format (default: next to -o as NAME.findings, else rpcload-findings)")
}

// check checks the malformed flags' values; whether the run has any
// malformed traffic for them is known once its plan is (start).
func (m *malformedFlags) check(fs *pflag.FlagSet) error {
	switch {
	case fs.Changed("mutate-fraction") && m.fraction <= 0:
		return usagef("--mutate-fraction must be above 0, e.g. 1%% (got %s)", m.fraction.String())
	case m.conns < 1 || m.conns > 1024:
		return usagef("--mutate-conns must be between 1 and 1024 (got %d)", m.conns)
	case fs.Changed("mutate-ops") && m.fraction <= 0:
		return usagef("--mutate-ops applies with --mutate-fraction (a scenario call's mutate names its own ops)")
	}
	for _, name := range []string{"mutate-conns", "mutate-out"} {
		if fs.Changed(name) {
			m.given = "--" + name
		}
	}
	return nil
}

// malformedRun is the malformed traffic of one load run: the diverter the
// engine hands calls to, and the fuzz run that sends and judges them.
type malformedRun struct {
	div  *malformed.Diverter
	out  string
	done chan struct{}
	sum  *fuzz.Summary
	err  error
}

// start sets up the malformed traffic of cfg's run (nil when not asked
// for): the diverter goes into cfg, and the fuzz run starts on connections
// of its own, waiting for the diverted calls.
func (m *malformedFlags) start(ctx context.Context, cfg *engine.Config, output string, stderr io.Writer) (*malformedRun, error) {
	if m.fraction <= 0 && !cfg.Malformed() {
		if m.given != "" {
			return nil, usagef("%s applies to malformed traffic: give --mutate-fraction, or a scenario with raw or mutate calls", m.given)
		}
		return nil, nil
	}
	prof := profile.JSONRPC
	if cfg.Profile != nil {
		prof = cfg.Profile.Name()
	}
	div, err := malformed.New(malformed.Config{Fraction: float64(m.fraction), Seed: cfg.Seed, Ops: m.ops, Calls: cfg.Calls, Target: cfg.Target,
		MaxFrame: cfg.MaxFrame, Profile: string(prof)})
	if err != nil {
		return nil, cli.UsageError{Err: err}
	}
	out := m.out
	if out == "" {
		out = "rpcload-findings"
		if file := outputFile(output); file != "" {
			out = strings.TrimSuffix(file, filepath.Ext(file)) + ".findings"
		}
	}
	mr := &malformedRun{div: div, out: out, done: make(chan struct{})}
	fcfg := fuzz.Config{Target: cfg.Target, Profile: prof, Header: cfg.Header, TLS: cfg.TLS, Workers: m.conns, Seed: cfg.Seed,
		Timeout: cfg.Timeout, MaxFrame: cfg.MaxFrame, OutDir: out, Feed: div.Feed(), KeepUnconfirmed: true,
		MinimizeTime: malformedMinimizeTime, Log: stderr}
	cfg.Divert = div
	go func() {
		defer close(mr.done)
		mr.sum, mr.err = fuzz.Run(ctx, fcfg)
	}()
	return mr, nil
}

// finish ends the malformed traffic once the load has stopped sending,
// waits for its last inputs, and puts its report in res (if any).
func (mr *malformedRun) finish(res *stats.Result) {
	if mr == nil {
		return
	}
	mr.div.Close()
	<-mr.done
	if res == nil {
		return
	}
	res.Malformed = mr.div.Report(mr.sum, mr.out)
	if mr.err != nil {
		res.Malformed.Stopped = mr.err.Error()
		res.Warnings = append(res.Warnings, fmt.Sprintf("the malformed traffic stopped: %v", mr.err))
	}
}
