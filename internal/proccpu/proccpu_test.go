package proccpu

import (
	"runtime"
	"testing"
)

// TestSelfGrows: CPU time spent spinning shows in Self, which never goes
// back.
func TestSelfGrows(t *testing.T) {
	before, ok := Self()
	if !ok {
		if runtime.GOOS != "windows" && runtime.GOOS != "plan9" && runtime.GOOS != "js" && runtime.GOOS != "wasip1" {
			t.Fatalf("no CPU time on %s", runtime.GOOS)
		}
		t.Skip("not measured on this platform")
	}
	x := 0
	for range 1 << 16 { // (a few seconds of spinning at most; a tick of CPU time takes milliseconds)
		for i := range 1 << 16 {
			x += i
		}
		if after, _ := Self(); after > before {
			return
		}
	}
	t.Errorf("CPU time stayed at %v while the test spun (%d)", before, x)
}
