package native

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"github.com/rpcload/rpcload/internal/fuzzcase"
	"github.com/rpcload/rpcload/internal/mutate"
)

// A driven run is one input of an rpcfuzz.Fuzz test run from outside the
// test process: the package's test binary, run with -test.run set to
// DrivenPattern and EnvInput naming a Go corpus file, has the fuzz test
// add that input as its only seed, run it, and write what it stood for
// and how it was judged, as an Outcome in JSON, to the file EnvOutcome
// names. Only the test process knows the fuzz test's target and Options,
// so this is the one way to turn a choice stream into its messages (the
// test expands it) and to judge a smaller literal case against the same
// target: rpcfuzz minimize on a native failure, and rpcfuzz.Replay.
const (
	EnvInput   = "RPCFUZZ_NATIVE_INPUT"
	EnvOutcome = "RPCFUZZ_NATIVE_OUTCOME"
)

// Outcome is what a driven run writes: the input's messages and verdict.
type Outcome struct {
	// Literal is true when the input was a literal form; Seed and Ops
	// then are empty.
	Literal bool     `json:"literal"`
	Seed    string   `json:"seed,omitempty"`
	Ops     []string `json:"ops,omitempty"`
	// Frames are the messages the input stood for, in order; Wire the raw
	// stream bytes sent instead of framing them, when there were some.
	Frames [][]byte `json:"frames"`
	Wire   []byte   `json:"wire,omitempty"`
	// HasWire tells an empty Wire from none.
	HasWire bool `json:"has_wire,omitempty"`
	// Rule is the finding's rule ("" when nothing was wrong); Failed is
	// false when it is only a warning.
	Rule   string `json:"rule,omitempty"`
	Failed bool   `json:"failed,omitempty"`
	// Message is the harness's failure (or warning) text.
	Message string `json:"message,omitempty"`
	// Judged is false in the outcome the harness writes before it sends
	// the input: found so, the process died on the input.
	Judged bool `json:"judged"`
}

// Case returns the messages of o as a case.
func (o *Outcome) Case() mutate.Case {
	c := mutate.Case{Frames: o.Frames}
	if o.HasWire {
		c.Wire = o.Wire
		if c.Wire == nil {
			c.Wire = []byte{}
		}
	}
	return c
}

// SetCase stores c's messages in o.
func (o *Outcome) SetCase(c mutate.Case) {
	o.Frames, o.Wire, o.HasWire = c.Frames, c.Wire, c.Wire != nil
}

// WriteOutcome writes o to path.
func WriteOutcome(path string, o *Outcome) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// DrivenFiles returns the files of a driven run, from the environment:
// ok is false in any other run.
func DrivenFiles() (input, outcome string, ok bool) {
	input, outcome = os.Getenv(EnvInput), os.Getenv(EnvOutcome)
	return input, outcome, input != "" && outcome != ""
}

// ReadInput reads the input of a driven run: a Go corpus file.
func ReadInput(path string) ([]byte, error) {
	file, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return fuzzcase.UnmarshalGoCorpus(file)
}

// DrivenPattern is the -test.run pattern of a driven run of fuzzTest: the
// test and its f.Add seeds, not the files of testdata/fuzz (the native
// failure itself is usually one of them).
func DrivenPattern(fuzzTest string) string {
	return "^" + regexp.QuoteMeta(fuzzTest) + "$/^seed#[0-9]+$"
}

// ErrDied is wrapped by RunDriven's error when the test process ended
// without writing an outcome: a panic on a goroutine the harness did not
// call the target on, an os.Exit, a timeout of the test binary.
var ErrDied = errors.New("the test process died")

// DiedRule is the rule of a driven run whose process died: a crash.
const DiedRule = "crash"

// Driven runs input (the bytes of a fuzz input) through fuzzTest of the
// test binary bin, in dir, and returns its outcome. A process that died
// without an outcome gives an Outcome with Rule DiedRule, Failed, and
// its output's tail as the Message, and an error wrapping ErrDied. limit
// bounds the test binary's run (-test.timeout).
func Driven(ctx context.Context, bin, dir, fuzzTest string, input []byte, limit time.Duration) (*Outcome, error) {
	tmp, err := os.MkdirTemp("", "rpcfuzz-driven-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	in, out := filepath.Join(tmp, "input"), filepath.Join(tmp, "outcome.json")
	if err := os.WriteFile(in, fuzzcase.MarshalGoCorpus(input), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "-test.run="+DrivenPattern(fuzzTest), "-test.timeout="+limit.String())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), EnvInput+"="+in, EnvOutcome+"="+out)
	output, runErr := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return nil, fmt.Errorf("driven run of %s: %w", fuzzTest, runErr)
	}
	var o Outcome
	data, err := os.ReadFile(out)
	switch {
	case err != nil && runErr == nil:
		// The binary passed without running the input: the fuzz test is
		// not there, or does not call rpcfuzz.Fuzz.
		return nil, fmt.Errorf("driven run of %s: no outcome: is %s a fuzz test of this package that calls rpcfuzz.Fuzz? (output: %s)", fuzzTest, fuzzTest, tail(output))
	case err == nil:
		if err := json.Unmarshal(data, &o); err != nil {
			return nil, fmt.Errorf("driven run of %s: outcome: %w", fuzzTest, err)
		}
	}
	if o.Judged {
		return &o, nil
	}
	// No verdict: the process died on the input (or before it, without
	// even the messages).
	o.Rule, o.Failed, o.Message = DiedRule, true, tail(output)
	return &o, fmt.Errorf("%w (%v): %s", ErrDied, runErr, tail(output))
}

// tail is the end of a process's output, enough to show a panic.
func tail(b []byte) string {
	const keep = 4 << 10
	b = bytes.TrimSpace(b)
	if len(b) > keep {
		b = append([]byte("…"), b[len(b)-keep:]...)
	}
	return string(b)
}
