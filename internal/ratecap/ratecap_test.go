package ratecap

import (
	"math"
	"testing"
	"time"
)

// TestNew: the bucket starts with one token, refills at the rate, and
// holds CatchUp's worth at most, on an injected clock.
func TestNew(t *testing.T) {
	for _, tt := range []struct {
		perSecond float64
		burst     int
	}{
		{200, 50},
		{10, 3},
		{1000, 250},
		{0.5, 1},
	} {
		l := New(tt.perSecond)
		if l.Burst() != tt.burst {
			t.Errorf("New(%g).Burst() = %d, want %d", tt.perSecond, l.Burst(), tt.burst)
		}
		now := time.Now()
		if !l.AllowN(now, 1) || l.AllowN(now, 1) {
			t.Errorf("New(%g): want exactly one token at the start", tt.perSecond)
		}
		later := now.Add(time.Hour) // long idle: the bucket is full, no more
		if !l.AllowN(later, tt.burst) || l.AllowN(later, 1) {
			t.Errorf("New(%g): want %d tokens after a long idle, and no more", tt.perSecond, tt.burst)
		}
		next := later.Add(time.Duration(float64(time.Second) / tt.perSecond))
		if !l.AllowN(next, 1) || l.AllowN(next, 1) {
			t.Errorf("New(%g): want one token one interval later", tt.perSecond)
		}
	}
}

// TestNewHugeRate: the catch-up burst has a bound, however high the rate.
func TestNewHugeRate(t *testing.T) {
	if b := New(1e300).Burst(); b != 1<<20 {
		t.Errorf("New(1e300).Burst() = %d, want %d", b, 1<<20)
	}
}

func TestNewNoCap(t *testing.T) {
	for _, r := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if l := New(r); l != nil {
			t.Errorf("New(%g) = %v, want nil (no cap)", r, l)
		}
	}
}
