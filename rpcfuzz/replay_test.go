package rpcfuzz

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/fuzzcase"
	"github.com/rpcload/rpcload/internal/fuzztarget"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/native"
)

// TestDriven runs Fuzz as a driven run sees it (the environment naming
// an input and an outcome file): the input is the only seed, and the
// outcome holds its messages (a choice stream expanded with the test's
// Options) and its verdict.
func TestDriven(t *testing.T) {
	opts := Options{Methods: []string{"echo"}}
	exp, err := native.New(native.Options{Methods: opts.Methods, Framing: mutate.FramingNone})
	if err != nil {
		t.Fatal(err)
	}
	stream := []byte{3, 200, 17, 5, 99, 1, 2, 3}
	huge := fuzztarget.TriggerFrame(fuzztarget.HugeID)
	tests := []struct {
		name       string
		bugs       fuzztarget.Bug
		input      []byte
		wantFrames [][]byte
		wantLit    bool
		wantRule   string
	}{
		{"literal call passes", 0, Literal([]byte(call1)), [][]byte{[]byte(call1)}, true, ""},
		{"literal crash", fuzztarget.HugeID, Literal([]byte(call1), huge), [][]byte{[]byte(call1), huge}, true, "crash"},
		{"choice stream expanded by the test's options", 0, stream, exp.Expand(stream).Case.Frames, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "input"), filepath.Join(dir, "outcome.json")
			if err := os.WriteFile(in, fuzzcase.MarshalGoCorpus(tt.input), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv(native.EnvInput, in)
			t.Setenv(native.EnvOutcome, out)
			s := fuzztarget.New(tt.bugs)
			f := &fakeF{}
			Fuzz(f, Func(func(req []byte) []byte { return s.Handle(t.Context(), req) }), opts)
			if len(f.fatals) > 0 || len(f.adds) != 1 || len(f.fuzz) != 1 {
				t.Fatalf("Fuzz: fatals %q, %d seeds, %d Fuzz calls; want the input as the only seed", f.fatals, len(f.adds), len(f.fuzz))
			}
			if got := f.adds[0][0].([]byte); !bytes.Equal(got, tt.input) {
				t.Fatalf("seed %q, want the driven input %q", got, tt.input)
			}
			run := f.fuzz[0].(func(T, []byte))
			// A seed of the test's own is run as usual, and writes nothing.
			run(&fakeT{name: "FuzzX/seed#1"}, Literal([]byte(call1), []byte(call1)))
			if _, err := os.Stat(out); err == nil {
				t.Fatal("an outcome was written for a seed that is not the driven input")
			}
			ft := &fakeT{name: "FuzzX/seed#0"}
			run(ft, tt.input)
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var o native.Outcome
			if err := json.Unmarshal(data, &o); err != nil {
				t.Fatal(err)
			}
			if !o.Judged || o.Literal != tt.wantLit || o.Rule != tt.wantRule || o.Failed != (tt.wantRule != "") {
				t.Fatalf("outcome judged %v literal %v rule %q failed %v; want literal %v rule %q", o.Judged, o.Literal, o.Rule, o.Failed, tt.wantLit, tt.wantRule)
			}
			if !slices.EqualFunc(o.Frames, tt.wantFrames, bytes.Equal) {
				t.Fatalf("outcome frames %q, want %q", o.Frames, tt.wantFrames)
			}
			if (len(ft.fatals) > 0) != o.Failed || o.Failed && ft.fatals[0] != o.Message {
				t.Fatalf("the input's run reported %q; want the outcome's message %q", ft.fatals, o.Message)
			}
		})
	}
}

// TestReplay runs Replay on case files through fuzz tests of this test
// binary: the correct server passes, the one with a planted bug fails
// with the harness's message.
func TestReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs this test binary again")
	}
	tests := []struct {
		name     string
		fuzzTest string
		msgs     [][]byte
		want     string // in the failure; "" passes
	}{
		{"correct server", "FuzzExample", [][]byte{[]byte(call1)}, ""},
		{"planted crash", "FuzzPlantedHugeID", [][]byte{fuzztarget.TriggerFrame(fuzztarget.HugeID)}, "rpcfuzz: crash"},
		{"no such fuzz test", "FuzzNothing", [][]byte{[]byte(call1)}, "no outcome"},
		{"the process dies", "FuzzDies", [][]byte{[]byte(call1)}, "crash: the test process died"},
	}
	// The planted-bug fuzz tests run only with it set; the test process
	// Replay starts inherits it.
	t.Setenv(plantedEnv, "own")
	t.Setenv(diesEnv, "1")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := native.NewCaseFile(tt.fuzzTest, "crash", "", mutate.Case{Frames: tt.msgs}).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "case.json")
			if err := os.WriteFile(file, data, 0o600); err != nil {
				t.Fatal(err)
			}
			ft := &fakeT{name: "TestRegression"}
			Replay(ft, tt.fuzzTest, file)
			switch {
			case tt.want == "" && len(ft.fatals) > 0:
				t.Fatalf("Replay failed: %q", ft.fatals)
			case tt.want != "" && (len(ft.fatals) != 1 || !strings.Contains(ft.fatals[0], tt.want)):
				t.Fatalf("Replay reported %q; want one failure with %q", ft.fatals, tt.want)
			}
		})
	}
}

// diesEnv lets FuzzDies run: it kills its test process.
const diesEnv = "RPCFUZZ_TEST_DIES"

// FuzzDies has a target that panics on a goroutine of its own, which
// the harness cannot recover: the test process dies. It is skipped unless
// diesEnv is set (TestReplay sets it for the process Replay starts).
func FuzzDies(f *testing.F) {
	if os.Getenv(diesEnv) == "" {
		f.Skip("set " + diesEnv + ": its target kills the test process")
	}
	Fuzz(f, Func(func([]byte) []byte {
		go panic("rpcfuzz test: a panic on the server's own goroutine")
		select {} // until the panic ends the process
	}), Options{})
}
