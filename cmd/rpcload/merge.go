package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/shardhttp"
	"github.com/rpcload/rpcload/internal/stats"
)

var mergeHelp = cmdHelp{
	usage: []string{
		"rpcload merge A.json B.json [...] -o TOTAL.json",
		"rpcload merge --from HOST:PORT[,HOST:PORT...] [-o TOTAL.json] [--upload URL]",
	},
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
its warnings). A merge that lacks shards of the run is refused unless
--allow-missing, which marks the result partial. Check thresholds on the
merged file with "rpcload check".

--from fetches the results over HTTP from shards that serve them
(rpcload run --serve-result ADDR), with no shared volume: it polls every
shard until each is done and fetches its result, and fails at once when a
shard fails (naming it, with its exit code and error), stops answering for
2 s after it had answered (killed), or has not answered within --wait. Once
the merged result is written (and uploaded), each shard is acknowledged and
exits.

Exit codes: 0 merged; 1 merged, and the whole run saw violations, leaks,
timeouts or transport errors (as "rpcload run" decides); 2 usage, or files
that cannot be read or merged; 4 (--from) a shard's result did not come, or
--upload failed; 130 interrupted.`,
	examples: []string{
		"rpcload merge part-1.json part-2.json part-3.json -o total.json",
		"rpcload merge --from 10.0.0.11:9100,10.0.0.12:9100,10.0.0.13:9100 -o total.json",
		"rpcload merge --from rpcload-0.rpcload:9100 --from rpcload-1.rpcload:9100 --upload https://bucket.example.com/total.json?SIGNATURE",
		"rpcload check total.json --threshold 'p99<20ms'   # then gate the whole run",
	},
}

// uploadTimeout bounds --upload's PUT.
const uploadTimeout = 2 * time.Minute

// mergeFlags are the flags of rpcload merge.
type mergeFlags struct {
	output       string
	force        bool
	allowMissing bool
	from         []string
	wait         time.Duration
	upload       string
}

// mergeCmd is "rpcload merge A.json B.json ... -o TOTAL.json" (or --from
// the shards' addresses): the results of the shards of one run as one
// result.
func mergeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("merge", mergeHelp, stdout, stderr)
	var m mergeFlags
	fs.StringVarP(&m.output, "output", "o", "", "write the merged result to this file (atomically), or to stdout with - (the report then goes to stderr); required unless --from")
	fs.BoolVar(&m.force, "force", false, "merge results that are not the shards of one run (runs without --shard, or with other targets or settings)")
	fs.BoolVar(&m.allowMissing, "allow-missing", false, "merge the shards there are when some of the run's are missing (not given, failed, stopped answering, never reached), marking the result partial")
	fs.StringSliceVar(&m.from, "from", nil, "fetch the results from shards serving them (rpcload run --serve-result) at `HOST:PORT` or http://HOST:PORT (repeatable, or comma-separated)")
	fs.DurationVar(&m.wait, "wait", shardhttp.DefaultWait, "--from: how long to wait for a shard that has not answered yet (pods starting, a --start-at ahead)")
	fs.StringVar(&m.upload, "upload", "", "also PUT the merged result (application/json) to this http(s) `URL`, such as an object store's signed URL")
	if err := parseFlags(fs, args); err != nil {
		return helpExit(err)
	}
	if err := m.check(fs); err != nil {
		return exitUsage, err
	}
	var (
		results []*stats.Result
		paths   []string
		gather  *gathered
	)
	if len(m.from) > 0 {
		var code int
		var err error
		if gather, code, err = m.gather(ctx, stderr); err != nil {
			return code, err
		}
		results, paths = gather.results, gather.sources
	} else {
		paths = fs.Args()
		results = make([]*stats.Result, len(paths))
		for i, path := range paths {
			r, err := stats.ReadJSONFile(path)
			if err != nil {
				return exitUsage, cli.UsageError{Err: err}
			}
			results[i] = r
		}
	}
	merged, err := m.merge(results, paths, gather)
	if err != nil {
		return exitUsage, err
	}
	if m.output != "" {
		if err := writeResultTo(m.output, merged, stdout); err != nil {
			return exitUsage, err
		}
	}
	if err := writeMergeReport(reportTo(m.output, stdout, stderr), merged, m.output); err != nil {
		return exitUsage, fmt.Errorf("writing the report: %w", err)
	}
	if m.upload != "" {
		if err := uploadResult(ctx, m.upload, merged); err != nil {
			return exitIncomplete, err
		}
		fmt.Fprintf(stderr, "rpcload: uploaded the merged result to %s\n", shardhttp.ShowURL(m.upload))
	}
	if gather != nil {
		if err := gather.g.Ack(ctx, gather.outcome); err != nil {
			fmt.Fprintf(stderr, "rpcload: warning: %v (those shards exit at their --serve-result-timeout)\n", err)
		}
	}
	if findings(merged) {
		return exitFindings, nil
	}
	return exitOK, nil
}

// check refuses flags that do not go together, before anything is read or
// fetched.
func (m *mergeFlags) check(fs *pflag.FlagSet) error {
	switch {
	case len(m.from) > 0 && fs.NArg() > 0:
		return usagef("give result files or --from addresses, not both (got %d files)", fs.NArg())
	case len(m.from) == 0 && fs.NArg() == 0:
		return usagef("merge takes one or more result files, or --from the shards' addresses (got none)")
	case len(m.from) == 0 && m.output == "":
		return usagef("merge needs -o FILE: where to write the merged result")
	case len(m.from) == 0 && fs.Changed("wait"):
		return usagef("--wait applies to --from: how long to wait for the shards")
	case m.wait <= 0:
		return usagef("--wait must be positive (got %s)", m.wait)
	}
	if m.upload != "" {
		if err := shardhttp.CheckUploadURL(m.upload); err != nil {
			return usagef("--upload: %v", err)
		}
	}
	for _, src := range m.from {
		if _, err := shardhttp.BaseURL(src); err != nil {
			return usagef("--from: %v", err)
		}
	}
	if m.output != "" && m.output != stdoutPath {
		for _, path := range fs.Args() {
			if sameFile(path, m.output) {
				return usagef("-o %s is one of the files to merge; write the merged result elsewhere", m.output)
			}
		}
	}
	return nil
}

// merge merges the results as one run, refusing what is not one run
// (unless --force) and a run with shards missing (unless --allow-missing).
func (m *mergeFlags) merge(results []*stats.Result, paths []string, gather *gathered) (*stats.Result, error) {
	notOneRun := stats.OneRun(results, paths)
	if notOneRun != nil && !m.force {
		return nil, cli.UsageError{Err: fmt.Errorf("%w (--force merges them all the same)", notOneRun)}
	}
	merged, err := stats.Merge(results, paths)
	if err != nil {
		return nil, cli.UsageError{Err: err}
	}
	if notOneRun != nil {
		merged.Warnings = append(merged.Warnings, "merged with --force: "+strings.TrimPrefix(notOneRun.Error(), "stats: "))
	}
	if gather != nil && len(gather.outcome.Missing) > 0 {
		if merged.Partial == nil {
			merged.Partial = &stats.Partial{}
		}
		merged.Partial.Reasons = gather.outcome.Missing
	}
	if merged.Partial != nil && !m.allowMissing {
		return nil, usagef("%s: the merge would cover only part of the run (--allow-missing merges it all the same, marked partial)", merged.Partial.Text())
	}
	return merged, nil
}

// gathered is what --from fetched.
type gathered struct {
	g       *shardhttp.Gatherer
	outcome *shardhttp.Outcome
	results []*stats.Result
	sources []string // the address each result came from, as given
}

// gather fetches the shards' results (internal/shardhttp), saying on
// stderr what it hears of each shard.
func (m *mergeFlags) gather(ctx context.Context, stderr io.Writer) (*gathered, int, error) {
	g, err := shardhttp.NewGatherer(m.from, shardhttp.NewHTTPClient(shardhttp.DefaultLostAfter))
	if err != nil {
		return nil, exitUsage, usagef("--from: %v", err)
	}
	g.Wait, g.AllowMissing = m.wait, m.allowMissing
	g.Log = func(line string) { fmt.Fprintf(stderr, "rpcload: %s\n", line) }
	out, err := g.Gather(ctx)
	switch {
	case ctx.Err() != nil:
		return nil, exitInterrupted, err
	case err != nil:
		var missing *shardhttp.MissingError
		if errors.As(err, &missing) {
			err = fmt.Errorf("%w (--allow-missing merges the shards whose results came, marking the result partial)", err)
		}
		return nil, exitIncomplete, err
	case len(out.Results) == 0:
		return nil, exitIncomplete, errors.New("no shard's result came: nothing to merge")
	}
	gd := &gathered{g: g, outcome: out}
	for _, r := range out.Results {
		res, err := stats.ParseJSON(r.Source, r.Data)
		if err != nil {
			return nil, exitIncomplete, err
		}
		gd.results = append(gd.results, res)
		gd.sources = append(gd.sources, r.Source)
	}
	return gd, exitOK, nil
}

// uploadResult PUTs the merged result, the bytes -o writes, to url.
func uploadResult(ctx context.Context, url string, merged *stats.Result) error {
	var buf bytes.Buffer
	if err := stats.WriteJSON(&buf, merged); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	return shardhttp.Upload(ctx, http.DefaultClient, url, buf.Bytes())
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
	into := ""
	switch output {
	case "":
	case stdoutPath:
		into = " into stdout"
	default:
		into = " into " + output
	}
	if _, err := fmt.Fprintf(w, "merged %d results%s: %s\n\n", len(parts), into, strings.Join(parts, ", ")); err != nil {
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
