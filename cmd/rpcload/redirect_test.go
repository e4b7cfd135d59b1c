package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestNoCrossHostRedirect: a target that redirects every request to
// another server (307 keeps the method and the body) gets its requests
// counted as HTTP errors; the other server never sees one, so neither the
// load nor the headers (secrets among them) go anywhere but the target.
func TestNoCrossHostRedirect(t *testing.T) {
	var elsewhere atomic.Int64
	// Both servers speak HTTP/1.1 and h2c with prior knowledge (--http2).
	serve := func(h http.HandlerFunc) *httptest.Server {
		s := httptest.NewUnstartedServer(h)
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		s.Config.Protocols = &p
		s.Start()
		t.Cleanup(s.Close)
		return s
	}
	other := serve(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":1}`))
	})
	redirector := serve(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/stolen", http.StatusTemporaryRedirect)
	})
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"http/1.1", nil},
		{"http/2 (h2c)", []string{"--http2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := runBinary(t, childLimit, append([]string{"run", redirector.URL + "/", "--method", "echo", "--params", "[1]",
				"--rate", "50", "--duration", "200ms", "--timeout", "2s", "-q", "-H", "X-Api-Key: key-123456"}, tc.args...)...)
			if c.code != exitFindings {
				t.Errorf("want exit 1 (every request failed); %v", c)
			}
			if !strings.Contains(c.stdout, "307") {
				t.Errorf("the report does not name the 307 replies:\n%s", c.stdout)
			}
			if n := elsewhere.Load(); n != 0 {
				t.Errorf("the redirect was followed: the other server got %d requests", n)
			}
		})
	}
}
