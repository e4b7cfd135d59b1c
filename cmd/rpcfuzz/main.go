// Command rpcfuzz fuzzes JSON-RPC 2.0 servers black-box: structure-aware
// mutations of seed envelopes sent over any transport rpcload speaks, every
// reply judged, each distinct failure minimized into a replayable finding.
//
//	rpcfuzz run TARGET --out DIR [flags]          fuzz a server
//	rpcfuzz run --out DIR [flags] -- COMMAND ...  fuzz a child process (stdio)
//	rpcfuzz replay FINDING_DIR                    send a finding again (3 times)
//	rpcfuzz minimize FINDING_DIR [--budget N]     shrink a finding's input further
//	rpcfuzz minimize PKG/testdata/fuzz/FuzzXxx/F  a native failure -> its smallest literal case and a regression test
//	rpcfuzz export-go OUT_DIR --findings DIR      findings -> Go fuzz corpus files
//	rpcfuzz import-go GO_CORPUS_DIR --out DIR     Go fuzz corpus files -> findings
//
// Exit codes: 0 no failure found (or, for replay, not reproduced); 1 a
// failure found that the baseline does not accept (replay: reproduced, even
// flakily); 2 usage or configuration error; 3 target unreachable; 130
// interrupted (the findings so far are written).
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/stats"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

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
	ctx, stop := cli.SignalContext(stderr, "rpcfuzz: interrupted; writing the findings so far (interrupt again to quit at once)")
	defer stop()
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return cli.ExitUsage
	}
	cmd, rest := args[0], args[1:]
	var code int
	var err error
	switch cmd {
	case "run":
		code, err = runCmd(ctx, rest, stdout, stderr)
	case "replay":
		code, err = replayCmd(ctx, rest, stdout, stderr)
	case "minimize":
		code, err = minimizeCmd(ctx, rest, stdout, stderr)
	case "export-go":
		code, err = exportCmd(rest, stdout, stderr)
	case "import-go":
		code, err = importCmd(rest, stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "rpcfuzz %s\n", version)
		return cli.ExitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, topUsage)
		return cli.ExitOK
	default:
		err = cli.Usagef("unknown command %q\n\n%s", cmd, topUsage)
	}
	if err != nil {
		fmt.Fprintf(stderr, "rpcfuzz: %v\n", err)
	}
	return cli.ExitCode(code, err)
}

const topUsage = `rpcfuzz: fuzz JSON-RPC 2.0 servers black-box and keep minimized, replayable findings

usage:
  rpcfuzz run TARGET --out DIR [flags]            fuzz TARGET (http(s)://, ws(s)://, tcp://, tcp+lsp://, unix://, unix+lsp://)
  rpcfuzz run --out DIR [flags] -- COMMAND [ARGS] fuzz a child process speaking JSON-RPC on its stdin and stdout
  rpcfuzz replay FINDING_DIR [--target T | -- COMMAND]   send a finding's input again: REPRODUCED, FLAKY or NOT REPRODUCED
  rpcfuzz minimize FINDING_DIR [--budget N]       shrink a finding's input further against its target
  rpcfuzz minimize PKG/testdata/fuzz/FuzzXxx/FILE shrink a go test -fuzz failure to a literal case and a regression test
  rpcfuzz export-go OUT_DIR --findings DIR        write findings as Go fuzz corpus files (OUT_DIR = PKG/testdata/fuzz/FuzzXxx)
  rpcfuzz import-go GO_CORPUS_DIR --out DIR       turn Go fuzz corpus files into findings to replay black-box
  rpcfuzz version

Exit codes: 0 nothing failed; 1 a failure found (replay: reproduced); 2 usage; 3 target unreachable;
130 interrupted. Run "rpcfuzz COMMAND --help" for a command's flags; docs/fuzzing.md is the guide.
`
