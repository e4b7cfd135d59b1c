package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/native"
)

// minimizeNative is rpcfuzz minimize on a native failure: a file of
// PKG/testdata/fuzz/FuzzXxx rather than a finding directory. Only
// --budget and --time apply: the target and its options are the fuzz
// test's own.
func minimizeNative(ctx context.Context, fs *pflag.FlagSet, file string, budget int, deadline time.Time, stdout io.Writer) (int, error) {
	if fs.ArgsLenAtDash() >= 0 {
		return cli.ExitUsage, cli.Usagef("a native failure runs against its fuzz test's own target: no -- COMMAND")
	}
	for _, name := range []string{"target", "profile", "timeout", "header", "grace"} {
		if fl := fs.Lookup(name); fl != nil && fl.Changed {
			return cli.ExitUsage, cli.Usagef("--%s does not apply to a native failure (%s): its fuzz test sets the target and options", name, file)
		}
	}
	start := time.Now()
	m, err := native.Minimize(ctx, native.MinimizeOptions{File: file, Shrink: shrink, Budget: budget, Deadline: deadline})
	switch {
	case errors.Is(err, native.ErrNotReproduced):
		fmt.Fprintf(stdout, "%s: NOT REPRODUCED: %v\n", file, err)
		return cli.ExitFindings, nil
	case err != nil && ctx.Err() != nil:
		return cli.ExitInterrupted, err
	case err != nil:
		return cli.ExitUsage, err
	}
	stopped := ""
	if !m.Complete {
		stopped = "; stopped by the budget or the time: run rpcfuzz minimize on the literal case to shrink it further"
	}
	fmt.Fprintf(stdout, "%s: %s, %s in %d bytes -> %s in %d bytes, in %d checks (%.1fs)%s\n",
		file, m.Rule, messages(len(m.Input.Frames)), caseBytes(m.Input), messages(len(m.Case.Frames)), caseBytes(m.Case), m.Checks, time.Since(start).Seconds(), stopped)
	fmt.Fprintf(stdout, "  literal case:    %s\n  regression test: %s (%s)\n", m.CaseFile, m.TestFile, m.TestName)
	if ctx.Err() != nil {
		return cli.ExitInterrupted, nil // the smallest case so far is written
	}
	return cli.ExitOK, nil
}

// shrink is the black-box minimizer, as native.Minimize takes it.
func shrink(ctx context.Context, in mutate.Case, check func(context.Context, mutate.Case) bool, budget int, deadline time.Time) (mutate.Case, int, bool) {
	out, st := fuzz.Shrink(ctx, in, check, budget, deadline)
	return out, st.Checks, st.Complete
}

// caseBytes is the size of a case's messages and wire bytes.
func caseBytes(c mutate.Case) int {
	n := len(c.Wire)
	for _, f := range c.Frames {
		n += len(f)
	}
	return n
}

func messages(n int) string {
	if n == 1 {
		return "1 message"
	}
	return fmt.Sprintf("%d messages", n)
}
