//go:build unix

package proccpu

import (
	"syscall"
	"time"
)

// Self returns the user and system CPU time this process has used, and
// whether the platform told it.
func Self() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
