//go:build !unix

package proccpu

import "time"

// Self is not measured on this platform: 0, false.
func Self() (time.Duration, bool) { return 0, false }
