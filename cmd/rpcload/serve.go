package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/testsrv"
)

type serveFlags struct {
	httpAddr   string
	tcpAddr    string
	faults     string
	faultProb  float64
	faultSeed  uint64
	faultDelay time.Duration
	stall      string
	maxFrame   string
}

func (f *serveFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.httpAddr, "http", "", "serve JSON-RPC over HTTP POST on this address, e.g. 127.0.0.1:8080")
	fs.StringVar(&f.tcpAddr, "tcp", "", "serve newline-delimited JSON-RPC over TCP on this address, e.g. 127.0.0.1:9090")
	fs.StringVar(&f.faults, "fault", "", "inject faults: comma-separated names, each optionally =PROB (e.g. drop,duplicate=0.05); names: "+faultNames())
	fs.Float64Var(&f.faultProb, "fault-prob", 0.01, "probability of a fault given without =PROB")
	fs.Uint64Var(&f.faultSeed, "fault-seed", 1, "seed of the fault decisions")
	fs.DurationVar(&f.faultDelay, "fault-delay", 50*time.Millisecond, "extra delay of the delay fault")
	fs.StringVar(&f.stall, "stall", "", "a full stop FOR@AT, e.g. 2s@5s: no replies for 2 s starting 5 s after start")
	fs.StringVar(&f.maxFrame, "max-frame", "16MiB", "largest request frame or body accepted")
}

func faultNames() string {
	var names []string
	for _, f := range testsrv.Faults() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// serverConfig validates the flags into a testsrv.Config.
func (f *serveFlags) serverConfig() (testsrv.Config, error) {
	cfg := testsrv.Config{Seed: f.faultSeed, FaultDelay: f.faultDelay}
	var err error
	if f.faults != "" {
		if f.faultProb <= 0 || f.faultProb > 1 {
			return cfg, usagef("--fault-prob must be in (0,1] (got %g)", f.faultProb)
		}
		if cfg.Faults, err = testsrv.ParseFaults(f.faults, f.faultProb); err != nil {
			return cfg, usagef("--fault: %v", err)
		}
	}
	if f.faultDelay <= 0 {
		return cfg, usagef("--fault-delay must be positive (got %s)", f.faultDelay)
	}
	if f.stall != "" {
		d, at, ok := strings.Cut(f.stall, "@")
		dur, err1 := time.ParseDuration(d)
		start, err2 := time.ParseDuration(at)
		if !ok || err1 != nil || err2 != nil || dur <= 0 || start < 0 {
			return cfg, usagef("--stall must be FOR@AT with durations, e.g. 2s@5s (got %q)", f.stall)
		}
		cfg.Stall = testsrv.Stall{At: start, For: dur}
	}
	if cfg.MaxFrame, err = parseSize(f.maxFrame); err != nil {
		return cfg, usagef("--max-frame: %v", err)
	}
	return cfg, nil
}

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	var f serveFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: rpcload serve [--http ADDR] [--tcp ADDR] [flags]\n\nThe embedded reference JSON-RPC 2.0 server. Methods: lookup_weather {city}, convert {value,factor},\nget_time, echo, add [a,b], sleep {ms}, spin {us}, eth_blockNumber, eth_chainId.\n\nflags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK, nil
		}
		return exitUsage, usageError{err}
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("serve takes no arguments (got %q)", fs.Args())
	}
	if f.httpAddr == "" && f.tcpAddr == "" {
		f.httpAddr, f.tcpAddr = "127.0.0.1:8080", "127.0.0.1:9090"
	}
	cfg, err := f.serverConfig()
	if err != nil {
		return exitUsage, err
	}
	srv, err := testsrv.New(cfg)
	if err != nil {
		return exitUsage, usageError{err}
	}
	httpBound, tcpBound, err := srv.ListenAndServe(ctx, f.httpAddr, f.tcpAddr)
	if err != nil {
		return exitUsage, err
	}
	if httpBound != nil {
		fmt.Fprintf(stdout, "serving JSON-RPC over HTTP on http://%s/\n", httpBound)
	}
	if tcpBound != nil {
		fmt.Fprintf(stdout, "serving JSON-RPC over TCP on tcp://%s\n", tcpBound)
	}
	<-ctx.Done()
	srv.Close()
	fmt.Fprintf(stdout, "stopped after %d frames; faults injected: %v\n", srv.Requests(), srv.Injected())
	return exitOK, nil
}
