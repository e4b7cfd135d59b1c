// Command rpcload load-tests JSON-RPC 2.0 servers and checks every reply.
//
//	rpcload                         demo: load-test the embedded reference server
//	rpcload run TARGET [flags]      load-test a server
//	rpcload run -f scenario.yaml    run a scenario file
//	rpcload serve [flags]           run the embedded reference server
//	rpcload capacity TARGET --slo 'p99<20ms'   the highest rate under an SLO
//	rpcload scenario from-openrpc|from-mcp ...   write a scenario from what a server offers
//	rpcload compare a.json b.json   result files side by side
//	rpcload report a.json --html F  the report again, or an HTML page with plots
//	rpcload merge a.json b.json -o total.json   the shards of one run, merged exactly
//	rpcload merge --from host:port,...           the same, fetched from shards serving them (--serve-result)
//	rpcload check r.json --threshold EXPR       CI gates on a result file
//	rpcload kubernetes --shards N --image I -- run ...   the manifests of a run over N pods
//
// Exit codes: 0 ok; 1 the run completed but saw violations, leaks,
// timeouts or transport errors, or a threshold failed; 2 usage or
// configuration error; 3 the run could not run against the target
// (unreachable, or unable to serve it); 4 merge --from: a shard's result
// did not come, or --upload failed; 130 interrupted.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/stats"
)

// The exit codes and usage errors are cli's (one set for both commands);
// these short names serve the many call sites of this package.
const (
	exitOK          = cli.ExitOK
	exitFindings    = cli.ExitFindings
	exitUsage       = cli.ExitUsage
	exitUnreachable = cli.ExitUnreachable
	exitIncomplete  = cli.ExitIncomplete
	exitInterrupted = cli.ExitInterrupted
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// usagef is cli.Usagef, short for the many usage errors of this command.
func usagef(format string, a ...any) error { return cli.Usagef(format, a...) }

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

func realMain(args []string, stdout, stderr io.Writer) int {
	// Both streams scrub secrets once a command knows them (cli.InstallSecrets).
	out, errOut := stats.NewRedactor().Writer(stdout), stats.NewRedactor().Writer(stderr)
	defer errOut.Flush()
	defer out.Flush()
	defer stats.SetFileRedactor(nil)
	stdout, stderr = out, errOut
	ctx, stop := cli.SignalContext(stderr, "rpcload: interrupted; draining and writing results (interrupt again to quit at once)")
	defer stop()
	cmd, rest := "demo", args
	if len(args) > 0 {
		cmd, rest = args[0], args[1:]
	}
	var code int
	var err error
	switch cmd {
	case "demo":
		code, err = demo(ctx, rest, stdout, stderr)
	case "run":
		code, err = runCmd(ctx, rest, stdout, stderr)
	case "serve":
		code, err = serveCmd(ctx, rest, stdout, stderr)
	case "capacity":
		code, err = capacityCmd(ctx, rest, stdout, stderr)
	case "scenario":
		code, err = scenarioCmd(ctx, rest, stdout, stderr)
	case "compare":
		code, err = compareCmd(rest, stdout, stderr)
	case "merge":
		code, err = mergeCmd(ctx, rest, stdout, stderr)
	case "check":
		code, err = checkCmd(rest, stdout, stderr)
	case "report":
		code, err = reportCmd(rest, stdout, stderr)
	case "kubernetes":
		code, err = kubernetesCmd(rest, stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "rpcload %s\n", version)
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, topUsage)
		return exitOK
	default:
		if len(cmd) > 0 && cmd[0] == '-' {
			// Flags with no subcommand: the demo with those flags.
			code, err = demo(ctx, args, stdout, stderr)
		} else {
			err = usagef("unknown command %q\n\n%s", cmd, topUsage)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "rpcload: %v\n", err)
	}
	return cli.ExitCode(code, err)
}

const topUsage = `rpcload: load-test JSON-RPC 2.0 servers and check every reply

usage:
  rpcload                      load-test the embedded reference server for 10 s (a demo)
  rpcload run TARGET [flags]   load-test TARGET (http(s)://, ws(s)://, tcp://, unix://, or -- COMMAND)
  rpcload run -f FILE [flags]  run a scenario file (docs/scenarios.md)
  rpcload run --target A --target B (--rounds N | --diff) [flags]
                               compare servers under the same load, or their replies (docs/compare.md)
  rpcload capacity [TARGET] --slo EXPR [flags]
                               find the highest rate TARGET sustains under an SLO, such as 'p99<20ms' (docs/capacity.md)
  rpcload serve [flags]        run the embedded reference server
  rpcload scenario from-openrpc (FILE | --discover TARGET) | from-mcp (TARGET | -- COMMAND)
                               write a scenario from what a server offers
  rpcload compare A.json B.json [...]
                               result files side by side, with ratios to the first
  rpcload merge A.json B.json [...] -o TOTAL.json  the shards of one run (--shard i/n) as one result, exactly
  rpcload merge --from HOST:PORT,... [-o TOTAL.json] [--upload URL]
                               the same, fetched from the shards (run --serve-result), failing at once if one fails
  rpcload check RESULT.json --threshold EXPR [...] [--junit FILE]  CI gates on a result file (docs/thresholds.md)
  rpcload report A.json [...] [--html FILE]  the text report again, or an HTML page with plots
  rpcload kubernetes --shards N --image IMAGE [flags] -- run TARGET [flags]
                               Kubernetes manifests of one test over N pods, merged (deploy/kubernetes/)
  rpcload version

Run "rpcload COMMAND --help" for a command's flags and examples.
`
