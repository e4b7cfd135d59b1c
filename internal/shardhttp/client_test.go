package shardhttp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestBaseURL(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{"127.0.0.1:9100", "http://127.0.0.1:9100", ""},
		{"rpcload-2.rpcload:9100", "http://rpcload-2.rpcload:9100", ""},
		{"http://127.0.0.1:9100/", "http://127.0.0.1:9100", ""},
		{"http://gw:8080/shards/2", "http://gw:8080/shards/2", ""},
		{"[::1]:9100", "http://[::1]:9100", ""},
		{"127.0.0.1", "", "no host:port"},
		{"http://127.0.0.1", "", "no host:port"},
		{"tcp://127.0.0.1:9100", "", "a shard serves http://, not tcp://"},
		{"http://u:p@127.0.0.1:9100", "", "without user, query or fragment"},
		{"http://127.0.0.1:9100/?x=1", "", "without user, query or fragment"},
		{"http://%zz", "", "not host:port or an http:// URL"},
	}
	for _, tt := range tests {
		got, err := BaseURL(tt.in)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("BaseURL(%q) = %q, %v; want %q, error with %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// TestHTTPClientAgainstServer: the client reads the server's every state.
func TestHTTPClientAgainstServer(t *testing.T) {
	s, err := Listen("127.0.0.1:0", false, "3/3")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := NewHTTPClient(2 * time.Second)
	ctx := context.Background()
	base := "http://" + s.Addr()
	if st, err := c.Status(ctx, base); err != nil || st.State != Running || st.Shard != "3/3" {
		t.Fatalf("status: %+v, %v", st, err)
	}
	if _, _, err := c.Result(ctx, base); err == nil || isProtocol(err) {
		t.Errorf("result while running: %v; want a passing refusal (503), not a protocol error", err)
	}
	s.Done([]byte(`{"x":1}`), 0)
	data, etag, err := c.Result(ctx, base)
	if err != nil || string(data) != `{"x":1}` || etag != ETag(data) {
		t.Fatalf("result: %q %q %v", data, etag, err)
	}
	if err := c.Ack(ctx, base, `"sha256-other"`); err == nil {
		t.Error("an acknowledgement of another ETag was accepted")
	}
	if err := c.Ack(ctx, base, etag); err != nil {
		t.Errorf("ack: %v", err)
	}
}

// TestHTTPClientBadAnswers: what is no shard's answer is a ProtocolError
// (the merge fails at once); what may pass is not.
func TestHTTPClientBadAnswers(t *testing.T) {
	body := strings.Repeat("x", maxStatusBytes+1)
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		call     string // status or result
		protocol bool
		want     string
	}{
		{"a JSON-RPC server", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
		}, "status", true, "not a shard's status"},
		{"a JSON-RPC result", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":7}`) }, "status", true, `state ""`},
		{"not found", http.NotFound, "status", true, "404 Not Found"},
		{"garbage", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "<html>") }, "status", true, "not a shard's status"},
		{"huge status", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }, "status", true, "over 64 KiB"},
		{"done without exit code", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"state":"done"}`) }, "status", true, "without an exit code"},
		{"bad shard", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"state":"running","shard":"4/3"}`) }, "status", true, `shard "4/3"`},
		{"gateway", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }, "status", false, "502 Bad Gateway"},
		{"result without ETag", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{}`) }, "result", true, "without an ETag"},
		{"result cut or changed", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("ETag", ETag([]byte(`{"a":1}`)))
			fmt.Fprint(w, `{"a":2}`)
		}, "result", false, "does not match its ETag"},
		{"result of a failed run", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusConflict)
			fmt.Fprint(w, `{"state":"failed","exit_code":3}`)
		}, "result", true, "409 Conflict (state failed)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			c := NewHTTPClient(2 * time.Second)
			var err error
			if tt.call == "status" {
				_, err = c.Status(context.Background(), srv.URL)
			} else {
				_, _, err = c.Result(context.Background(), srv.URL)
			}
			if err == nil || isProtocol(err) != tt.protocol || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v (protocol error: %v); want one with %q, protocol error %v", err, isProtocol(err), tt.want, tt.protocol)
			}
		})
	}
}

// TestHTTPClientTimeout: a shard that does not answer in time is no answer,
// not a protocol error, and the call returns at its timeout.
func TestHTTPClientTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c := NewHTTPClient(100 * time.Millisecond)
	start := time.Now()
	_, err := c.Status(context.Background(), srv.URL)
	if err == nil || isProtocol(err) || time.Since(start) > 5*time.Second {
		t.Errorf("a hung shard: %v after %s; want a passing error at the timeout", err, time.Since(start))
	}
}
