package transport

import (
	"strings"
	"testing"
)

// TestParseTarget checks the accepted forms and that every rejection names
// its problem: the message is what a user sees after a typo on the command
// line, so "is not a URL" alone would not do.
func TestParseTarget(t *testing.T) {
	good := []struct {
		in     string
		scheme Scheme
		addr   string // Addr (tcp only)
		host   string // Host()
		stream bool
	}{
		{"http://127.0.0.1:8545", HTTP, "", "127.0.0.1", false},
		{"http://127.0.0.1:8545/rpc?key=x", HTTP, "", "127.0.0.1", false},
		{"http://user:pw@example.com/", HTTP, "", "example.com", false},
		{"HTTP://example.com", HTTP, "", "example.com", false},
		{"https://example.com", HTTPS, "", "example.com", false},
		{"https://example.com:443/v1", HTTPS, "", "example.com", false},
		{"http://[::1]:8080/", HTTP, "", "::1", false},
		{"tcp://127.0.0.1:9090", TCP, "127.0.0.1:9090", "127.0.0.1", true},
		{"tcp://127.0.0.1:9090/", TCP, "127.0.0.1:9090", "127.0.0.1", true},
		{"tcp://localhost:1", TCP, "localhost:1", "localhost", true},
		{"tcp://[::1]:9090", TCP, "[::1]:9090", "::1", true},
		{"tcp://127.0.0.1:65535", TCP, "127.0.0.1:65535", "127.0.0.1", true},
		{"tcp+lsp://127.0.0.1:9090", TCPLSP, "127.0.0.1:9090", "127.0.0.1", true},
		{"unix:///run/s.sock", Unix, "/run/s.sock", "", true},
		{"unix+lsp:///tmp/lsp.sock", UnixLSP, "/tmp/lsp.sock", "", true},
		{"ws://example.com", WS, "", "example.com", true},
		{"wss://example.com:8546/rpc", WSS, "", "example.com", true},
	}
	for _, tc := range good {
		t.Run(tc.in, func(t *testing.T) {
			tg, err := ParseTarget(tc.in)
			if err != nil {
				t.Fatalf("ParseTarget(%q): %v", tc.in, err)
			}
			if tg.Scheme != tc.scheme || tg.Addr != tc.addr || tg.URL != tc.in {
				t.Errorf("ParseTarget(%q) = %+v; want scheme %q addr %q url as given", tc.in, tg, tc.scheme, tc.addr)
			}
			if got := tg.Host(); got != tc.host {
				t.Errorf("Host() = %q; want %q", got, tc.host)
			}
			if got := tg.IsStream(); got != tc.stream {
				t.Errorf("IsStream() = %v; want %v", got, tc.stream)
			}
		})
	}

	bad := []struct {
		in   string
		want []string // substrings the message must contain
	}{
		{"", []string{"empty target"}},
		{"127.0.0.1:8545", []string{"no scheme", "http://"}},
		{"localhost:8545", []string{"no scheme"}},
		{"example.com/rpc", []string{"no scheme"}},
		{"ftp://example.com", []string{"unsupported scheme", `"ftp"`}},
		{"gopher://example.com", []string{"unsupported scheme", `"gopher"`}},
		{"unix://host/run/s.sock", []string{"absolute socket path"}},
		{"unix://", []string{"absolute socket path"}},
		{"unix+lsp:///s.sock?x=1", []string{"absolute socket path"}},
		{"tcp+lsp://127.0.0.1", []string{"needs host:port"}},
		{"ws://", []string{"no host"}},
		{"tcp://127.0.0.1", []string{"needs host:port"}},
		{"tcp://127.0.0.1:", []string{"needs host:port"}},
		{"tcp://:9090", []string{"needs host:port"}},
		{"tcp://", []string{"needs host:port"}},
		{"tcp://127.0.0.1:0", []string{"bad port", `"0"`}},
		{"tcp://127.0.0.1:65536", []string{"bad port", `"65536"`}},
		{"tcp://127.0.0.1:08080", []string{"bad port", `"08080"`}},
		{"tcp://127.0.0.1:abc", []string{"port", "abc"}},
		{"http://127.0.0.1:0/", []string{"bad port", `"0"`}},
		{"http://127.0.0.1:99999/", []string{"bad port", `"99999"`}},
		{"tcp://127.0.0.1:9090/rpc", []string{"only host:port"}},
		{"tcp://127.0.0.1:9090?x=1", []string{"only host:port"}},
		{"tcp://127.0.0.1:9090#frag", []string{"only host:port"}},
		{"tcp://user@127.0.0.1:9090", []string{"only host:port"}},
		{"http://", []string{"no host"}},
		{"http:///rpc", []string{"no host"}},
		{"https://:8443/", []string{"no host"}},
		{"http://exa mple.com/", []string{"not a URL"}},
	}
	for _, tc := range bad {
		t.Run(tc.in, func(t *testing.T) {
			tg, err := ParseTarget(tc.in)
			if err == nil {
				t.Fatalf("ParseTarget(%q) = %+v; want an error", tc.in, tg)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "transport: ") {
				t.Errorf("error %q lacks the package prefix", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
		})
	}
}
