// Package listen opens the TCP listeners of rpcload's own HTTP endpoints
// (the Prometheus figures of --metrics-addr, a shard's result of
// --serve-result): on loopback addresses only, unless the user allows
// others.
package listen

import (
	"fmt"
	"net"
	"strings"
)

// Local listens on addr (host:port; port 0 picks a free one). Unless
// anyHost is true, a host that is not a loopback address (127.0.0.0/8,
// ::1, localhost) is refused, and so is an empty host (every interface):
// what rpcload serves describes the system under test, and an open port
// on every network is rarely what a load test means. Errors begin with
// `address "ADDR":`, for the caller to say whose address it is.
func Local(addr string, anyHost bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("address %q: %w (want host:port, such as 127.0.0.1:9464)", addr, err)
	}
	if !anyHost && !loopbackHost(host) {
		what := fmt.Sprintf("host %q is not a loopback address", host)
		if host == "" {
			what = "no host means every interface"
		}
		return nil, fmt.Errorf("address %q: %s; use 127.0.0.1, [::1] or localhost, or allow other hosts explicitly", addr, what)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("address %q: %w", addr, err)
	}
	// localhost is a name: make sure it did not resolve elsewhere.
	if tcp, ok := ln.Addr().(*net.TCPAddr); !anyHost && (!ok || !tcp.IP.IsLoopback()) {
		ln.Close()
		return nil, fmt.Errorf("address %q: %s is not a loopback address", addr, ln.Addr())
	}
	return ln, nil
}

func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
