package rpcfuzz

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/fuzzcase"
	"github.com/rpcload/rpcload/internal/native"
)

// replayLimit bounds the test process Replay starts.
const replayLimit = 2 * time.Minute

// Replay runs the literal case in file (a JSON file of testdata/rpcfuzz/,
// as rpcfuzz minimize writes it) through the fuzz test fuzzTest of the
// running test binary, and fails t with that test's failure message if
// the case fails: the regression test rpcfuzz minimize writes beside a
// minimized case. The fuzz test (a function of this package that calls
// Fuzz) sends it to its own target with its own Options, so the
// regression test needs neither: it runs this test binary again, with
// -test.run selecting the fuzz test and the environment variables of a
// driven run (see docs/fuzzing-native.md) naming the case. A warning is
// logged with t.Log. Replay must run under go test, in the package's
// directory.
func Replay(t T, fuzzTest, file string) {
	t.Helper()
	if _, _, ok := native.DrivenFiles(); ok {
		t.Fatal("rpcfuzz.Replay: called in a driven run (" + native.EnvInput + " is set)")
		return
	}
	cf, err := native.ReadCaseFile(file)
	if err != nil {
		t.Fatal("rpcfuzz.Replay: " + err.Error())
		return
	}
	o, err := native.Driven(context.Background(), os.Args[0], "", fuzzTest, fuzzcase.Encode(cf.Case()), replayLimit)
	switch {
	case errors.Is(err, native.ErrDied):
		t.Fatal("rpcfuzz.Replay: " + file + ": crash: " + err.Error())
	case err != nil:
		t.Fatal("rpcfuzz.Replay: " + file + ": " + err.Error())
	case o.Failed:
		t.Fatal(o.Message)
	case o.Rule != "":
		t.Log(o.Message)
	}
}

// drive runs the one input of a driven run (native.EnvInput) as the only
// seed of f, and writes what it stood for and its verdict to the file
// native.EnvOutcome names. The test then passes or fails as for any
// input.
func (h *harness) drive(f F, inputFile, outcomeFile string) {
	f.Helper()
	input, err := native.ReadInput(inputFile)
	if err != nil {
		f.Fatal("rpcfuzz: driven run: " + err.Error())
		return
	}
	f.Add(input)
	run := func(t T, data []byte) {
		t.Helper()
		if !bytes.Equal(data, input) {
			return // a seed of the test's own, not the driven input
		}
		in := h.exp.Expand(data)
		o := &native.Outcome{Literal: in.Literal, Seed: in.Seed, Ops: in.OpNames()}
		o.SetCase(in.Case)
		// The messages first: if the input kills the process, they are
		// what the driver learns of it.
		if err := native.WriteOutcome(outcomeFile, o); err != nil {
			t.Fatal("rpcfuzz: driven run: " + err.Error())
			return
		}
		res := h.run(data)
		if res != nil {
			o.Rule, o.Failed, o.Message = res.rule.String(), res.failed, res.message(data, t.Name())
		}
		o.Judged = true
		if err := native.WriteOutcome(outcomeFile, o); err != nil {
			t.Fatal("rpcfuzz: driven run: " + err.Error())
			return
		}
		h.report(t, data, res)
	}
	if tf, ok := f.(*testing.F); ok {
		tf.Fuzz(func(t *testing.T, data []byte) { run(t, data) })
		return
	}
	f.Fuzz(run)
}
