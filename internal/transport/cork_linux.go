//go:build linux

package transport

import "syscall"

// cork holds what is written to a TCP socket back until uncorked or shut
// down (TCP_CORK): the kernel then sends the last bytes and the FIN in
// one segment (tcp_send_fin tacks the FIN onto unsent data). Other kinds
// of connection are left as they are.
func cork(rw any) {
	sc, ok := rw.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		// (A socket that is not TCP refuses the option: nothing is lost.)
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, 1)
	})
}
