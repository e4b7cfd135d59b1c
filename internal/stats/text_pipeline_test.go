package stats

import (
	"fmt"
	"strings"
	"testing"
)

// TestTextPipelined: the mode line says a run was pipelined, from its own
// settings (an int) or a result file read back (a float64).
func TestTextPipelined(t *testing.T) {
	tests := []struct {
		settings map[string]any
		want     string
	}{
		{map[string]any{"pipeline": 4}, "closed loop, HTTP/1.1 pipelined 4 deep,"},
		{map[string]any{"pipeline": 8.0}, "closed loop, HTTP/1.1 pipelined 8 deep,"},
		{map[string]any{}, "closed loop, sending"},
	}
	for _, tc := range tests {
		var b strings.Builder
		writeTextHeader(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }, &Result{Settings: tc.settings})
		if !strings.Contains(b.String(), "mode        "+tc.want) {
			t.Errorf("settings %v: header\n%s\nwant mode %q", tc.settings, b.String(), tc.want)
		}
	}
}
