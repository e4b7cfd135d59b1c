package main

import (
	"io"

	"github.com/rpcload/rpcload/internal/stats"
)

var compareHelp = cmdHelp{
	usage: []string{"rpcload compare A.json B.json [MORE.json ...] [--html FILE]"},
	about: `Prints result files side by side, per method: answered/s, p50 to p99.9 and max
of corrected latency, error rate and violations, with each file's ratio to the
first (docs/compare.md). With --html, also writes the HTML report of the files,
every plot overlaid.`,
	examples: []string{
		"rpcload compare before.json after.json",
		"rpcload compare a.json b.json c.json --html compare.html",
	},
}

// compareCmd is "rpcload compare a.json b.json [...] [--html FILE]":
// result files side by side, with ratios to the first; --html also writes
// the HTML report of the files, overlaid.
func compareCmd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("compare", compareHelp, stdout, stderr)
	htmlPath := fs.String("html", "", "also write an HTML report of the files, overlaid, to FILE (replaced atomically)")
	if err := parseFlags(fs, args); err != nil {
		return helpExit(err)
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
