package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// demo starts the embedded reference server on loopback and load-tests it:
// open loop over TCP at 5,000 req/s for 10 s, calling echo. Every run flag
// works here too, plus --transport and --fault to see what the checks catch.
func demo(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("rpcload", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	var f runFlags
	f.register(fs)
	var sf serveFlags
	fs.StringVar(&sf.faults, "fault", "", "make the embedded server inject faults (see rpcload serve --help)")
	fs.Float64Var(&sf.faultProb, "fault-prob", 0.01, "probability of a fault given without =PROB")
	fs.Uint64Var(&sf.faultSeed, "fault-seed", 1, "seed of the fault decisions")
	transportName := fs.String("transport", "tcp", "how the demo reaches the embedded server: tcp or http")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: rpcload [flags]\n\nWith no target, rpcload starts its embedded reference server on 127.0.0.1 and load-tests it.\n\nflags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK, nil
		}
		return exitUsage, cli.UsageError{Err: err}
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("unexpected argument %q; to load-test a server use: rpcload run TARGET --method NAME", fs.Arg(0))
	}
	if err := f.secret.Check(); err != nil {
		return exitUsage, err
	}
	cli.InstallSecrets(stdout, stderr, cli.HeaderSecrets(f.headers, f.secret.Names))
	if !fs.Changed("rate") && !fs.Changed("concurrency") {
		f.rate = 5000
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
	fmt.Fprintf(stderr, "rpcload demo: embedded reference server at %s; %s for %s (Ctrl-C stops early)\n", target, loadDesc(cfg.Rate, cfg.Concurrency), cfg.Duration)
	return execute(ctx, cfg, &f, stdout, stderr)
}

func loadDesc(rate float64, concurrency int) string {
	if rate > 0 {
		return fmt.Sprintf("open loop at %g req/s", rate)
	}
	return fmt.Sprintf("closed loop with %d in flight", concurrency)
}
