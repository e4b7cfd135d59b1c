package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/canonjson"
	"github.com/rpcload/rpcload/internal/engine"
	"github.com/rpcload/rpcload/internal/rounds"
	"github.com/rpcload/rpcload/internal/stats"
)

// targetsFlags are the flags that compare servers under one configuration
// (docs/compare.md): the same load against each --target in alternating
// rounds, or, with --diff, every request sent to two targets and their
// replies compared.
type targetsFlags struct {
	urls         []string
	rounds       int
	diff         bool
	diffIgnore   []string
	diffSamples  int
	diffRequests uint64
}

// The flags only a comparison uses, and those only a diff uses, for the
// checks that they come with --target and --diff.
var (
	diffOnlyFlags    = []string{"diff-ignore", "diff-samples", "diff-requests"}
	targetsOnlyFlags = append([]string{"rounds", "diff"}, diffOnlyFlags...)
)

func (t *targetsFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&t.urls, "target", nil, "compare servers: run the same load against each target URL (repeatable, two or more; see docs/compare.md)")
	fs.IntVar(&t.rounds, "rounds", 1, "with --target: run every target this many times, alternating the order (A B, B A, A B ...)")
	fs.BoolVar(&t.diff, "diff", false, "with two --target: send every request to both and compare the replies as canonical JSON")
	fs.StringArrayVar(&t.diffIgnore, "diff-ignore", nil, "with --diff: leave this JSONPath out of the comparison, e.g. '$.result.timestamp' or '$..nonce' (repeatable)")
	fs.IntVar(&t.diffSamples, "diff-samples", engine.DefaultDiffSamples, "with --diff: keep this many mismatches as examples")
	fs.Uint64Var(&t.diffRequests, "diff-requests", 0, "with --diff: compare this many calls (default: as many as --duration allows)")
}

// changed reports whether a flag of a comparison was given, so that runCmd
// hands over (and the comparison refuses the flags without --target).
func (t *targetsFlags) changed(fs *pflag.FlagSet) bool {
	for _, name := range targetsOnlyFlags {
		if fs.Changed(name) {
			return true
		}
	}
	return false
}

// check refuses combinations that mean nothing.
func (t *targetsFlags) check(fs *pflag.FlagSet) error {
	if len(t.urls) == 0 {
		for _, name := range targetsOnlyFlags {
			if fs.Changed(name) {
				return usagef("--%s compares servers: give them as --target URL (two or more)", name)
			}
		}
	}
	switch {
	case len(t.urls) < 2:
		return usagef("--target compares servers: give two or more (got %d)", len(t.urls))
	case len(t.urls) > 26:
		return usagef("--target: at most 26 servers (A to Z) can be compared (got %d)", len(t.urls))
	case t.rounds < 1:
		return usagef("--rounds must be at least 1 (got %d)", t.rounds)
	case t.diff && len(t.urls) != 2:
		return usagef("--diff compares two targets (got %d)", len(t.urls))
	case t.diff && fs.Changed("rounds"):
		return usagef("--rounds compares performance; --diff compares replies: give one or the other")
	case t.diff && fs.Changed("requests"):
		return usagef("--diff counts its calls with --diff-requests, not --requests")
	case t.diffSamples < 0:
		return usagef("--diff-samples must not be negative (got %d)", t.diffSamples)
	}
	if !t.diff {
		for _, name := range diffOnlyFlags {
			if fs.Changed(name) {
				return usagef("--%s goes with --diff", name)
			}
		}
	}
	return nil
}

// run compares the targets: rounds of full runs, or the diff.
func (t *targetsFlags) run(ctx context.Context, fs *pflag.FlagSet, f *runFlags, stdout, stderr io.Writer) (int, error) {
	switch {
	case len(t.urls) > 0 && fs.ArgsLenAtDash() >= 0:
		return exitUsage, usagef("--target compares network servers; a command after -- cannot be one of them")
	case len(t.urls) > 0 && fs.NArg() > 0:
		return exitUsage, usagef("give the servers to compare as --target URL only, not as a TARGET too (got %s)", strings.Join(fs.Args(), " "))
	}
	if err := t.check(fs); err != nil {
		return exitUsage, err
	}
	if f.scen.dryRun > 0 {
		return exitUsage, usagef("--dry-run shows one run's messages; give it without --target")
	}
	if f.scen.sc == nil {
		if err := f.prof.presetMethod(fs, f); err != nil {
			return exitUsage, err
		}
		if f.method == "" {
			return exitUsage, usagef("--method is required (or --tool with --profile mcp, or -f with a scenario)")
		}
	}
	cfgs := make([]engine.Config, len(t.urls))
	for i, url := range t.urls {
		cfg, err := f.config(fs, url)
		if err != nil {
			return exitUsage, fmt.Errorf("--target %s: %w", url, err)
		}
		if i > 0 {
			// Without --seed each config drew a seed of its own; every
			// target must get the same calls and params.
			cfg.Seed = cfgs[0].Seed
		}
		cfgs[i] = cfg
	}
	if t.diff {
		return t.runDiff(ctx, fs, f, cfgs, stdout, stderr)
	}
	if f.output == stdoutPath {
		return exitUsage, usagef("-o - writes one result to stdout; rounds write one per target and the comparison: give -o FILE")
	}
	return t.runRounds(ctx, f, cfgs, stdout, stderr)
}

// runRounds runs the targets in alternating rounds and prints the table
// and the verdicts; with -o it writes one result file per target and the
// comparison to -o itself.
func (t *targetsFlags) runRounds(ctx context.Context, f *runFlags, cfgs []engine.Config, stdout, stderr io.Writer) (int, error) {
	runOne := func(ctx context.Context, target, round int) (*stats.Result, error) {
		cfg := cfgs[target]
		res, err := engine.Run(ctx, cfg)
		if err != nil {
			return nil, err
		}
		res.Settings = settings(cfg)
		if !f.quiet {
			fig := rounds.Figures(res)
			note := ""
			if res.Interrupted {
				note = "  (interrupted)"
			}
			fmt.Fprintf(stderr, "round %d/%d  %s %s  answered %.1f/s  p50 %s  p99 %s  errors %.2f%%%s\n",
				round, t.rounds, rounds.Label(target), cfg.Target.URL, fig.AnsweredPS,
				time.Duration(fig.P50us)*time.Microsecond, time.Duration(fig.P99us)*time.Microsecond, 100*fig.ErrorRate, note)
		}
		return res, nil
	}
	rep, results, runErr := rounds.Run(ctx, t.urls, t.rounds, runOne, time.Now)
	if rep == nil {
		return exitUsage, runErr
	}
	werr := rounds.Write(stdout, rep)
	merged, err := mergeRounds(rep, results)
	if err != nil {
		return exitUsage, err
	}
	// Thresholds judge each target over its rounds.
	gateFailed := false
	for i, res := range merged {
		if res == nil || len(f.gate.thresholds) == 0 {
			continue
		}
		fmt.Fprintf(stdout, "\nthresholds of %s %s\n", rounds.Label(i), rep.Targets[i])
		failed, gerr := f.gate.applyNamed(res, stdout, rounds.Label(i))
		gateFailed = gateFailed || failed
		if werr == nil {
			werr = gerr
		}
	}
	if f.output != "" {
		files := make([]string, len(merged))
		for i, res := range merged {
			if res == nil {
				continue
			}
			files[i] = roundFileName(f.output, i)
			if err := stats.WriteJSONFile(files[i], res); err != nil {
				return exitUsage, err
			}
		}
		if err := rounds.WriteFile(f.output, rep, files); err != nil {
			return exitUsage, err
		}
	}
	if f.html != "" {
		var names []string
		var present []*stats.Result
		for i, res := range merged {
			if res != nil {
				names = append(names, rounds.Label(i)+" "+rep.Targets[i])
				present = append(present, res)
			}
		}
		if len(present) > 0 {
			if err := writeHTMLReport(f.html, names, present); err != nil {
				return exitUsage, err
			}
		}
	}
	switch {
	case runErr != nil && errors.Is(runErr, engine.ErrUnreachable):
		return exitUnreachable, runErr
	case runErr != nil:
		return exitUsage, runErr
	case werr != nil:
		return exitUsage, fmt.Errorf("writing the report: %w", werr)
	case rep.Interrupted:
		return exitInterrupted, nil
	case gateFailed:
		return exitFindings, nil
	}
	for _, res := range results {
		if !f.allowViolations && findings(res) {
			return exitFindings, nil
		}
	}
	return exitOK, nil
}

// roundFileName is where target i's result goes for -o path: the target's
// letter before the extension (out.json: out.A.json, out.B.json; an
// extension-less name gets .json).
func roundFileName(path string, target int) string {
	ext := filepath.Ext(path)
	stem := strings.TrimSuffix(path, ext)
	if ext == "" {
		ext = ".json"
	}
	return stem + "." + rounds.Label(target) + ext
}

// mergeRounds merges each target's runs into one result (counts added,
// histograms merged exactly), with the rounds report attached; nil for a
// target that never ran. The sending time is the sum of the runs' (the
// wall-clock span would include the other targets' runs), so answered/s is
// over the time the target was loaded.
func mergeRounds(rep *stats.RoundsReport, results []*stats.Result) ([]*stats.Result, error) {
	out := make([]*stats.Result, len(rep.Targets))
	for target := range rep.Targets {
		var parts []*stats.Result
		var names []string
		for i, run := range rep.Runs {
			if run.Target == target {
				parts = append(parts, results[i])
				names = append(names, fmt.Sprintf("%s round %d", rounds.Label(target), run.Round))
			}
		}
		if len(parts) == 0 {
			continue // interrupted before this target ran
		}
		merged, err := stats.Merge(parts, names)
		if err != nil {
			return nil, fmt.Errorf("merging the rounds of %s: %w", rep.Targets[target], err)
		}
		merged.DurationS = 0
		for _, p := range parts {
			merged.DurationS += p.DurationS
		}
		merged.SetAchieved()
		kept := merged.Warnings[:0]
		for _, w := range merged.Warnings {
			// Rounds run one after another by design; the sending
			// time is corrected above.
			if !strings.HasPrefix(w, stats.NotConcurrentWarning) {
				kept = append(kept, w)
			}
		}
		merged.Warnings = kept
		merged.Rounds = rep
		out[target] = merged
	}
	return out, nil
}

// runDiff sends every request to both targets, prints the comparison and
// writes the diff's result with -o.
func (t *targetsFlags) runDiff(ctx context.Context, fs *pflag.FlagSet, f *runFlags, cfgs []engine.Config, stdout, stderr io.Writer) (int, error) {
	ignore, err := canonjson.ParsePaths(t.diffIgnore)
	if err != nil {
		return exitUsage, usagef("--diff-ignore: %v", err)
	}
	opt := engine.DiffOptions{Requests: t.diffRequests, Ignore: ignore, Samples: t.diffSamples}
	if t.diffSamples == 0 {
		opt.Samples = -1 // none
	}
	if fs.Changed("concurrency") {
		opt.Workers = f.concurrency
	}
	if fs.Changed("rate") {
		opt.Rate = f.rate
	}
	if sc := f.scen.sc; sc != nil && !fs.Changed("rate") && !fs.Changed("concurrency") &&
		(sc.Load.Rate > 0 || sc.Load.Concurrency > 0 || len(sc.Load.Stages) > 0) {
		// The file's load paces the diff as the flags would have.
		opt.Rate, opt.Workers = cfgs[0].Pace()
	}
	res, err := engine.Diff(ctx, cfgs[0], cfgs[1].Target, opt)
	if err != nil {
		if errors.Is(err, engine.ErrUnreachable) {
			return exitUnreachable, err
		}
		return exitUsage, err
	}
	res.Settings = settings(cfgs[0])
	res.Settings["targets"] = t.urls
	res.Settings["diff_ignore"] = append([]string{}, t.diffIgnore...)
	report := reportTo(f.output, stdout, stderr)
	werr := stats.WriteDiff(report, res.Diff)
	if werr == nil {
		werr = writeDiffFailures(report, res)
	}
	gateFailed, gerr := f.gate.apply(res, report)
	if werr == nil {
		werr = gerr
	}
	if f.html != "" {
		if err := writeHTMLReport(f.html, []string{"A vs B"}, []*stats.Result{res}); err != nil {
			return exitUsage, err
		}
	}
	if f.output != "" {
		if err := writeResultTo(f.output, res, stdout); err != nil {
			return exitUsage, err
		}
	}
	switch {
	case werr != nil:
		return exitUsage, fmt.Errorf("writing the report: %w", werr)
	case res.Interrupted:
		return exitInterrupted, nil
	case gateFailed:
		return exitFindings, nil
	case !f.allowViolations && findings(res):
		return exitFindings, nil
	}
	return exitOK, nil
}

// writeDiffFailures adds what the comparison table does not show: requests
// target A failed, and the transport errors of either target.
func writeDiffFailures(w io.Writer, res *stats.Result) error {
	q := res.Requests
	var err error
	put := func(format string, a ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, a...)
		}
	}
	if n := q.Timeouts + q.TransportErrors + q.Leaked; n > 0 {
		put("\ntarget A: %d timeouts, %d transport errors, %d cut short by the interrupt\n", q.Timeouts, q.TransportErrors, q.Leaked)
	}
	if len(res.TransportErrorSamples) > 0 {
		put("\ntransport errors:\n")
		for _, s := range res.TransportErrorSamples {
			put("  %s\n", s)
		}
	}
	if res.Interrupted {
		put("\ninterrupted: the counts cover the calls sent before it\n")
	}
	return err
}
