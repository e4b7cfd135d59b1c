package main

import (
	"os"
	"syscall"
)

// maxRSS returns the peak resident set size of a finished child, in bytes.
func maxRSS(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0, false
	}
	return ru.Maxrss << 10, true // Linux reports KiB
}
