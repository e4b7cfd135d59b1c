//go:build !linux

package engine

import "time"

// processCPU is not measured here: the benchmarks report it as 0.
func processCPU() time.Duration { return 0 }
