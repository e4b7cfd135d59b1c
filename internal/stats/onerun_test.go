package stats

import (
	"strings"
	"testing"
)

// TestOneRun: the shards of one run pass; a whole run, a merge of whole
// runs, another target or other settings (but the seed) are named.
func TestOneRun(t *testing.T) {
	shard := func(i int, settings map[string]any) *Result {
		return &Result{Target: "tcp://a", Shard: &ShardInfo{Index: i, Count: 3}, Settings: settings}
	}
	same := func() map[string]any { return map[string]any{"rate": 300.0, "duration": "10s", "seed": "1"} }
	merged := func(leaves ...MergedPart) *Result {
		return &Result{Target: "tcp://a", Settings: same(), MergedFrom: leaves}
	}
	for _, tc := range []struct {
		name  string
		parts []*Result
		want  string // "" for none
	}{
		{"one result", []*Result{{Target: "tcp://a"}}, ""},
		{"shards of one run", []*Result{shard(1, same()), shard(2, same()), shard(3, same())}, ""},
		{"seeds differ", []*Result{shard(1, same()), shard(2, map[string]any{"rate": 300.0, "duration": "10s", "seed": "2"})}, ""},
		{"a merge of shards and a shard", []*Result{merged(MergedPart{Path: "m1", Shard: &ShardInfo{Index: 1, Count: 3}}), shard(2, same())}, ""},
		{"a whole run", []*Result{shard(1, same()), {Target: "tcp://a", Settings: same()}}, "p1 is not a shard"},
		{"a merge of whole runs", []*Result{merged(MergedPart{Path: "w1"}), shard(2, same())}, "p0 was merged from w1, which is not a shard"},
		{"another target", []*Result{shard(1, same()), {Target: "tcp://b", Shard: &ShardInfo{Index: 2, Count: 3}, Settings: same()}},
			"p0 and p1 are not shards of one run: target tcp://a against tcp://b"},
		{"other settings", []*Result{shard(1, same()), shard(2, map[string]any{"rate": 100.0, "duration": "10s", "batch": 5.0})},
			"p0 and p1 are not shards of one run: batch none against 5; rate 300 against 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paths := make([]string, len(tc.parts))
			for i := range paths {
				paths[i] = "p" + string(rune('0'+i))
			}
			err := OneRun(tc.parts, paths)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("OneRun: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("OneRun: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
