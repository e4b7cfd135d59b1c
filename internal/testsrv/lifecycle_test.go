package testsrv

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestStallWait(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := Stall{At: 10 * time.Second, For: 5 * time.Second} // window [10s, 15s)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	for _, tc := range []struct {
		name  string
		now   time.Duration
		d     time.Duration
		want  time.Duration
		stall Stall
	}{
		{"before", 5 * time.Second, 0, 0, st},
		{"due just before window", 9 * time.Second, 999 * time.Millisecond, 999 * time.Millisecond, st},
		{"due at window start", 9 * time.Second, time.Second, 6 * time.Second, st},
		{"inside", 12 * time.Second, 0, 3 * time.Second, st},
		{"inside, due inside", 12 * time.Second, time.Second, 3 * time.Second, st},
		{"inside, due after", 12 * time.Second, 4 * time.Second, 4 * time.Second, st},
		{"at window end", 15 * time.Second, 0, 0, st},
		{"after", 20 * time.Second, 100 * time.Millisecond, 100 * time.Millisecond, st},
		{"off", 12 * time.Second, 0, 0, Stall{At: 10 * time.Second}},
	} {
		if got := stallWait(start, tc.stall, at(tc.now), tc.d); got != tc.want {
			t.Errorf("%s: stallWait = %v, want %v", tc.name, got, tc.want)
		}
	}
	// The same arithmetic through a Server with an injected clock.
	now := start
	s := newTestServer(t, Config{Stall: st, Now: func() time.Time { return now }})
	now = at(11 * time.Second)
	if got := s.deliverAfter(0); got != 4*time.Second {
		t.Errorf("deliverAfter at 11s = %v, want 4s", got)
	}
}

// pipeListener is an in-memory net.Listener, so a server can run inside a
// synctest bubble where time is virtual.
type pipeListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.UnixAddr{Name: "pipe", Net: "pipe"} }

func (l *pipeListener) dial() net.Conn {
	a, b := net.Pipe()
	l.ch <- b
	return a
}

type stamped struct {
	line string
	at   time.Duration
}

func TestStallEndToEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s, err := New(Config{Stall: Stall{At: time.Second, For: 2 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		ln := newPipeListener()
		served := make(chan error, 1)
		go func() { served <- s.ServeTCP(ln) }()
		c := ln.dial()
		lines := make(chan stamped, 10)
		go func() {
			r := bufio.NewReader(c)
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					close(lines)
					return
				}
				lines <- stamped{strings.TrimSuffix(l, "\n"), time.Since(t0)}
			}
		}()
		send := func(at time.Duration, frame string) {
			time.Sleep(at - time.Since(t0))
			if _, err := io.WriteString(c, frame+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		send(0, req("1", "eth_chainId", ""))
		send(800*time.Millisecond, req("2", "sleep", "[500]"))   // due 1.3s: held
		send(1500*time.Millisecond, req("3", "eth_chainId", "")) // arrives inside
		send(2500*time.Millisecond, req("4", "sleep", "[1000]")) // due 3.5s: after the window
		send(3200*time.Millisecond, req("5", "eth_chainId", "")) // after
		want := []stamped{
			{res("1", `"0x539"`), 0},
			{res("2", "true"), 3 * time.Second},
			{res("3", `"0x539"`), 3 * time.Second},
			{res("5", `"0x539"`), 3200 * time.Millisecond},
			{res("4", "true"), 3500 * time.Millisecond},
		}
		for _, w := range want {
			if got := <-lines; got != w {
				t.Errorf("got %v, want %v", got, w)
			}
		}
		_ = c.Close()
		if _, open := <-lines; open {
			t.Error("more lines after close")
		}
		_ = s.Close()
		if err := <-served; err != nil {
			t.Errorf("ServeTCP after Close = %v", err)
		}
	})
}

// settle waits until the goroutine count is back to base: goroutines of
// closed connections (including net/http's) exit asynchronously.
func settle(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want <= %d:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

func TestCloseStopsEverything(t *testing.T) {
	base := runtime.NumGoroutine()
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, addr, err := s.ListenAndServe(context.Background(), "", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A TCP connection with a long sleep and a spin pending...
	c := dial(t, addr.String())
	c.send(req("1", "sleep", "[600000]"), req("2", "spin", "[1000000]"), sentinel)
	if l := c.mustLine(); l != sentinelReply { // both are registered once this arrives
		t.Fatalf("got %s", l)
	}
	// ...and an HTTP request held by a slow method.
	p := newProbe(s.Handler())
	hs := httptest.NewServer(p)
	errc := make(chan error, 1)
	go func() {
		resp, err := hs.Client().Post(hs.URL, "application/json", strings.NewReader(req("1", "sleep", "[600000]")))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-p.bodyRead
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Close took %v", el)
	}
	if got := <-p.result; got != "aborted" {
		t.Errorf("held HTTP request: %s, want aborted", got)
	}
	if err := <-errc; err == nil {
		t.Error("held HTTP request got a response")
	}
	if l, ok := c.line(); ok {
		t.Errorf("TCP got %s after Close, want EOF", l)
	}
	if err := s.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	if _, _, err := s.ListenAndServe(context.Background(), "127.0.0.1:0", ""); err == nil {
		t.Error("ListenAndServe after Close succeeded")
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	if err := s.ServeTCP(ln); err != nil {
		t.Errorf("ServeTCP after Close = %v", err)
	}
	hs.Close()
	_ = c.nc.Close()
	settle(t, base)
}

func TestContextCancelCloses(t *testing.T) {
	base := runtime.NumGoroutine()
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h, _, err := s.ListenAndServe(ctx, "127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := newClient(t)
	if code, _, _ := post(t, cl, "http://"+h.String(), r7); code != 200 {
		t.Fatalf("status %d", code)
	}
	cancel()
	_ = s.Close() // blocks until the Close started by cancel has finished
	select {
	case <-s.done:
	default:
		t.Fatal("not closed")
	}
	if _, err := cl.Post("http://"+h.String(), "application/json", strings.NewReader(r7)); err == nil {
		t.Error("still serving HTTP")
	}
	cl.CloseIdleConnections()
	settle(t, base)
}

func TestHTTPAfterClose(t *testing.T) {
	s := newTestServer(t, Config{})
	_ = s.Close()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(r7)))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("status %d", rec.Code)
	}
	if _, _, err := s.ListenAndServe(context.Background(), "", ""); !errors.Is(err, ErrConfig) {
		t.Errorf("no address: %v", err)
	}
}
