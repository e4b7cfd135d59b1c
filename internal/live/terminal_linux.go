package live

import (
	"syscall"
	"unsafe"
)

// windowColumns asks the terminal on fd for its size (TIOCGWINSZ); 0 when
// fd is no terminal.
func windowColumns(fd uintptr) int {
	var ws struct{ rows, cols, xpixel, ypixel uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	if errno != 0 {
		return 0
	}
	return int(ws.cols)
}
