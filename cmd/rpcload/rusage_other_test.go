//go:build !linux

package main

import "os"

// maxRSS is only implemented on Linux, where ru_maxrss has a known unit.
func maxRSS(*os.ProcessState) (int64, bool) { return 0, false }
