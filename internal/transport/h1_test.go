package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawServer answers each request on 127.0.0.1 with whatever respond writes,
// byte for byte, so tests can send what net/http's server never would. The
// connection is closed when respond returns false.
func rawServer(t *testing.T, respond func(w io.Writer, req *http.Request, body []byte) (keep bool)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					body, _ := io.ReadAll(req.Body)
					if !respond(c, req, body) {
						return
					}
				}
			})
		}
	})
	return "http://" + ln.Addr().String() + "/rpc"
}

func dialH1(t *testing.T, url string, maxBody int, h http.Header) *H1Conn {
	t.Helper()
	c, err := DialH1(context.Background(), H1Options{URL: url, MaxBody: maxBody, Header: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// soon is a deadline no passing test reaches: a test that hits it has read
// (or waited for) what it should not have.
func soon() time.Time { return time.Now().Add(10 * time.Second) }

func TestH1ConnPost(t *testing.T) {
	const maxBody = 1 << 10
	type result struct {
		body      string
		code      int
		err       error // compared with errors.Is; nil: no error
		status    bool  // the error is a *StatusError
		reusable  bool
		bodyAtMax bool // the body is longer than maxBody: only check its length
	}
	ok := func(body string) result { return result{body: body, code: 200, reusable: true} }
	tests := []struct {
		name string
		resp string // the raw response
		keep bool   // the server keeps the connection open after it
		want result
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{\"a\":1}", true, ok(`{"a":1}`)},
		{"no reason phrase", "HTTP/1.1 200\r\ncontent-length: 2\r\n\r\n{}", true, ok(`{}`)},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n4;ext=1\r\n\":1}\r\n0\r\nX-Trailer: t\r\n\r\n", true, ok(`{"a":1}`)},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", true, result{code: 204, reusable: true}},
		{"interim response first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", true, ok(`{}`)},
		{"status error keeps the connection", "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy", true,
			result{body: "busy", code: 503, status: true, reusable: true}},
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", false, result{body: "{}", code: 200}},
		{"body to end of connection", "HTTP/1.1 200 OK\r\n\r\n{\"to\":\"eof\"}", false, result{body: `{"to":"eof"}`, code: 200}},
		{"exactly max", "HTTP/1.1 200 OK\r\nContent-Length: 1024\r\n\r\n" + strings.Repeat("b", maxBody), true, ok(strings.Repeat("b", maxBody))},
		// A declared length over the limit is refused before any of it is
		// read: the server below never sends the body at all, so reading
		// would hang until the deadline.
		{"content-length over max", "HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n", true, result{code: 200, err: ErrBodyTooLarge}},
		{"chunks over max", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n200\r\n" + strings.Repeat("c", 512) + "\r\n201\r\n", true,
			result{code: 200, err: ErrBodyTooLarge, bodyAtMax: true}},
		// A chunk size near 2^63 must not overflow the limit check into a
		// giant allocation.
		{"chunk size overflow", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n7fffffffffffffff\r\n", true,
			result{code: 200, err: ErrBodyTooLarge, bodyAtMax: true}},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", true, result{code: 200, err: errAny}},
		{"bad content-length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", true, result{code: 200, err: errAny}},
		{"conflicting content-length", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", true, result{code: 200, err: errAny}},
		{"unsupported transfer-encoding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", true, result{code: 200, err: errAny}},
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", true, result{err: errAny}},
		{"malformed header", "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", true, result{code: 200, err: errAny}},
		{"header too large", "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 80) + "\r\n", true, result{code: 200, err: errAny}},
		{"closed before answering", "", false, result{err: ErrConnClosed}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := rawServer(t, func(w io.Writer, _ *http.Request, _ []byte) bool {
				io.WriteString(w, tc.resp)
				return tc.keep
			})
			c := dialH1(t, url, maxBody, nil)
			body, code, err := c.Post([]byte(`{"jsonrpc":"2.0","id":1,"method":"m"}`), nil, soon())
			w := tc.want
			var se *StatusError
			switch {
			case w.err == errAny:
				if err == nil {
					t.Fatalf("no error; want one")
				}
				if errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("error %v: the client waited for data it should have refused", err)
				}
			case w.err != nil:
				if !errors.Is(err, w.err) {
					t.Fatalf("error %v; want %v", err, w.err)
				}
			case w.status:
				if !errors.As(err, &se) || se.Code != w.code || se.Body != w.body {
					t.Fatalf("error %#v; want *StatusError{%d, %q}", err, w.code, w.body)
				}
			case err != nil:
				t.Fatalf("Post: %v", err)
			}
			if code != w.code {
				t.Errorf("status %d; want %d", code, w.code)
			}
			if w.bodyAtMax {
				if len(body) > maxBody {
					t.Errorf("returned %d body bytes; limit %d", len(body), maxBody)
				}
			} else if w.err == nil && string(body) != w.body {
				t.Errorf("body %q; want %q", body, w.body)
			}
			if err == nil || se != nil {
				if c.Reusable() != w.reusable {
					t.Errorf("Reusable() = %v; want %v", c.Reusable(), w.reusable)
				}
				if !w.reusable {
					if _, _, err := c.Post([]byte("{}"), nil, soon()); !errors.Is(err, ErrConnClosed) {
						t.Errorf("Post on a closing connection: %v; want ErrConnClosed", err)
					}
				}
			}
		})
	}
}

// errAny stands for "some error, and not a timeout" in the table above.
var errAny = errors.New("any error")

// TestH1ConnKeepAlive sends several requests over one connection to a
// net/http server and checks each reply, the request line and the headers.
func TestH1ConnKeepAlive(t *testing.T) {
	type seen struct {
		method, uri, host, ctype, auth, multi string
		clen                                  int64
		remote                                string
	}
	got := make(chan seen, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, r.Header.Get("Content-Type"), r.Header.Get("Authorization"),
			strings.Join(r.Header.Values("X-Multi"), ","), r.ContentLength, r.RemoteAddr}
		w.Write(b)
	}))
	defer srv.Close()
	c := dialH1(t, srv.URL+"/v1/rpc?k=1", 1<<10, http.Header{"authorization": {"Bearer t"}, "X-Multi": {"a", "b"}})
	var dst []byte
	var first seen
	for i := range 5 {
		body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"m"}`, i)
		var err error
		dst, _, err = c.Post(body, dst, soon())
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if string(dst) != string(body) {
			t.Fatalf("request %d: reply %q; want %q", i, dst, body)
		}
		s := <-got
		if i == 0 {
			first = s
		}
		if s.remote != first.remote {
			t.Errorf("request %d came on a new connection (%s, first %s)", i, s.remote, first.remote)
		}
		want := seen{"POST", "/v1/rpc?k=1", srv.Listener.Addr().String(), "application/json", "Bearer t", "a,b", int64(len(body)), first.remote}
		if s != want {
			t.Errorf("request %d: server saw %+v; want %+v", i, s, want)
		}
	}
}

// TestH1ConnDeadline checks that a server that stalls, before its headers or
// inside its body, costs the deadline and not more, with an error the engine
// counts as a timeout.
func TestH1ConnDeadline(t *testing.T) {
	for _, head := range []string{"", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"partial"} {
		t.Run(fmt.Sprintf("after %d bytes", len(head)), func(t *testing.T) {
			url := rawServer(t, func(w io.Writer, _ *http.Request, _ []byte) bool {
				io.WriteString(w, head)
				io.Copy(io.Discard, w.(io.Reader)) // stall until the client hangs up
				return false
			})
			c := dialH1(t, url, 1<<10, nil)
			_, _, err := c.Post([]byte("{}"), nil, time.Now().Add(50*time.Millisecond))
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("error %v; want one wrapping os.ErrDeadlineExceeded", err)
			}
		})
	}
}

// TestH1ConnEndlessBody checks that a body without an end (chunked from
// net/http, or running to the end of the connection) stops at MaxBody.
func TestH1ConnEndlessBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(endless))
	defer srv.Close()
	raw := rawServer(t, func(w io.Writer, _ *http.Request, _ []byte) bool {
		io.WriteString(w, "HTTP/1.1 200 OK\r\n\r\n")
		chunk := strings.Repeat("z", 4096)
		for {
			if _, err := io.WriteString(w, chunk); err != nil {
				return false
			}
		}
	})
	for name, url := range map[string]string{"chunked": srv.URL, "until close": raw} {
		t.Run(name, func(t *testing.T) {
			const maxBody = 8 << 10
			c := dialH1(t, url, maxBody, nil)
			body, _, err := c.Post([]byte("{}"), nil, soon())
			if !errors.Is(err, ErrBodyTooLarge) || len(body) > maxBody {
				t.Fatalf("got %d bytes, %v; want at most %d and ErrBodyTooLarge", len(body), err, maxBody)
			}
			if c.Reusable() {
				t.Error("connection still reusable after an unread body")
			}
			c.Close() // lets the server's writer fail and return
		})
	}
}

// TestH1ConnHostOverride checks that a Host header in the options replaces
// the URL's (virtual hosts behind one address) and that a Content-Length
// given by the user cannot replace the real one.
func TestH1ConnHostOverride(t *testing.T) {
	type seen struct {
		host string
		clen int64
		body string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Host, r.ContentLength, string(b)}
		w.Write([]byte("{}"))
	}))
	defer srv.Close()
	c := dialH1(t, srv.URL, 1<<10, http.Header{"host": {"virtual.example"}, "Content-Length": {"999"}})
	if _, _, err := c.Post([]byte(`{"a":1}`), nil, soon()); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != (seen{"virtual.example", 7, `{"a":1}`}) {
		t.Errorf("server saw %+v; want host virtual.example and the real length 7", s)
	}
}

// TestH1ConnPipeline writes three requests in one write and reads their
// responses in order, as --pipeline does; a server that closes the
// connection or stops speaking HTTP partway fails the responses still owed
// with an error at once, not a hang.
func TestH1ConnPipeline(t *testing.T) {
	ok := func(w io.Writer, body []byte, extra string) {
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s", len(body), extra, body)
	}
	tests := []struct {
		name    string
		respond func(k int, w io.Writer, body []byte) bool // k counts from 0
		want    []string                                   // each Receive: the body, or "error: " and part of the error
	}{
		{"answered in order", func(_ int, w io.Writer, body []byte) bool { ok(w, body, ""); return true },
			[]string{"b0", "b1", "b2"}},
		{"closed after the first", func(_ int, w io.Writer, body []byte) bool { ok(w, body, "Connection: close\r\n"); return false },
			[]string{"b0", "connection closed by the server", "connection closed by the server"}},
		{"out of protocol after the first", func(k int, w io.Writer, body []byte) bool {
			if k == 0 {
				ok(w, body, "")
			} else {
				io.WriteString(w, "NOT HTTP\r\n\r\n")
			}
			return true
		}, []string{"b0", "not an HTTP/1.x status line"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			k := 0
			url := rawServer(t, func(w io.Writer, _ *http.Request, body []byte) bool {
				mu.Lock()
				defer mu.Unlock()
				k++
				return tc.respond(k-1, w, body)
			})
			c := dialH1(t, url, 1<<20, nil)
			for i := range 3 {
				c.Queue(fmt.Appendf(nil, "b%d", i))
			}
			if err := c.Flush(soon()); err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.want {
				got, _, err := c.Receive(nil, soon())
				if err != nil {
					got = []byte("error: " + err.Error())
				}
				if !strings.Contains(string(got), want) {
					t.Fatalf("response %d: %q, want %q", i, got, want)
				}
			}
		})
	}
}

// loopReader serves the same bytes forever, as a server answering every
// request alike.
type loopReader struct {
	b   []byte
	off int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := copy(p, l.b[l.off:])
	l.off = (l.off + n) % len(l.b)
	return n, nil
}

// BenchmarkH1Receive is the reading of one response as the reference
// server sends it, from a buffer: the parsing alone, without the system
// calls.
func BenchmarkH1Receive(b *testing.B) {
	body := `{"jsonrpc":"2.0","id":1,"result":[1,"a"]}`
	resp := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Sat, 05 Dec 2026 06:00:00 GMT\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	c := &H1Conn{br: bufio.NewReaderSize(&loopReader{b: []byte(resp)}, 32<<10), maxBody: 1 << 20}
	dst := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, _, err = c.receive(dst); err != nil {
			b.Fatal(err)
		}
	}
}
