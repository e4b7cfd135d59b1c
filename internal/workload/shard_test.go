package workload

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestShardSchedule: evenly spaced arrivals of shard i/n fall on the whole
// run's instants i, i+n, ...; the rate and concurrency are divided so the
// parts add up to the whole.
func TestShardSchedule(t *testing.T) {
	base := Plan{Rate: 100, Duration: time.Second}
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
			c := Plan{Concurrency: tc.concurrency, Shard: Shard{Index: i, Count: tc.n}}
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
		cfg  Plan
		want string
	}{
		{Plan{Rate: 10, Shard: Shard{Index: 0, Count: 3}}, "i must be between 1 and n=3"},
		{Plan{Rate: 10, Shard: Shard{Index: 4, Count: 3}}, "i must be between 1 and n=3"},
		{Plan{Rate: 10, Shard: Shard{Index: 1, Count: 0}}, "n must be between 1 and 8192"},
		{Plan{Rate: 10, Shard: Shard{Index: 1, Count: 9000}}, "n must be between 1 and 8192"},
		{Plan{Concurrency: 2, Shard: Shard{Index: 3, Count: 3}}, "cannot be split over 3 shards"},
	} {
		err := tc.cfg.applyShard()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg.Shard, err, tc.want)
		}
	}
	// Validating twice divides once.
	c := Plan{StartRate: 90, Stages: []Stage{{Duration: time.Second, Rate: 30}}, Shard: Shard{Index: 1, Count: 3},
		Timeout: time.Second, MaxInFlight: 10, Method: "m"}
	stages := c.Stages
	for range 2 {
		if err := c.Validate(true); err != nil {
			t.Fatal(err)
		}
	}
	if c.StartRate != 30 || c.Stages[0].Rate != 10 || stages[0].Rate != 30 {
		t.Errorf("after two validations: start rate %g, stage %g, caller's stage %g", c.StartRate, c.Stages[0].Rate, stages[0].Rate)
	}
}

// TestShardKeepsWholeLoad: a shard's Plan still tells the whole run's load.
func TestShardKeepsWholeLoad(t *testing.T) {
	c := Plan{Rate: 90, Stages: []Stage{{Duration: time.Second, Rate: 30}}, Shard: Shard{Index: 2, Count: 3}}
	if err := c.applyShard(); err != nil {
		t.Fatal(err)
	}
	w := c.Whole()
	if w.Rate != 90 || w.Stages[0].Rate != 30 || c.Rate != 30 {
		t.Errorf("whole %+v, shard rate %g", w, c.Rate)
	}
	u := Plan{Concurrency: 7}
	if w := u.Whole(); w.Concurrency != 7 {
		t.Errorf("an unsharded run's whole load: %+v", w)
	}
}
