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
	for {
		for i := range 1 << 20 {
			x += i
		}
		if after, _ := Self(); after > before {
			break
		}
	}
	_ = x
}
