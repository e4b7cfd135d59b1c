package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/workload"
)

// demoRate is the demo's open-loop rate unless --rate or --concurrency is
// given (rpcload run's default is 1000).
const demoRate = 5000

var demoHelp = cmdHelp{
	usage: []string{"rpcload [flags]", "rpcload demo [flags]"},
	about: `With no target, rpcload starts its embedded reference server on 127.0.0.1
and load-tests it: open loop over TCP at 5,000 requests a second of echo for
10 s. Every flag of rpcload run works here too, plus --transport and --fault
to watch the checks catch a misbehaving server.`,
	examples: []string{
		"rpcload",
		"rpcload --transport http --fault duplicate=0.01   # a server that answers 1% twice",
		"rpcload -c 64 -d 5s                               # closed loop, 64 in flight",
	},
}

// demo starts the embedded reference server on loopback and load-tests it:
// open loop over TCP at 5,000 req/s for 10 s, calling echo. Every run flag
// works here too, plus --transport and --fault to see what the checks catch.
func demo(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("demo", demoHelp, stdout, stderr)
	var f runFlags
	f.register(fs)
	var sf serveFlags
	fs.StringVar(&sf.faults, "fault", "", "make the embedded server inject faults (see rpcload serve --help)")
	fs.Float64Var(&sf.faultProb, "fault-prob", 0.01, "probability of a fault given without =PROB")
	fs.Uint64Var(&sf.faultSeed, "fault-seed", 1, "seed of the fault decisions")
	transportName := fs.String("transport", "tcp", "how the demo reaches the embedded server: tcp or http")
	fs.Lookup("rate").Usage = fmt.Sprintf("open loop: messages per second, or per unit as in 50/1s or 3000/m (default %d unless --concurrency is given)", demoRate)
	if err := parseFlags(fs, args); err != nil {
		return helpExit(err)
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("unexpected argument %q; to load-test a server use: rpcload run TARGET --method NAME", fs.Arg(0))
	}
	if err := f.secret.Check(); err != nil {
		return exitUsage, err
	}
	cli.InstallSecrets(stdout, stderr, cli.HeaderSecrets(f.headers, f.secret.Names))
	if !fs.Changed("rate") && !fs.Changed("concurrency") {
		f.rate = demoRate
	}
	if f.method == "" {
		f.method, f.params = "echo", `[1,"a"]`
	}
	sf.faultDelay, sf.maxFrame = 50*time.Millisecond, "16MiB"
	scfg, err := sf.serverConfig()
	if err != nil {
		return exitUsage, err
	}
	srv, err := testsrv.New(scfg)
	if err != nil {
		return exitUsage, cli.UsageError{Err: err}
	}
	defer srv.Close()
	var httpAddr, tcpAddr string
	switch *transportName {
	case "tcp":
		tcpAddr = "127.0.0.1:0"
	case "http":
		httpAddr = "127.0.0.1:0"
	default:
		return exitUsage, usagef("--transport must be tcp or http (got %q)", *transportName)
	}
	srvCtx, stopSrv := context.WithCancel(context.Background())
	defer stopSrv()
	httpBound, tcpBound, err := srv.ListenAndServe(srvCtx, httpAddr, tcpAddr)
	if err != nil {
		return exitUsage, err
	}
	target := fmt.Sprintf("tcp://%s", tcpBound)
	if httpBound != nil {
		target = fmt.Sprintf("http://%s/", httpBound)
	}
	cfg, err := f.config(fs, target)
	if err != nil {
		return exitUsage, err
	}
	fmt.Fprintf(stderr, "rpcload demo: embedded reference server at %s; %s %s (Ctrl-C stops early)\n", target, loadDesc(cfg.Rate, cfg.Concurrency), lengthDesc(cfg.Plan))
	return execute(ctx, cfg, &f, stdout, stderr)
}

// lengthDesc says what ends the run: its duration, its --requests count,
// or whichever comes first.
func lengthDesc(p workload.Plan) string {
	switch {
	case p.Requests == 0:
		return "for " + p.Duration.String()
	case p.Duration == workload.OpenEnded:
		return fmt.Sprintf("until %d messages are sent", p.Requests)
	}
	return fmt.Sprintf("for %s or %d messages, whichever comes first", p.Duration, p.Requests)
}

func loadDesc(rate float64, concurrency int) string {
	if rate > 0 {
		return fmt.Sprintf("open loop at %g req/s", rate)
	}
	return fmt.Sprintf("closed loop with %d in flight", concurrency)
}
