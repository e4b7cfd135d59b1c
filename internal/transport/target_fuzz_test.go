package transport

import (
	"net"
	"strings"
	"testing"
)

// FuzzParseTarget checks ParseTarget on any string: it never panics; an
// error names the target; an accepted target has a known scheme, keeps the
// URL as given, has the framing of its scheme, and for tcp a host:port that
// net.SplitHostPort reads back, for unix an absolute path.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:8545", "https://example.test/rpc?x=1", "ws://[::1]:80/ws", "wss://h", "tcp://127.0.0.1:9090",
		"tcp+lsp://localhost:1", "unix:///run/s.sock", "unix+lsp:///tmp/x", "127.0.0.1:8545", "", "tcp://h:0", "tcp://h:65536",
		"HTTP://H:1", "tcp://user:pw@h:1", "unix://host/path", "ftp://h", "://", "http://:80", "tcp://[::1]:9",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTarget(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "transport: ") {
				t.Fatalf("error %q does not say where it comes from", err)
			}
			return
		}
		if tg.URL != s {
			t.Fatalf("URL %q; want the target as given %q", tg.URL, s)
		}
		switch tg.Scheme {
		case HTTP, HTTPS:
			if tg.Framing != Newline {
				t.Fatalf("%s: framing %v", tg.Scheme, tg.Framing)
			}
		case WS, WSS:
			if tg.Framing != Messages {
				t.Fatalf("%s: framing %v", tg.Scheme, tg.Framing)
			}
		case TCP, TCPLSP:
			host, port, err := net.SplitHostPort(tg.Addr)
			if err != nil || host == "" || port == "" {
				t.Fatalf("%s: address %q is not host:port (%v)", tg.Scheme, tg.Addr, err)
			}
			if tg.Framing != framingOf(tg.Scheme) {
				t.Fatalf("%s: framing %v", tg.Scheme, tg.Framing)
			}
		case Unix, UnixLSP:
			if !strings.HasPrefix(tg.Addr, "/") {
				t.Fatalf("%s: socket path %q is not absolute", tg.Scheme, tg.Addr)
			}
		default:
			t.Fatalf("accepted unknown scheme %q from %q", tg.Scheme, s)
		}
	})
}
