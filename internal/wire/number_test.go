package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestIsNumber checks IsNumber against encoding/json on edge cases.
func TestIsNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-12", "1.5", "1e5", "1E+5", "2.5e-3", "123456789012345678901234567890",
		"", "-", "01", "+1", ".5", "1.", "1e", "1e+", "0x10", "NaN", "Infinity", "1 ", " 1", "--1", "1.2.3"} {
		want := json.Valid([]byte(s)) && strings.TrimSpace(s) == s // exactly a number: no space around it
		var v any
		if want && json.Unmarshal([]byte(s), &v) == nil {
			_, want = v.(float64)
		}
		if got := IsNumber(s); got != want {
			t.Errorf("IsNumber(%q) = %v, want %v", s, got, want)
		}
		if got := IsNumber([]byte(s)); got != want {
			t.Errorf("IsNumber([]byte(%q)) = %v, want %v", s, got, want)
		}
	}
}
