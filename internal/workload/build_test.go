package workload

import (
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
