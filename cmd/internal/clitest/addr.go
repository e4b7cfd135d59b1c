package clitest

import (
	"net"
	"testing"
)

// FreeAddr is a loopback address no one listens on just now, for a
// server a test starts.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
