package engine

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestShardsUnionIsTheWholeRun: n shards together send the very requests
// one instance would (the same calls and params, seeded by the whole run's
// sequence numbers), each from its own id range.
func TestShardsUnionIsTheWholeRun(t *testing.T) {
	cfg := baseConfig(target(t, "tcp://127.0.0.1:1"))
	cfg.Calls = []Call{{Method: "echo", Params: counterParams{}, Weight: 2}, {Method: "add", Params: StaticParams(`[1,2]`)}}
	cfg.Seed = 11
	idRe := regexp.MustCompile(`"id":(\d+)`)
	lines := func(c Config, n int) (bodies []string, ids []string) {
		var b strings.Builder
		if err := DryRun(c, n, &b); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			ids = append(ids, idRe.FindStringSubmatch(l)[1])
			bodies = append(bodies, idRe.ReplaceAllString(l, `"id":_`))
		}
		return bodies, ids
	}
	whole, _ := lines(cfg, 12)
	var union []string
	seenIDs := map[string]bool{}
	for i := 1; i <= 3; i++ {
		c := cfg
		c.Shard = Shard{Index: i, Count: 3}
		bodies, ids := lines(c, 4)
		for k, b := range bodies {
			// Shard i's k-th message is the whole run's (k*3+i)-th.
			if want := whole[k*3+i-1]; b != want {
				t.Errorf("shard %d/3 message %d = %s, want the whole run's %d-th: %s", i, k+1, b, k*3+i, want)
			}
		}
		union = append(union, bodies...)
		for _, id := range ids {
			if seenIDs[id] {
				t.Errorf("id %s used by two shards", id)
			}
			seenIDs[id] = true
		}
	}
	slices.Sort(union)
	sortedWhole := slices.Clone(whole)
	slices.Sort(sortedWhole)
	if !slices.Equal(union, sortedWhole) {
		t.Errorf("the shards' union differs from the whole run")
	}
}

// TestShardSchedule: evenly spaced arrivals of shard i/n fall on the whole
// run's instants i, i+n, ...; the rate and concurrency are divided so the
// parts add up to the whole.
func TestShardSchedule(t *testing.T) {
	base := Config{Rate: 100, Duration: time.Second}
	whole := arrivals(t, base)
	var total int
	for i := 1; i <= 3; i++ {
		c := base
		c.Shard = Shard{Index: i, Count: 3}
		if err := c.applyShard(); err != nil {
			t.Fatal(err)
		}
		got := arrivals(t, c)
		total += len(got)
		for k, at := range got {
			want := whole[k*3+i-1]
			if d := at - want; d < -time.Microsecond || d > time.Microsecond {
				t.Fatalf("shard %d/3 arrival %d at %s, want %s", i, k, at, want)
			}
		}
	}
	if total != len(whole) {
		t.Errorf("the shards send %d arrivals, the whole run %d", total, len(whole))
	}

	for _, tc := range []struct {
		concurrency, n int
		want           []int
	}{{10, 3, []int{4, 3, 3}}, {3, 3, []int{1, 1, 1}}, {64, 1, []int{64}}} {
		var got []int
		for i := 1; i <= tc.n; i++ {
			c := Config{Concurrency: tc.concurrency, Shard: Shard{Index: i, Count: tc.n}}
			if err := c.applyShard(); err != nil {
				t.Fatal(err)
			}
			got = append(got, c.Concurrency)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("concurrency %d over %d shards: %v, want %v", tc.concurrency, tc.n, got, tc.want)
		}
	}
}

func TestShardErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Rate: 10, Shard: Shard{Index: 0, Count: 3}}, "i must be between 1 and n=3"},
		{Config{Rate: 10, Shard: Shard{Index: 4, Count: 3}}, "i must be between 1 and n=3"},
		{Config{Rate: 10, Shard: Shard{Index: 1, Count: 0}}, "n must be between 1 and 8192"},
		{Config{Rate: 10, Shard: Shard{Index: 1, Count: 9000}}, "n must be between 1 and 8192"},
		{Config{Concurrency: 2, Shard: Shard{Index: 3, Count: 3}}, "cannot be split over 3 shards"},
	} {
		err := tc.cfg.applyShard()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg.Shard, err, tc.want)
		}
	}
	// Applying twice divides once.
	c := Config{Rate: 90, Stages: []Stage{{Duration: time.Second, Rate: 30}}, Shard: Shard{Index: 1, Count: 3}}
	stages := c.Stages
	c.applyShard()
	c.applyShard()
	if c.Rate != 30 || c.Stages[0].Rate != 10 || stages[0].Rate != 30 {
		t.Errorf("after two applications: rate %g, stage %g, caller's stage %g", c.Rate, c.Stages[0].Rate, stages[0].Rate)
	}
}

func TestWaitStart(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	if err := waitStart(nil, now.Add(-time.Minute), clock); err != nil {
		t.Errorf("a past start: %v", err)
	}
	if err := waitStart(nil, now.Add(25*time.Hour), clock); err == nil || !strings.Contains(err.Error(), "more than 24h0m0s away") {
		t.Errorf("a start a day away: %v", err)
	}
	done := make(chan struct{})
	close(done)
	if err := waitStart(done, now.Add(time.Hour), clock); err != errStartCancelled {
		t.Errorf("interrupted wait: %v", err)
	}
}

// TestShardKeepsWholeLoad: a shard's Config still tells the whole run's load.
func TestShardKeepsWholeLoad(t *testing.T) {
	c := Config{Rate: 90, Stages: []Stage{{Duration: time.Second, Rate: 30}}, Shard: Shard{Index: 2, Count: 3}}
	if err := c.applyShard(); err != nil {
		t.Fatal(err)
	}
	w := c.Whole()
	if w.Rate != 90 || w.Stages[0].Rate != 30 || c.Rate != 30 {
		t.Errorf("whole %+v, shard rate %g", w, c.Rate)
	}
	u := Config{Concurrency: 7}
	if w := u.Whole(); w.Concurrency != 7 {
		t.Errorf("an unsharded run's whole load: %+v", w)
	}
}
