// Command bench is rpcload's benchmark suite: it runs rpcload beside wrk,
// vegeta, hey and a minimal client against the embedded reference server,
// in alternating rounds, checks rpcload's coordinated-omission correction
// against a computed answer, measures its memory per request in flight and
// its timing resolution, measures rpcfuzz's execs per second against the
// reference server over TCP, HTTP and stdio, prints medians and ratios with
// a PASS or FAIL per goal, and writes docs/benchmarks.md. Run it from the
// repository root:
//
//	go run ./bench            # the whole suite, about 9 minutes
//	go run ./bench --quick    # one short round of everything (a smoke test)
//	go run ./bench --only 1,3 # some comparisons only
//
// The same binary has internal modes the suite starts as separate,
// pinned processes: minclient (the floor client), heapprobe (rpcload's
// engine in process, reading its heap), profclient and profserver (pprof
// CPU and allocation profiles of rpcload's engine and of the reference
// server).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

// options are the suite's flags.
type options struct {
	quick     bool
	only      map[int]bool
	rounds    int
	out       string
	jsonOut   string
	noInstall bool
	noMicro   bool
	noPin     bool
	profile   string // auto (profile what misses a goal), always, never
	keep      bool
}

// durations of one run per comparison; --quick shortens them.
type durations struct {
	httpClosed, openLoop, mux, stallRun, memory, resolution, fuzz time.Duration
}

func (o options) durations() durations {
	if o.quick {
		return durations{3 * time.Second, 3 * time.Second, time.Second, 3 * time.Second, 3 * time.Second, 2 * time.Second, 3 * time.Second}
	}
	return durations{10 * time.Second, 5 * time.Second, 1500 * time.Millisecond, 10 * time.Second, 2500 * time.Millisecond, 2 * time.Second, 5 * time.Second}
}

func (o options) runs(n int) bool { return len(o.only) == 0 || o.only[n] }

const usage = `usage: go run ./bench [--quick] [--only N,M] [--rounds N] [--out FILE] [flags]

Runs rpcload beside wrk, vegeta, hey and a minimal client against the embedded
reference server (rpcload serve), and rpcfuzz against it, and writes
docs/benchmarks.md (about 9 minutes). Comparisons:
  1 HTTP/1.1 closed loop, 50 connections: rpcload, wrk, vegeta, hey (req/s, CPU per reply)
  2 HTTP/1.1 open loop well below saturation: latency and achieved rate
  3 multiplexed TCP and WebSocket, 1/64/1024 in flight: rpcload, minimal client, wrk (HTTP)
  4 coordinated omission: a server stall against the computed answer
  5 memory per request in flight at 1,000, 10,000 and 100,000
  6 resolution: a 1 ms busy-wait method, against the minimal client's p50
  7 rpcfuzz execs/s and where its time goes: TCP and HTTP (8 workers), a stdio child (1)

Every server the suite starts listens on 127.0.0.1 only; every process it starts
is stopped by its id when it ends, on an error or on Ctrl-C.
Raw outputs (profiles, rpcfuzz's summary.json of each run) go to bench/.out.

flags:
%s`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to an internal mode or runs the suite, and returns the
// exit status: 0 when it ran (goals may fail: they are findings in the
// report, not errors), 1 on an error, 2 on bad flags, 130 on SIGINT.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		err := runMode(ctx, args[0], args[1:], stdout, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "bench %s: %v\n", args[0], err)
			return 1
		}
		return 0
	}
	opt, err := parseOptions(args, stderr)
	if errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	s, err := newSuite(opt, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	err = s.runAll(ctx)
	s.close()
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "bench: interrupted; every process it started has been stopped")
		return 130
	case err != nil:
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	var o options
	var only string
	fs.BoolVar(&o.quick, "quick", false, "one round, short runs (3 s; 1 s per multiplexed cell): a smoke test of the suite")
	fs.StringVar(&only, "only", "", "run only these comparisons, e.g. 1,3")
	fs.IntVar(&o.rounds, "rounds", 0, "rounds of every comparison (default 3; 1 with --quick)")
	fs.StringVar(&o.out, "out", "docs/benchmarks.md", "write the report here (relative to the repository root; - for none)")
	fs.StringVar(&o.jsonOut, "json", "bench/.out/results.json", "write every sample as JSON here (relative to the repository root; - for none)")
	fs.BoolVar(&o.noInstall, "no-install", false, "install nothing; skip the tools that are missing")
	fs.BoolVar(&o.noMicro, "no-micro", false, "skip the Go micro-benchmarks of the hot path")
	fs.BoolVar(&o.noPin, "no-pin", false, "do not pin the server and the load tools to cores with taskset")
	fs.StringVar(&o.profile, "profile", "always", "pprof CPU and allocation profiles of rpcload and the server under the HTTP and TCP loads: always, auto (only where a throughput goal fails), never")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory (tool outputs, result files)")
	fs.Usage = func() { fmt.Fprintf(stderr, usage, fs.FlagUsages()) }
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q (modes: minclient, heapprobe, profclient, profserver)", fs.Args())
	}
	var err error
	if o.only, err = parseOnly(only); err != nil {
		return o, err
	}
	switch {
	case o.rounds < 0:
		return o, fmt.Errorf("--rounds must be positive (got %d)", o.rounds)
	case o.rounds == 0 && o.quick:
		o.rounds = 1
	case o.rounds == 0:
		o.rounds = 3
	}
	switch o.profile {
	case "auto", "always", "never":
	default:
		return o, fmt.Errorf("--profile must be auto, always or never (got %q)", o.profile)
	}
	return o, nil
}

// numComparisons is how many comparisons the suite has (numbered from 1).
const numComparisons = 7

// parseOnly reads "1,3,5" into a set of comparison numbers 1..numComparisons.
func parseOnly(s string) (map[int]bool, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	set := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > numComparisons {
			return nil, fmt.Errorf("--only takes comparison numbers 1 to %d, comma-separated (got %q)", numComparisons, s)
		}
		set[n] = true
	}
	return set, nil
}
