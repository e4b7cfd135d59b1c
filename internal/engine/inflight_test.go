package engine

import "testing"

// TestIntervalInFlightMax: each interval's gauge is the most in flight at
// once during it, not the count at its end, and the next interval starts
// from what is still in flight.
func TestIntervalInFlightMax(t *testing.T) {
	type step struct {
		admit, release int64
	}
	tests := []struct {
		name  string
		steps [][]step // per interval
		want  []int64  // ivMaxSwap at each interval's end
	}{
		{"a burst that came and went", [][]step{{{admit: 163}, {release: 162}}}, []int64{163}},
		{"the next interval starts from what is left", [][]step{{{admit: 10}, {release: 6}}, {}, {{release: 4}}}, []int64{10, 4, 4}},
		{"batches admit several at once", [][]step{{{admit: 5}, {admit: 5}, {release: 10}, {admit: 3}}}, []int64{10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &run{}
			for i, iv := range tt.steps {
				for _, s := range iv {
					if s.admit > 0 {
						r.admit(s.admit)
					}
					r.inflight.Add(-s.release)
				}
				if got := r.ivMaxSwap(); got != tt.want[i] {
					t.Errorf("interval %d: max %d, want %d", i+1, got, tt.want[i])
				}
			}
			if got, want := r.maxSeen.Load(), max(tt.want[0], tt.want[len(tt.want)-1]); got < want {
				t.Errorf("run max %d below an interval's %d", got, want)
			}
		})
	}
}
