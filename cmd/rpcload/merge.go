package main

import (
	"github.com/rpcload/rpcload/cmd/internal/cli"

	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rpcload/rpcload/internal/stats"
)

var mergeHelp = cmdHelp{
	usage: []string{"rpcload merge A.json B.json [...] -o TOTAL.json"},
	about: `Merges result files of runs that loaded at the same time, typically the shards
of one run on several machines (rpcload run --shard i/n --start-at T), into the
result one generator sending all of their load would have written: counts add,
latency histograms merge exactly (percentiles are never averaged), and the time
series is aligned by the wall clock. Writes the merged result to -o and prints
its report (-o - writes the result to stdout and the report to stderr). Only the shards of one run are merged: results of runs without
--shard, shards whose target or settings differ (anything but the shard and
the seed), shards of different counts (1/3 with 1/4) and the same shard
twice are refused, the error naming what differs. --force merges results
that are not shards of one run all the same (the merged result says so in
its warnings). Check thresholds on the merged file with "rpcload check".

Exit codes: 0 merged; 1 merged, and the whole run saw violations, leaks,
timeouts or transport errors (as "rpcload run" decides); 2 usage, or files
that cannot be read or merged.`,
	examples: []string{
		"rpcload merge part-1.json part-2.json part-3.json -o total.json",
		"rpcload check total.json --threshold 'p99<20ms'   # then gate the whole run",
	},
}

// mergeCmd is "rpcload merge A.json B.json ... -o TOTAL.json": the results
// of the shards of one run as one result.
func mergeCmd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("merge", mergeHelp, stdout, stderr)
	output := fs.StringP("output", "o", "", "write the merged result to this file (atomically), or to stdout with - (the report then goes to stderr); required")
	force := fs.Bool("force", false, "merge results that are not the shards of one run (runs without --shard, or with other targets or settings)")
	if err := parseFlags(fs, args); err != nil {
		return helpExit(err)
	}
	if fs.NArg() == 0 {
		return exitUsage, usagef("merge takes one or more result files (got none)")
	}
	if *output == "" {
		return exitUsage, usagef("merge needs -o FILE: where to write the merged result")
	}
	paths := fs.Args()
	results := make([]*stats.Result, len(paths))
	for i, path := range paths {
		if *output != stdoutPath && sameFile(path, *output) {
			return exitUsage, usagef("-o %s is one of the files to merge; write the merged result elsewhere", *output)
		}
		r, err := stats.ReadJSONFile(path)
		if err != nil {
			return exitUsage, cli.UsageError{Err: err}
		}
		results[i] = r
	}
	notOneRun := stats.OneRun(results, paths)
	if notOneRun != nil && !*force {
		return exitUsage, cli.UsageError{Err: fmt.Errorf("%w (--force merges them all the same)", notOneRun)}
	}
	merged, err := stats.Merge(results, paths)
	if err != nil {
		return exitUsage, cli.UsageError{Err: err}
	}
	if notOneRun != nil {
		merged.Warnings = append(merged.Warnings, "merged with --force: "+strings.TrimPrefix(notOneRun.Error(), "stats: "))
	}
	if err := writeResultTo(*output, merged, stdout); err != nil {
		return exitUsage, err
	}
	if err := writeMergeReport(reportTo(*output, stdout, stderr), merged, *output); err != nil {
		return exitUsage, fmt.Errorf("writing the report: %w", err)
	}
	if findings(merged) {
		return exitFindings, nil
	}
	return exitOK, nil
}

// writeMergeReport says what was merged, then prints the merged report.
func writeMergeReport(w io.Writer, merged *stats.Result, output string) error {
	var parts []string
	for _, p := range merged.MergedFrom {
		name := p.Path
		if p.Shard != nil {
			name += fmt.Sprintf(" (shard %d/%d)", p.Shard.Index, p.Shard.Count)
		}
		parts = append(parts, name)
	}
	if output == stdoutPath {
		output = "stdout"
	}
	if _, err := fmt.Fprintf(w, "merged %d results into %s: %s\n\n", len(parts), output, strings.Join(parts, ", ")); err != nil {
		return err
	}
	return stats.WriteText(w, merged)
}

// sameFile reports whether two paths name one file: the same file if both
// exist, else the same absolute path.
func sameFile(a, b string) bool {
	if ia, err := os.Stat(a); err == nil {
		if ib, err := os.Stat(b); err == nil {
			return os.SameFile(ia, ib)
		}
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
