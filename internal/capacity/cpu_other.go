//go:build !linux

package capacity

// machineCPU is unknown here (total 0).
func machineCPU() (busy, total uint64) { return 0, 0 }
