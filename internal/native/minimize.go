package native

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rpcload/rpcload/internal/fuzzcase"
	"github.com/rpcload/rpcload/internal/mutate"
)

// ErrNotReproduced is wrapped by Minimize's error when the native failure
// (or its literal form) does not fail when run again.
var ErrNotReproduced = errors.New("not reproduced")

// ShrinkFunc shrinks in while check keeps failing, within budget checks
// and the deadline (zero: none): the black-box minimizer (fuzz.Shrink),
// handed in because that package imports this one. It returns the
// smallest case that failed, the checks it made and whether every pass
// ran to its end.
type ShrinkFunc func(ctx context.Context, in mutate.Case, check func(context.Context, mutate.Case) bool, budget int, deadline time.Time) (out mutate.Case, checks int, complete bool)

// MinimizeOptions say which native failure to minimize, and how.
type MinimizeOptions struct {
	// File is the failure: PKG/testdata/fuzz/FuzzXxx/NAME, a Go corpus
	// file of a fuzz test of PKG that calls rpcfuzz.Fuzz.
	File string
	// Shrink is the minimizer.
	Shrink ShrinkFunc
	// Budget bounds the checks (each one run of the test binary);
	// Deadline, when not zero, the time.
	Budget   int
	Deadline time.Time
	// Go is the go command that builds the test binary ("" is "go").
	Go string
	// RunLimit bounds each run of the test binary; 0 means a minute.
	RunLimit time.Duration
}

// Minimized is what Minimize did.
type Minimized struct {
	// FuzzTest and Dir are the fuzz test and its package's directory.
	FuzzTest, Dir string
	// Rule is the rule the input broke, and still breaks.
	Rule string
	// Input is what the failure stood for; Case the minimized case.
	Input, Case mutate.Case
	// Checks and Complete say what the shrinking spent, and whether it
	// ran to its end (false: stopped by the budget or the deadline).
	Checks   int
	Complete bool
	// Message is the harness's failure message for Case.
	Message string
	// CaseFile is the literal case written (under Dir/testdata/rpcfuzz);
	// TestFile and TestName the regression test that replays it.
	CaseFile, TestFile, TestName string
	// replaces is the literal case shrunk further, which the new one
	// replaces with its regression test.
	replaces string
}

// Minimize shrinks a native failure to the smallest literal case that
// still fails its fuzz test with the same rule, and writes that case and
// a regression test replaying it (rpcfuzz.Replay) into the package. It
// builds the package's test binary once, has it expand the failure (a
// choice stream is expanded by the fuzz test's own Options), then runs it
// once per check, each a driven run of one literal case. When ctx ends
// or the deadline passes during the shrinking, it writes the smallest
// case found so far.
func Minimize(ctx context.Context, o MinimizeOptions) (*Minimized, error) {
	m, input, from, err := locate(o.File)
	if err != nil {
		return nil, err
	}
	if o.RunLimit <= 0 {
		o.RunLimit = time.Minute
	}
	tmp, err := os.MkdirTemp("", "rpcfuzz-minimize-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin, err := buildTest(ctx, o.Go, m.Dir, tmp)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context, data []byte) *Outcome {
		out, err := Driven(ctx, bin, m.Dir, m.FuzzTest, data, o.RunLimit)
		if err != nil && !errors.Is(err, ErrDied) {
			return nil
		}
		return out
	}
	first, err := Driven(ctx, bin, m.Dir, m.FuzzTest, input, o.RunLimit)
	if err != nil && !errors.Is(err, ErrDied) {
		return nil, err
	}
	if !first.Failed {
		return nil, fmt.Errorf("%s: %w: %s passes it", o.File, ErrNotReproduced, m.FuzzTest)
	}
	m.Rule, m.Input = first.Rule, first.Case()
	if len(m.Input.Frames) == 0 && m.Input.Wire == nil {
		return nil, fmt.Errorf("%s: %s died before it expanded the input: %s", o.File, m.FuzzTest, first.Message)
	}
	var best *Outcome
	check := func(ctx context.Context, c mutate.Case) bool {
		if len(c.Frames) == 0 && c.Wire == nil {
			return false // its encoding would be a choice stream
		}
		out := run(ctx, fuzzcase.Encode(c))
		if out == nil || !out.Failed || out.Rule != m.Rule {
			return false
		}
		best = out
		return true
	}
	if !check(ctx, m.Input) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: %w: its literal form does not fail %s with %s", o.File, ErrNotReproduced, m.FuzzTest, m.Rule)
	}
	// The deadline cuts the run of the test binary in progress too, so
	// that --time holds to within a process start.
	sctx, cancel := ctx, context.CancelFunc(func() {})
	if !o.Deadline.IsZero() {
		sctx, cancel = context.WithDeadline(ctx, o.Deadline)
	}
	m.Case, m.Checks, m.Complete = o.Shrink(sctx, m.Input, check, o.Budget, o.Deadline)
	cancel()
	m.Checks++ // the literal form's own check
	m.Message = best.Message
	if err := m.write(from); err != nil {
		return nil, err
	}
	return m, nil
}

// locate reads the package directory, the fuzz test and the input from
// the path of a native failure, PKG/testdata/fuzz/FuzzXxx/NAME, or of a
// literal case Minimize wrote, PKG/testdata/rpcfuzz/NAME.json (which is
// then shrunk further, and replaced). from is where the input came from.
func locate(file string) (m *Minimized, input []byte, from string, err error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, nil, "", err
	}
	parent := filepath.Dir(abs)
	up := filepath.Dir(parent)
	if filepath.Base(parent) == "rpcfuzz" && filepath.Base(up) == "testdata" && filepath.Ext(abs) == ".json" {
		cf, err := ReadCaseFile(file)
		if err != nil {
			return nil, nil, "", err
		}
		m = &Minimized{FuzzTest: cf.FuzzTest, Dir: filepath.Dir(up), replaces: abs}
		from = cf.From
		if from == "" {
			from = abs
		}
		return m, fuzzcase.Encode(cf.Case()), from, nil
	}
	if filepath.Base(up) != "fuzz" || filepath.Base(filepath.Dir(up)) != "testdata" || !strings.HasPrefix(filepath.Base(parent), "Fuzz") {
		return nil, nil, "", fmt.Errorf("%s: a native failure is PKG/testdata/fuzz/FuzzXxx/FILE, the file go test -fuzz wrote (or a literal case PKG/testdata/rpcfuzz/FILE.json that rpcfuzz minimize wrote)", file)
	}
	if input, err = ReadInput(file); err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", file, err)
	}
	return &Minimized{FuzzTest: filepath.Base(parent), Dir: filepath.Dir(filepath.Dir(up))}, input, abs, nil
}

// buildTest builds the test binary of the package in dir into tmp.
func buildTest(ctx context.Context, goCmd, dir, tmp string) (string, error) {
	if goCmd == "" {
		goCmd = "go"
	}
	bin := filepath.Join(tmp, "pkg.test")
	cmd := exec.CommandContext(ctx, goCmd, "test", "-c", "-o", bin, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go test -c in %s: %v: %s", dir, err, tail(out))
	}
	return bin, nil
}

// write writes the minimized case into Dir/testdata/rpcfuzz/ and the
// regression test replaying it into Dir, both named by the case's hash.
func (m *Minimized) write(from string) error {
	sum := sha256.Sum256(fuzzcase.Encode(m.Case))
	hash := hex.EncodeToString(sum[:])
	rel := filepath.ToSlash(filepath.Join("testdata", "rpcfuzz", m.FuzzTest+"-"+hash[:16]+".json"))
	if r, err := filepath.Rel(m.Dir, from); err == nil {
		from = filepath.ToSlash(r)
	}
	data, err := NewCaseFile(m.FuzzTest, m.Rule, from, m.Case).Marshal()
	if err != nil {
		return err
	}
	m.CaseFile = filepath.Join(m.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(m.CaseFile), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(m.CaseFile, data, 0o644); err != nil {
		return err
	}
	pkg, err := testPackage(m.Dir, m.FuzzTest)
	if err != nil {
		return err
	}
	m.TestName = "Test" + m.FuzzTest + "_" + hash[:8]
	src := fmt.Sprintf(regressionTest, pkg, m.TestName, from, m.Rule, m.TestName, strconv.Quote(m.FuzzTest), strconv.Quote(rel))
	code, err := format.Source([]byte(src))
	if err != nil {
		return fmt.Errorf("regression test: %w", err)
	}
	m.TestFile = m.testFile(hash)
	if err := os.WriteFile(m.TestFile, code, 0o644); err != nil {
		return err
	}
	if m.replaces == "" || m.replaces == m.CaseFile {
		return nil
	}
	// The case shrunk further goes, with its regression test, named by
	// the hash of its literal form, which is Input's.
	old := sha256.Sum256(fuzzcase.Encode(m.Input))
	for _, f := range []string{m.replaces, m.testFile(hex.EncodeToString(old[:]))} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// testFile is the path of the regression test of the case with hash.
func (m *Minimized) testFile(hash string) string {
	return filepath.Join(m.Dir, "rpcfuzz_"+strings.ToLower(m.FuzzTest)+"_"+hash[:8]+"_test.go")
}

// regressionTest is the regression test file: package, test name, the
// native failure, its rule, test name, fuzz test and case file.
const regressionTest = `package %s

import (
	"testing"

	"github.com/rpcload/rpcload/rpcfuzz"
)

// %s replays the literal case rpcfuzz minimize made of
// %s (%s): it fails until the bug is fixed.
func %s(t *testing.T) {
	rpcfuzz.Replay(t, %s, %s)
}
`

// testPackage is the package clause of the _test.go file in dir that
// declares the function fuzzTest.
func testPackage(dir, fuzzTest string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil || !bytes.Contains(src, []byte("func "+fuzzTest+"(")) {
			continue
		}
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == fuzzTest {
				return file.Name.Name, nil
			}
		}
	}
	return "", fmt.Errorf("no _test.go file in %s declares %s", dir, fuzzTest)
}
