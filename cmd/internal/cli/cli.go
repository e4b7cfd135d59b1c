// Package cli holds what the rpcload and rpcfuzz commands share: their exit
// codes, usage errors, the signal context of a run, and the parsing of the
// flags both take (sizes, --header, the TLS flags and --secret-header).
// It lives under cmd/ because flags and exit codes belong to commands only.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
)

// Exit codes of both commands; README.md and docs/fuzzing.md document them.
const (
	ExitOK          = 0
	ExitFindings    = 1
	ExitUsage       = 2
	ExitUnreachable = 3
	// ExitIncomplete is rpcload merge --from's: a shard's result did not
	// come (the shard failed, stopped answering or was never reached), or
	// the merged result could not be uploaded.
	ExitIncomplete  = 4
	ExitInterrupted = 130
)

// UsageError marks an error that is the user's to fix (exit 2).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef formats a UsageError.
func Usagef(format string, a ...any) error { return UsageError{fmt.Errorf(format, a...)} }

// ExitCode is the exit code of a command that returned code and err: a
// usage error is 2 whatever code says, and an error with no code of its
// own is a configuration error (2) too.
func ExitCode(code int, err error) int {
	if err == nil {
		return code
	}
	var ue UsageError
	if errors.As(err, &ue) || code == ExitOK {
		return ExitUsage
	}
	return code
}

// SignalContext is cancelled by the first SIGINT or SIGTERM, which prints
// notice to stderr, so a run stops and still writes what it has; a second
// one exits at once with ExitInterrupted (every file is written
// atomically, and stats.AbortWrites removes those being written, so none
// is left half-written), and the processes the run started (stdio
// children, a server command) are killed with it. stop releases the
// signals.
func SignalContext(stderr io.Writer, notice string) (ctx context.Context, stop func()) {
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
				stats.AbortWrites()
				transport.KillChildren()
				os.Exit(ExitInterrupted)
			}
			fmt.Fprintln(stderr, notice)
			cancel()
		}
	}()
	return ctx, func() { signal.Stop(ch); close(done); cancel() }
}
