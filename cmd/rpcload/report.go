package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/rpcload/rpcload/internal/report"
	"github.com/rpcload/rpcload/internal/stats"
)

var reportHelp = cmdHelp{
	usage: []string{"rpcload report RESULT.json [MORE.json ...] [--html FILE]"},
	about: `Renders result files. With --html, writes one self-contained HTML page (no
script, nothing fetched) with the tables and plots of every file: the
latency percentile spectrum, throughput, in-flight, latency, errors and
memory over time; several files are overlaid and compared, with ratios to
the first. Without --html, prints each file's text report (docs/report.md).`,
	examples: []string{
		"rpcload report run.json                        # the text report again",
		"rpcload report run.json --html run.html        # one self-contained page with plots",
		"rpcload report before.json after.json --html cmp.html",
	},
}

// reportCmd is "rpcload report RESULT.json [...] [--html FILE]".
func reportCmd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("report", reportHelp, stdout, stderr)
	htmlPath := fs.String("html", "", "write the HTML report to FILE (replaced atomically)")
	if err := parseFlags(fs, args); err != nil {
		return helpExit(err)
	}
	if fs.NArg() == 0 {
		return exitUsage, usagef("report takes one or more result files (rpcload report RESULT.json [...] [--html FILE])")
	}
	if fs.Changed("html") && *htmlPath == "" {
		return exitUsage, usagef("--html needs a file name")
	}
	names, results, err := readResults(fs.Args())
	if err != nil {
		return exitUsage, err
	}
	if *htmlPath != "" {
		if err := writeHTMLReport(*htmlPath, names, results); err != nil {
			return exitUsage, err
		}
		return exitOK, nil
	}
	for i, r := range results {
		if len(results) > 1 {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "== %s\n", fs.Arg(i))
		}
		if err := stats.WriteText(stdout, r); err != nil {
			return exitUsage, fmt.Errorf("writing the report: %w", err)
		}
	}
	return exitOK, nil
}

// readResults reads result files and names each by its base name, or by
// the path as given where two base names are the same (run1/result.json
// and run2/result.json), so every column and line has its own label.
func readResults(paths []string) ([]string, []*stats.Result, error) {
	var names []string
	var results []*stats.Result
	bases := map[string]int{}
	for _, path := range paths {
		r, err := stats.ReadJSONFile(path)
		if err != nil {
			return nil, nil, usagef("%s: %v", path, err)
		}
		names = append(names, filepath.Base(path))
		bases[filepath.Base(path)]++
		results = append(results, r)
	}
	for i, n := range names {
		if bases[n] > 1 {
			names[i] = paths[i]
		}
	}
	return names, results, nil
}

// writeHTMLReport renders results (labelled by names, in order) as one HTML
// page and writes it to path atomically, so a reader never sees half a page.
func writeHTMLReport(path string, names []string, results []*stats.Result) error {
	if len(names) != len(results) {
		return fmt.Errorf("html report: %d names for %d results", len(names), len(results))
	}
	in := make([]report.Input, len(results))
	for i, r := range results {
		in[i] = report.Input{Name: names[i], Result: r}
	}
	var b bytes.Buffer
	if err := report.WriteHTML(&b, in); err != nil {
		return fmt.Errorf("html report %s: %w", path, err)
	}
	if err := stats.WriteFileAtomic(path, b.Bytes()); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}
