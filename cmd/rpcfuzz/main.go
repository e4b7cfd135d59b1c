// Command rpcfuzz fuzzes JSON-RPC 2.0 servers black-box: structure-aware
// mutations of seed envelopes sent over any transport rpcload speaks, every
// reply judged, each distinct failure minimized into a replayable finding.
//
//	rpcfuzz run TARGET --out DIR [flags]          fuzz a server
//	rpcfuzz run --out DIR [flags] -- COMMAND ...  fuzz a child process (stdio)
//	rpcfuzz replay FINDING_DIR                    send a finding again (3 times)
//	rpcfuzz minimize FINDING_DIR [--budget N]     shrink a finding's input further
//	rpcfuzz export-go OUT_DIR --findings DIR      findings -> Go fuzz corpus files
//	rpcfuzz import-go GO_CORPUS_DIR --out DIR     Go fuzz corpus files -> findings
//
// Exit codes: 0 no failure found (or, for replay, not reproduced); 1 a
// failure found that the baseline does not accept (replay: reproduced, even
// flakily); 2 usage or configuration error; 3 target unreachable; 130
// interrupted (the findings so far are written).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rpcload/rpcload/internal/stats"
)

// Exit codes; docs/fuzzing.md documents them.
const (
	exitOK          = 0
	exitFindings    = 1
	exitUsage       = 2
	exitUnreachable = 3
	exitInterrupted = 130
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// usageError marks errors that are the user's to fix (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

func realMain(args []string, stdout, stderr io.Writer) int {
	// Both streams scrub secrets once a command knows them (installSecrets).
	out, errOut := stats.NewRedactor().Writer(stdout), stats.NewRedactor().Writer(stderr)
	defer errOut.Flush()
	defer out.Flush()
	defer stats.SetFileRedactor(nil)
	stdout, stderr = out, errOut
	ctx, stop := signalContext(stderr)
	defer stop()
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return exitUsage
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
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, topUsage)
		return exitOK
	default:
		err = usagef("unknown command %q\n\n%s", cmd, topUsage)
	}
	if err != nil {
		fmt.Fprintf(stderr, "rpcfuzz: %v\n", err)
		var ue usageError
		switch {
		case errors.As(err, &ue):
			return exitUsage
		case code != 0:
			return code
		default:
			return exitUsage
		}
	}
	return code
}

const topUsage = `rpcfuzz: fuzz JSON-RPC 2.0 servers black-box and keep minimized, replayable findings

usage:
  rpcfuzz run TARGET --out DIR [flags]            fuzz TARGET (http(s)://, ws(s)://, tcp://, tcp+lsp://, unix://, unix+lsp://)
  rpcfuzz run --out DIR [flags] -- COMMAND [ARGS] fuzz a child process speaking JSON-RPC on its stdin and stdout
  rpcfuzz replay FINDING_DIR [--target T | -- COMMAND]   send a finding's input again: REPRODUCED, FLAKY or NOT REPRODUCED
  rpcfuzz minimize FINDING_DIR [--budget N]       shrink a finding's input further against its target
  rpcfuzz export-go OUT_DIR --findings DIR        write findings as Go fuzz corpus files (OUT_DIR = PKG/testdata/fuzz/FuzzXxx)
  rpcfuzz import-go GO_CORPUS_DIR --out DIR       turn Go fuzz corpus files into findings to replay black-box
  rpcfuzz version

Exit codes: 0 nothing failed; 1 a failure found (replay: reproduced); 2 usage; 3 target unreachable;
130 interrupted. Run "rpcfuzz COMMAND --help" for a command's flags; docs/fuzzing.md is the guide.
`

// signalContext is cancelled by the first SIGINT or SIGTERM, so a run stops
// and still writes its findings and summary; a second one exits at once
// (every file is written atomically, so none is left half-written).
func signalContext(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	done := make(chan struct{})
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-ch:
			}
			if n > 1 {
				// Files being written are removed rather than left half
				// done; complete ones stay.
				stats.AbortWrites()
				os.Exit(exitInterrupted)
			}
			fmt.Fprintln(stderr, "rpcfuzz: interrupted; writing the findings so far (interrupt again to quit at once)")
			cancel()
		}
	}()
	return ctx, func() { signal.Stop(ch); close(done); cancel() }
}
