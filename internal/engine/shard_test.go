package engine

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/workload"
)

// TestShardsUnionIsTheWholeRun: n shards together send the very requests
// one instance would (the same calls and params, seeded by the whole run's
// sequence numbers), each from its own id range.
func TestShardsUnionIsTheWholeRun(t *testing.T) {
	cfg := baseConfig(target(t, "tcp://127.0.0.1:1"))
	cfg.Calls = []workload.Call{{Method: "echo", Params: counterParams{}, Weight: 2}, {Method: "add", Params: workload.StaticParams(`[1,2]`)}}
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
		c.Shard = workload.Shard{Index: i, Count: 3}
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
