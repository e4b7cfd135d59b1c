package main

import (
	"errors"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/stats"
)

// compareCmd is "rpcload compare a.json b.json [...]": result files side by
// side, with ratios to the first.
func compareCmd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK, nil
		}
		return exitUsage, usageError{err}
	}
	if fs.NArg() < 2 {
		return exitUsage, usagef("compare takes two or more result files (got %d)", fs.NArg())
	}
	var results []*stats.Result
	var names []string
	for _, path := range fs.Args() {
		r, err := stats.ReadJSONFile(path)
		if err != nil {
			return exitUsage, usagef("%s: %v", path, err)
		}
		results = append(results, r)
		names = append(names, filepath.Base(path))
	}
	if err := stats.WriteComparison(stdout, names, results); err != nil {
		return exitUsage, err
	}
	return exitOK, nil
}
