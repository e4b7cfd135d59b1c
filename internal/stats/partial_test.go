package stats

import (
	"bytes"
	"strings"
	"testing"
)

// TestPartialShows: a partial merge says what it lacks and why in the text
// report, and a comparison that holds one warns of it.
func TestPartialShows(t *testing.T) {
	a, b := withShard(*baseResult(t), 1, 3), withShard(*baseResult(t), 3, 3)
	merged, err := Merge([]*Result{a, b}, []string{"127.0.0.1:9101", "127.0.0.1:9103"})
	if err != nil {
		t.Fatal(err)
	}
	merged.Partial.Reasons = append(merged.Partial.Reasons, "shard 2/3 at 127.0.0.1:9102 failed with exit 3: target unreachable")
	var text bytes.Buffer
	if err := WriteText(&text, merged); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"partial     shard 2/3 missing: the figures cover only the shards merged\n  shard 2/3 at 127.0.0.1:9102 failed with exit 3: target unreachable\n",
		"WARNING: shards 2/3 are missing: the merge covers 2 of the run's 3 shards",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, &text)
		}
	}

	var cmp bytes.Buffer
	if err := WriteComparison(&cmp, []string{"whole.json", "total.json"}, []*Result{a, merged}); err != nil {
		t.Fatal(err)
	}
	if want := "WARNING: total.json is a partial merge (shard 2/3 missing): it holds only part of its run's load"; !strings.Contains(cmp.String(), want) {
		t.Errorf("the comparison lacks %q:\n%s", want, &cmp)
	}
	if strings.Contains(cmp.String(), "whole.json is a partial") {
		t.Errorf("a whole result is called partial:\n%s", &cmp)
	}
}

func TestPartialText(t *testing.T) {
	tests := []struct {
		p    Partial
		want string
	}{
		{Partial{Missing: []string{"2/3"}}, "shard 2/3 missing"},
		{Partial{Missing: []string{"2/3", "3/3"}, Reasons: []string{"r"}}, "shards 2/3, 3/3 missing"},
		{Partial{Reasons: []string{"127.0.0.1:9 never answered"}}, "127.0.0.1:9 never answered"},
		{Partial{}, "partial"},
	}
	for _, tt := range tests {
		if got := tt.p.Text(); got != tt.want {
			t.Errorf("%+v: %q; want %q", tt.p, got, tt.want)
		}
	}
}
