//go:build linux

package transport

import (
	"net"
	"syscall"
	"testing"
)

// TestCork checks that cork sets TCP_CORK on a TCP socket, so that the
// FIN of a half-close goes out with the last bytes written.
func TestCork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			_, _ = c.Read(make([]byte, 1))
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	corked := func() int {
		rc, err := nc.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		v := -1
		if err := rc.Control(func(fd uintptr) {
			v, err = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK)
		}); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := corked(); v != 0 {
		t.Fatalf("TCP_CORK before cork: %d", v)
	}
	cork(nc)
	if v := corked(); v != 1 {
		t.Fatalf("TCP_CORK after cork: %d, want 1", v)
	}
}
