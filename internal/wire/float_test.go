package wire

import (
	"encoding/json"
	"math"
	"testing"
)

// TestAppendFloat: the one float formatter writes what encoding/json
// writes, for float64 and float32.
func TestAppendFloat(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.1, 1.5e-7, -2e-9, 1e20, 1e21, 123456789.125, 1e-6, 9.999e-7, math.MaxFloat64, math.SmallestNonzeroFloat64, -1e100} {
		want, _ := json.Marshal(f)
		if got := AppendFloat(nil, f, 64); string(got) != string(want) {
			t.Errorf("AppendFloat(%g, 64) = %s, encoding/json %s", f, got, want)
		}
		f32 := float32(f)
		if math.IsInf(float64(f32), 0) {
			continue
		}
		want32, _ := json.Marshal(f32)
		if got := AppendFloat(nil, float64(f32), 32); string(got) != string(want32) {
			t.Errorf("AppendFloat(%g, 32) = %s, encoding/json %s", f32, got, want32)
		}
	}
}
