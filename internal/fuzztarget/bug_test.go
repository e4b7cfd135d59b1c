package fuzztarget

import (
	"errors"
	"testing"
)

func TestParseBugs(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Bug
		wantErr bool
	}{
		{"", 0, false},
		{"all", AllBugs, false},
		{"deep_nesting", DeepNesting, false},
		{" huge_id , hang ", HugeID | Hang, false},
		{"duplicate_key,lone_surrogate,big_batch", DuplicateKey | LoneSurrogate | BigBatch, false},
		{"null_batch,negative_int,empty_string,long_array", NullBatch | NegativeInt | EmptyString | LongArray, false},
		{"all,hang", AllBugs, false},
		{"deep-nesting", 0, true},
		{"hang,nope", 0, true},
	} {
		got, err := ParseBugs(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseBugs(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !errors.Is(err, ErrUnknownBug) {
			t.Errorf("ParseBugs(%q) error %v does not wrap ErrUnknownBug", tc.in, err)
		}
	}
}

// TestBugStringRoundTrip: every set of bugs prints as a list ParseBugs
// reads back, and every single bug has its own name.
func TestBugStringRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	all := append(Bugs(), HandlerBugs()...)
	for _, b := range all {
		if seen[b.String()] || b.String() == "" {
			t.Errorf("bug %d has name %q (seen before: %v)", uint16(b), b, seen[b.String()])
		}
		seen[b.String()] = true
	}
	if len(seen) != 10 || len(Bugs()) != 7 {
		t.Errorf("Bugs() and HandlerBugs() have %d names (Bugs() %d), want 10 (7)", len(seen), len(Bugs()))
	}
	var union Bug
	for _, b := range all {
		union |= b
	}
	if union != AllBugs {
		t.Errorf("Bugs() and HandlerBugs() make %v, not AllBugs", union)
	}
	for b := Bug(0); b <= AllBugs; b++ {
		got, err := ParseBugs(b.String())
		if err != nil || got != b {
			t.Errorf("ParseBugs(%q) = %v, %v; want %d", b.String(), got, err, uint16(b))
		}
	}
	if got := (Hang | 1<<10).String(); got != "hang,bug(10)" {
		t.Errorf("String of an unknown bit = %q", got)
	}
	if got := (Crash{LoneSurrogate}).Error(); got != "fuzztarget: planted bug lone_surrogate" {
		t.Errorf("Crash message %q", got)
	}
}
