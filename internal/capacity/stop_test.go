package capacity

import (
	"strings"
	"testing"
	"time"
)

func TestStop(t *testing.T) {
	type point struct {
		inFlight, oldestUs int64
	}
	tests := []struct {
		name     string
		points   []point // one per 100 ms interval
		stopAt   int     // index of the point that stops the step; -1: none
		contains string
	}{
		{"steady", []point{{2, 500}, {3, 600}, {2, 500}, {3, 700}, {2, 400}, {3, 800}}, -1, ""},
		{"growing", []point{{10, 30000}, {20, 40000}, {40, 60000}, {80, 90000}, {160, 130000}}, 3, "80 requests in flight (up 3 intervals in a row), the oldest waiting 90ms"},
		{"growing queue of unsent requests, oldest age flat", []point{{30, 32000}, {40, 32000}, {60, 32000}, {90, 32000}, {130, 32000}}, 3, "90 requests in flight"},
		{"rising in flight below the rate times the limit", []point{{1, 30000}, {4, 20000}, {8, 10000}, {12, 10000}, {16, 10000}, {20, 10000}}, -1, ""},
		{"rising but within the limit", []point{{1, 100}, {2, 200}, {3, 300}, {4, 400}, {5, 500}}, -1, ""},
		{"a pause, then recovery", []point{{10, 30000}, {20, 40000}, {40, 60000}, {5, 2000}, {10, 30000}, {20, 40000}}, -1, ""},
		{"a stuck request alone", []point{{2, 30000}, {2, 40000}, {2, 50000}, {2, 60000}, {2, 70000}}, -1, ""},
		// The first three points are in the warm-up: the count starts after.
		{"growth in the warm-up is not counted", []point{{0, 0}, {10, 30000}, {20, 40000}, {40, 60000}, {80, 90000}, {160, 130000}}, 5, "160"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warm := time.Duration(0)
			if strings.Contains(tt.name, "warm-up") {
				warm = 300 * time.Millisecond
			}
			s := NewStop(warm, 20000, 1000) // 21 in flight wait 20 ms on average
			got, why := -1, ""
			for i, p := range tt.points {
				if w := s.Observe(time.Duration(i+1)*100*time.Millisecond, p.inFlight, p.oldestUs); w != "" {
					got, why = i, w
					break
				}
			}
			if got != tt.stopAt || !strings.Contains(why, tt.contains) {
				t.Errorf("stopped at %d (%q), want %d containing %q", got, why, tt.stopAt, tt.contains)
			}
		})
	}
}
