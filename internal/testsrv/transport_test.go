package testsrv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ioTimeout bounds every client read so a server bug fails the test instead
// of hanging it; no test waits for it to expire.
const ioTimeout = 20 * time.Second

// serve starts s on loopback HTTP and TCP listeners.
func serve(t testing.TB, s *Server) (httpURL, tcpAddr string) {
	t.Helper()
	h, c, err := s.ListenAndServe(context.Background(), "127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("ListenAndServe: %v", err)
	}
	return "http://" + h.String() + "/", c.String()
}

// lineConn is a test client for the NDJSON transport.
type lineConn struct {
	t  testing.TB
	nc *net.TCPConn
	r  *bufio.Reader
}

func dial(t testing.TB, addr string) *lineConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(ioTimeout))
	return &lineConn{t: t, nc: nc.(*net.TCPConn), r: bufio.NewReaderSize(nc, 1<<20)}
}

func (c *lineConn) send(frames ...string) {
	c.t.Helper()
	if _, err := io.WriteString(c.nc, strings.Join(frames, "\n")+"\n"); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// line reads one reply line; ok is false at EOF.
func (c *lineConn) line() (string, bool) {
	c.t.Helper()
	l, err := c.r.ReadString('\n')
	if errors.Is(err, io.EOF) && l == "" {
		return "", false
	}
	if err != nil {
		c.t.Fatalf("read: %v (partial %q)", err, l)
	}
	return strings.TrimSuffix(l, "\n"), true
}

func (c *lineConn) mustLine() string {
	c.t.Helper()
	l, ok := c.line()
	if !ok {
		c.t.Fatal("unexpected EOF")
	}
	return l
}

// rest half-closes the connection and returns every line until the server
// closes: the server answers what is pending first, so this is exact.
func (c *lineConn) rest() []string {
	c.t.Helper()
	if err := c.nc.CloseWrite(); err != nil {
		c.t.Fatalf("CloseWrite: %v", err)
	}
	var out []string
	for {
		l, ok := c.line()
		if !ok {
			return out
		}
		out = append(out, l)
	}
}

// post sends one HTTP POST and returns status and body.
func post(t testing.TB, cl *http.Client, url, body string) (int, string, http.Header) {
	t.Helper()
	resp, err := cl.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp.StatusCode, string(b), resp.Header
}

func newClient(t testing.TB) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: ioTimeout}
}

var sentinel, sentinelReply = req(`"sentinel"`, "eth_chainId", ""), res(`"sentinel"`, `"0x539"`)

func TestTCPCases(t *testing.T) {
	s := newTestServer(t, Config{})
	_, addr := serve(t, s)
	c := dial(t, addr)
	for _, tc := range allCases() {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			// The sentinel proves a missing reply is missing (not late): it is
			// answered immediately, so anything the case sends that is not
			// slow comes before it.
			c.send(tc.in, sentinel)
			var got []string
			for !slices.Contains(got, sentinelReply) || (tc.want != "" && len(got) < 2) {
				got = append(got, c.mustLine())
			}
			want := []string{sentinelReply}
			if tc.want != "" {
				want = append(want, tc.want)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("in:   %s\ngot:  %q\nwant: %q", tc.in, got, want)
			}
		})
	}
	c.t = t
	if got := c.rest(); len(got) != 0 {
		t.Errorf("extra lines: %q", got)
	}
}

func TestTCPPipelinedCases(t *testing.T) {
	s := newTestServer(t, Config{})
	_, addr := serve(t, s)
	c := dial(t, addr)
	var in, want []string
	for _, tc := range allCases() {
		in = append(in, tc.in)
		if tc.want != "" {
			want = append(want, tc.want)
		}
	}
	c.send(in...)
	got := c.rest()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got %d lines, want %d\ngot:  %q\nwant: %q", len(got), len(want), got, want)
	}
}

func TestHTTPCases(t *testing.T) {
	s := newTestServer(t, Config{})
	url, _ := serve(t, s)
	cl := newClient(t)
	for _, tc := range allCases() {
		t.Run(tc.name, func(t *testing.T) {
			code, body, h := post(t, cl, url, tc.in)
			switch {
			case tc.want == "" && (code != http.StatusNoContent || body != ""):
				t.Errorf("got %d %q, want 204 and no body", code, body)
			case tc.want != "" && (code != http.StatusOK || body != tc.want):
				t.Errorf("in:   %s\ngot:  %d %s\nwant: 200 %s", tc.in, code, body, tc.want)
			case tc.want != "" && (h.Get("Content-Type") != "application/json" || h.Get("Content-Length") != strconv.Itoa(len(body))):
				t.Errorf("headers: %v", h)
			}
		})
	}
}

func TestHTTPMethodNotAllowed(t *testing.T) {
	s := newTestServer(t, Config{})
	url, _ := serve(t, s)
	resp, err := newClient(t).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %d Allow=%q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

func TestTCPOutOfOrder(t *testing.T) {
	s := newTestServer(t, Config{})
	_, addr := serve(t, s)
	c := dial(t, addr)
	c.send(req("1", "sleep", `{"ms":50}`), req("2", "get_time", ""), req("3", "sleep", "[20]"))
	want := []string{res("2", `"14:05"`), res("3", "true"), res("1", "true")}
	for i, w := range want {
		if got := c.mustLine(); got != w {
			t.Errorf("reply %d = %s, want %s", i, got, w)
		}
	}
}

func TestTCPManyInFlight(t *testing.T) {
	s := newTestServer(t, Config{})
	_, addr := serve(t, s)
	c := dial(t, addr)
	const n = 3000
	frames := make([]string, n)
	for i := range frames {
		id := strconv.Itoa(i)
		switch i % 3 {
		case 0:
			frames[i] = req(id, "sleep", "["+strconv.Itoa(i%17)+"]")
		case 1:
			frames[i] = req(id, "add", "["+id+",1]")
		default:
			frames[i] = req(`"`+id+`"`, "echo", `{"i":`+id+`}`)
		}
	}
	c.send(frames...)
	seen := map[string]bool{}
	for range n {
		l := c.mustLine()
		if seen[l] {
			t.Fatalf("duplicate reply %s", l)
		}
		seen[l] = true
	}
	for i := range n {
		id := strconv.Itoa(i)
		var want string
		switch i % 3 {
		case 0:
			want = res(id, "true")
		case 1:
			want = res(id, strconv.Itoa(i+1))
		default:
			want = res(`"`+id+`"`, `{"i":`+id+`}`)
		}
		if !seen[want] {
			t.Fatalf("missing %s", want)
		}
	}
	if s.Requests() != n {
		t.Errorf("Requests() = %d, want %d", s.Requests(), n)
	}
}

func TestTCPLineEndings(t *testing.T) {
	s := newTestServer(t, Config{})
	_, addr := serve(t, s)
	c := dial(t, addr)
	// CRLF, blank lines and a final line without '\n' before the half-close.
	_, _ = io.WriteString(c.nc, req("1", "eth_chainId", "")+"\r\n\n  \r\n"+req("2", "eth_chainId", ""))
	got := c.rest()
	want := []string{res("1", `"0x539"`), res("2", `"0x539"`)}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLongFrames(t *testing.T) {
	big := `"` + strings.Repeat("x", 100_000) + `"`
	in := req("1", "echo", "["+big+"]")
	tooLarge := bad("null", `"request too large"`)
	t.Run("tcp long line accepted", func(t *testing.T) {
		s := newTestServer(t, Config{})
		_, addr := serve(t, s)
		c := dial(t, addr)
		c.send(in, in)
		if got := c.rest(); !slices.Equal(got, []string{res("1", "["+big+"]"), res("1", "["+big+"]")}) {
			t.Errorf("got %d lines (first %.80q)", len(got), got)
		}
	})
	for _, max := range []int{64, 50_000} { // inside one read buffer, and across several
		t.Run("tcp too large "+strconv.Itoa(max), func(t *testing.T) {
			s := newTestServer(t, Config{MaxFrame: max})
			_, addr := serve(t, s)
			c := dial(t, addr)
			c.send(req("1", "eth_chainId", ""), in, req("2", "eth_chainId", ""))
			// The frame before is answered; after the error the connection
			// is closed, so the frame after it is never read.
			var got []string
			for l, ok := c.line(); ok; l, ok = c.line() {
				got = append(got, l)
			}
			if want := []string{res("1", `"0x539"`), tooLarge}; !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
	t.Run("tcp exactly max", func(t *testing.T) {
		f := req("1", "eth_chainId", "")
		s := newTestServer(t, Config{MaxFrame: len(f)})
		_, addr := serve(t, s)
		c := dial(t, addr)
		c.send(f)
		if got := c.rest(); !slices.Equal(got, []string{res("1", `"0x539"`)}) {
			t.Errorf("got %q", got)
		}
	})
	for _, chunked := range []bool{false, true} {
		t.Run("http too large chunked="+strconv.FormatBool(chunked), func(t *testing.T) {
			s := newTestServer(t, Config{MaxFrame: 1000})
			url, _ := serve(t, s)
			var body io.Reader = strings.NewReader(in)
			if chunked {
				body = io.MultiReader(body) // hides the length: no Content-Length
			}
			resp, err := newClient(t).Post(url, "application/json", body)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusRequestEntityTooLarge || string(b) != tooLarge {
				t.Errorf("got %d %s", resp.StatusCode, b)
			}
		})
	}
	t.Run("http long body accepted", func(t *testing.T) {
		s := newTestServer(t, Config{})
		url, _ := serve(t, s)
		code, body, _ := post(t, newClient(t), url, in)
		if code != 200 || body != res("1", "["+big+"]") {
			t.Errorf("got %d %.80s", code, body)
		}
	})
}

func TestTCPHalfCloseDeliversPending(t *testing.T) {
	s := newTestServer(t, Config{})
	_, addr := serve(t, s)
	c := dial(t, addr)
	c.send(req("1", "sleep", "[30]"), req("2", "spin", "[100]"), req("3", "convert", "[1,2]"))
	got := c.rest()
	want := []string{res("1", "true"), res("2", "true"), res("3", "2")}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestHTTPSlowMethodAndBatch(t *testing.T) {
	s := newTestServer(t, Config{})
	url, _ := serve(t, s)
	start := time.Now()
	code, body, _ := post(t, newClient(t), url, `[`+req("1", "sleep", "[40]")+`,`+req("2", "get_time", "")+`]`)
	if code != 200 || body != `[`+res("1", "true")+`,`+res("2", `"14:05"`)+`]` {
		t.Errorf("got %d %s", code, body)
	}
	if el := time.Since(start); el < 40*time.Millisecond {
		t.Errorf("batch with sleep 40 answered after %v", el)
	}
	_ = bytes.MinRead
}
