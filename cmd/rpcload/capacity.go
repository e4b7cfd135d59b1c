package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/capacity"
	"github.com/rpcload/rpcload/internal/engine"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/threshold"
)

// capacityFlags are the flags of rpcload capacity besides run's.
type capacityFlags struct {
	slo       []string
	startRate float64
	growth    float64
	precision cli.Fraction
	step      time.Duration
	warmup    time.Duration
	confirm   time.Duration
	transport string // no target: how to reach the embedded server
}

func (c *capacityFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&c.slo, "slo", nil, "the service-level objective each step must meet, as a threshold such as 'p99<20ms' (repeatable; at least one latency bound)")
	fs.Var((*cli.Rate)(&c.startRate), "start-rate", "the first step's rate, per second or per unit as in 50/1s")
	c.startRate = capacity.DefaultStartRate
	fs.Float64Var(&c.growth, "growth", capacity.DefaultGrowth, "factor between the growing steps' rates")
	c.precision = capacity.DefaultPrecision
	fs.Var(&c.precision, "precision", "stop bisecting when the first failing rate is within this share above the last good one")
	fs.DurationVar(&c.step, "step-duration", 10*time.Second, "measured length of each step")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "warm-up before each step's measured part, at the step's rate (sent, not counted)")
	fs.DurationVar(&c.confirm, "confirm-duration", 30*time.Second, "measured length of the run that confirms the answer (0: none)")
	fs.StringVar(&c.transport, "transport", "tcp", "with no target: how to reach the embedded reference server (tcp or http)")
}

var capacityHelp = cmdHelp{
	usage: []string{
		"rpcload capacity TARGET --slo EXPR --method NAME [flags]",
		"rpcload capacity --slo EXPR --method NAME [flags] -- COMMAND [ARGS...]",
		"rpcload capacity --slo EXPR [flags]     (the embedded reference server)",
	},
	about: `Finds the highest rate TARGET sustains under a service-level objective:
open-loop steps at rising rates (--start-rate, times --growth) until one
breaks the SLO (a latency bound, --max-error-rate, any violation, or an
achieved rate below 99% of the offered one), then a bisection down to
--precision, then a confirming run. A step that failed because the load
generator or the machine could not keep up is reported as such, and the
search stops there: the answer is then a lower bound. Every flag of rpcload
run applies except the load's own (--rate, --concurrency, --duration,
--requests, --shard, --start-at); --max-rate is the highest rate the search
offers. Exit 0 when an answer was found, 1 when even --start-rate broke the
SLO or a --threshold failed. docs/capacity.md explains the search.`,
	examples: []string{
		"rpcload capacity http://127.0.0.1:8545 --method eth_blockNumber --slo 'p99<20ms' -o capacity.json --html capacity.html",
		"rpcload capacity tcp://127.0.0.1:9090 --method echo --slo 'p99<5ms' --slo 'p50<1ms' --max-error-rate 0.1% --threshold 'capacity>=4000'",
		"rpcload capacity --slo 'p99<10ms' --step-duration 2s --warmup 500ms --confirm-duration 5s",
	},
}

// capacityCmd is "rpcload capacity": the search for the highest rate a
// server sustains under an SLO.
func capacityCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("capacity", capacityHelp, stdout, stderr)
	var f runFlags
	var cf capacityFlags
	f.register(fs)
	f.prof.register(fs)
	f.scen.register(fs)
	f.gate.register(fs)
	cf.register(fs)
	fs.Lookup("max-rate").Usage = "the highest rate the search offers, per second or per unit as in 50/1s (default: no bound)"
	fs.Lookup("max-error-rate").Usage = "a step fails when more than `R` of its requests failed (errors, invalid replies, transport errors, timeouts), e.g. 0.1% (default 0.1%)"
	if err := parseFlags(fs, args); err != nil {
		return helpExit(err)
	}
	cc, err := cf.config(fs, &f)
	if err != nil {
		return exitUsage, err
	}
	if err := f.secret.Check(); err != nil {
		return exitUsage, err
	}
	fileTarget, fileCommand, err := f.scen.load(fs, &f)
	if err != nil {
		return exitUsage, err
	}
	cli.InstallSecrets(stdout, stderr, f.secrets(fs, fileTarget))
	f.rate = cc.StartRate // a steady open loop, which each step re-rates
	if !fs.Changed("interval") {
		f.interval = min(max(cf.step/10, 100*time.Millisecond), time.Second)
	}
	var cfg engine.Config
	if fs.NArg() == 0 && fs.ArgsLenAtDash() < 0 && fileTarget == "" && fileCommand == nil {
		stop, target, err := startEmbedded(cf.transport)
		if err != nil {
			return exitUsage, err
		}
		defer stop()
		if f.method == "" && f.scen.sc == nil {
			f.method, f.params = "echo", `[1,"a"]`
		}
		cc.SharedProcess = true
		cfg, err = f.config(fs, target)
		if err != nil {
			return exitUsage, err
		}
	} else if cfg, err = f.targetConfig(fs, fileTarget, fileCommand); err != nil {
		return exitUsage, err
	}
	if cfg.Malformed() {
		return exitUsage, usagef("capacity searches the well-formed load: the scenario's raw and mutate calls are for rpcload run (malformed traffic is judged apart, not under an SLO)")
	}
	if f.scen.sc != nil && !f.quiet {
		fmt.Fprintln(stderr, "rpcload capacity: the scenario's load (rate, stages, duration) is replaced by the search's steps; its mix is kept")
	}
	cc.Conns = cfg.Conns
	cc.Multiplexed = cfg.Target.IsStream() || cfg.HTTP2
	return runCapacity(ctx, cfg, cc, &f, stdout, stderr)
}

// config checks the flags of the search, and refuses run's flags that the
// search sets itself.
func (c *capacityFlags) config(fs *pflag.FlagSet, f *runFlags) (capacity.Config, error) {
	for _, name := range []string{"rate", "concurrency", "duration", "requests", "shard", "shard-count", "shard-index-env", "start-at", "dry-run"} {
		if fs.Changed(name) {
			return capacity.Config{}, usagef("--%s does not apply to capacity: the search chooses the load (see --start-rate, --step-duration)", name)
		}
	}
	if err := f.gate.parse(); err != nil {
		return capacity.Config{}, err
	}
	if c.precision <= 0 || c.growth <= 0 || c.startRate <= 0 {
		// 0 means "the default" to capacity.Config; given here, it is a mistake.
		return capacity.Config{}, usagef("--precision, --growth and --start-rate must be positive (got %s, %g, %g)", c.precision.String(), c.growth, c.startRate)
	}
	cc := capacity.Config{StartRate: c.startRate, MaxRate: f.maxRate, Growth: c.growth, Precision: float64(c.precision),
		Step: c.step, Warmup: c.warmup, Confirm: c.confirm, MaxErrorRate: 0.001, CPUs: runtime.NumCPU()}
	f.maxRate = 0 // the search's bound, not a closed loop's cap
	if f.gate.maxErrorRate != "" {
		// --max-error-rate bounds the steps' error rate here, not a gate
		// on the rpc errors of the answer.
		v, err := cli.ParseFraction(f.gate.maxErrorRate)
		if err != nil {
			return cc, usagef("--max-error-rate: %v", err)
		}
		cc.MaxErrorRate = v
		f.gate.maxErrorRate = ""
		if err := f.gate.parse(); err != nil {
			return cc, err
		}
	}
	for _, e := range c.slo {
		t, err := threshold.Parse(e)
		if err != nil {
			return cc, usagef("--slo: %v", err)
		}
		cc.SLO = append(cc.SLO, t)
	}
	if err := cc.Validate(); err != nil {
		return cc, cli.UsageError{Err: err}
	}
	return cc, nil
}

// startEmbedded starts the reference server in this process on loopback
// for a search with no target, and returns how to stop it and its URL.
func startEmbedded(transportName string) (stop func(), target string, err error) {
	var httpAddr, tcpAddr string
	switch transportName {
	case "tcp":
		tcpAddr = "127.0.0.1:0"
	case "http":
		httpAddr = "127.0.0.1:0"
	default:
		return nil, "", usagef("--transport must be tcp or http (got %q)", transportName)
	}
	srv, err := testsrv.New(testsrv.Config{MaxFrame: 16 << 20})
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithCancel(context.Background())
	httpBound, tcpBound, err := srv.ListenAndServe(ctx, httpAddr, tcpAddr)
	if err != nil {
		cancel()
		srv.Close()
		return nil, "", err
	}
	stop = func() { cancel(); srv.Close() }
	if httpBound != nil {
		return stop, fmt.Sprintf("http://%s/", httpBound), nil
	}
	return stop, fmt.Sprintf("tcp://%s", tcpBound), nil
}

// runCapacity runs the search, prints the report, writes the files and
// decides the exit code.
func runCapacity(ctx context.Context, cfg engine.Config, cc capacity.Config, f *runFlags, stdout, stderr io.Writer) (int, error) {
	if !f.quiet {
		fmt.Fprintf(stderr, "rpcload capacity: %s, SLO %v, steps of %s from %g/s\n", cfg.Target.URL, cc.Conditions(), cc.Step, cc.StartRate)
	}
	n := 0
	onStep := func(s stats.CapacityStep) {
		n++
		if f.quiet {
			return
		}
		verdict := "pass"
		if !s.Pass {
			verdict = "FAIL " + s.Blame
		}
		fmt.Fprintf(stderr, "  step %d %-7s %10s/s: achieved %s/s, p99 %s, errors %d, violations %d: %s\n", n, s.Phase,
			stats.FormatRate(s.Offered), stats.FormatRate(s.Achieved), stats.FormatMicros(s.Latency.P99us), s.Errors, s.Violations, verdict)
	}
	rep, body, err := capacity.Search(ctx, cc, stepRunner(cfg, cc), onStep)
	if body == nil {
		if errors.Is(err, engine.ErrUnreachable) {
			return exitUnreachable, err
		}
		return exitUsage, err
	}
	body.Capacity = rep
	body.Settings = settings(cfg)
	// The body is one run of the search: its rate and length, not the
	// flags' defaults the search replaced.
	body.Settings["rate"] = body.Rate.Target
	sending := body.DurationS
	if body.Warmup != nil {
		sending += body.Warmup.DurationS
	}
	body.Settings["duration"] = time.Duration(sending * float64(time.Second)).Round(time.Millisecond).String()
	body.Settings["capacity"] = map[string]any{"slo": rep.SLO, "start_rate": cc.StartRate, "max_rate": cc.MaxRate, "growth": cc.Growth,
		"precision": cc.Precision, "step": cc.Step.String(), "warmup": cc.Warmup.String(), "confirm": cc.Confirm.String()}
	out := reportTo(f.output, stdout, stderr)
	werr := stats.WriteText(out, body)
	gateFailed, gerr := f.gate.apply(body, out)
	if werr == nil {
		werr = gerr
	}
	if f.output != "" {
		if err := writeResultTo(f.output, body, stdout); err != nil {
			return exitUsage, err
		}
	}
	if f.html != "" {
		if err := writeHTMLReport(f.html, []string{runName(f.output, cfg)}, []*stats.Result{body}); err != nil {
			return exitUsage, err
		}
	}
	switch {
	case werr != nil:
		return exitUsage, fmt.Errorf("writing the report: %w", werr)
	case rep.LimitedBy == capacity.LimitedByInterrupted:
		return exitInterrupted, nil
	case err != nil:
		return exitUnreachable, err
	case rep.Rate == 0 || gateFailed:
		return exitFindings, nil
	}
	return exitOK, nil
}

// stepRunner runs each step of the search as an engine run of cfg at the
// step's rate, with the stop rule watching its intervals and the CPU
// clocks read around it.
func stepRunner(cfg engine.Config, cc capacity.Config) capacity.Runner {
	limit := cc.LatencyLimitUs()
	return func(ctx context.Context, s capacity.Step) (capacity.Outcome, error) {
		c := cfg
		c.Plan.Steady(s.Rate)
		c.Duration, c.Warmup = s.Warmup+s.Duration, s.Warmup
		stepCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := capacity.NewStop(s.Warmup, limit, s.Rate)
		var mu sync.Mutex
		why := ""
		c.OnInterval = func(iv engine.Interval) {
			w := stop.Observe(iv.Elapsed, iv.InFlight, iv.Point.OldestPendingUs)
			mu.Lock()
			defer mu.Unlock()
			if w != "" && why == "" {
				why = w
				cancel()
			}
		}
		before := capacity.SampleCPU()
		res, err := engine.Run(stepCtx, c)
		cores, busy := capacity.SampleCPU().Since(before)
		mu.Lock()
		defer mu.Unlock()
		if res != nil && why != "" && ctx.Err() == nil {
			res.Interrupted = false // ended by the stop rule, not by the user
		}
		return capacity.Outcome{Result: res, StoppedEarly: why, ClientCPU: cores, MachineBusy: busy}, err
	}
}
