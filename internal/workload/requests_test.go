package workload

import (
	"testing"
	"time"
)

// TestRequestsBoundsTheRun: --requests alone makes the run open-ended (the
// count ends it); with --duration, or a file's duration, that stays the
// bound too. OwnRequests is a shard's part of the count.
func TestRequestsBoundsTheRun(t *testing.T) {
	tests := []struct {
		name     string
		set      map[string]bool
		requests uint64
		shard    string
		duration time.Duration
		own      uint64
	}{
		{"requests alone", map[string]bool{"requests": true, "method": true}, 500, "", OpenEnded, 500},
		{"requests and duration", map[string]bool{"requests": true, "duration": true, "method": true}, 500, "", 10 * time.Second, 500},
		{"no requests", map[string]bool{"method": true}, 0, "", 10 * time.Second, 0},
		{"shard 1 of 3", map[string]bool{"requests": true, "shard": true}, 10, "1/3", OpenEnded, 4}, // 1, 4, 7, 10
		{"shard 2 of 3", map[string]bool{"requests": true, "shard": true}, 10, "2/3", OpenEnded, 3}, // 2, 5, 8
		{"shard 3 of 3", map[string]bool{"requests": true, "shard": true}, 10, "3/3", OpenEnded, 3}, // 3, 6, 9
		{"shard past the count", map[string]bool{"requests": true, "shard": true}, 2, "3/3", OpenEnded, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Build(nil, flags(tt.set, func(f *Flags) { f.Method, f.Requests, f.Shard = "echo", tt.requests, tt.shard }), true)
			if err != nil {
				t.Fatal(err)
			}
			if p.Duration != tt.duration || p.OwnRequests() != tt.own {
				t.Errorf("duration %s, own requests %d; want %s, %d", p.Duration, p.OwnRequests(), tt.duration, tt.own)
			}
			if tt.requests > 0 && (p.Beyond(tt.requests) || !p.Beyond(tt.requests+1)) {
				t.Errorf("Beyond(%d) = %v, Beyond(%d) = %v; want false, true", tt.requests, p.Beyond(tt.requests), tt.requests+1, p.Beyond(tt.requests+1))
			}
		})
	}
}
