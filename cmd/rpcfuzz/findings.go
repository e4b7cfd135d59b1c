package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/native"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
)

// findingFlags are the flags of replay and minimize: where to send the
// input, when not where it was found.
type findingFlags struct {
	tf        targetFlags
	target    string
	workspace string
}

func (f *findingFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.target, "target", "", "send the input to this target URL instead of the finding's (or give a command after --)")
	fs.StringVar(&f.workspace, "workspace", "", "--profile lsp: the workspace folder to open instead of the finding's (finding.json's target.workspace)")
	f.tf.register(fs, 0)
	fs.Lookup("timeout").Usage = "how long the input waits for its replies (default: the finding's)"
	fs.Lookup("profile").DefValue = "the finding's"
	f.tf.profile = ""
}

// options builds the replay options; a bad flag is a usage error.
func (f *findingFlags) options(fs *pflag.FlagSet) (fuzz.ReplayOptions, error) {
	var o fuzz.ReplayOptions
	if fs.Changed("timeout") && f.tf.timeout <= 0 {
		return o, cli.Usagef("--timeout must be positive (got %s)", f.tf.timeout)
	}
	if f.tf.grace <= 0 {
		return o, cli.Usagef("--grace must be positive (got %s)", f.tf.grace)
	}
	if f.tf.profile != "" {
		if _, err := profile.New(profile.Name(f.tf.profile), profile.Options{}); err != nil {
			return o, cli.Usagef("--profile: %v", err)
		}
	}
	t, err := f.tf.target(fs, nil, f.target)
	if err != nil {
		return o, err
	}
	if t.Scheme != "" {
		o.Target = &t
	}
	if o.Header, err = cli.Headers(f.tf.headers, t); err != nil {
		return o, err
	}
	if o.TLS, err = f.tf.tls.Load(fs, t); err != nil {
		return o, err
	}
	o.Profile, o.Timeout, o.Child = profile.Name(f.tf.profile), f.tf.timeout, f.tf.child()
	o.ServerCommand, o.ServerStart = f.tf.server, f.tf.serverStart
	if f.workspace != "" {
		if o.Workspace, err = workspaceDir(f.workspace); err != nil {
			return o, err
		}
	}
	return o, nil
}

// serverNote says which server command a replay or a minimization starts
// (the options', else the finding's unless another target is given), or
// "" for none.
func serverNote(o fuzz.ReplayOptions, dir string) string {
	argv := o.ServerCommand
	if argv == nil && o.Target == nil {
		if f, _, err := fuzz.ReadFinding(dir); err == nil {
			argv = f.Target.ServerCommand
		}
	}
	if argv == nil {
		return ""
	}
	return "rpcfuzz: starting the server (a fresh process for each run): " + strings.Join(argv, " ") + "\n"
}

// findingDir takes the one FINDING_DIR before any --.
func findingDir(fs *pflag.FlagSet, cmd string) (string, error) {
	args := fs.Args()
	if dash := fs.ArgsLenAtDash(); dash >= 0 {
		args = args[:dash]
	}
	if len(args) != 1 {
		return "", cli.Usagef("%s takes one FINDING_DIR (got %d)", cmd, len(args))
	}
	return args[0], nil
}

// findingError maps an error of a finding command to its exit code.
func findingError(ctx context.Context, err error) (int, error) {
	switch {
	case errors.Is(err, fuzz.ErrUnreachable):
		return cli.ExitUnreachable, err
	case ctx.Err() != nil:
		return cli.ExitInterrupted, err
	case errors.Is(err, fuzz.ErrNoTarget):
		return cli.ExitUsage, cli.Usagef("%v: --target URL or -- COMMAND", err)
	}
	return cli.ExitUsage, err
}

const replayUsage = `usage: rpcfuzz replay FINDING_DIR [--target URL | -- COMMAND] [flags]

Sends a finding's input again, each time on a fresh connection (a fresh process for a
child, and for a server command: the finding's, or --server-cmd's, or a command after --
given with --target URL), and prints REPRODUCED (n/n), FLAKY (k/n) or NOT REPRODUCED. Exit status 1 when
it failed the same way at least once, 0 when it did not.

flags:
%s`

func replayCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	var f findingFlags
	f.register(fs)
	times := fs.Int("times", 3, "replays")
	fs.Usage = func() { fmt.Fprintf(stderr, replayUsage, fs.FlagUsages()) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return cli.ExitOK, nil
		}
		return cli.ExitUsage, cli.UsageError{Err: err}
	}
	if err := f.tf.installSecrets(fs, stdout, stderr, f.target); err != nil {
		return cli.ExitUsage, err
	}
	dir, err := findingDir(fs, "replay")
	if err != nil {
		return cli.ExitUsage, err
	}
	if *times < 1 {
		return cli.ExitUsage, cli.Usagef("--times must be at least 1 (got %d)", *times)
	}
	o, err := f.options(fs)
	if err != nil {
		return cli.ExitUsage, err
	}
	o.Times = *times
	fmt.Fprint(stderr, serverNote(o, dir))
	res, err := fuzz.Replay(ctx, dir, o)
	if err != nil {
		return findingError(ctx, err)
	}
	what := res.Finding.Rule
	if what == "" {
		what = "any failure"
	}
	fmt.Fprintf(stdout, "%s: %s (%s)\n", dir, res.Verdict(), what)
	for i, s := range res.Seen {
		fmt.Fprintf(stdout, "  run %d: %s\n", i+1, s)
	}
	if res.Reproduced > 0 {
		return cli.ExitFindings, nil
	}
	return cli.ExitOK, nil
}

const minimizeUsage = `usage: rpcfuzz minimize FINDING_DIR [--budget N] [--target URL | -- COMMAND] [flags]
       rpcfuzz minimize PKG/testdata/fuzz/FuzzXxx/FILE [--budget N] [--time D]

Shrinks a finding's input further against its target (tree-aware passes, then byte
passes, each step re-checking that it still fails the same way) and rewrites the
finding's files. Exit status 1 when the input no longer fails: nothing to shrink.

Given a file, a native failure that go test -fuzz saved for a fuzz test calling
rpcfuzz.Fuzz, it builds the package's test binary, has the fuzz test expand the input
into its messages, shrinks them the same way (each check one run of the test binary),
and writes the smallest literal case that still fails with the same rule into
PKG/testdata/rpcfuzz/ and a regression test replaying it (rpcfuzz.Replay) into PKG.
Given such a literal case (PKG/testdata/rpcfuzz/FILE.json), it shrinks it further.

flags:
%s`

func minimizeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("minimize", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	var f findingFlags
	f.register(fs)
	budget := fs.Int("budget", fuzz.DefaultMinimizeBudget, "reproduction attempts the minimization may take")
	limit := fs.Duration("time", 0, "and how long it may take (default: no limit)")
	fs.Usage = func() { fmt.Fprintf(stderr, minimizeUsage, fs.FlagUsages()) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return cli.ExitOK, nil
		}
		return cli.ExitUsage, cli.UsageError{Err: err}
	}
	if err := f.tf.installSecrets(fs, stdout, stderr, f.target); err != nil {
		return cli.ExitUsage, err
	}
	dir, err := findingDir(fs, "minimize")
	if err != nil {
		return cli.ExitUsage, err
	}
	switch {
	case *budget < 1:
		return cli.ExitUsage, cli.Usagef("--budget must be at least 1 (got %d)", *budget)
	case *limit < 0:
		return cli.ExitUsage, cli.Usagef("--time must not be negative (got %s)", *limit)
	}
	var deadline time.Time
	if *limit > 0 {
		deadline = time.Now().Add(*limit)
	}
	if st, serr := os.Stat(dir); serr == nil && st.Mode().IsRegular() {
		return minimizeNative(ctx, fs, dir, *budget, deadline, stdout)
	}
	o, err := f.options(fs)
	if err != nil {
		return cli.ExitUsage, err
	}
	before := 0
	if old, _, rerr := fuzz.ReadFinding(dir); rerr == nil {
		before = old.MinimizedBytes
	}
	fmt.Fprint(stderr, serverNote(o, dir))
	fnd, err := fuzz.MinimizeFinding(ctx, dir, o, *budget, deadline)
	if errors.Is(err, fuzz.ErrNotReproduced) {
		fmt.Fprintf(stdout, "%s: NOT REPRODUCED: %v\n", dir, err)
		return cli.ExitFindings, nil
	}
	if err != nil {
		return findingError(ctx, err)
	}
	fmt.Fprintf(stdout, "%s: %d -> %d bytes in %d checks (%.1fs)%s\n", dir, before, fnd.MinimizedBytes, fnd.Minimize.Checks, fnd.Minimize.DurationS, incomplete(fnd))
	return cli.ExitOK, nil
}

func incomplete(f *fuzz.Finding) string {
	if f.Minimize.Complete {
		return ""
	}
	return "; stopped by the budget: run it again to shrink further"
}

const exportUsage = `usage: rpcfuzz export-go OUT_DIR --findings DIR

Writes each finding under DIR (a run's --out directory, or one finding) into OUT_DIR,
the corpus directory of a native fuzz target (PKG/testdata/fuzz/FuzzXxx, whose function
calls rpcfuzz.Fuzz), in Go's corpus file format, named by the finding's id. go test then
runs each as a regression test; the command is printed and kept in finding.json.

flags:
%s`

func exportCmd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("export-go", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	findings := fs.String("findings", "", "a run's --out directory, or one finding directory (required)")
	fs.Usage = func() { fmt.Fprintf(stderr, exportUsage, fs.FlagUsages()) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return cli.ExitOK, nil
		}
		return cli.ExitUsage, cli.UsageError{Err: err}
	}
	switch {
	case fs.NArg() != 1:
		return cli.ExitUsage, cli.Usagef("export-go takes one OUT_DIR (got %d)", fs.NArg())
	case *findings == "":
		return cli.ExitUsage, cli.Usagef("--findings DIR is required")
	}
	done, err := fuzz.ExportGo(*findings, fs.Arg(0))
	for _, e := range done {
		fmt.Fprintf(stdout, "%s\n  %s\n", e.File, e.GoTest)
	}
	if err != nil {
		return cli.ExitUsage, err
	}
	return cli.ExitOK, nil
}

const importUsage = `usage: rpcfuzz import-go GO_CORPUS_DIR --out DIR [--target URL | -- COMMAND] [fuzz test options]

Turns each file of a Go fuzz corpus directory (testdata/fuzz/FuzzXxx, or Go's cache)
into a finding directory under DIR, to replay black-box with rpcfuzz replay. A literal
input (those export-go writes, and the literal form rpcfuzz prints) is its messages;
any other file is a choice stream, expanded as the rpcfuzz.Fuzz test that saved it
expanded it: give that test's options (--profile, --method, --params, --seeds,
--max-frame, --stream) for its messages to be the ones it sent.

flags:
%s`

func importCmd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("import-go", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	out := fs.StringP("out", "o", "", "directory for the findings (required)")
	var f findingFlags
	f.register(fs)
	var nf nativeFlags
	nf.register(fs)
	fs.Usage = func() { fmt.Fprintf(stderr, importUsage, fs.FlagUsages()) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return cli.ExitOK, nil
		}
		return cli.ExitUsage, cli.UsageError{Err: err}
	}
	if err := f.tf.installSecrets(fs, stdout, stderr, f.target); err != nil {
		return cli.ExitUsage, err
	}
	args = fs.Args()
	if dash := fs.ArgsLenAtDash(); dash >= 0 {
		args = args[:dash]
	}
	if len(args) != 1 {
		return cli.ExitUsage, cli.Usagef("import-go takes one GO_CORPUS_DIR (got %d)", len(args))
	}
	dir := args[0]
	if *out == "" {
		return cli.ExitUsage, cli.Usagef("--out DIR is required")
	}
	o, err := f.options(fs)
	if err != nil {
		return cli.ExitUsage, err
	}
	var info *fuzz.TargetInfo
	if o.Target != nil {
		info = &fuzz.TargetInfo{Framing: o.Target.Framing.String(), Profile: string(o.Profile)}
		if info.Profile == "" {
			info.Profile = string(profile.JSONRPC)
		}
		if o.Target.Scheme == transport.Stdio {
			info.Command = o.Target.Command
		} else {
			info.URL = o.Target.URL
		}
		if o.Timeout > 0 {
			info.TimeoutMS = o.Timeout.Milliseconds()
		}
	}
	nopts, err := nf.options(f.tf.profile)
	if err != nil {
		return cli.ExitUsage, err
	}
	done, err := fuzz.ImportGo(dir, *out, info, nopts)
	n := 0
	for _, im := range done {
		if im.Skipped != "" {
			fmt.Fprintf(stdout, "skipped %s: %s\n", im.File, im.Skipped)
			continue
		}
		n++
		fmt.Fprintf(stdout, "%s -> %s\n", im.File, im.Dir)
	}
	if err != nil {
		return cli.ExitUsage, err
	}
	if n == 0 {
		return cli.ExitUsage, fmt.Errorf("import-go: no input in %s", dir)
	}
	return cli.ExitOK, nil
}

// nativeFlags are the options of the rpcfuzz.Fuzz test whose corpus
// import-go reads: a choice stream expands to the messages that test sent
// only under the same ones.
type nativeFlags struct {
	methods  []string
	params   string
	seeds    string
	maxFrame string
	stream   bool
}

func (n *nativeFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&n.methods, "method", nil, "Options.Methods of the fuzz test: a method name (repeatable, in the test's order)")
	fs.StringVar(&n.params, "params", "", "Options.Params of the fuzz test: a JSON file of an object mapping each method to its params JSON Schema")
	fs.StringVar(&n.seeds, "seeds", "", "Options.Seeds of the fuzz test: a file of messages, one JSON text a line, in the test's order")
	fs.StringVar(&n.maxFrame, "max-frame", "", "Options.MaxFrame of the fuzz test (e.g. 64KiB; default the harness's, 64 KiB)")
	fs.BoolVar(&n.stream, "stream", false, "the fuzz test's target was a stream (rpcfuzz.Stream): the framing ops broke newline framing")
}

// options reads the files the flags name; every error names its flag.
func (n *nativeFlags) options(prof string) (native.Options, error) {
	o := native.Options{Profile: prof, Methods: n.methods, Framing: mutate.FramingNone}
	if n.stream {
		o.Framing = mutate.FramingNewline
	}
	if n.maxFrame != "" {
		size, err := cli.ParseSize(n.maxFrame, cli.MaxFuzzSize)
		if err != nil {
			return o, cli.Usagef("--max-frame: %v", err)
		}
		o.MaxFrame = size
	}
	if n.params != "" {
		data, err := os.ReadFile(n.params)
		if err != nil {
			return o, cli.Usagef("--params: %v", err)
		}
		if err := json.Unmarshal(data, &o.Params); err != nil {
			return o, cli.Usagef("--params %s: not a JSON object of schemas: %v", n.params, err)
		}
	}
	if n.seeds != "" {
		data, err := os.ReadFile(n.seeds)
		if err != nil {
			return o, cli.Usagef("--seeds: %v", err)
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			if !json.Valid(line) {
				return o, cli.Usagef("--seeds %s: line %d is not a JSON text", n.seeds, i+1)
			}
			o.Seeds = append(o.Seeds, line)
		}
	}
	return o, nil
}
