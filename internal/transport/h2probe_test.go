package transport

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestProbeH2: ProbeH2 passes a server that speaks HTTP/2 (h2c with prior
// knowledge, h2 over TLS) and says what an HTTP/1.1-only server did
// instead, as ErrNoHTTP2; a server that cannot be reached is a dial error.
func TestProbeH2(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("{}")) })
	h2c := httptest.NewUnstartedServer(ok)
	h2c.Config.Protocols = new(http.Protocols)
	h2c.Config.Protocols.SetHTTP1(true)
	h2c.Config.Protocols.SetUnencryptedHTTP2(true)
	h2c.Start()
	t.Cleanup(h2c.Close)
	h1 := httptest.NewServer(ok)
	t.Cleanup(h1.Close)
	h2tls := httptest.NewUnstartedServer(ok)
	h2tls.EnableHTTP2 = true
	h2tls.StartTLS()
	t.Cleanup(h2tls.Close)
	h1tls := httptest.NewTLSServer(ok)
	t.Cleanup(h1tls.Close)
	closer, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	go func() {
		for {
			c, err := closer.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	goneURL := "http://" + gone.Addr().String() + "/"
	gone.Close()

	trust := func(s *httptest.Server) TLS {
		pool := x509.NewCertPool()
		pool.AddCert(s.Certificate())
		return TLS{Roots: pool}
	}
	for _, tc := range []struct {
		name string
		url  string
		tls  TLS
		want string // "" passes; else in the error
		noH2 bool   // the error is ErrNoHTTP2
	}{
		{"h2c", h2c.URL, TLS{}, "", false},
		{"h2 over TLS", h2tls.URL, trust(h2tls), "", false},
		{"HTTP/1.1 only", h1.URL, TLS{}, `it answered the HTTP/2 connection preface with "HTTP/1.1 `, true},
		{"HTTP/1.1 only over TLS", h1tls.URL, trust(h1tls), "offered h2 in the TLS handshake (ALPN), it chose http/1.1", true},
		{"closes at once", "http://" + closer.Addr().String() + "/", TLS{}, "closed the connection", true},
		{"nothing listening", goneURL, TLS{}, "refused", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := ProbeH2(ctx, H1Options{URL: tc.url, TLS: tc.tls})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("ProbeH2 = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrNoHTTP2) != tc.noH2 {
				t.Fatalf("ProbeH2 = %v; want an error with %q (ErrNoHTTP2: %v)", err, tc.want, tc.noH2)
			}
		})
	}
}

// TestEventStream: a response with Content-Type text/event-stream (any
// parameters, any case) is returned with ErrEventStream by both HTTP
// clients, its body read; a JSON one is not.
func TestEventStream(t *testing.T) {
	for _, tc := range []struct {
		ctype string
		sse   bool
	}{{"text/event-stream", true}, {"Text/Event-Stream; charset=utf-8", true}, {"application/json", false}} {
		h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", tc.ctype)
			w.Write([]byte("data: {}\n\n"))
		})
		srv := httptest.NewUnstartedServer(h)
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
		t.Cleanup(srv.Close)
		o := H1Options{URL: srv.URL, MaxBody: 1 << 20}
		c, err := DialH1(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		body, _, err := c.Post([]byte("{}"), nil, time.Now().Add(10*time.Second))
		c.Close()
		if errors.Is(err, ErrEventStream) != tc.sse || string(body) != "data: {}\n\n" {
			t.Errorf("HTTP/1.1, %s: body %q, err %v; want the body, ErrEventStream %v", tc.ctype, body, err, tc.sse)
		}
		h2 := NewH2(o)
		body, _, err = h2.Post(context.Background(), []byte("{}"), nil)
		h2.Close()
		if errors.Is(err, ErrEventStream) != tc.sse || string(body) != "data: {}\n\n" {
			t.Errorf("HTTP/2, %s: body %q, err %v; want the body, ErrEventStream %v", tc.ctype, body, err, tc.sse)
		}
	}
}
