package report

import (
	"slices"
	"testing"

	"github.com/rpcload/rpcload/internal/stats"
)

// TestRoundsSection: the rounds runs table has p95 like every latency
// table, and a figure zero on both sides (no errors anywhere) shows no
// ratio rather than 1.000× (issue 15, items 13 and 23).
func TestRoundsSection(t *testing.T) {
	rr := &stats.RoundsReport{Targets: []string{"a", "b"}, Rounds: 1,
		Runs:   []stats.RoundRun{{Round: 1, Target: 0, P50us: 100, P95us: 150, P99us: 200}},
		Ratios: []stats.RoundsRatio{{Target: 1, Figure: "error_rate", Rounds: 1, Median: 1, Min: 1, Max: 1, WithinNoise: true, BothZero: true}}}
	sec := roundsSection(rr)
	ratios, runs := sec.Tables[0], sec.Tables[1]
	if got := ratios.Rows[0][2].Text; got != stats.NoValue {
		t.Errorf("median of a figure zero on both sides %q, want %q", got, stats.NoValue)
	}
	var head []string
	for _, c := range runs.Head {
		head = append(head, c.Text)
	}
	if !slices.Contains(head, "p95") || runs.Rows[0][4].Text != fmtUs(150) {
		t.Errorf("runs table head %q, row %+v: want p95 150µs", head, runs.Rows[0])
	}
}

// TestPartialMergeSection: a partial merge says so in the shards section,
// with what it lacks and why, even when nothing else would show the section.
func TestPartialMergeSection(t *testing.T) {
	tests := []struct {
		name    string
		partial *stats.Partial
		want    []string
	}{
		{"whole", nil, nil},
		{"missing", &stats.Partial{Missing: []string{"2/3", "3/3"}}, []string{"Partial: shards 2/3, 3/3 missing; the figures cover only the shards merged."}},
		{"reasons", &stats.Partial{Missing: []string{"2/3"}, Reasons: []string{"shard 2/3 at 127.0.0.1:9102 failed with exit 3"}},
			[]string{"Partial: shard 2/3 missing; the figures cover only the shards merged.", "shard 2/3 at 127.0.0.1:9102 failed with exit 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sec := shardSection(&stats.Result{Partial: tt.partial})
			if !slices.Equal(sec.Paras, tt.want) {
				t.Errorf("paragraphs %q; want %q", sec.Paras, tt.want)
			}
		})
	}
}
