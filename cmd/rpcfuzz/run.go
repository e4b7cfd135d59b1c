package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/live"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
)

// targetFlags are the flags that say how to reach a target; run, replay,
// minimize and import-go share them.
type targetFlags struct {
	secret  cli.SecretFlags
	framing string
	stderr  string
	grace   time.Duration
	headers []string
	tls     cli.TLSFlags
	profile string
	timeout time.Duration
	// serverCmd is --server-cmd; server is the server command parsed by
	// target (from --server-cmd, or a command after -- given with a
	// network target), nil when there is none.
	serverCmd   string
	serverStart time.Duration
	server      []string
}

func (t *targetFlags) register(fs *pflag.FlagSet, timeoutDefault time.Duration) {
	fs.StringVar(&t.profile, "profile", "jsonrpc", "protocol profile: jsonrpc, mcp, lsp or eth (its handshake on each connection, its seeds)")
	fs.DurationVar(&t.timeout, "timeout", timeoutDefault, "how long an input waits for its replies; a request with an id left unanswered is a hang")
	fs.StringVar(&t.framing, "framing", "newline", "child process after --: newline or content-length framing (default content-length with --profile lsp)")
	fs.StringVar(&t.stderr, "stderr", "", "child process: append its stderr to this file (the last lines are kept in crash findings either way)")
	fs.DurationVar(&t.grace, "grace", 2*time.Second, "child process shutdown: wait this long after closing stdin, then SIGTERM, wait again, then SIGKILL (a server command: SIGTERM, wait, SIGKILL)")
	fs.StringVar(&t.serverCmd, "server-cmd", "", "'COMMAND ARGS...': start the server of a network target (split into words like a shell does, not run by one), wait until its port accepts connections, start it again after each crash, and reproduce and minimize crashes against a fresh process (also: a command after -- given with a TARGET)")
	fs.DurationVar(&t.serverStart, "server-start", fuzz.DefaultServerStart, "how long a server command may take until its port accepts a connection")
	fs.StringArrayVarP(&t.headers, "header", "H", nil, "extra HTTP header 'Name: value' (repeatable; http(s) and ws(s) targets)")
	t.tls.Register(fs, "summary.json says so")
	t.secret.Register(fs, "every finding, summary and message")
}

// target parses the target: a URL (positional, or url when not empty), or
// the command after --. A command after -- given with a URL is the URL's
// server (t.server), as --server-cmd is. A zero Target with no error
// means none was given.
func (t *targetFlags) target(fs *pflag.FlagSet, positional []string, url string) (transport.Target, error) {
	var tg transport.Target
	var err error
	var command []string
	if dash := fs.ArgsLenAtDash(); dash >= 0 {
		if command = fs.Args()[dash:]; len(command) == 0 {
			return tg, cli.Usagef("no command after --")
		}
	}
	if url == "" && len(positional) > 0 {
		url = positional[0]
	}
	t.server = nil
	if fs.Changed("server-cmd") {
		if command != nil {
			return tg, cli.Usagef("give the server command as --server-cmd or after --, not both")
		}
		if t.server, err = cli.SplitCommand(t.serverCmd); err != nil {
			return tg, cli.Usagef("--server-cmd: %v", err)
		}
	}
	switch {
	case url != "":
		if tg, err = transport.ParseTarget(url); err != nil {
			return tg, cli.Usagef("%v", err)
		}
		if command != nil {
			t.server = command // with a network target, the command is its server
		}
	case command != nil:
		fr, err := cli.ChildFraming(t.framing, fs.Changed("framing"), profile.Name(t.profile), "--framing")
		if err != nil {
			return tg, cli.Usagef("%v", err)
		}
		if tg, err = transport.CommandTarget(command, fr); err != nil {
			return tg, cli.Usagef("%v", err)
		}
	}
	if fs.Changed("server-start") && (t.server == nil || t.serverStart <= 0) {
		return tg, cli.Usagef("--server-start applies to a server command (--server-cmd), and must be positive (got %s)", t.serverStart)
	}
	if tg.Scheme != "" && tg.Scheme != transport.Stdio {
		for _, name := range []string{"framing", "stderr", "grace"} {
			if fs.Changed(name) && (name == "framing" || t.server == nil) {
				return tg, cli.Usagef("--%s applies to a child process given after --, not to %s", name, tg.URL)
			}
		}
	}
	return tg, nil
}

// check validates the flags that do not depend on the target.
func (t *targetFlags) check() error {
	switch {
	case t.timeout <= 0:
		return cli.Usagef("--timeout must be positive (got %s)", t.timeout)
	case t.grace <= 0:
		return cli.Usagef("--grace must be positive (got %s)", t.grace)
	}
	if _, err := profile.New(profile.Name(t.profile), profile.Options{}); err != nil {
		return cli.Usagef("--profile: %v", err)
	}
	return nil
}

func (t *targetFlags) child() transport.ChildOptions {
	return transport.ChildOptions{StderrPath: t.stderr, Grace: t.grace}
}

// runFlags are the flags of "rpcfuzz run".
type runFlags struct {
	tf             targetFlags
	out            string
	duration       time.Duration
	execs          uint64
	seed           string
	workers        int
	maxRate        float64
	slowFactor     float64
	slowFloor      time.Duration
	canaryEvery    int
	baseline       string
	maxRestarts    int
	maxFrame       string
	maxReply       string
	maxFindings    int
	stopAfter      int
	minimizeBudget int
	minimizeTime   time.Duration
	quiet          bool
	api            apiFlags
}

func (f *runFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.out, "out", "o", "", "directory for the findings (one directory each), summary.json and latency.json (required)")
	fs.DurationVar(&f.duration, "duration", time.Minute, "stop after this long (unless --execs is given alone); the run ends within it + 18 s with the default --timeout (+ a child's shutdown, 2 × --grace at most): docs/fuzzing.md, Limits")
	fs.Uint64Var(&f.execs, "execs", 0, "stop after this many inputs")
	fs.StringVar(&f.seed, "seed", "", "seed of every random choice (default: drawn at random and printed); repeat a run with it")
	fs.IntVar(&f.workers, "workers", 0, "connections fuzzed in parallel (default 8; 1 for a child process); --seed repeats a run's inputs only with 1")
	fs.Float64Var(&f.maxRate, "max-rate", 0, "send at most N inputs per second over all workers together, canaries, confirmations and minimization attempts counting too (0: as fast as the target answers)")
	f.tf.register(fs, fuzz.DefaultTimeout)
	fs.Float64Var(&f.slowFactor, "slow-factor", fuzz.DefaultSlowFactor, "an input answered more than this times the median latency of inputs its size is slow_input (a warning)")
	fs.DurationVar(&f.slowFloor, "slow-min", fuzz.DefaultSlowFloor, "... and only when slower than this")
	fs.IntVar(&f.canaryEvery, "canary-every", fuzz.DefaultCanaryEvery, "send a known-good request after every N inputs per worker (and after each finding); 0 turns the canary off")
	fs.StringVar(&f.baseline, "baseline", "", "accepted findings: a summary.json of an earlier run, or a file of finding ids, one per line; they do not fail the run")
	fs.IntVar(&f.maxRestarts, "max-restarts", fuzz.DefaultMaxRestarts, "child process: stop when more than N in a row cannot start, die in the handshake, or die on a known-good request (inputs that kill it are findings and the run goes on)")
	fs.StringVar(&f.maxFrame, "max-frame", "1MiB", "largest input frame generated (e.g. 1MiB, 64KiB, 100000)")
	fs.StringVar(&f.maxReply, "max-reply", "16MiB", "largest reply frame or HTTP body read; a longer one is skipped and judged frame_too_large (at least --max-frame)")
	fs.IntVar(&f.maxFindings, "max-findings", fuzz.DefaultMaxFindings, "distinct findings written; further ones are only counted")
	fs.IntVar(&f.stopAfter, "stop-after", 0, "stop once this many failures are found (0: run to the end)")
	fs.IntVar(&f.minimizeBudget, "minimize-budget", fuzz.DefaultMinimizeBudget, "reproduction attempts minimizing one finding may take")
	fs.DurationVar(&f.minimizeTime, "minimize-time", fuzz.DefaultMinimizeTime, "and how long it may take: the check in flight is cut then (all of a run's minimizations together: half of --duration per worker at most)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no status line on stderr")
	f.api.register(fs)
}

const runUsage = `usage: rpcfuzz run TARGET --out DIR [flags]
       rpcfuzz run --out DIR [flags] -- COMMAND [ARGS...]
       rpcfuzz run TARGET --out DIR [flags] -- SERVER_COMMAND [ARGS...]

TARGET is http://host:port/path, https://..., ws://..., wss://..., tcp://host:port (newline-delimited JSON),
tcp+lsp://host:port (Content-Length framing), unix:///path, or unix+lsp:///path. After --, a command to
start as a child process speaking JSON-RPC on its stdin and stdout (restarted after each crash); given
with a TARGET, the command is the TARGET's server (as --server-cmd): started, waited for until its port
accepts connections, and started again after each crash.

flags:
%s`

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	var f runFlags
	f.register(fs)
	fs.Usage = func() { fmt.Fprintf(stderr, runUsage, fs.FlagUsages()) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return cli.ExitOK, nil
		}
		return cli.ExitUsage, cli.UsageError{Err: err}
	}
	if err := f.tf.installSecrets(fs, stdout, stderr); err != nil {
		return cli.ExitUsage, err
	}
	cfg, err := f.config(fs)
	if err != nil {
		return cli.ExitUsage, err
	}
	fmt.Fprintf(stderr, "rpcfuzz: fuzzing %s with seed %d (repeat with --seed %d); findings go to %s\n", cfg.Target.URL, cfg.Seed, cfg.Seed, cfg.OutDir)
	if cfg.ServerCommand != nil {
		fmt.Fprintf(stderr, "rpcfuzz: starting the server: %s (again after each crash)\n", strings.Join(cfg.ServerCommand, " "))
	}
	var st *statusLine
	if !f.quiet {
		st = newStatusLine(stderr, cfg.Duration)
		cfg.OnStatus = st.update
		cfg.Log = st
	}
	sum, err := fuzz.Run(ctx, cfg)
	if st != nil {
		st.done()
	}
	if err != nil {
		switch {
		case errors.Is(err, fuzz.ErrUnreachable):
			return cli.ExitUnreachable, err
		case ctx.Err() != nil && sum == nil:
			return cli.ExitInterrupted, err
		}
		if sum == nil {
			return cli.ExitUsage, err
		}
		fmt.Fprintf(stderr, "rpcfuzz: %v\n", err)
	}
	if werr := fuzz.WriteText(stdout, sum); werr != nil {
		return cli.ExitUsage, fmt.Errorf("writing the summary: %w", werr)
	}
	switch {
	case sum.Interrupted:
		return cli.ExitInterrupted, nil
	case sum.Failures > 0:
		return cli.ExitFindings, nil
	}
	return cli.ExitOK, nil
}

// config validates the flags and builds the engine's Config; every error
// names the flag at fault.
func (f *runFlags) config(fs *pflag.FlagSet) (fuzz.Config, error) {
	var cfg fuzz.Config
	dash := fs.ArgsLenAtDash()
	positional := fs.Args()
	if dash >= 0 {
		positional = positional[:dash]
	}
	switch {
	case len(positional) > 1:
		return cfg, cli.Usagef("run takes one TARGET (got %d: %s)", len(positional), strings.Join(positional, " "))
	case dash < 0 && fs.NArg() == 0:
		return cfg, cli.Usagef("run needs a TARGET or a command after -- (see rpcfuzz run --help)")
	case f.out == "":
		return cfg, cli.Usagef("--out DIR is required: findings, summary.json and latency.json go there")
	}
	if err := f.tf.check(); err != nil {
		return cfg, err
	}
	t, err := f.tf.target(fs, positional, "")
	if err != nil {
		return cfg, err
	}
	hdr, err := cli.Headers(f.tf.headers, t)
	if err != nil {
		return cfg, err
	}
	tc, err := f.tf.tls.Load(fs, t)
	if err != nil {
		return cfg, err
	}
	cfg = fuzz.Config{
		Target: t, Profile: profile.Name(f.tf.profile), Header: hdr, TLS: tc, Child: f.tf.child(),
		Workers: f.workers, MaxRate: f.maxRate, Execs: f.execs, Timeout: f.tf.timeout, SlowFactor: f.slowFactor, SlowFloor: f.slowFloor,
		CanaryEvery: f.canaryEvery, MaxRestarts: f.maxRestarts, MaxFindings: f.maxFindings, StopAfter: f.stopAfter,
		MinimizeBudget: f.minimizeBudget, MinimizeTime: f.minimizeTime, OutDir: f.out,
		ServerCommand: f.tf.server, ServerStart: f.tf.serverStart,
	}
	if !fs.Changed("duration") && fs.Changed("execs") {
		f.duration = 0 // --execs alone bounds the run
	}
	cfg.Duration = f.duration
	switch {
	case f.duration < 0:
		return cfg, cli.Usagef("--duration must not be negative (got %s)", f.duration)
	case f.duration == 0 && f.execs == 0:
		return cfg, cli.Usagef("--duration 0 needs --execs N: a run needs a bound")
	case fs.Changed("workers") && (f.workers < 1 || f.workers > 1024):
		return cfg, cli.Usagef("--workers must be between 1 and 1024 (got %d)", f.workers)
	case !(f.maxRate >= 0) || math.IsInf(f.maxRate, 1):
		return cfg, cli.Usagef("--max-rate must be a number of inputs per second, 0 or more (got %g)", f.maxRate)
	case f.slowFactor < 1:
		return cfg, cli.Usagef("--slow-factor must be at least 1 (got %g)", f.slowFactor)
	case f.slowFloor < 0:
		return cfg, cli.Usagef("--slow-min must not be negative (got %s)", f.slowFloor)
	case f.canaryEvery < 0:
		return cfg, cli.Usagef("--canary-every must not be negative (got %d; 0 turns the canary off)", f.canaryEvery)
	case f.maxRestarts < 0:
		return cfg, cli.Usagef("--max-restarts must not be negative (got %d)", f.maxRestarts)
	case f.maxFindings < 1:
		return cfg, cli.Usagef("--max-findings must be at least 1 (got %d)", f.maxFindings)
	case f.stopAfter < 0:
		return cfg, cli.Usagef("--stop-after must not be negative (got %d)", f.stopAfter)
	case f.minimizeBudget < 0:
		return cfg, cli.Usagef("--minimize-budget must not be negative (got %d)", f.minimizeBudget)
	case f.minimizeTime <= 0:
		return cfg, cli.Usagef("--minimize-time must be positive (got %s)", f.minimizeTime)
	}
	if f.canaryEvery == 0 {
		cfg.CanaryEvery = -1
	}
	if f.minimizeBudget == 0 {
		cfg.MinimizeBudget = 1 // the engine's zero means the default; one check keeps the input as found
	}
	if cfg.MaxFrame, err = cli.ParseSize(f.maxFrame, cli.MaxFuzzSize); err != nil {
		return cfg, cli.Usagef("--max-frame: %v", err)
	}
	if cfg.MaxFrame < 64 {
		return cfg, cli.Usagef("--max-frame must be at least 64 bytes (got %d)", cfg.MaxFrame)
	}
	if cfg.MaxReply, err = cli.ParseSize(f.maxReply, cli.MaxFuzzSize); err != nil {
		return cfg, cli.Usagef("--max-reply: %v", err)
	}
	if err := f.api.apply(fs, &cfg); err != nil {
		return cfg, err
	}
	if cfg.Seed, err = parseSeed(f.seed); err != nil {
		return cfg, cli.Usagef("--seed: %v", err)
	}
	if f.baseline != "" {
		if cfg.Baseline, err = fuzz.ReadBaseline(f.baseline); err != nil {
			return cfg, cli.UsageError{Err: err}
		}
	}
	return cfg, nil
}

// parseSeed reads --seed, or draws one when it is empty.
func parseSeed(s string) (uint64, error) {
	if s == "" {
		return rand.Uint64() >> 1, nil // 63 bits: the printed seed stays an easy number
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a non-negative integer", s)
	}
	return n, nil
}

// statusLine shows progress on stderr: one line rewritten in place on a
// terminal, a plain line per interval elsewhere. Finding lines from the
// engine go through it so they do not tear the status line.
type statusLine struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	total    time.Duration
	drawn    bool
}

func newStatusLine(w io.Writer, total time.Duration) *statusLine {
	return &statusLine{w: w, terminal: live.IsTerminal(cli.OSFile(w)), total: total}
}

func (s *statusLine) update(st fuzz.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	line := fmt.Sprintf("%s  execs %d  %.0f/s  tuples %d  corpus %d  findings %d", elapsed(st.Elapsed, s.total), st.Execs, st.ExecsPerS, st.Tuples, st.Corpus, st.Findings)
	if st.Restarts > 0 {
		line += fmt.Sprintf("  restarts %d", st.Restarts)
	}
	if s.terminal {
		fmt.Fprint(s.w, "\r"+line+"\x1b[K")
		s.drawn = true
		return
	}
	fmt.Fprintln(s.w, line)
}

// Write prints a line of the engine's log above the status line.
func (s *statusLine) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drawn {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.drawn = false
	}
	return s.w.Write(p)
}

func (s *statusLine) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drawn {
		fmt.Fprintln(s.w)
		s.drawn = false
	}
}

func elapsed(d, total time.Duration) string {
	s := fmt.Sprintf("%.0fs", d.Seconds())
	if total > 0 {
		s += fmt.Sprintf("/%.0fs", total.Seconds())
	}
	return s
}
