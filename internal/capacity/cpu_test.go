package capacity

import (
	"runtime"
	"testing"
	"time"
)

// TestSampleCPU: a goroutine spinning for a while shows up as this
// process's CPU time, and the machine's busy share is a fraction (Linux).
func TestSampleCPU(t *testing.T) {
	before := SampleCPU()
	spin := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(spin) {
	}
	after := SampleCPU()
	cores, busy := after.Since(before)
	if runtime.GOOS != "linux" {
		t.Skip("CPU clocks are read on Linux only")
	}
	if cores <= 0 || cores > float64(runtime.NumCPU())+0.5 {
		t.Errorf("cores %g after spinning", cores)
	}
	if busy < 0 || busy > 1 {
		t.Errorf("machine busy %g, want a fraction", busy)
	}
}
