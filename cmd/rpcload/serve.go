package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/testsrv"
)

type serveFlags struct {
	httpAddr    string
	tcpAddr     string
	tcpLSPAddr  string
	unixPath    string
	unixLSPPath string
	stdio       bool
	framing     string
	faults      string
	faultProb   float64
	faultSeed   uint64
	faultDelay  time.Duration
	stall       string
	maxFrame    string
}

func (f *serveFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.httpAddr, "http", "", "serve JSON-RPC over HTTP POST, and over WebSocket on /ws, on this address, e.g. 127.0.0.1:8080")
	fs.StringVar(&f.tcpAddr, "tcp", "", "serve newline-delimited JSON-RPC over TCP on this address, e.g. 127.0.0.1:9090")
	fs.StringVar(&f.tcpLSPAddr, "tcp-lsp", "", "serve Content-Length (LSP) framed JSON-RPC over TCP on this address")
	fs.StringVar(&f.unixPath, "unix", "", "serve newline-delimited JSON-RPC on a Unix socket at this path (removed on exit)")
	fs.StringVar(&f.unixLSPPath, "unix-lsp", "", "serve Content-Length (LSP) framed JSON-RPC on a Unix socket at this path")
	fs.BoolVar(&f.stdio, "stdio", false, "serve one connection on stdin and stdout instead of listening; stdout carries only replies, messages go to stderr; exits at EOF")
	fs.StringVar(&f.framing, "framing", "newline", "framing of --stdio: newline or content-length (LSP)")
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

// listenFlags names the listener flags that are set, for error messages.
func (f *serveFlags) listenFlags() []string {
	var set []string
	for _, l := range []struct{ name, val string }{
		{"--http", f.httpAddr}, {"--tcp", f.tcpAddr}, {"--tcp-lsp", f.tcpLSPAddr}, {"--unix", f.unixPath}, {"--unix-lsp", f.unixLSPPath},
	} {
		if l.val != "" {
			set = append(set, l.name)
		}
	}
	return set
}

// mode validates the choice between listeners and --stdio (which serves
// exactly one connection and owns stdout, so it excludes listeners) and
// returns the framing of --stdio.
func (f *serveFlags) mode(fs *pflag.FlagSet) (testsrv.Framing, error) {
	fr, err := testsrv.ParseFraming(f.framing)
	if err != nil {
		return 0, usagef("--framing must be newline or content-length (got %q)", f.framing)
	}
	listeners := f.listenFlags()
	switch {
	case f.stdio && len(listeners) > 0:
		return 0, usagef("--stdio serves stdin and stdout only; it cannot be combined with %s", strings.Join(listeners, ", "))
	case !f.stdio && fs.Changed("framing"):
		return 0, usagef("--framing applies to --stdio only; for sockets use --tcp-lsp or --unix-lsp (Content-Length) or --tcp and --unix (newline)")
	case !f.stdio && len(listeners) == 0:
		f.httpAddr, f.tcpAddr = "127.0.0.1:8080", "127.0.0.1:9090"
	}
	return fr, nil
}

const serveUsage = `usage: rpcload serve [--http ADDR] [--tcp ADDR] [--tcp-lsp ADDR] [--unix PATH] [--unix-lsp PATH] [flags]
       rpcload serve --stdio [--framing newline|content-length] [flags]

The embedded reference JSON-RPC 2.0 server. Methods: lookup_weather {city}, convert {value,factor},
get_time, echo, add [a,b], sleep {ms}, spin {us}, eth_blockNumber, eth_chainId.
With no address it listens on --http 127.0.0.1:8080 and --tcp 127.0.0.1:9090. --http serves
HTTP POST on every path and WebSocket on /ws. --stdio serves one connection on stdin and stdout
(for "rpcload run -- rpcload serve --stdio") and exits when stdin ends; it writes nothing but
replies to stdout.

flags:
%s`

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	return serveWith(ctx, args, os.Stdin, stdout, stderr)
}

// serveWith is serveCmd with stdin as a parameter, so tests can drive --stdio.
func serveWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	var f serveFlags
	f.register(fs)
	fs.Usage = func() { fmt.Fprintf(stderr, serveUsage, fs.FlagUsages()) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK, nil
		}
		return exitUsage, usageError{err}
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("serve takes no arguments (got %q)", fs.Args())
	}
	framing, err := f.mode(fs)
	if err != nil {
		return exitUsage, err
	}
	cfg, err := f.serverConfig()
	if err != nil {
		return exitUsage, err
	}
	srv, err := testsrv.New(cfg)
	if err != nil {
		return exitUsage, usageError{err}
	}
	if f.stdio {
		return serveStdio(ctx, srv, framing, stdin, stdout, stderr)
	}
	bound, err := srv.Listen(ctx, testsrv.Addrs{
		HTTP: f.httpAddr, TCP: f.tcpAddr, TCPLSP: f.tcpLSPAddr, Unix: f.unixPath, UnixLSP: f.unixLSPPath,
	})
	if err != nil {
		return exitUsage, err
	}
	for _, l := range []struct{ what, scheme, addr, path string }{
		{"HTTP", "http://", bound.HTTP, "/"},
		{"WebSocket", "ws://", bound.HTTP, "/ws"},
		{"TCP", "tcp://", bound.TCP, ""},
		{"TCP (Content-Length framing)", "tcp+lsp://", bound.TCPLSP, ""},
		{"a Unix socket", "unix://", absPath(bound.Unix), ""},
		{"a Unix socket (Content-Length framing)", "unix+lsp://", absPath(bound.UnixLSP), ""},
	} {
		if l.addr != "" {
			fmt.Fprintf(stdout, "serving JSON-RPC over %s on %s%s%s\n", l.what, l.scheme, l.addr, l.path)
		}
	}
	<-ctx.Done()
	srv.Close()
	fmt.Fprintf(stdout, "stopped after %d frames; faults injected: %v\n", srv.Requests(), srv.Injected())
	return exitOK, nil
}

// serveStdio serves one connection on stdin and stdout until stdin ends or
// ctx is done. Everything it says goes to stderr: stdout is the protocol's.
func serveStdio(ctx context.Context, srv *testsrv.Server, framing testsrv.Framing, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	// A reader that goes away should be a write error, not death by SIGPIPE.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)
	fmt.Fprintf(stderr, "rpcload serve: serving JSON-RPC on stdin and stdout (%s framing)\n", framing)
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(stdin, stdout, framing) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		srv.Close()
		err = <-done
	}
	srv.Close()
	fmt.Fprintf(stderr, "rpcload serve: stopped after %d frames; faults injected: %v\n", srv.Requests(), srv.Injected())
	if err != nil {
		return exitFindings, err
	}
	return exitOK, nil
}

// absPath makes a socket path absolute for its unix:// URL; "" stays "".
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
