package workload

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/workload/scenario"
)

// flags are the command line's defaults with the flags in set given.
func flags(set map[string]bool, adjust func(*Flags)) Flags {
	f := Flags{Duration: 10 * time.Second, Timeout: 10 * time.Second, MaxInFlight: 100000, IDFormat: "int", Arrival: "uniform",
		Set: func(name string) bool { return set[name] }}
	if adjust != nil {
		adjust(&f)
	}
	return f
}

func parse(t *testing.T, yaml string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("s.yaml", []byte(yaml), t.TempDir(), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestBuildNamesSettings: an error names the setting as the user wrote it:
// its key and line where the file gave it, its flag where the command line
// did, and a flag given over a bad value of the file replaces it.
func TestBuildNamesSettings(t *testing.T) {
	const batchOf5 = "mix:\n  - method: echo\n    batch: 5\n"
	for _, tc := range []struct {
		name   string
		file   string // "" for none
		set    map[string]bool
		adjust func(*Flags)
		want   string // "" for no error
	}{
		{"file max_inflight below a batch", "version: 1\nload:\n  rate: 10\n  max_inflight: 2\n" + batchOf5, nil, nil,
			"load.max_inflight (s.yaml:4) 2 cannot hold one batch of 5"},
		{"file concurrency below a batch", "version: 1\nload:\n  concurrency: 2\n" + batchOf5, nil, nil,
			"load.concurrency (s.yaml:3) 2 cannot hold one batch of 5; it counts requests in flight"},
		{"file concurrency split over more shards", "version: 1\nload:\n  concurrency: 2\nmix:\n  - method: echo\n",
			map[string]bool{"shard": true}, func(f *Flags) { f.Shard = "3/3" },
			"load.concurrency (s.yaml:3) 2 cannot be split over 3 shards"},
		{"flag max-inflight below a file batch", "version: 1\nload:\n  rate: 10\n" + batchOf5,
			map[string]bool{"max-inflight": true}, func(f *Flags) { f.MaxInFlight = 3 },
			"--max-inflight 3 cannot hold one batch of 5"},
		{"flag duration not positive", "version: 1\nload:\n  duration: 5s\nmix:\n  - method: echo\n",
			map[string]bool{"duration": true}, func(f *Flags) { f.Duration = 0 },
			"--duration must be positive (got 0s)"},
		{"flag duration without a file", "", map[string]bool{"duration": true, "method": true},
			func(f *Flags) { f.Duration, f.Method = -time.Second, "echo" }, "--duration must be positive (got -1s)"},
		{"flag over a bad file max_inflight", "version: 1\nload:\n  rate: 10\n  max_inflight: 2\n" + batchOf5,
			map[string]bool{"max-inflight": true}, func(f *Flags) { f.MaxInFlight = 10 }, ""},
		{"flag over a bad file concurrency", "version: 1\nload:\n  concurrency: 2\n" + batchOf5,
			map[string]bool{"concurrency": true}, func(f *Flags) { f.Concurrency = 8 }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sc *scenario.Scenario
			if tc.file != "" {
				sc = parse(t, tc.file)
			}
			_, err := Build(sc, flags(tc.set, tc.adjust), true)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Build: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Build: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestBuildLayers: the file's values stand in for the flags not given, the
// flags given win, the defaults fill the rest; the plan names each setting
// after where its value came from.
func TestBuildLayers(t *testing.T) {
	sc := parse(t, "version: 1\nseed: 7\nload:\n  rate: 50\n  duration: 2s\n  timeout: 3s\n  arrival: poisson\nmix:\n  - method: echo\n")
	p, err := Build(sc, flags(map[string]bool{"timeout": true}, func(f *Flags) { f.Timeout = time.Second }), true)
	if err != nil {
		t.Fatal(err)
	}
	if p.Rate != 50 || p.Duration != 2*time.Second || p.Timeout != time.Second || p.Drain != time.Second || p.Seed != 7 || !p.Poisson {
		t.Errorf("plan %+v", p)
	}
	for key, want := range map[string]string{"duration": "load.duration (s.yaml:5)", "rate": "load.rate (s.yaml:4)",
		"seed": "seed (s.yaml:2)", "timeout": "--timeout", "max-inflight": "--max-inflight"} {
		if got := p.Name(key); got != want {
			t.Errorf("name(%s) = %q, want %q", key, got, want)
		}
	}
	if len(p.Calls) != 1 || p.Calls[0].Name != "echo" || p.Single() {
		t.Errorf("calls %+v", p.Calls)
	}
	// Without a file: the default rate, the drain of the timeout.
	p, err = Build(nil, flags(map[string]bool{"method": true}, func(f *Flags) { f.Method = "echo" }), true)
	if err != nil {
		t.Fatal(err)
	}
	if p.Rate != defaultRate || p.Drain != p.Timeout || !p.Single() {
		t.Errorf("plan %+v", p)
	}
}

// TestBuildCutsStages: --duration over a file's stages ends them there, the
// stage it falls in at the load reached by then, so the load follows the
// file's course up to --duration; a --duration past the stages' end is
// refused, naming both.
func TestBuildCutsStages(t *testing.T) {
	const rateStages = "version: 1\nload:\n  start_rate: 100\n  stages:\n    - {duration: 30s, rate: 1000}\n    - {duration: 30s, rate: 1000}\n    - {duration: 1m, rate: 4000}\nmix:\n  - method: echo\n"
	const concStages = "version: 1\nload:\n  stages:\n    - {duration: 10s, concurrency: 64}\n    - {duration: 10s, concurrency: 8}\nmix:\n  - method: echo\n"
	dur := func(d time.Duration) func(*Flags) { return func(f *Flags) { f.Duration = d } }
	setDuration := map[string]bool{"duration": true}
	for _, tc := range []struct {
		name     string
		file     string
		set      map[string]bool
		adjust   func(*Flags)
		stages   []Stage // nil: no stages
		duration time.Duration
		err      string
	}{
		{"no --duration: the stages' length", rateStages, nil, nil,
			[]Stage{{30 * time.Second, 1000, 0}, {30 * time.Second, 1000, 0}, {time.Minute, 4000, 0}}, 2 * time.Minute, ""},
		{"cut inside a hold", rateStages, setDuration, dur(45 * time.Second),
			[]Stage{{30 * time.Second, 1000, 0}, {15 * time.Second, 1000, 0}}, 45 * time.Second, ""},
		{"cut inside the first ramp, from start_rate", rateStages, setDuration, dur(10 * time.Second),
			[]Stage{{10 * time.Second, 400, 0}}, 10 * time.Second, ""},
		{"cut inside a later ramp", rateStages, setDuration, dur(80 * time.Second),
			[]Stage{{30 * time.Second, 1000, 0}, {30 * time.Second, 1000, 0}, {20 * time.Second, 2000, 0}}, 80 * time.Second, ""},
		{"cut at a stage's end", rateStages, setDuration, dur(time.Minute),
			[]Stage{{30 * time.Second, 1000, 0}, {30 * time.Second, 1000, 0}}, time.Minute, ""},
		{"exactly the stages' length", rateStages, setDuration, dur(2 * time.Minute),
			[]Stage{{30 * time.Second, 1000, 0}, {30 * time.Second, 1000, 0}, {time.Minute, 4000, 0}}, 2 * time.Minute, ""},
		{"concurrency stages", concStages, setDuration, dur(15 * time.Second),
			[]Stage{{10 * time.Second, 0, 64}, {5 * time.Second, 0, 36}}, 15 * time.Second, ""},
		{"longer than the stages", rateStages, setDuration, dur(5 * time.Minute), nil, 0,
			"--duration 5m0s is longer than the 2m0s of load.stages (s.yaml:4)"},
		{"not positive", rateStages, setDuration, dur(0), nil, 0, "--duration must be positive (got 0s)"},
		{"--rate replaces the stages; --duration is the run's", rateStages, map[string]bool{"duration": true, "rate": true},
			func(f *Flags) { f.Duration, f.Rate = 5*time.Minute, 10 }, nil, 5 * time.Minute, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Build(parse(t, tc.file), flags(tc.set, tc.adjust), true)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Build: %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Duration != tc.duration || len(p.Stages) != len(tc.stages) {
				t.Fatalf("duration %s, stages %+v; want %s, %+v", p.Duration, p.Stages, tc.duration, tc.stages)
			}
			for i, st := range p.Stages {
				if want := tc.stages[i]; st.Duration != want.Duration || math.Abs(st.Rate-want.Rate) > 1e-9 || st.Concurrency != want.Concurrency {
					t.Errorf("stage %d %+v, want %+v", i+1, st, want)
				}
			}
		})
	}
}

// TestCutStagesKeepsTheCourse: the cut schedule sends what the whole one
// sends before the cut, at the same times.
func TestCutStagesKeepsTheCourse(t *testing.T) {
	const file = "version: 1\nload:\n  start_rate: 10\n  stages:\n    - {duration: 2s, rate: 200}\n    - {duration: 2s, rate: 50}\nmix:\n  - method: echo\n"
	whole, err := Build(parse(t, file), flags(nil, nil), true)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := Build(parse(t, file), flags(map[string]bool{"duration": true}, func(f *Flags) { f.Duration = 3 * time.Second }), true)
	if err != nil {
		t.Fatal(err)
	}
	ws, cs := NewSchedule(&whole), NewSchedule(&cut)
	n := 0
	for ; n < 10_000; n++ {
		c, ok := cs.Next()
		if !ok {
			break
		}
		w, _ := ws.Next()
		if d := c - w; d < -1000 || d > 1000 { // within a microsecond: float rounding
			t.Fatalf("arrival %d at %dns in the cut schedule, %dns in the whole one", n, c, w)
		}
	}
	if w, ok := ws.Next(); !ok || w < int64(3*time.Second)-1000 {
		t.Errorf("the cut schedule ended after %d arrivals; the whole one's next is at %dns (%v)", n, w, ok)
	}
}

// TestPace: the steady pace that stands for a plan's load (--diff).
func TestPace(t *testing.T) {
	for _, tc := range []struct {
		name        string
		file        string
		rate        float64
		concurrency int
	}{
		{"steady rate", "load: {rate: 40, duration: 1s}\n", 40, 0},
		{"rate stages: their average", "load:\n  start_rate: 100\n  stages:\n    - {duration: 1s, rate: 300}\n    - {duration: 1s, rate: 0}\n", 175, 0}, // (200 + 150) calls over 2 s
		{"steady concurrency", "load: {concurrency: 6, duration: 1s}\n", 0, 6},
		{"concurrency stages: their peak", "load:\n  stages:\n    - {duration: 1s, concurrency: 9}\n    - {duration: 1s, concurrency: 2}\n", 0, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Build(parse(t, "version: 1\n"+tc.file+"mix:\n  - method: echo\n"), flags(nil, nil), true)
			if err != nil {
				t.Fatal(err)
			}
			if rate, conc := p.Pace(); math.Abs(rate-tc.rate) > 1e-9 || conc != tc.concurrency {
				t.Errorf("Pace() = %g, %d; want %g, %d", rate, conc, tc.rate, tc.concurrency)
			}
		})
	}
}
