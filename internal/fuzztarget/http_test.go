package fuzztarget

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

// startHTTP serves h on loopback with net/http's log captured.
func startHTTP(t *testing.T, h http.Handler) (*httptest.Server, *syncBuffer) {
	t.Helper()
	var logs syncBuffer
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(&logs, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &logs
}

func post(ctx context.Context, url, body string) (*http.Response, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// TestHTTPHandler: replies are 200 JSON, notifications 204, other methods
// 405 and oversized bodies 413 with a -32600 body.
func TestHTTPHandler(t *testing.T) {
	s := New(AllBugs)
	s.maxFrame = 1000
	srv, _ := startHTTP(t, s.HTTPHandler())
	ctx := context.Background()
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"call", req("1", `"add"`, "[1,2]"), 200, ok("1", "3")},
		{"notification", `{"jsonrpc":"2.0","method":"echo"}`, 204, ""},
		{"parse error", `{`, 200, parseErr("unexpected end of input at offset 1")},
		{"largest", strings.Repeat(" ", 1000-len(`[1]`)) + `[1]`, 200, "[" + invalid("null", "a request must be an object") + "]"},
		{"too large", strings.Repeat(" ", 1001), 413, invalid("null", "request too large")},
	} {
		resp, body, err := post(ctx, srv.URL+"/any/path", tc.body)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if resp.StatusCode != tc.status || body != tc.want {
			t.Errorf("%s: %d %q, want %d %q", tc.name, resp.StatusCode, body, tc.status, tc.want)
		}
		if tc.status != 204 && resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: Content-Type %q", tc.name, resp.Header.Get("Content-Type"))
		}
	}
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// TestHTTPCrash: a planted crash panics out of the handler; net/http logs
// the message and drops the connection, so the client gets no response.
func TestHTTPCrash(t *testing.T) {
	srv, logs := startHTTP(t, New(DuplicateKey).HTTPHandler())
	resp, _, err := post(context.Background(), srv.URL, string(TriggerFrame(DuplicateKey)))
	if err == nil {
		t.Fatalf("got a response (%d) from a crashed handler", resp.StatusCode)
	}
	if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "reset") {
		t.Errorf("client error %v, want EOF or a reset", err)
	}
	if !strings.Contains(logs.String(), "fuzztarget: planted bug duplicate_key") {
		t.Errorf("server log %q does not name the bug", logs.String())
	}
	if _, body, err := post(context.Background(), srv.URL, req("1", `"echo"`, "")); err != nil || body != ok("1", "null") {
		t.Errorf("after the crash: %q, %v", body, err)
	}
}

// TestHTTPHang: a planted hang holds the request until the client gives up;
// then the handler aborts without writing a response.
func TestHTTPHang(t *testing.T) {
	reached := make(chan struct{})
	ended := make(chan any, 1)
	h := New(Hang).HTTPHandler()
	srv, _ := startHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			ended <- v
			panic(v)
		}()
		close(reached)
		h.ServeHTTP(w, r)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, _, err := post(ctx, srv.URL, string(TriggerFrame(Hang)))
		errc <- err
	}()
	<-reached
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v, want context.Canceled", err)
	}
	if v := <-ended; v != http.ErrAbortHandler {
		t.Errorf("handler ended with %v, want http.ErrAbortHandler", v)
	}
}

// TestListen: HTTP and TCP on loopback; a TCP crash resets its connection
// and is logged while other connections go on; ctx ends everything.
func TestListen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	s := New(HugeID | Hang)
	l, err := s.Listen(ctx, Addrs{HTTP: "127.0.0.1:0", TCP: "127.0.0.1:0"}, &logs)
	if err != nil {
		t.Fatal(err)
	}
	if _, body, err := post(ctx, "http://"+l.HTTP+"/", req("1", `"echo"`, "[2]")); err != nil || body != ok("1", "[2]") {
		t.Errorf("HTTP: %q, %v", body, err)
	}
	if _, _, err := post(ctx, "http://"+l.HTTP+"/", string(TriggerFrame(HugeID))); err == nil {
		t.Error("HTTP: a response to a crash")
	}

	hung, err := net.Dial("tcp", l.TCP) // hangs, and stays open until ctx ends
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	if _, err := io.WriteString(hung, string(TriggerFrame(Hang))+"\n"); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", l.TCP)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req("1", `"echo"`, "")+"\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	if line, err := r.ReadString('\n'); err != nil || line != ok("1", "null")+"\n" {
		t.Errorf("TCP reply %q, %v", line, err)
	}
	if _, err := io.WriteString(c, string(TriggerFrame(HugeID))+"\n"); err != nil {
		t.Fatal(err)
	}
	if rest, err := io.ReadAll(r); err == nil || len(rest) != 0 {
		t.Errorf("TCP after a crash: %q, %v; want a reset", rest, err)
	}
	log := logs.String()
	for _, want := range []string{"http: panic serving", "fuzztarget: planted bug huge_id (TCP connection from 127.0.0.1:"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	cancel()
	l.Wait()
	if n, err := hung.Read(make([]byte, 1)); err == nil {
		t.Errorf("hung connection read %d bytes after the server stopped", n)
	}
	if _, err := net.Dial("tcp", l.TCP); err == nil {
		t.Error("TCP still listening after ctx ended")
	}
}

// TestListenErrors: an address that cannot be bound is an error naming the
// transport, and leaves nothing listening.
func TestListenErrors(t *testing.T) {
	for _, tc := range []struct {
		addrs Addrs
		want  string
	}{
		{Addrs{HTTP: "256.0.0.1:0"}, "fuzztarget: HTTP:"},
		{Addrs{HTTP: "127.0.0.1:0", TCP: "nohost:x"}, "fuzztarget: TCP:"},
	} {
		_, err := New(0).Listen(context.Background(), tc.addrs, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Listen(%+v) = %v, want %q", tc.addrs, err, tc.want)
		}
	}
}
