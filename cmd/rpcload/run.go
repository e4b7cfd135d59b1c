package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/engine"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
	"github.com/rpcload/rpcload/internal/workload"
)

// runFlags holds the flags of "rpcload run" (and of the demo).
type runFlags struct {
	rate            float64
	concurrency     int
	requests        uint64
	maxRate         float64
	conns           int
	duration        time.Duration
	timeout         time.Duration
	drain           time.Duration
	maxInFlight     int
	method          string
	params          string
	idFormat        string
	notifyEvery     int
	batch           int
	framing         string
	restart         bool
	stderrPath      string
	grace           time.Duration
	headers         []string
	maxFrame        string
	insecure        bool
	caCert          string
	clientCert      string
	clientKey       string
	http2           bool
	pipeline        int
	output          string
	allowViolations bool
	interval        time.Duration
	quiet           bool
	shard           string
	shardCount      int    // with shardIndexEnv: --shard's n
	shardIndexEnv   string // the variable holding --shard's i - 1 (Kubernetes' JOB_COMPLETION_INDEX)
	startAt         string
	html            string
	gate            gateFlags      // registered by run only, not by the demo
	live            liveFlags      // likewise
	server          serverFlags    // likewise: --server-metrics, --server-pid, --soak-quiet (soak.go)
	prof            profileFlags   // registered by run only, not by the demo
	scen            scenarioFlags  // likewise
	targets         targetsFlags   // likewise: --target, --rounds, --diff (targets.go)
	mal             malformedFlags // likewise: --mutate-fraction (malformed.go)
	secret          cli.SecretFlags
	// serve is --serve-result and its companions (serveresult.go), run's only.
	serve serveResultFlags
}

func (f *runFlags) register(fs *pflag.FlagSet) {
	fs.VarP((*cli.Rate)(&f.rate), "rate", "r", "open loop: messages per second, or per unit of time as in 50/1s or 3000/m; a batch counts once (default 1000 unless --concurrency is given)")
	fs.IntVarP(&f.concurrency, "concurrency", "c", 0, "closed loop: keep N requests in flight (excludes --rate)")
	fs.Var((*cli.Rate)(&f.maxRate), "max-rate", "closed loop: send at most R messages per second (or per unit, as --rate) over all connections, a batch counting once (excludes --rate)")
	fs.IntVar(&f.conns, "conns", 0, "connections (default: streams 4; child processes 1; http 64, or --concurrency in closed loop)")
	fs.DurationVarP(&f.duration, "duration", "d", 10*time.Second, "length of the sending phase (with --requests: the longest it may take)")
	fs.Uint64VarP(&f.requests, "requests", "n", 0, "stop sending after N messages (a batch counts once, as --rate counts); the run ends when their replies or timeouts are in")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "per-request timeout; a reply after it is counted late")
	fs.DurationVar(&f.drain, "drain", 0, "wait this long for replies after sending stops (default: --timeout); SIGINT/SIGTERM cuts the wait to a second")
	fs.IntVar(&f.maxInFlight, "max-inflight", 100000, "most requests scheduled and not yet resolved; open-loop ticks past it are dropped")
	fs.StringVar(&f.method, "method", "", "JSON-RPC method to call (required)")
	fs.StringVar(&f.params, "params", "", "params as a JSON array or object, e.g. '[1,\"a\"]'")
	fs.StringVar(&f.idFormat, "id-format", "int", "request ids: int (42) or string (\"42\")")
	fs.IntVar(&f.notifyEvery, "notify-every", 0, "send every Nth call as a notification (no id, no reply expected)")
	fs.IntVar(&f.batch, "batch", 0, "send calls as JSON-RPC batch arrays of N; --rate then counts batches")
	fs.StringVar(&f.framing, "framing", "newline", "child process after --: newline or content-length (LSP) framing")
	fs.BoolVar(&f.restart, "restart", false, "child process: start a new one when it exits, and go on (without it, the run ends once every child has exited)")
	fs.StringVar(&f.stderrPath, "stderr", "", "child process: append its stderr to this file (the last lines are in the report either way)")
	fs.DurationVar(&f.grace, "grace", 2*time.Second, "child process shutdown: wait this long after closing stdin, then SIGTERM, wait again, then SIGKILL")
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "extra HTTP header 'Name: value' (repeatable)")
	f.secret.Register(fs, "every report, result file and message")
	fs.StringVar(&f.maxFrame, "max-frame", "16MiB", "largest reply frame or body accepted (e.g. 16MiB, 512KiB, 1000000)")
	fs.BoolVar(&f.insecure, "insecure", false, "https, wss: do not verify the server's certificate (the report warns)")
	fs.StringVar(&f.caCert, "ca-cert", "", "https, wss: trust only the certificate authorities in this PEM file (instead of the system's)")
	fs.StringVar(&f.clientCert, "client-cert", "", "https, wss: present this PEM client certificate (with its key, or --client-key)")
	fs.StringVar(&f.clientKey, "client-key", "", "https, wss: the PEM private key of --client-cert")
	fs.BoolVar(&f.http2, "http2", false, "http(s): use HTTP/2 (h2c with prior knowledge on http://), many requests per connection; exit 3 if the server does not speak it")
	fs.IntVar(&f.pipeline, "pipeline", 1, "http(s), HTTP/1.1: write up to N requests on a connection before reading their replies (pipelining; the server answers in order)")
	fs.StringVarP(&f.output, "output", "o", "", "write the result as JSON to this file (atomically); - writes it to stdout, and the report to stderr")
	fs.BoolVar(&f.allowViolations, "allow-violations", false, "exit 0 even when violations, leaks, timeouts or transport errors were seen")
	fs.DurationVar(&f.interval, "interval", time.Second, "time-series and progress interval")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines on stderr")
	fs.StringVar(&f.shard, "shard", "", "run part i of n instances that share the load: i/n (1-based) takes 1/n of the rate and its own id range")
	fs.IntVar(&f.shardCount, "shard-count", 0, "with --shard-index-env: n, the number of shards (instead of --shard i/n)")
	fs.StringVar(&f.shardIndexEnv, "shard-index-env", "", "take the shard's i from this environment variable, counted from 0 as Kubernetes' JOB_COMPLETION_INDEX is (with --shard-count)")
	fs.StringVar(&f.startAt, "start-at", "", "start the schedule at this wall-clock time (RFC 3339), after connecting: shards start together")
	fs.StringVar(&f.html, "html", "", "also write the report as a self-contained HTML page with plots to this file")
}

// config validates the flags against the target and builds the engine's
// Config. Every error names the flag at fault.
func (f *runFlags) config(fs *pflag.FlagSet, target string) (engine.Config, error) {
	return f.configTarget(fs, func() (transport.Target, error) { return transport.ParseTarget(target) })
}

// configCommand is config for a child process given after --.
func (f *runFlags) configCommand(fs *pflag.FlagSet, argv []string) (engine.Config, error) {
	return f.configTarget(fs, func() (transport.Target, error) {
		given := fs.Changed("framing") || f.scen.gives(fs, "framing")
		fr, err := cli.ChildFraming(f.framing, given, profile.Name(f.prof.name), f.setting(fs, "framing"))
		if err != nil {
			return transport.Target{}, err
		}
		return transport.CommandTarget(argv, fr)
	})
}

func (f *runFlags) configTarget(fs *pflag.FlagSet, parse func() (transport.Target, error)) (engine.Config, error) {
	t, err := parse()
	if err != nil {
		return engine.Config{}, usagef("%v", err)
	}
	if t.Scheme != transport.Stdio {
		for _, name := range []string{"framing", "restart", "stderr", "grace"} {
			if fs.Changed(name) || f.scen.gives(fs, name) {
				return engine.Config{}, usagef("%s applies to a child process given after --, not to %s", f.setting(fs, name), t.URL)
			}
		}
	}
	if f.http2 && t.Scheme != transport.HTTP && t.Scheme != transport.HTTPS {
		return engine.Config{}, usagef("%s applies to http:// and https:// targets only, not %s", f.setting(fs, "http2"), t.URL)
	}
	if f.pipeline < 1 || f.pipeline > engine.MaxPipeline {
		return engine.Config{}, usagef("--pipeline must be 1 to %d (got %d)", engine.MaxPipeline, f.pipeline)
	}
	if f.pipeline > 1 && (t.Scheme != transport.HTTP && t.Scheme != transport.HTTPS || f.http2) {
		return engine.Config{}, usagef("--pipeline applies to http:// and https:// targets over HTTP/1.1 only, not %s", map[bool]string{true: f.setting(fs, "http2"), false: t.URL}[f.http2])
	}
	if f.grace <= 0 {
		return engine.Config{}, usagef("%s must be positive (got %s)", f.setting(fs, "grace"), f.grace)
	}
	c := engine.Config{Target: t, Conns: f.conns, HTTP2: f.http2, Pipeline: f.pipeline, Interval: f.interval, Restart: f.restart,
		Child: transport.ChildOptions{StderrPath: f.stderrPath, Grace: f.grace}}
	tf := cli.TLSFlags{Insecure: f.insecure, CACert: f.caCert, ClientCert: f.clientCert, ClientKey: f.clientKey}
	if c.TLS, err = tf.Load(fs, t); err != nil {
		return c, err
	}
	if c.MaxFrame, err = cli.ParseSize(f.maxFrame, cli.MaxReadSize); err != nil {
		return c, usagef("%s: %v", f.setting(fs, "max-frame"), err)
	}
	if c.Header, err = cli.Headers(f.headers, t); err != nil {
		return c, err
	}
	if f.interval <= 0 {
		return c, usagef("--interval must be positive (got %s)", f.interval)
	}
	if err := f.shardFromEnv(fs, os.Getenv); err != nil {
		return c, err
	}
	openParams, err := f.prof.apply(fs, &c, &f.scen)
	if err != nil {
		return c, err
	}
	pf := f.planFlags(fs)
	if pf.Params == "" {
		pf.Params = openParams
	}
	if c.Plan, err = workload.Build(f.scen.sc, pf, t.IsStream()); err != nil {
		return c, cli.UsageError{Err: err}
	}
	if c.Conns == 0 && !fs.Changed("conns") {
		c.Conns = defaultConns(t, c.Plan, c.Pipeline)
	}
	if err := c.Validate(); err != nil {
		return c, cli.UsageError{Err: err}
	}
	return c, nil
}

// shardFromEnv sets --shard from --shard-count and the index in the
// variable --shard-index-env names, so that the pods of a Kubernetes
// Indexed Job run their shards without a shell to compute i/n.
func (f *runFlags) shardFromEnv(fs *pflag.FlagSet, getenv func(string) string) error {
	switch {
	case f.shardIndexEnv == "" && !fs.Changed("shard-count"):
		return nil
	case f.shardIndexEnv == "" || !fs.Changed("shard-count"):
		return usagef("--shard-count and --shard-index-env go together (or give --shard i/n)")
	case fs.Changed("shard"):
		return usagef("--shard-index-env replaces --shard: give one or the other")
	case f.shardCount < 1:
		return usagef("--shard-count must be at least 1 (got %d)", f.shardCount)
	}
	v := getenv(f.shardIndexEnv)
	i, err := strconv.Atoi(v)
	switch {
	case v == "":
		return usagef("--shard-index-env %s: the variable is not set", f.shardIndexEnv)
	case err != nil || i < 0 || i >= f.shardCount:
		return usagef("--shard-index-env %s: %q is not an index from 0 to %d (--shard-count %d)", f.shardIndexEnv, v, f.shardCount-1, f.shardCount)
	}
	f.shard = fmt.Sprintf("%d/%d", i+1, f.shardCount)
	return nil
}

// setting is how the user wrote the setting whose flag is key: its flag,
// or its key, file and line when the scenario gave it
// (workload.SettingName).
func (f *runFlags) setting(fs *pflag.FlagSet, key string) string {
	return workload.SettingName(f.scen.sc, fs.Changed, key)
}

// planFlags are the flags of the plan's settings, for workload.Build.
func (f *runFlags) planFlags(fs *pflag.FlagSet) workload.Flags {
	return workload.Flags{Rate: f.rate, Concurrency: f.concurrency, Duration: f.duration, Timeout: f.timeout, Drain: f.drain,
		MaxInFlight: f.maxInFlight, Method: f.method, Params: f.params, IDFormat: f.idFormat, NotifyEvery: f.notifyEvery,
		Batch: f.batch, MaxRate: f.maxRate, Requests: f.requests, Seed: f.scen.seed, Arrival: f.scen.arrival, Shard: f.shard, StartAt: f.startAt, Set: fs.Changed}
}

// defaultConns is the number of connections when neither --conns nor the
// scenario gives one: one child process, 4 streams, and over HTTP one per
// request kept in flight (closed loop; one per pipeline of them with
// --pipeline) or 64.
func defaultConns(t transport.Target, p workload.Plan, pipeline int) int {
	switch {
	case t.Scheme == transport.Stdio:
		return 1
	case t.IsStream():
		return 4
	case p.Whole().Concurrency > 0 && !p.ClosedStages():
		return (p.Whole().Concurrency + pipeline - 1) / max(pipeline, 1)
	}
	return 64
}

var runHelp = cmdHelp{
	usage: []string{
		"rpcload run TARGET --method NAME [flags]",
		"rpcload run --method NAME [flags] -- COMMAND [ARGS...]",
		"rpcload run -f SCENARIO.yaml [TARGET] [flags]",
		"rpcload run --target A --target B (--rounds N | --diff) --method NAME [flags]",
	},
	about: `Load-tests a JSON-RPC 2.0 server and checks every reply. TARGET is
http://host:port/path, https://..., ws://..., wss://..., tcp://host:port
(newline-delimited JSON), tcp+lsp://host:port (Content-Length framing),
unix:///path or unix+lsp:///path. After --, a command to start as a child
process speaking JSON-RPC on its stdin and stdout; rpcload's own flags go
before the --.`,
	examples: []string{
		"rpcload run http://127.0.0.1:8545 --method eth_blockNumber -r 500 -d 30s",
		"rpcload run https://api.example.com/rpc -H 'Authorization: Bearer TOKEN' --method status -c 16 -n 10000",
		"rpcload run tcp://127.0.0.1:9090 --method echo --params '[1]' --rate 3000/m -o result.json",
		"rpcload run --method echo --concurrency 64 -- rpcload serve --stdio",
		"rpcload run -f scenarios/demo.yaml --html report.html",
	},
}

// newRunFlagSet is the flag set of rpcload run with every flag group
// registered; rpcload kubernetes checks the shards' command line with it.
func newRunFlagSet(stdout, stderr io.Writer) (*pflag.FlagSet, *runFlags) {
	fs := newFlagSet("run", runHelp, stdout, stderr)
	f := new(runFlags)
	f.register(fs)
	f.prof.register(fs)
	f.scen.register(fs)
	f.targets.register(fs)
	f.gate.register(fs)
	f.live.register(fs)
	f.server.register(fs)
	f.mal.register(fs)
	f.serve.register(fs)
	return fs, f
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (code int, err error) {
	fs, f := newRunFlagSet(stdout, stderr)
	if err := parseFlags(fs, args); err != nil {
		return helpExit(err)
	}
	// From here on, a shard serving its result serves how the run ended.
	if err := f.serve.start(fs, f, stderr); err != nil {
		return exitUsage, err
	}
	defer func() { code, err = f.serve.finish(ctx, code, err, stderr) }()
	if err := f.mal.check(fs); err != nil {
		return exitUsage, err
	}
	if err := f.gate.parse(); err != nil {
		return exitUsage, err
	}
	if err := f.live.defaults(fs, f); err != nil {
		return exitUsage, err
	}
	if err := f.server.check(fs, f.live.soak); err != nil {
		return exitUsage, err
	}
	if err := f.secret.Check(); err != nil {
		return exitUsage, err
	}
	var cfg engine.Config
	fileTarget, fileCommand, err := f.scen.load(fs, f)
	if err != nil {
		return exitUsage, err
	}
	cli.InstallSecrets(stdout, stderr, f.secrets(fs, fileTarget))
	if len(f.targets.urls) > 0 || f.targets.changed(fs) {
		return f.targets.run(ctx, fs, f, stdout, stderr) // refuses a TARGET or a command given as well
	}
	cfg, err = f.targetConfig(fs, fileTarget, fileCommand)
	if err != nil {
		return exitUsage, err
	}
	if f.scen.dryRun > 0 {
		return f.scen.dryRunTo(cfg, stdout)
	}
	return execute(ctx, cfg, f, stdout, stderr)
}

// targetConfig builds the run's config for the target of the command line
// (TARGET, or a command after --) or else of the scenario file; a run
// without a scenario needs --method (or what stands for it).
func (f *runFlags) targetConfig(fs *pflag.FlagSet, fileTarget string, fileCommand []string) (engine.Config, error) {
	fromFile := fileTarget != "" || fileCommand != nil
	switch dash := fs.ArgsLenAtDash(); {
	case dash >= 0 && dash != 0:
		return engine.Config{}, usagef("give either a TARGET or a command after --, not both")
	case dash == 0 && fs.NArg() == 0:
		return engine.Config{}, usagef("no command after --")
	case dash < 0 && fs.NArg() == 0 && fromFile:
	case dash < 0 && fs.NArg() != 1:
		return engine.Config{}, usagef("%s takes exactly one TARGET (got %d); see rpcload %s --help", fs.Name(), fs.NArg(), fs.Name())
	}
	if f.scen.sc == nil {
		if err := f.prof.presetMethod(fs, f); err != nil {
			return engine.Config{}, err
		}
		if f.method == "" {
			return engine.Config{}, usagef("--method is required (or --tool with --profile mcp, or -f with a scenario)")
		}
	}
	switch {
	case fs.ArgsLenAtDash() == 0:
		return f.configCommand(fs, fs.Args())
	case fs.NArg() == 1:
		return f.config(fs, fs.Arg(0))
	case fileCommand != nil:
		return f.configCommand(fs, fileCommand)
	}
	return f.config(fs, fileTarget)
}

// secrets gathers every secret value of the run: those of the secret
// headers (the scenario's among them), the scenario's tokens from the
// environment, and the passwords in target URLs.
func (f *runFlags) secrets(fs *pflag.FlagSet, fileTarget string) []string {
	out := cli.HeaderSecrets(f.headers, f.secret.Names)
	urls := append([]string{fileTarget}, f.targets.urls...)
	if fs.ArgsLenAtDash() < 0 {
		urls = append(urls, fs.Args()...)
	}
	for _, u := range urls {
		out = append(out, stats.URLSecrets(u)...)
	}
	if f.scen.sc != nil {
		out = append(out, f.scen.sc.Secrets...)
	}
	return out
}

// execute runs the load, prints the report, writes the result file and
// decides the exit code.
func execute(ctx context.Context, cfg engine.Config, f *runFlags, stdout, stderr io.Writer) (int, error) {
	f.serve.running(cfg)
	lv, err := startLive(&cfg, f, stderr)
	if err != nil {
		return exitUsage, err
	}
	srv, err := f.server.start(&cfg, f, lv, stderr)
	if err != nil {
		lv.close()
		return exitUsage, err
	}
	defer func() {
		// After the result is written; beside a shard's wait for its
		// merger, so the merge is not held up by the linger.
		if !f.serve.alongside(lv.lingerAsync(ctx, stderr)) {
			lv.linger(ctx, stderr)
		}
	}()
	mal, err := f.mal.start(ctx, &cfg, f.output, stderr)
	if err != nil {
		return exitUsage, err
	}
	res, err := engine.Run(ctx, cfg)
	mal.finish(res)
	srv.finish(res)
	lerr := lv.finish(res)
	if res == nil {
		if errors.Is(err, engine.ErrUnreachable) {
			return exitUnreachable, err
		}
		return exitUsage, err
	}
	// With a result, err is why the run could not run against its target
	// after all (engine.Run): the report and files are still written.
	runErr := err
	res.Settings = settings(cfg)
	if lerr != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("writing the interval files stopped: %v", lerr))
	}
	report := reportTo(f.output, stdout, stderr)
	werr := stats.WriteText(report, res)
	gateFailed, gerr := f.gate.apply(res, report)
	if werr == nil {
		werr = gerr
	}
	if f.output != "" {
		if err := writeResultTo(f.output, res, stdout); err != nil {
			return exitUsage, err
		}
	}
	if err := f.serve.keep(res); err != nil {
		return exitUsage, err
	}
	if f.html != "" {
		if err := writeHTMLReport(f.html, []string{runName(f.output, cfg)}, []*stats.Result{res}); err != nil {
			return exitUsage, err
		}
	}
	if werr != nil {
		return exitUsage, fmt.Errorf("writing the report: %w", werr)
	}
	switch {
	case res.Interrupted:
		return exitInterrupted, nil
	case runErr != nil:
		return exitUnreachable, runErr
	case gateFailed, res.EndedEarly != "":
		return exitFindings, nil
	case !f.allowViolations && findings(res):
		return exitFindings, nil
	}
	return exitOK, nil
}

// runName labels a run in the HTML report: its result file, else its target.
func runName(output string, cfg engine.Config) string {
	if file := outputFile(output); file != "" {
		return filepath.Base(file)
	}
	return cfg.Target.URL
}

// findings reports whether the run saw anything that fails it by default:
// a broken rule, a request never answered, or one that failed below
// JSON-RPC (otherwise a run in which nothing succeeded would pass).
func findings(r *stats.Result) bool {
	q := r.Requests
	malformed := r.Malformed != nil && r.Malformed.Failures > 0
	return stats.FailingViolations(r.Violations) > 0 || q.Leaked > 0 || q.Timeouts > 0 || q.TransportErrors > 0 || malformed
}

func settings(c engine.Config) map[string]any {
	idf := "int"
	if c.IDFormat == wire.IDQuoted {
		idf = "string"
	}
	// A shard records the whole run's load (rate.target in the result is
	// its own part), so merged shards show what was asked of them all.
	whole := c.Whole()
	s := map[string]any{
		"rate": whole.Rate, "concurrency": whole.Concurrency, "conns": c.Conns, "duration": c.Duration.String(),
		"timeout": c.Timeout.String(), "drain": c.Drain.String(), "max_inflight": c.MaxInFlight,
		"method": c.Method, "id_format": idf, "notify_every": c.NotifyEvery, "batch": c.Batch, "max_frame": c.MaxFrame,
		"insecure": c.TLS.Insecure, "ca_cert": c.TLS.Roots != nil, "client_cert": len(c.TLS.Certificates) > 0, "http2": c.HTTP2, "opening_steps": []string{}, "interval": c.Interval.String(),
		"seed": strconv.FormatUint(c.Seed, 10), "poisson": c.Poisson,
	}
	if c.Pipeline > 1 {
		s["pipeline"] = c.Pipeline // only when pipelined: other results keep their settings
	}
	if c.Requests > 0 {
		s["requests"] = c.Requests // the whole run's count, as rate is
		if c.Duration == workload.OpenEnded {
			s["duration"] = "" // none: the count ended the run
		}
	}
	if len(c.Calls) > 1 || !c.Single() {
		var mix []map[string]any
		for _, call := range c.Calls {
			mix = append(mix, map[string]any{"name": call.Name, "method": call.Method, "weight": call.Weight,
				"notify": call.Notify, "batch": call.Batch, "timeout": call.Timeout.String(), "id_reuse": call.IDReuse})
		}
		s["mix"] = mix
	}
	if len(c.Stages) > 0 {
		var st []map[string]any
		for _, x := range whole.Stages {
			st = append(st, map[string]any{"duration": x.Duration.String(), "rate": x.Rate, "concurrency": x.Concurrency})
		}
		s["stages"] = st
	}
	if c.Params != nil {
		s["params"] = string(c.Params)
	}
	if whole.MaxRate > 0 {
		s["max_rate"] = whole.MaxRate
	}
	if c.Shard.Sharded() {
		s["shard"] = fmt.Sprintf("%d/%d", c.Shard.Index, c.Shard.Count)
	}
	if !c.StartAt.IsZero() {
		s["start_at"] = c.StartAt.UTC().Format(time.RFC3339)
	}
	if c.Profile != nil {
		s["profile"] = string(c.Profile.Name())
	}
	for _, st := range c.Steps {
		s["opening_steps"] = append(s["opening_steps"].([]string), st.Method)
	}
	if len(c.Header) > 0 {
		// Header names only: values are often secrets.
		var names []string
		for k := range c.Header {
			names = append(names, k)
		}
		slices.Sort(names)
		s["header_names"] = names
	}
	return s
}
