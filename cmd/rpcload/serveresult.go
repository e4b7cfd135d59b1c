package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/engine"
	"github.com/rpcload/rpcload/internal/shardhttp"
	"github.com/rpcload/rpcload/internal/stats"
)

// defaultServeResultTimeout is how long a finished shard waits for a
// merger to fetch its result.
const defaultServeResultTimeout = 10 * time.Minute

// serveResultFlags are --serve-result and its companions: a shard serves
// its state and its result over HTTP (internal/shardhttp) for rpcload
// merge --from, so the shards need no shared volume.
type serveResultFlags struct {
	addr    string
	timeout time.Duration
	anyHost bool

	srv  *shardhttp.Server // while serving
	data []byte            // the result's bytes, once the run has one
	// besides waits for what runs beside the wait for a merger (the
	// metrics endpoint's --metrics-linger); nil: nothing.
	besides func()
}

// alongside starts, when a shard serves its result, what start begins
// (the metrics' linger) to run beside its wait for a merger, which finish
// then waits for too, and reports whether it did; else the caller runs it
// itself.
func (s *serveResultFlags) alongside(start func() (wait func())) bool {
	if s.srv == nil {
		return false
	}
	s.besides = start()
	return true
}

func (s *serveResultFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.addr, "serve-result", "", "serve the run's state and, once done, its result on http://`ADDR` (host:port) for rpcload merge --from, from before the run starts until a merger has fetched it (or --serve-result-timeout)")
	fs.DurationVar(&s.timeout, "serve-result-timeout", defaultServeResultTimeout, "with --serve-result: after the run, wait at most this long for a merger to fetch the result (or learn of the failure), then exit")
	fs.BoolVar(&s.anyHost, "serve-result-any-host", false, "let --serve-result listen on a non-loopback address (a pod's IP, 0.0.0.0)")
}

// start listens, when --serve-result asks for it, before anything else of
// the run happens, so that what fails from here on is served as a failure.
func (s *serveResultFlags) start(fs *pflag.FlagSet, f *runFlags, stderr io.Writer) error {
	if s.addr == "" {
		for _, name := range []string{"serve-result-timeout", "serve-result-any-host"} {
			if fs.Changed(name) {
				return usagef("--%s goes with --serve-result ADDR", name)
			}
		}
		return nil
	}
	switch {
	case s.timeout <= 0:
		return usagef("--serve-result-timeout must be positive (got %s)", s.timeout)
	case len(f.targets.urls) > 0 || f.targets.changed(fs):
		return usagef("--serve-result serves one run's result for a merge of shards; not with --target, --rounds or --diff")
	case f.scen.dryRun > 0:
		return usagef("--serve-result serves a run's result; --dry-run sends nothing and has none")
	}
	shard := ""
	if _, _, err := shardhttp.ParseShard(f.shard); err == nil {
		shard = f.shard
	}
	srv, err := shardhttp.Listen(s.addr, s.anyHost, shard)
	if err != nil {
		return usagef("--serve-result: %v", err)
	}
	s.srv = srv
	fmt.Fprintf(stderr, "rpcload: serving the run's state and result on http://%s%s\n", srv.Addr(), shardhttp.StatusPath)
	return nil
}

// running tells the server which shard the run is, once its config is
// built (--shard-index-env gives it only then).
func (s *serveResultFlags) running(cfg engine.Config) {
	if s.srv != nil && cfg.Shard.Sharded() {
		s.srv.SetShard(fmt.Sprintf("%d/%d", cfg.Shard.Index, cfg.Shard.Count))
	}
}

// keep takes the result as the result file has it, byte for byte.
func (s *serveResultFlags) keep(res *stats.Result) error {
	if s.srv == nil {
		return nil
	}
	var buf bytes.Buffer
	if err := stats.WriteJSON(&buf, res); err != nil {
		return err
	}
	s.data = buf.Bytes()
	return nil
}

// finish serves how the run ended, code and err as the command would
// exit: done with its result (exit 0 or 1), or failed. It prints err at
// once, so the log says why before the wait, and waits for a merger to
// acknowledge, at most --serve-result-timeout; an interrupted run does not
// wait. It returns the command's exit, its error already printed.
func (s *serveResultFlags) finish(ctx context.Context, code int, err error, stderr io.Writer) (int, error) {
	if s.srv == nil {
		return code, err
	}
	defer s.srv.Close()
	if s.besides != nil {
		defer s.besides()
	}
	code = cli.ExitCode(code, err)
	if s.data != nil && (code == exitOK || code == exitFindings) {
		s.srv.Done(s.data, code)
	} else {
		msg := fmt.Sprintf("exited %d without a result", code)
		switch {
		case err != nil:
			msg = stats.FileRedactor().String(err.Error())
			fmt.Fprintf(stderr, "rpcload: %v\n", err)
			err = nil
		case code == exitInterrupted:
			msg = "interrupted"
		}
		s.srv.Fail(code, msg)
	}
	if ctx.Err() != nil {
		return code, err // interrupted: no wait (the merger sees the shard go)
	}
	what, state := "fetch the result", "result"
	if code != exitOK && code != exitFindings {
		what, state = "learn of the failure", "failure"
	}
	fmt.Fprintf(stderr, "rpcload: waiting up to %s for a merger to %s from http://%s (--serve-result)\n", s.timeout, what, s.srv.Addr())
	switch by := s.srv.Wait(ctx, s.timeout); {
	case by != "":
		fmt.Fprintf(stderr, "rpcload: %s acknowledged the %s\n", by, state)
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "rpcload: interrupted while waiting for a merger; exiting\n")
	default:
		fmt.Fprintf(stderr, "rpcload: no merger acknowledged the %s within %s; exiting\n", state, s.timeout)
	}
	return code, err
}
