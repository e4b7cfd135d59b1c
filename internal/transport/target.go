// Package transport moves whole JSON-RPC frames between rpcload and a server:
// HTTP(S) POSTs over a keep-alive pool, and byte streams (TCP) with newline
// framing. It knows nothing about JSON-RPC beyond framing.
package transport

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Scheme is a target's transport.
type Scheme string

// The supported schemes.
const (
	HTTP  Scheme = "http"
	HTTPS Scheme = "https"
	TCP   Scheme = "tcp"
)

// Target is a parsed, validated target URL.
type Target struct {
	Scheme Scheme
	URL    string // the URL as given, for reports
	Addr   string // host:port to dial (tcp)
}

// ParseTarget validates a target URL such as http://127.0.0.1:8545 or
// tcp://127.0.0.1:9090. Errors say what is wrong with it.
func ParseTarget(s string) (Target, error) {
	if s == "" {
		return Target{}, errors.New("transport: empty target URL")
	}
	if !strings.Contains(s, "://") {
		// url.Parse reads "localhost:8545" as scheme "localhost" and rejects
		// "127.0.0.1:8545" outright; both mean a missing scheme.
		return Target{}, fmt.Errorf("transport: target %q has no scheme; use http://, https:// or tcp://", s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return Target{}, fmt.Errorf("transport: target %q is not a URL: %w", s, err)
	}
	switch Scheme(strings.ToLower(u.Scheme)) {
	case HTTP, HTTPS:
		if u.Hostname() == "" {
			return Target{}, fmt.Errorf("transport: target %q has no host", s)
		}
		if u.Port() != "" {
			if err := checkPort(u.Port()); err != nil {
				return Target{}, fmt.Errorf("transport: target %q: %w", s, err)
			}
		}
		return Target{Scheme: Scheme(strings.ToLower(u.Scheme)), URL: s}, nil
	case TCP:
		if u.Hostname() == "" || u.Port() == "" {
			return Target{}, fmt.Errorf("transport: target %q needs host:port, e.g. tcp://127.0.0.1:9090", s)
		}
		if err := checkPort(u.Port()); err != nil {
			return Target{}, fmt.Errorf("transport: target %q: %w", s, err)
		}
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return Target{}, fmt.Errorf("transport: target %q: a tcp target takes only host:port", s)
		}
		return Target{Scheme: TCP, URL: s, Addr: u.Host}, nil
	case "":
		return Target{}, fmt.Errorf("transport: target %q has no scheme; use http://, https:// or tcp://", s)
	default:
		return Target{}, fmt.Errorf("transport: unsupported scheme %q in %q; use http://, https:// or tcp://", u.Scheme, s)
	}
}

func checkPort(p string) error {
	var n int
	if _, err := fmt.Sscanf(p, "%d", &n); err != nil || n < 1 || n > 65535 || fmt.Sprint(n) != p {
		return fmt.Errorf("bad port %q", p)
	}
	return nil
}

// IsStream reports whether the target is a byte stream carrying many
// requests in flight per connection.
func (t Target) IsStream() bool { return t.Scheme == TCP }

// Host returns the host part of the target, for messages.
func (t Target) Host() string {
	if t.Addr != "" {
		h, _, _ := net.SplitHostPort(t.Addr)
		return h
	}
	u, _ := url.Parse(t.URL)
	return u.Hostname()
}
