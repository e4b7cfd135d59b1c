package testsrv

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestListenAll: one Listen serves every transport; socket files go on Close.
func TestListenAll(t *testing.T) {
	base := runtime.NumGoroutine()
	s, err := New(Config{Now: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a := Addrs{HTTP: "127.0.0.1:0", TCP: "127.0.0.1:0", TCPLSP: "127.0.0.1:0",
		Unix: filepath.Join(dir, "nd.sock"), UnixLSP: filepath.Join(dir, "lsp.sock")}
	b, err := s.Listen(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if b.Unix != a.Unix || b.UnixLSP != a.UnixLSP || strings.HasSuffix(b.HTTP, ":0") || b.TCP == b.TCPLSP {
		t.Errorf("bound %+v", b)
	}
	for _, tc := range []struct {
		network, addr string
		f             Framing
	}{{"tcp", b.TCP, FramingNewline}, {"tcp", b.TCPLSP, FramingContentLength}, {"unix", b.Unix, FramingNewline}, {"unix", b.UnixLSP, FramingContentLength}} {
		nc, err := net.Dial(tc.network, tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		c := &streamClient{t: t, f: tc.f, w: nc, r: bufio.NewReader(nc), halfClose: nc.(interface{ CloseWrite() error }).CloseWrite}
		c.send(r7)
		if got := c.rest(); !slices.Equal(got, []string{ok7}) {
			t.Errorf("%s %s: got %q", tc.network, tc.addr, got)
		}
		_ = nc.Close()
	}
	ws := wsDial(t, "ws://"+b.HTTP+"/ws")
	ws.send(r7)
	if got := ws.rest(); !slices.Equal(got, []string{ok7}) {
		t.Errorf("ws: got %q", got)
	}
	_ = ws.ws.Close()
	cl := newClient(t)
	if code, body, _ := post(t, cl, "http://"+b.HTTP+"/", r7); code != 200 || body != ok7 {
		t.Errorf("http: %d %s", code, body)
	}
	for _, p := range []string{a.Unix, a.UnixLSP} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("socket file: %v", err)
		}
	}
	_ = s.Close()
	for _, p := range []string{a.Unix, a.UnixLSP} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after Close, %s: %v", p, err)
		}
	}
	if _, err := s.Listen(context.Background(), Addrs{TCP: "127.0.0.1:0"}); err == nil {
		t.Error("Listen after Close succeeded")
	}
	cl.CloseIdleConnections()
	settle(t, base)
}

func TestListenErrors(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "file")
	if err := os.WriteFile(regular, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A socket left behind by a server that died: nobody accepts on it.
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = ln.Close()
	// A socket someone serves.
	live := filepath.Join(dir, "live.sock")
	lln, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer lln.Close()
	for _, tc := range []struct {
		name string
		a    Addrs
		want string // error substring; "" = success
	}{
		{"nothing", Addrs{}, "no address"},
		{"regular file", Addrs{Unix: regular}, "listen unix:"},
		{"live socket", Addrs{UnixLSP: live}, "listen unix+lsp:"},
		{"same path twice", Addrs{Unix: filepath.Join(dir, "twice.sock"), UnixLSP: filepath.Join(dir, "twice.sock")}, "listen unix+lsp:"},
		{"bad tcp", Addrs{TCP: "127.0.0.1:http:x"}, "listen tcp:"},
		{"bad tcp+lsp", Addrs{HTTP: "127.0.0.1:0", TCPLSP: "nonsense"}, "listen tcp+lsp:"},
		{"stale socket replaced", Addrs{Unix: stale}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, Config{})
			b, err := s.Listen(context.Background(), tc.a)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Listen: %v", err)
			case tc.want == "":
				nc, err := net.Dial("unix", b.Unix)
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				_ = nc.Close()
			case err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "testsrv: "):
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Failed Listens leave no listener behind: the path of "same path twice"
	// is free again, and the regular file is untouched.
	if _, err := os.Stat(filepath.Join(dir, "twice.sock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("twice.sock: %v", err)
	}
	if _, err := os.Stat(regular); err != nil {
		t.Errorf("regular file: %v", err)
	}
}

// TestServeStdioEnds: ServeStdio's three ways to end.
func TestServeStdioEnds(t *testing.T) {
	t.Run("EOF after pending replies", func(t *testing.T) {
		s := newTestServer(t, Config{})
		c, served := stdioPair(t, s, FramingContentLength)
		c.send(req("1", "sleep", "[20]"), r7)
		if got := c.rest(); !slices.Equal(got, []string{ok7, res("1", "true")}) {
			t.Errorf("got %q", got)
		}
		if err := <-served; err != nil {
			t.Errorf("ServeStdio = %v", err)
		}
	})
	t.Run("Close", func(t *testing.T) {
		s := newTestServer(t, Config{})
		c, served := stdioPair(t, s, FramingNewline)
		c.send(req("1", "sleep", "[600000]"), r7)
		if got := mustRecv(t, c); got != ok7 {
			t.Fatalf("got %s", got)
		}
		_ = s.Close()
		if err := <-served; err != nil {
			t.Errorf("ServeStdio = %v", err)
		}
		if l, ok := c.recv(); ok {
			t.Errorf("got %s after Close", l)
		}
		if err := s.ServeStdio(strings.NewReader(r7), io.Discard, FramingNewline); err != nil {
			t.Errorf("ServeStdio after Close = %v", err)
		}
	})
	t.Run("write error", func(t *testing.T) {
		s := newTestServer(t, Config{})
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		_ = outR.Close() // the peer stopped reading
		served := make(chan error, 1)
		go func() { served <- s.ServeStdio(inR, outW, FramingNewline) }()
		_, _ = io.WriteString(inW, r7+"\n")
		if err := <-served; !errors.Is(err, io.ErrClosedPipe) || !strings.HasPrefix(err.Error(), "testsrv: stdio: ") {
			t.Errorf("ServeStdio = %v, want the write error", err)
		}
	})
}
