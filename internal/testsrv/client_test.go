package testsrv

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// frameAs frames one message the way f puts it on the wire.
func frameAs(f Framing, msg string) string {
	if f == FramingContentLength {
		return "Content-Length: " + strconv.Itoa(len(msg)) + "\r\n\r\n" + msg
	}
	return msg + "\n"
}

// client is a test client of one connection, whatever the transport.
type client interface {
	send(frames ...string)
	// recv returns the next reply; false once the server has closed.
	recv() (string, bool)
	// rest closes the client's sending side (half-close, EOF on stdin, a
	// close frame) and returns every reply until the server closes: the
	// server answers what is pending first, so this is exact.
	rest() []string
}

func mustRecv(t testing.TB, c client) string {
	t.Helper()
	s, ok := c.recv()
	if !ok {
		t.Fatal("unexpected end of the connection")
	}
	return s
}

// streamClient speaks either framing over a byte stream.
type streamClient struct {
	t         testing.TB
	f         Framing
	w         io.Writer
	r         *bufio.Reader
	halfClose func() error
}

func (c *streamClient) send(frames ...string) {
	c.t.Helper()
	var b strings.Builder
	for _, fr := range frames {
		b.WriteString(frameAs(c.f, fr))
	}
	c.raw(b.String())
}

// raw writes bytes as they are, framing or not.
func (c *streamClient) raw(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, s); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *streamClient) recv() (string, bool) {
	c.t.Helper()
	l, err := c.r.ReadString('\n')
	if errors.Is(err, io.EOF) && l == "" {
		return "", false
	}
	if err != nil {
		c.t.Fatalf("read: %v (partial %q)", err, l)
	}
	if c.f == FramingNewline {
		return strings.TrimSuffix(l, "\n"), true
	}
	// The server writes exactly "Content-Length: N\r\n\r\n" and N bytes.
	digits, ok := strings.CutPrefix(l, "Content-Length: ")
	n, err := strconv.Atoi(strings.TrimSuffix(digits, "\r\n"))
	if !ok || err != nil || !strings.HasSuffix(l, "\r\n") {
		c.t.Fatalf("bad reply header %q", l)
	}
	body := make([]byte, n+2)
	if _, err := io.ReadFull(c.r, body); err != nil || string(body[:2]) != "\r\n" {
		c.t.Fatalf("reply body: %v (%q)", err, body)
	}
	return string(body[2:]), true
}

func (c *streamClient) rest() []string {
	c.t.Helper()
	if err := c.halfClose(); err != nil {
		c.t.Fatalf("half-close: %v", err)
	}
	var out []string
	for l, ok := c.recv(); ok; l, ok = c.recv() {
		out = append(out, l)
	}
	return out
}

// wsClient sends one message per WebSocket text message.
type wsClient struct {
	t      testing.TB
	ws     *websocket.Conn
	closed bool
	code   int // the close code of the server's close frame (1006: none)
}

func (c *wsClient) send(frames ...string) {
	c.t.Helper()
	for _, fr := range frames {
		if err := c.ws.WriteMessage(websocket.TextMessage, []byte(fr)); err != nil {
			c.t.Fatalf("write: %v", err)
		}
	}
}

func (c *wsClient) recv() (string, bool) {
	c.t.Helper()
	if c.closed {
		return "", false
	}
	typ, b, err := c.ws.ReadMessage()
	var ce *websocket.CloseError
	switch {
	case errors.As(err, &ce):
		c.closed, c.code = true, ce.Code
		return "", false
	case err != nil:
		c.t.Fatalf("read: %v", err)
	case typ != websocket.TextMessage:
		c.t.Errorf("message type %d, want text", typ)
	}
	return string(b), true
}

func (c *wsClient) rest() []string {
	c.t.Helper()
	// The server may have closed already; then this fails, harmlessly.
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(ioTimeout))
	var out []string
	for l, ok := c.recv(); ok; l, ok = c.recv() {
		out = append(out, l)
	}
	return out
}

// transportCase connects a client to s over one transport.
type transportCase struct {
	name    string
	framing Framing // of the client's frames on byte streams
	dial    func(t testing.TB, s *Server) client
}

// transports is every transport the server speaks, each from the outside.
var transports = []transportCase{
	{"tcp", FramingNewline, dialSocket("tcp", FramingNewline)},
	{"tcp+lsp", FramingContentLength, dialSocket("tcp", FramingContentLength)},
	{"unix", FramingNewline, dialSocket("unix", FramingNewline)},
	{"unix+lsp", FramingContentLength, dialSocket("unix", FramingContentLength)},
	{"ws", 0, dialWS},
	{"wshandler", 0, dialWSHandler},
	{"stdio", FramingNewline, dialStdio(FramingNewline)},
	{"stdio+lsp", FramingContentLength, dialStdio(FramingContentLength)},
}

// socketPath is a fresh socket path in the test's temporary directory.
func socketPath(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.sock")
	if len(p) > 100 {
		t.Fatalf("socket path %q is too long for sun_path", p)
	}
	return p
}

func dialSocket(network string, f Framing) func(testing.TB, *Server) client {
	return func(t testing.TB, s *Server) client {
		t.Helper()
		var a Addrs
		switch {
		case network == "tcp" && f == FramingNewline:
			a.TCP = "127.0.0.1:0"
		case network == "tcp":
			a.TCPLSP = "127.0.0.1:0"
		case f == FramingNewline:
			a.Unix = socketPath(t)
		default:
			a.UnixLSP = socketPath(t)
		}
		b, err := s.Listen(context.Background(), a)
		if err != nil {
			t.Fatalf("Listen: %v", err)
		}
		addr := b.TCP + b.TCPLSP + b.Unix + b.UnixLSP // exactly one is set
		nc, err := net.Dial(network, addr)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		t.Cleanup(func() { _ = nc.Close() })
		_ = nc.SetDeadline(time.Now().Add(ioTimeout))
		hc := nc.(interface{ CloseWrite() error })
		return &streamClient{t: t, f: f, w: nc, r: bufio.NewReaderSize(nc, 1<<20), halfClose: hc.CloseWrite}
	}
}

// dialWS connects to Handler's /ws on a Listen'ed HTTP port.
func dialWS(t testing.TB, s *Server) client {
	t.Helper()
	b, err := s.Listen(context.Background(), Addrs{HTTP: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	return wsDial(t, "ws://"+b.HTTP+"/ws")
}

// dialWSHandler connects to WSHandler mounted on a server of the test's.
func dialWSHandler(t testing.TB, s *Server) client {
	t.Helper()
	hs := httptest.NewServer(s.WSHandler())
	t.Cleanup(hs.Close)
	return wsDial(t, "ws"+strings.TrimPrefix(hs.URL, "http")+"/any/path")
}

func wsDial(t testing.TB, url string) *wsClient {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	_ = ws.SetReadDeadline(time.Now().Add(ioTimeout))
	ws.SetReadLimit(64 << 20)
	return &wsClient{t: t, ws: ws}
}

// dialStdio serves one connection over a pair of pipes. The result of
// ServeStdio arrives on the client's served channel.
func dialStdio(f Framing) func(testing.TB, *Server) client {
	return func(t testing.TB, s *Server) client {
		t.Helper()
		c, _ := stdioPair(t, s, f)
		return c
	}
}

func stdioPair(t testing.TB, s *Server, f Framing) (*streamClient, <-chan error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- s.ServeStdio(inR, outW, f) }()
	// Pipes have no deadlines: break them instead of hanging the test.
	stop := time.AfterFunc(ioTimeout, func() {
		_ = inW.CloseWithError(errors.New("test timeout"))
		_ = outR.CloseWithError(errors.New("test timeout"))
	})
	t.Cleanup(func() {
		stop.Stop()
		_ = inW.Close()
		_ = outR.Close()
	})
	return &streamClient{t: t, f: f, w: inW, r: bufio.NewReaderSize(outR, 1<<20), halfClose: inW.Close}, served
}
