package testsrv

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// Addrs are the addresses a Server listens on; an empty field is not served.
type Addrs struct {
	HTTP    string // host:port: HTTP POST, and WebSocket upgrades on /ws
	TCP     string // host:port: newline-delimited JSON over TCP
	TCPLSP  string // host:port: Content-Length framing over TCP
	Unix    string // socket path: newline-delimited JSON over a Unix socket
	UnixLSP string // socket path: Content-Length framing over a Unix socket
}

// endpoint describes one field of Addrs.
type endpoint struct {
	name    string // in errors, and the URL scheme rpcload run accepts
	network string
	framing Framing
	field   func(*Addrs) *string
}

// endpoints lists the fields of Addrs; the first is HTTP.
var endpoints = [...]endpoint{
	{"http", "tcp", 0, func(a *Addrs) *string { return &a.HTTP }},
	{"tcp", "tcp", FramingNewline, func(a *Addrs) *string { return &a.TCP }},
	{"tcp+lsp", "tcp", FramingContentLength, func(a *Addrs) *string { return &a.TCPLSP }},
	{"unix", "unix", FramingNewline, func(a *Addrs) *string { return &a.Unix }},
	{"unix+lsp", "unix", FramingContentLength, func(a *Addrs) *string { return &a.UnixLSP }},
}

// Listen listens on every non-empty address of a (at least one is needed)
// and serves them in background goroutines until ctx is done or Close is
// called. It returns the bound addresses, so ":0" ports can be used; socket
// paths come back as given. If one address fails, none is served. A socket
// path holding a stale socket (one nobody accepts on, as a killed server
// leaves) is replaced; any other existing file is an error. Socket files are
// removed on Close.
func (s *Server) Listen(ctx context.Context, a Addrs) (Addrs, error) {
	lns, err := s.listenAll(ctx, a)
	if err != nil {
		return Addrs{}, err
	}
	var bound Addrs
	for i, ln := range lns {
		if ln != nil {
			*endpoints[i].field(&bound) = ln.Addr().String()
		}
	}
	return bound, nil
}

// ListenAndServe listens on httpAddr and/or tcpAddr (either may be "", not
// both) and serves them in background goroutines until ctx is done or Close
// is called. It returns the bound addresses so ":0" ports can be used. It is
// Listen with the HTTP and TCP fields only.
func (s *Server) ListenAndServe(ctx context.Context, httpAddr, tcpAddr string) (httpBound, tcpBound net.Addr, err error) {
	lns, err := s.listenAll(ctx, Addrs{HTTP: httpAddr, TCP: tcpAddr})
	if err != nil {
		return nil, nil, err
	}
	if lns[0] != nil {
		httpBound = lns[0].Addr()
	}
	if lns[1] != nil {
		tcpBound = lns[1].Addr()
	}
	return httpBound, tcpBound, nil
}

func (s *Server) listenAll(ctx context.Context, a Addrs) ([len(endpoints)]net.Listener, error) {
	var lns [len(endpoints)]net.Listener
	closeAll := func() {
		for _, ln := range lns {
			if ln != nil {
				_ = ln.Close()
			}
		}
	}
	if a == (Addrs{}) {
		return lns, fmt.Errorf("%w: no address to listen on", ErrConfig)
	}
	for i, ep := range endpoints {
		addr := *ep.field(&a)
		if addr == "" {
			continue
		}
		ln, err := listen(ctx, ep.network, addr)
		if err != nil {
			closeAll()
			return lns, fmt.Errorf("testsrv: listen %s: %w", ep.name, err)
		}
		lns[i] = ln
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		closeAll()
		return lns, fmt.Errorf("testsrv: listen: %w", http.ErrServerClosed)
	}
	if hln := lns[0]; hln != nil {
		// HTTP/1.1 and h2c (HTTP/2 with prior knowledge), so rpcload's
		// --http2 can be tested on the same port.
		var protocols http.Protocols
		protocols.SetHTTP1(true)
		protocols.SetUnencryptedHTTP2(true)
		srv := &http.Server{
			Handler:           s.Handler(),
			ConnContext:       s.ConnContext,
			ReadHeaderTimeout: 30 * time.Second,
			Protocols:         &protocols,
		}
		s.httpSrvs = append(s.httpSrvs, srv)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_ = srv.Serve(s.trackPipelining(hln)) // returns http.ErrServerClosed after Close
		}()
	}
	for i, ln := range lns[1:] {
		if ln == nil {
			continue
		}
		f := endpoints[i+1].framing
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_ = s.ServeStream(ln, f) // nil after Close; an accept error ends this listener only
		}()
	}
	s.stops = append(s.stops, context.AfterFunc(ctx, func() { _ = s.Close() }))
	return lns, nil
}

// listen listens on addr, replacing a stale Unix socket.
func listen(ctx context.Context, network, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, network, addr)
	if err == nil || network != "unix" || !staleSocket(ctx, addr) {
		return ln, err
	}
	if os.Remove(addr) != nil {
		return nil, err
	}
	return lc.Listen(ctx, network, addr)
}

// staleSocket reports whether path is a Unix socket that refuses
// connections: nobody serves it any more.
func staleSocket(ctx context.Context, path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSocket == 0 {
		return false
	}
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "unix", path)
	if err == nil {
		_ = c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}
