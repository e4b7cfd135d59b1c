package oracle

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/mutate"
)

func frames(fs ...string) mutate.Case {
	var c mutate.Case
	for _, f := range fs {
		c.Frames = append(c.Frames, []byte(f))
	}
	return c
}

// TestSlowRule: inputs are judged against the median of clean exchanges
// their size, once SlowWarmup were seen, above Factor times it and the
// Floor; a slow one does not move the median.
func TestSlowRule(t *testing.T) {
	small := frames(`{"id":1}`)
	big := frames(`[` + strings.Repeat(`{"id":1},`, 500) + `1]`)
	wire := mutate.Case{Wire: []byte(strings.Repeat("x", 9))}
	for _, tt := range []struct {
		name   string
		warm   mutate.Case   // SlowWarmup clean exchanges of it, 1 ms each
		in     mutate.Case   // then this one
		d      time.Duration // taking this long
		floor  time.Duration
		slow   bool
		median time.Duration // of in's size afterwards
	}{
		{"many medians slower", small, small, 30 * time.Millisecond, 0, true, time.Millisecond},
		{"at the limit is not slow", small, small, 20 * time.Millisecond, 0, false, time.Millisecond},
		{"under the floor", small, small, 30 * time.Millisecond, 50 * time.Millisecond, false, time.Millisecond},
		{"another size is not compared", small, big, time.Second, 0, false, 0},
		{"wire bytes count as size", frames(`123456789`), wire, 30 * time.Millisecond, 0, true, time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := SlowRule{Factor: 20, Floor: tt.floor}
			for i := range SlowWarmup {
				if r.Judge(tt.warm, time.Millisecond) {
					t.Fatalf("warm-up exchange %d judged slow", i)
				}
			}
			if got := r.Judge(tt.in, tt.d); got != tt.slow {
				t.Errorf("Judge(%s) = %v, want %v (limit %s)", tt.d, got, tt.slow, r.Limit(InputSize(tt.in)))
			}
			// The histogram keeps 2 significant digits, up to 1/128 off.
			if med, _ := r.Median(InputSize(tt.in)); med.Round(100*time.Microsecond) != tt.median {
				t.Errorf("median %s afterwards, want %s", med, tt.median)
			}
		})
	}
}

// TestSlowRuleWarmup: nothing is slow before SlowWarmup inputs its size,
// however slow.
func TestSlowRuleWarmup(t *testing.T) {
	r := SlowRule{Factor: 2}
	in := frames(`{}`)
	for i := range SlowWarmup - 1 {
		d := time.Millisecond
		if i == SlowWarmup-2 {
			d = time.Hour
		}
		if r.Judge(in, d) || r.Limit(InputSize(in)) != 0 {
			t.Fatalf("after %d inputs: judged slow, or limit %s", i+1, r.Limit(InputSize(in)))
		}
	}
	r.Judge(in, time.Millisecond)
	if r.Limit(InputSize(in)) == 0 {
		t.Errorf("after %d inputs: no limit yet", SlowWarmup)
	}
}
