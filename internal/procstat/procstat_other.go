//go:build !linux

package procstat

import "errors"

// Supported reports whether Read works on this system.
const Supported = false

// Read is only implemented on Linux, where /proc has the figures.
func Read(pid int) (Stat, error) {
	return Stat{}, errors.New("procstat: a process's memory, threads and open files are read from /proc, on Linux only")
}
