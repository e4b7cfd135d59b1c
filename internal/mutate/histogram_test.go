package mutate

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/corpus"
)

// opHistogram mutates n inputs drawn from the shipped corpus (seeded),
// rounds times each (the native harness runs up to four rounds on one
// input), as a newline-framed stream target gets them, and returns how
// many inputs each op was applied to.
func opHistogram(n, rounds int, seed uint64) map[string]int {
	seeds := corpus.Seeds("")
	var donors [][]byte
	for _, s := range seeds {
		donors = append(donors, s.Frames...)
	}
	m := New(&Env{Framing: FramingNewline, Methods: corpus.Methods("jsonrpc"), Corpus: donors})
	c := NewRand(seed)
	hits := map[string]int{}
	ops := Ops()
	for k := range n {
		in := Case{Frames: seeds[k%len(seeds)].Frames}
		seen := map[int]bool{}
		for range rounds {
			var applied []int
			in, applied = m.Mutate(c, Case{Frames: in.Frames})
			for _, i := range applied {
				if !seen[i] {
					seen[i] = true
					hits[ops[i].Name]++
				}
			}
		}
	}
	return hits
}

// TestOpHistogram holds the share of inputs each op touches, without
// rewards (the native harness never rewards), to bounds: ndjson_newline
// breaks the framing of the whole input, which leaves nothing owed and
// only envelopes to judge, so it must stay rare.
func TestOpHistogram(t *testing.T) {
	const n = 10_000
	for _, tc := range []struct {
		rounds int
		limit  float64 // the most inputs ndjson_newline may touch
	}{{1, 0.025}, {4, 0.08}} {
		hits := opHistogram(n, tc.rounds, 1)
		names := make([]string, 0, len(hits))
		for name := range hits {
			names = append(names, name)
		}
		slices.SortFunc(names, func(a, b string) int { return hits[b] - hits[a] })
		var b strings.Builder
		for _, name := range names {
			fmt.Fprintf(&b, "%-24s %5d %5.1f%%\n", name, hits[name], 100*float64(hits[name])/n)
		}
		t.Logf("inputs each op touched, %d inputs of %d round(s):\n%s", n, tc.rounds, b.String())
		if share := float64(hits["ndjson_newline"]) / n; share > tc.limit {
			t.Errorf("%d round(s): ndjson_newline touches %.1f%% of inputs; want at most %.1f%%", tc.rounds, 100*share, 100*tc.limit)
		}
	}
}
