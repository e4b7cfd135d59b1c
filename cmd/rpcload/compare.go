package main

import (
	"github.com/rpcload/rpcload/cmd/internal/cli"

	"errors"
	"io"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/stats"
)

// compareCmd is "rpcload compare a.json b.json [...] [--html FILE]":
// result files side by side, with ratios to the first; --html also writes
// the HTML report of the files, overlaid.
func compareCmd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	htmlPath := fs.String("html", "", "also write an HTML report of the files, overlaid, to FILE (replaced atomically)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK, nil
		}
		return exitUsage, cli.UsageError{Err: err}
	}
	if fs.NArg() < 2 {
		return exitUsage, usagef("compare takes two or more result files (got %d)", fs.NArg())
	}
	if fs.Changed("html") && *htmlPath == "" {
		return exitUsage, usagef("--html needs a file name")
	}
	names, results, err := readResults(fs.Args())
	if err != nil {
		return exitUsage, err
	}
	if err := stats.WriteComparison(stdout, names, results); err != nil {
		return exitUsage, err
	}
	if *htmlPath != "" {
		if err := writeHTMLReport(*htmlPath, names, results); err != nil {
			return exitUsage, err
		}
	}
	return exitOK, nil
}
