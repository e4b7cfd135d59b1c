package live

import (
	"os"
	"strconv"
)

// IsTerminal reports whether f looks like a terminal: a character device.
// It needs no dependency, and it errs on one side only: every terminal is
// a character device, but so are /dev/null, serial ports and other
// devices, which then get the terminal's status line (escape codes written
// to /dev/null harm nobody). Pipes, files and sockets are never taken for
// terminals. On Windows a redirected console handle may not be told apart
// either.
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// TerminalWidth returns the width in columns of the terminal f is, from the
// terminal itself where the system tells it cheaply (Linux), else from the
// COLUMNS environment variable; 0 when neither knows (callers then keep
// DefaultWidth).
func TerminalWidth(f *os.File) int {
	if f != nil {
		if n := windowColumns(f.Fd()); n > 0 {
			return n
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}
