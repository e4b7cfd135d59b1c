package rpcfuzz

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/fuzztarget"
)

// plantedTarget serves s the way kind says: "own" (a Target of one's own
// calling Handle with the input's context), "handler" or "stream".
func plantedTarget(s *fuzztarget.Server, kind string) Target {
	switch kind {
	case "handler":
		return Handler(s.HTTPHandler())
	case "stream":
		return Stream(s.ServeStream)
	}
	return handleTarget{s}
}

// plantedOptions are what a user of rpcfuzz would write for fuzztarget:
// its two methods. The timeout is shorter than the default because a hang
// costs one, but long enough that a big input under -race on a busy
// machine is not taken for a hang.
func plantedOptions() Options {
	return Options{Methods: []string{"echo", "add"}, Timeout: 500 * time.Millisecond}
}

// foundBug reports whether res is bug's finding: a crash naming it, or a
// hang for the hang bug.
func foundBug(res *result, bug fuzztarget.Bug) bool {
	if bug == fuzztarget.Hang {
		return res.rule == check.Hang
	}
	return res.rule == check.Crash && strings.Contains(res.verdicts[res.main].note, fuzztarget.Crash{Bug: bug}.Error())
}

// TestPlantedBugs stands for the fuzzer without coverage guidance: for each
// planted bug, pseudo-random choice streams over the shipped corpus and the
// two methods must find it within a bounded count, and nothing else may
// fail first. The streams come from one fixed seed, so the test is
// deterministic; but any change to the corpus or the mutator draws new
// messages from them, so the limits sit at or above the 95th percentile of the
// count each bug needs (measured over 20 seeds for the hang, which takes
// two precise edits: ~10,000 inputs on average, 25,000 at the 95th
// percentile), not at what this seed happens to need (logged with -v).
func TestPlantedBugs(t *testing.T) {
	tests := []struct {
		bug   fuzztarget.Bug
		kind  string
		limit int
	}{
		{fuzztarget.DeepNesting, "own", 3000},
		{fuzztarget.HugeID, "own", 5000},
		{fuzztarget.DuplicateKey, "own", 3000},
		{fuzztarget.LoneSurrogate, "own", 3000},
		{fuzztarget.BigBatch, "own", 5000},
		{fuzztarget.Hang, "own", 40000},
		{fuzztarget.DeepNesting, "stream", 3000},
		{fuzztarget.HugeID, "handler", 5000},
		{fuzztarget.DuplicateKey, "stream", 3000},
		{fuzztarget.LoneSurrogate, "handler", 3000},
		{fuzztarget.BigBatch, "stream", 5000},
	}
	for _, tc := range tests {
		t.Run(tc.bug.String()+"/"+tc.kind, func(t *testing.T) {
			h := mustHarness(t, plantedTarget(fuzztarget.New(tc.bug), tc.kind), plantedOptions())
			r := rand.New(rand.NewPCG(1, 1))
			for i := range tc.limit {
				data := make([]byte, 4+r.IntN(28))
				for k := range data {
					data[k] = byte(r.Uint32())
				}
				res := h.run(data)
				if res == nil || !res.failed {
					continue
				}
				if !foundBug(res, tc.bug) {
					t.Fatalf("input %d failed otherwise: %s", i, res.message(data, "FuzzX"))
				}
				t.Logf("found after %d inputs: seed %s, ops %v", i+1, res.in.Seed, res.in.OpNames())
				return
			}
			t.Fatalf("not found in %d inputs", tc.limit)
		})
	}
}

// plantedEnv turns on the per-bug fuzz targets; its value is the target
// kind ("own", "handler", "stream"; anything else is "own").
// scripts/native-planted.sh sets it.
const plantedEnv = "RPCFUZZ_PLANTED"

// fuzzPlanted fuzzes fuzztarget with bug planted, as a user would fuzz
// their server: the shipped corpus and the two methods. It is skipped
// unless plantedEnv is set, since under -fuzz it fails by design.
func fuzzPlanted(f *testing.F, bug fuzztarget.Bug) {
	kind := os.Getenv(plantedEnv)
	if kind == "" {
		f.Skip("set " + plantedEnv + " (to own, handler or stream) to fuzz for the planted bug")
	}
	o := plantedOptions()
	o.Timeout = time.Second
	Fuzz(f, plantedTarget(fuzztarget.New(bug), kind), o)
}

func FuzzPlantedDeepNesting(f *testing.F)   { fuzzPlanted(f, fuzztarget.DeepNesting) }
func FuzzPlantedHugeID(f *testing.F)        { fuzzPlanted(f, fuzztarget.HugeID) }
func FuzzPlantedDuplicateKey(f *testing.F)  { fuzzPlanted(f, fuzztarget.DuplicateKey) }
func FuzzPlantedLoneSurrogate(f *testing.F) { fuzzPlanted(f, fuzztarget.LoneSurrogate) }
func FuzzPlantedBigBatch(f *testing.F)      { fuzzPlanted(f, fuzztarget.BigBatch) }
func FuzzPlantedHang(f *testing.F)          { fuzzPlanted(f, fuzztarget.Hang) }
