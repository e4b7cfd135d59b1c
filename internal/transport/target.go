// Package transport moves whole JSON-RPC messages between rpcload and a
// server: HTTP(S) POSTs over keep-alive connections, and message streams
// (TCP and Unix sockets with newline or Content-Length framing, WebSocket,
// the stdio of a child process) carrying many requests in flight. It knows
// nothing about JSON-RPC beyond framing.
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
	HTTP    Scheme = "http"
	HTTPS   Scheme = "https"
	TCP     Scheme = "tcp"      // newline-delimited JSON over TCP
	TCPLSP  Scheme = "tcp+lsp"  // Content-Length framing over TCP
	Unix    Scheme = "unix"     // newline-delimited JSON over a Unix socket
	UnixLSP Scheme = "unix+lsp" // Content-Length framing over a Unix socket
	WS      Scheme = "ws"       // one JSON-RPC message per WebSocket message
	WSS     Scheme = "wss"
	Stdio   Scheme = "stdio" // a child process's stdin and stdout
)

// Framing is how messages are delimited on a byte stream.
type Framing uint8

// The framings.
const (
	Newline       Framing = iota // one message per line
	ContentLength                // LSP base protocol: Content-Length header, blank line, body
	Messages                     // the transport delimits messages itself (WebSocket)
)

func (f Framing) String() string {
	return [...]string{"newline", "content-length", "messages"}[f]
}

const schemesHelp = "http://, https://, ws://, wss://, tcp://, tcp+lsp://, unix://, unix+lsp://, or a command after --"

// Target is a parsed, validated target.
type Target struct {
	Scheme  Scheme
	URL     string // the URL as given (for a child: the command line), for reports
	Addr    string // host:port (tcp, tcp+lsp) or socket path (unix, unix+lsp)
	Framing Framing
	Command []string // the child's argv (stdio)
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
		return Target{}, fmt.Errorf("transport: target %q has no scheme; use %s", s, schemesHelp)
	}
	u, err := url.Parse(s)
	if err != nil {
		return Target{}, fmt.Errorf("transport: target %q is not a URL: %w", s, err)
	}
	scheme := Scheme(strings.ToLower(u.Scheme))
	switch scheme {
	case HTTP, HTTPS, WS, WSS:
		if u.Hostname() == "" {
			return Target{}, fmt.Errorf("transport: target %q has no host", s)
		}
		if u.Port() != "" {
			if err := checkPort(u.Port()); err != nil {
				return Target{}, fmt.Errorf("transport: target %q: %w", s, err)
			}
		}
		f := Newline
		if scheme == WS || scheme == WSS {
			f = Messages
		}
		return Target{Scheme: scheme, URL: s, Framing: f}, nil
	case TCP, TCPLSP:
		// SplitHostPort, not u.Port: url.Parse reads "::1" as host ":" and
		// port "1", an address no dialer takes (IPv6 needs [::1]:port).
		if h, p, err := net.SplitHostPort(u.Host); err != nil || h == "" || p == "" {
			return Target{}, fmt.Errorf("transport: target %q needs host:port, e.g. %s://127.0.0.1:9090 or %s://[::1]:9090", s, scheme, scheme)
		}
		if err := checkPort(u.Port()); err != nil {
			return Target{}, fmt.Errorf("transport: target %q: %w", s, err)
		}
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return Target{}, fmt.Errorf("transport: target %q: a %s target takes only host:port", s, scheme)
		}
		return Target{Scheme: scheme, URL: s, Addr: u.Host, Framing: framingOf(scheme)}, nil
	case Unix, UnixLSP:
		if u.Host != "" || u.Path == "" || u.RawQuery != "" || u.Fragment != "" {
			return Target{}, fmt.Errorf("transport: target %q needs an absolute socket path, e.g. %s:///run/server.sock", s, scheme)
		}
		return Target{Scheme: scheme, URL: s, Addr: u.Path, Framing: framingOf(scheme)}, nil
	case "":
		return Target{}, fmt.Errorf("transport: target %q has no scheme; use %s", s, schemesHelp)
	default:
		return Target{}, fmt.Errorf("transport: unsupported scheme %q in %q; use %s", u.Scheme, s, schemesHelp)
	}
}

// CommandTarget is the target of a child process speaking JSON-RPC over its
// stdin and stdout with the given framing (newline or content-length).
func CommandTarget(argv []string, f Framing) (Target, error) {
	if len(argv) == 0 || argv[0] == "" {
		return Target{}, errors.New("transport: no command given after --")
	}
	if f == Messages {
		return Target{}, errors.New("transport: a child process needs newline or content-length framing")
	}
	return Target{Scheme: Stdio, URL: strings.Join(argv, " "), Framing: f, Command: append([]string(nil), argv...)}, nil
}

func framingOf(s Scheme) Framing {
	if s == TCPLSP || s == UnixLSP {
		return ContentLength
	}
	return Newline
}

func checkPort(p string) error {
	var n int
	if _, err := fmt.Sscanf(p, "%d", &n); err != nil || n < 1 || n > 65535 || fmt.Sprint(n) != p {
		return fmt.Errorf("bad port %q", p)
	}
	return nil
}

// IsStream reports whether the target is a message stream carrying many
// requests in flight per connection (everything but HTTP).
func (t Target) IsStream() bool { return t.Scheme != HTTP && t.Scheme != HTTPS }

// Host returns the host part of the target, for messages.
func (t Target) Host() string {
	switch t.Scheme {
	case Unix, UnixLSP, Stdio:
		return ""
	}
	if t.Addr != "" {
		h, _, _ := net.SplitHostPort(t.Addr)
		return h
	}
	u, _ := url.Parse(t.URL)
	return u.Hostname()
}
