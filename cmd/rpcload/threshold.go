package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/threshold"
)

// maxErrorRateExpr is the threshold --max-error-rate R stands for, before R.
const maxErrorRateExpr = "rpc_error_rate<="

// junitSuiteName names the testsuite of --junit reports.
const junitSuiteName = "rpcload"

// gateFlags holds the CI gate flags shared by run and check: --threshold
// and --junit.
type gateFlags struct {
	exprs        []string
	maxErrorRate string // --max-error-rate R: the threshold rpc_error_rate<=R
	junit        string
	thresholds   []threshold.Threshold // parsed from exprs by parse
}

func (g *gateFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&g.exprs, "threshold", nil,
		"fail (exit 1) unless `EXPR` holds, e.g. 'p99<50ms', 'error_rate<0.1%', 'p99{method=eth_call}<20ms' (repeatable; docs/thresholds.md)")
	fs.StringVar(&g.maxErrorRate, "max-error-rate", "",
		"fail (exit 1) when more than `R` of the requests sent got a JSON-RPC error reply, e.g. 1% or 0.005: short for --threshold 'rpc_error_rate<=R'")
	fs.StringVar(&g.junit, "junit", "", "write the threshold verdicts and one testcase per protocol rule as JUnit XML to `FILE`")
}

// parse reads every --threshold and checks that the --junit file's
// directory exists, before any load is sent: a typo must not cost a run.
func (g *gateFlags) parse() error {
	g.thresholds = g.thresholds[:0]
	for _, e := range g.exprs {
		t, err := threshold.Parse(e)
		if err != nil {
			return usagef("--threshold: %v", err)
		}
		g.thresholds = append(g.thresholds, t)
	}
	if g.maxErrorRate != "" {
		t, err := threshold.Parse(maxErrorRateExpr + g.maxErrorRate)
		if err != nil {
			return usagef("--max-error-rate %s: %v", g.maxErrorRate, err)
		}
		g.thresholds = append(g.thresholds, t)
	}
	if g.junit != "" {
		dir := filepath.Dir(g.junit)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usagef("--junit %s: directory %s does not exist", g.junit, dir)
		}
	}
	return nil
}

// apply evaluates the thresholds on res, keeps the verdicts in
// res.Thresholds (so the result file has them), prints one line per
// verdict to w and writes the --junit file. failed reports whether a
// threshold failed; err is a failure to write.
func (g *gateFlags) apply(res *stats.Result, w io.Writer) (failed bool, err error) {
	return g.applyNamed(res, w, "")
}

// applyNamed is apply for one of several results (a target of a
// comparison): a non-empty name goes into the JUnit file's name, before its
// extension, so each result gets its own file.
func (g *gateFlags) applyNamed(res *stats.Result, w io.Writer, name string) (failed bool, err error) {
	res.Thresholds = nil
	for _, t := range g.thresholds {
		v := t.Eval(res)
		res.Thresholds = append(res.Thresholds, v)
		word := "PASS"
		if !v.Pass {
			word, failed = "FAIL", true
		}
		if _, err := fmt.Fprintf(w, "%s %s: %s\n", word, v.Expr, v.Detail); err != nil {
			return failed, fmt.Errorf("writing the threshold verdicts: %w", err)
		}
	}
	if g.junit != "" {
		var buf bytes.Buffer
		if err := threshold.WriteJUnit(&buf, res, junitSuiteName); err != nil {
			return failed, err
		}
		path := g.junit
		if name != "" {
			ext := filepath.Ext(path)
			path = strings.TrimSuffix(path, ext) + "." + name + ext
		}
		if err := stats.WriteFileAtomic(path, buf.Bytes()); err != nil {
			return failed, fmt.Errorf("--junit: %w", err)
		}
	}
	return failed, nil
}

var checkHelp = cmdHelp{
	usage: []string{"rpcload check RESULT.json --threshold EXPR [--threshold EXPR ...] [--junit FILE]"},
	about: `Evaluates thresholds on a result file (a merged one, say): exit 0 if all
hold, 1 if one fails, 2 on a usage error. Expressions and figures:
docs/thresholds.md.`,
	examples: []string{
		"rpcload check result.json --threshold 'p99<50ms' --threshold 'error_rate<0.1%'",
		"rpcload check total.json --threshold 'p99.9<100ms' --junit junit.xml",
	},
}

// checkCmd is "rpcload check RESULT.json --threshold EXPR ...": the gates
// of a run, applied to a result file after the fact (a merged one, say).
func checkCmd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("check", checkHelp, stdout, stderr)
	var g gateFlags
	g.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return helpExit(err)
	}
	if fs.NArg() != 1 {
		return exitUsage, usagef("check takes exactly one result file (got %d); see rpcload check --help", fs.NArg())
	}
	if len(g.exprs) == 0 && g.maxErrorRate == "" {
		return exitUsage, usagef("check needs at least one --threshold (or --max-error-rate), e.g. --threshold 'p99<50ms'")
	}
	if err := g.parse(); err != nil {
		return exitUsage, err
	}
	path := fs.Arg(0)
	res, err := stats.ReadJSONFile(path)
	if err != nil {
		return exitUsage, usagef("%s: %v", path, err)
	}
	if res.Partial != nil {
		fmt.Fprintf(stdout, "NOTE %s is a partial merge (%s): the thresholds judge only the shards it holds\n", path, stats.OneLine(res.Partial.Text(), 200))
	}
	failed, err := g.apply(res, stdout)
	if err != nil {
		return exitUsage, err
	}
	if failed {
		return exitFindings, nil
	}
	return exitOK, nil
}
