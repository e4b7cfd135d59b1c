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

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/fuzztarget"
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

	profile        string
	mcpEra         string
	mcpResponse    string
	serverMessages bool
	serviceTime    time.Duration

	plantedBugs string

	leak       int
	leakThread bool
	cache      int
	cacheEntry string
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
	fs.DurationVar(&f.serviceTime, "service-time", 0, "serve as one worker taking this long per request (e.g. 500us): the server sustains exactly 1/service-time requests a second and queues past it, a known capacity")
	fs.StringVar(&f.stall, "stall", "", "a full stop FOR@AT, e.g. 2s@5s: no replies for 2 s starting 5 s after start")
	fs.StringVar(&f.maxFrame, "max-frame", "16MiB", "largest request frame or body accepted")
	fs.StringVar(&f.profile, "profile", "jsonrpc", "protocol of stream connections: jsonrpc, mcp (also Streamable HTTP on /mcp) or lsp (implies --framing content-length for --stdio)")
	fs.StringVar(&f.mcpEra, "mcp-era", "dual", "MCP revisions spoken: dual (decided per connection or session by what the client sends first), modern (2026-07-28) or legacy (2025-11-25 and older)")
	fs.StringVar(&f.mcpResponse, "mcp-response", "auto", "how /mcp answers requests: json, sse, or auto (sse for tools/call, json otherwise)")
	fs.BoolVar(&f.serverMessages, "server-messages", false, "MCP: send each session a notifications/message and, in the legacy era, a ping request the client must answer")
	fs.IntVar(&f.leak, "leak", 0, "for soak tests: every Nth request leaks, parking a goroutine for good on a 4 KiB stack it has filled")
	fs.BoolVar(&f.leakThread, "leak-thread", false, "with --leak: each leaked goroutine holds an OS thread too")
	fs.IntVar(&f.cache, "cache", 0, "for soak tests: keep --cache-entry bytes per request in a cache of N entries, the oldest evicted: memory that fills, then holds")
	fs.StringVar(&f.cacheEntry, "cache-entry", "1KiB", "with --cache: the bytes each request keeps")
	fs.StringVar(&f.plantedBugs, "planted-bugs", "", "serve a test server with these planted bugs instead (in its parser, countdown and MCP tools), to test fuzzers: all, or a comma list of "+
		strings.ReplaceAll(fuzztarget.AllBugs.String(), ",", ", ")+" (empty: none planted)")
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
	if cfg.MaxFrame, err = cli.ParseSize(f.maxFrame, cli.MaxReadSize); err != nil {
		return cfg, usagef("--max-frame: %v", err)
	}
	cfg.Profile = testsrv.Profile(f.profile)
	cfg.MCPEra = testsrv.MCPEra(f.mcpEra)
	cfg.MCPResponse = testsrv.MCPResponse(f.mcpResponse)
	cfg.ServerMessages = f.serverMessages
	if f.serviceTime < 0 {
		return cfg, usagef("--service-time must not be negative (got %s)", f.serviceTime)
	}
	cfg.ServiceTime = f.serviceTime
	return cfg, f.soakConfig(&cfg)
}

// soakConfig sets the soak modes: --leak, --cache, and the process's own
// gauges on GET /metrics of --http, always served.
func (f *serveFlags) soakConfig(cfg *testsrv.Config) error {
	cfg.Metrics = true
	switch {
	case f.leak < 0:
		return usagef("--leak must not be negative (got %d)", f.leak)
	case f.leakThread && f.leak == 0:
		return usagef("--leak-thread makes the goroutines of --leak hold threads: give --leak N too")
	case f.cache < 0:
		return usagef("--cache must not be negative (got %d)", f.cache)
	}
	cfg.Leak = testsrv.Leak{Every: f.leak, Thread: f.leakThread}
	if f.cache > 0 {
		n, err := cli.ParseSize(f.cacheEntry, 1<<30)
		if err != nil || n <= 0 {
			return usagef("--cache-entry: want a size such as 1KiB (got %q)", f.cacheEntry)
		}
		cfg.Cache = testsrv.Cache{Entries: f.cache, EntryBytes: n}
	}
	return nil
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
	if err := f.checkProfile(fs); err != nil {
		return 0, err
	}
	lsp := f.profile == string(testsrv.ProfileLSP)
	if lsp && !fs.Changed("framing") {
		fr = testsrv.FramingContentLength // LSP over stdio is Content-Length framed
	}
	switch {
	case f.stdio && len(listeners) > 0:
		return 0, usagef("--stdio serves stdin and stdout only; it cannot be combined with %s", strings.Join(listeners, ", "))
	case !f.stdio && fs.Changed("framing"):
		return 0, usagef("--framing applies to --stdio only; for sockets use --tcp-lsp or --unix-lsp (Content-Length) or --tcp and --unix (newline)")
	case !f.stdio && len(listeners) == 0 && lsp:
		f.tcpLSPAddr = "127.0.0.1:9090"
	case !f.stdio && len(listeners) == 0:
		f.httpAddr, f.tcpAddr = "127.0.0.1:8080", "127.0.0.1:9090"
	}
	return fr, nil
}

// checkProfile validates --profile and the flags that only apply to some
// profiles or transports.
func (f *serveFlags) checkProfile(fs *pflag.FlagSet) error {
	p, err := testsrv.ParseProfile(f.profile)
	if err != nil {
		return usagef("--profile must be jsonrpc, mcp or lsp (got %q)", f.profile)
	}
	f.profile = string(p)
	if _, err := testsrv.ParseMCPEra(f.mcpEra); err != nil {
		return usagef("--mcp-era must be dual, modern or legacy (got %q)", f.mcpEra)
	}
	if _, err := testsrv.ParseMCPResponse(f.mcpResponse); err != nil {
		return usagef("--mcp-response must be auto, json or sse (got %q)", f.mcpResponse)
	}
	if p != testsrv.ProfileMCP {
		for _, name := range []string{"mcp-era", "mcp-response", "server-messages"} {
			if fs.Changed(name) {
				return usagef("--%s applies to --profile mcp only (the profile is %s)", name, p)
			}
		}
	}
	switch {
	case p == testsrv.ProfileMCP && fs.Changed("mcp-response") && f.httpAddr == "":
		return usagef("--mcp-response applies to Streamable HTTP only; add --http ADDR (MCP is served on its /mcp path)")
	case p == testsrv.ProfileLSP && f.httpAddr != "":
		return usagef("--profile lsp has no HTTP transport; use --tcp-lsp, --unix-lsp or --stdio")
	case p != testsrv.ProfileJSONRPC && (f.faults != "" || f.stall != ""):
		return usagef("--fault and --stall work with --profile jsonrpc only (the profile is %s)", p)
	}
	return nil
}

var serveHelp = cmdHelp{
	usage: []string{
		"rpcload serve [--http ADDR] [--tcp ADDR] [--tcp-lsp ADDR] [--unix PATH] [--unix-lsp PATH] [flags]",
		"rpcload serve --stdio [--framing newline|content-length] [flags]",
		"rpcload serve --profile mcp|lsp [...] [flags]",
	},
	about: `The embedded reference JSON-RPC 2.0 server. Methods: lookup_weather {city}, convert {value,factor},
get_time, echo, add [a,b], sleep {ms}, spin {us}, eth_blockNumber, eth_chainId.
With no address it listens on --http 127.0.0.1:8080 and --tcp 127.0.0.1:9090. --http serves
HTTP POST on every path, WebSocket on /ws, and the process's own gauges for Prometheus on GET
/metrics (go_goroutines, process_resident_memory_bytes, ...). For soak tests, --leak N leaks a
goroutine on a 4 KiB stack every Nth request and --cache N fills a bounded cache, then holds. --stdio serves one connection on stdin and stdout
(for "rpcload run -- rpcload serve --stdio") and exits when stdin ends; it writes nothing but
replies to stdout.

--profile mcp makes stream connections (TCP, Unix sockets, WebSocket, stdio) speak MCP, and --http
serve MCP Streamable HTTP on /mcp (the other paths stay plain JSON-RPC); tools: echo, add {a,b},
sleep {ms}. --profile lsp makes them speak LSP 3.17 (initialize, documentSymbol, hover, definition,
sleep {ms}, shutdown/exit); with no address it listens on --tcp-lsp 127.0.0.1:9090.

--planted-bugs LIST serves a JSON-RPC server with planted bugs instead (echo, add [a,b], countdown
{n}, rpc.discover; MCP's initialize, ping, server/discover, tools/list and tools/call of the tools
search and sum), on --http (POST, any path), --tcp and --stdio: the known answers fuzzers are tested
against. A crash drops the HTTP or TCP connection; over --stdio it ends the process with status 2.`,
	examples: []string{
		"rpcload serve --http 127.0.0.1:8080 --tcp 127.0.0.1:9090",
		"rpcload serve --tcp 127.0.0.1:9090 --fault duplicate=0.01   # answer 1% of requests twice",
		"rpcload run --method echo -- rpcload serve --stdio          # as a child process",
		"rpcload serve --profile mcp --http 127.0.0.1:8080           # MCP Streamable HTTP on /mcp",
		"rpcload serve --http 127.0.0.1:8080 --leak 10               # leak a goroutine every 10th request",
	},
}

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	return serveWith(ctx, args, os.Stdin, stdout, stderr)
}

// serveWith is serveCmd with stdin as a parameter, so tests can drive --stdio.
func serveWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("serve", serveHelp, stdout, stderr)
	var f serveFlags
	f.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return helpExit(err)
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("serve takes no arguments (got %q)", fs.Args())
	}
	framing, err := f.mode(fs)
	if err != nil {
		return exitUsage, err
	}
	if fs.Changed("planted-bugs") {
		return servePlanted(ctx, fs, &f, framing, stdin, stdout, stderr)
	}
	cfg, err := f.serverConfig()
	if err != nil {
		return exitUsage, err
	}
	srv, err := testsrv.New(cfg)
	if err != nil {
		return exitUsage, cli.UsageError{Err: err}
	}
	if f.stdio {
		return serveStdio(ctx, srv, cfg.Profile, framing, stdin, stdout, stderr)
	}
	bound, err := srv.Listen(ctx, testsrv.Addrs{
		HTTP: f.httpAddr, TCP: f.tcpAddr, TCPLSP: f.tcpLSPAddr, Unix: f.unixPath, UnixLSP: f.unixLSPPath,
	})
	if err != nil {
		return exitUsage, err
	}
	proto := protoName(cfg.Profile)
	for _, l := range []struct{ proto, what, scheme, addr, path string }{
		{"JSON-RPC", "HTTP", "http://", bound.HTTP, "/"},
		{proto, "WebSocket", "ws://", bound.HTTP, "/ws"},
		{proto, "TCP", "tcp://", bound.TCP, ""},
		{proto, "TCP (Content-Length framing)", "tcp+lsp://", bound.TCPLSP, ""},
		{proto, "a Unix socket", "unix://", absPath(bound.Unix), ""},
		{proto, "a Unix socket (Content-Length framing)", "unix+lsp://", absPath(bound.UnixLSP), ""},
	} {
		if l.addr != "" {
			fmt.Fprintf(stdout, "serving %s over %s on %s%s%s\n", l.proto, l.what, l.scheme, l.addr, l.path)
		}
	}
	if cfg.Profile == testsrv.ProfileMCP && bound.HTTP != "" {
		fmt.Fprintf(stdout, "serving MCP over Streamable HTTP on http://%s%s\n", bound.HTTP, testsrv.MCPPath)
	}
	if bound.HTTP != "" {
		fmt.Fprintf(stdout, "its own gauges, for Prometheus (GET): http://%s%s\n", bound.HTTP, testsrv.MetricsPath)
	}
	<-ctx.Done()
	srv.Close()
	fmt.Fprintf(stdout, "stopped after %d frames; faults injected: %v\n", srv.Requests(), srv.Injected())
	printProtoStats(stdout, srv, cfg.Profile)
	return exitOK, nil
}

// protoName names the protocol of stream connections in messages.
func protoName(p testsrv.Profile) string {
	switch p {
	case testsrv.ProfileMCP:
		return "MCP"
	case testsrv.ProfileLSP:
		return "LSP"
	}
	return "JSON-RPC"
}

// printProtoStats prints the counters of the MCP or LSP mode.
func printProtoStats(w io.Writer, srv *testsrv.Server, p testsrv.Profile) {
	switch p {
	case testsrv.ProfileMCP:
		st := srv.MCPStats()
		fmt.Fprintf(w, "MCP: requests %v, notifications %v, errors %v, sessions %d, cancelled %d (%d in flight), server requests answered %d of %d\n",
			st.Requests, st.Notifications, st.Errors, st.Sessions, st.Cancelled, st.CancelledInFlight, st.ServerRequestAnswers, st.ServerRequests)
	case testsrv.ProfileLSP:
		st := srv.LSPStats()
		fmt.Fprintf(w, "LSP: requests %v, notifications %v, errors %v, cancel requests %d (%d in flight), server requests answered %v of %d\n",
			st.Requests, st.Notifications, st.Errors, st.CancelRequests, st.CancelledInFlight, st.ServerRequestAnswers, st.ServerRequests)
	}
}

// serveStdio serves one connection on stdin and stdout until stdin ends or
// ctx is done. Everything it says goes to stderr: stdout is the protocol's.
func serveStdio(ctx context.Context, srv *testsrv.Server, profile testsrv.Profile, framing testsrv.Framing, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	// A reader that goes away should be a write error, not death by SIGPIPE.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)
	fmt.Fprintf(stderr, "rpcload serve: serving %s on stdin and stdout (%s framing)\n", protoName(profile), framing)
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
	printProtoStats(stderr, srv, profile)
	if err != nil {
		return exitFindings, err
	}
	if profile == testsrv.ProfileLSP && srv.LSPStats().ExitsWithoutShutdown > 0 {
		// LSP: exit without a shutdown request first ends the process with 1.
		fmt.Fprintln(stderr, "rpcload serve: exit came without shutdown; exiting with status 1")
		return exitFindings, nil
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

// servePlanted serves fuzztarget, the server with planted parser bugs, in
// place of the reference server: on --http and --tcp, or on stdin and
// stdout, where a planted crash ends the process with a panic's message and
// status.
func servePlanted(ctx context.Context, fs *pflag.FlagSet, f *serveFlags, framing testsrv.Framing, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	const exitPanic = 2 // what an unrecovered Go panic exits with
	bugs, err := fuzztarget.ParseBugs(f.plantedBugs)
	if err != nil {
		return exitUsage, usagef("--planted-bugs: %v", err)
	}
	for _, name := range []string{"tcp-lsp", "unix", "unix-lsp", "fault", "fault-prob", "fault-seed", "fault-delay",
		"stall", "max-frame", "profile", "mcp-era", "mcp-response", "server-messages"} {
		if fs.Changed(name) {
			return exitUsage, usagef("--%s cannot be combined with --planted-bugs (it serves --http, --tcp or --stdio only)", name)
		}
	}
	srv, planted := fuzztarget.New(bugs), bugs.String()
	if planted == "" {
		planted = "none"
	}
	if f.stdio {
		sigpipe := make(chan os.Signal, 1) // a reader that goes away is a write error, not death by SIGPIPE
		signal.Notify(sigpipe, syscall.SIGPIPE)
		defer signal.Stop(sigpipe)
		fmt.Fprintf(stderr, "rpcload serve: serving JSON-RPC with planted bugs %s on stdin and stdout (%s framing)\n", planted, framing)
		serve := srv.ServeStream
		if framing == testsrv.FramingContentLength {
			serve = srv.ServeStreamContentLength
		}
		err := serve(ctx, stdin, stdout)
		if c, ok := stdout.(io.Closer); ok {
			_ = c.Close() // the peer sees EOF
		}
		var crash fuzztarget.Crash
		if errors.As(err, &crash) {
			fmt.Fprintf(stderr, "panic: %v\n", crash)
			return exitPanic, nil
		}
		fmt.Fprintf(stderr, "rpcload serve: stopped after %d frames\n", srv.Frames())
		if err != nil {
			return exitFindings, err
		}
		return exitOK, nil
	}
	l, err := srv.Listen(ctx, fuzztarget.Addrs{HTTP: f.httpAddr, TCP: f.tcpAddr}, stderr)
	if err != nil {
		return exitUsage, err
	}
	if l.HTTP != "" {
		fmt.Fprintf(stdout, "serving JSON-RPC with planted bugs %s over HTTP on http://%s/\n", planted, l.HTTP)
	}
	if l.TCP != "" {
		fmt.Fprintf(stdout, "serving JSON-RPC with planted bugs %s over TCP on tcp://%s\n", planted, l.TCP)
	}
	<-ctx.Done()
	l.Wait()
	fmt.Fprintf(stdout, "stopped after %d frames\n", srv.Frames())
	return exitOK, nil
}
