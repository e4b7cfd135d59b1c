package transport

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsServer serves WebSocket on 127.0.0.1 with gorilla's server, calling h
// for each upgraded connection, and returns its ws:// URL.
func wsServer(t testing.TB, up websocket.Upgrader, h func(c *websocket.Conn, r *http.Request)) string {
	t.Helper()
	var wg sync.WaitGroup // handlers of hijacked connections, which httptest does not wait for
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Added before the hijack, which httptest's Close waits for.
		wg.Add(1)
		defer wg.Done()
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		h(c, r)
	}))
	t.Cleanup(func() { srv.Close(); wg.Wait() })
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
}

// wsEcho answers every message with the same message, of the same type.
func wsEcho(c *websocket.Conn, _ *http.Request) {
	for {
		typ, r, err := c.NextReader()
		if err != nil {
			return
		}
		w, err := c.NextWriter(typ)
		if err != nil {
			return
		}
		io.Copy(w, r)
		if w.Close() != nil {
			return
		}
	}
}

// wsRawServer does the WebSocket handshake by hand on 127.0.0.1 and hands
// the connection to serve, which may then write any bytes, valid or not.
func wsRawServer(t testing.TB, serve func(c net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				if br, err := wsAccept(c); err == nil {
					serve(c, br)
				}
			})
		}
	})
	return "ws://" + ln.Addr().String() + "/"
}

// wsAccept reads an upgrade request from c and accepts it.
func wsAccept(c net.Conn) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(c, 64<<10)
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	_, err = fmt.Fprintf(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
		base64.StdEncoding.EncodeToString(sum[:]))
	return br, err
}

// wsRawEcho answers each client frame with an unmasked server frame of the
// same opcode and payload, gathering the replies to everything already
// received into one write. It allocates nothing per message, so allocation
// counts measure the client alone.
func wsRawEcho(c net.Conn, br *bufio.Reader) {
	var hdr [8]byte
	payload := make([]byte, 0, 64<<10)
	out := make([]byte, 0, 64<<10)
	for {
		if _, err := io.ReadFull(br, hdr[:2]); err != nil {
			return
		}
		op, n := hdr[0]&0xf, uint64(hdr[1]&0x7f)
		switch n {
		case 126:
			io.ReadFull(br, hdr[:2])
			n = uint64(binary.BigEndian.Uint16(hdr[:2]))
		case 127:
			io.ReadFull(br, hdr[:8])
			n = binary.BigEndian.Uint64(hdr[:8])
		}
		if _, err := io.ReadFull(br, hdr[:4]); err != nil {
			return
		}
		key := binary.LittleEndian.Uint32(hdr[:4])
		if uint64(cap(payload)) < n {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(br, payload); err != nil {
			return
		}
		maskWS(payload, key)
		out = append(out, 0x80|op)
		switch {
		case n <= 125:
			out = append(out, byte(n))
		case n <= 0xffff:
			out = append(out, 126, byte(n>>8), byte(n))
		default:
			out = append(out, 127)
			out = binary.BigEndian.AppendUint64(out, n)
		}
		out = append(out, payload...)
		if op == wsOpClose || br.Buffered() == 0 {
			if _, err := c.Write(out); err != nil || op == wsOpClose {
				return
			}
			out = out[:0]
		}
	}
}

// dialTestWS dials url with the package's registered dialer.
func dialTestWS(t testing.TB, url string, o StreamOptions) Stream {
	t.Helper()
	tg, err := ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := DialStream(context.Background(), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// writeCounter counts the Write calls that reach the TCP connection.
type writeCounter struct {
	net.Conn
	n *atomic.Int64
}

func (w writeCounter) Write(p []byte) (int, error) { w.n.Add(1); return w.Conn.Write(p) }

// dialCountingWS dials url with a TCP connection that counts its writes.
func dialCountingWS(t testing.TB, url string, o StreamOptions) (Stream, *atomic.Int64) {
	t.Helper()
	writes := new(atomic.Int64)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := new(net.Dialer).DialContext(ctx, network, addr)
		return writeCounter{c, writes}, err
	}
	s, err := dialWS(context.Background(), Target{Scheme: WS, URL: url}, o, dial)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, writes
}

// TestWSEcho queues many messages, flushes them at once and reads the
// echoes back in order, across every payload length encoding, with gorilla's
// server checking the framing and masking.
func TestWSEcho(t *testing.T) {
	url := wsServer(t, websocket.Upgrader{}, wsEcho)
	sized := func(ns ...int) (msgs []string) {
		for i, n := range ns {
			msgs = append(msgs, strings.Repeat(string(rune('a'+i%26)), n))
		}
		return msgs
	}
	many := make([]string, 1000)
	for i := range many {
		many[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m"}`, i)
	}
	tests := []struct {
		name string
		msgs []string
	}{
		{"one", []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`}},
		{"1000 queued", many},
		{"length encodings", sized(0, 1, 7, 8, 9, 125, 126, 127, 65535, 65536, 200_000)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := dialTestWS(t, url, StreamOptions{MaxFrame: 1 << 20})
			for _, m := range tc.msgs {
				if err := s.Send([]byte(m)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Flush(soon()); err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.msgs {
				got, err := s.Recv()
				if err != nil || string(got) != want {
					t.Fatalf("message %d: got %d bytes %.40q, %v; want %d bytes %.40q", i, len(got), got, err, len(want), want)
				}
			}
		})
	}
}

// TestWSFlushCoalesces checks that a Flush of many queued messages reaches
// the socket as one write, and Send alone writes nothing.
func TestWSFlushCoalesces(t *testing.T) {
	url := wsRawServer(t, wsRawEcho)
	s, writes := dialCountingWS(t, url, StreamOptions{MaxFrame: 1 << 20})
	before := writes.Load() // the handshake
	for i := range 100 {
		s.Send(fmt.Appendf(nil, `{"id":%d}`, i))
	}
	if n := writes.Load() - before; n != 0 {
		t.Fatalf("Send wrote %d times before Flush", n)
	}
	if err := s.Flush(soon()); err != nil {
		t.Fatal(err)
	}
	if n := writes.Load() - before; n != 1 {
		t.Errorf("Flush of 100 messages took %d writes; want 1", n)
	}
	for i := range 100 {
		if got, err := s.Recv(); err != nil || string(got) != fmt.Sprintf(`{"id":%d}`, i) {
			t.Fatalf("reply %d: %q, %v", i, got, err)
		}
	}
}

// TestWSOutOfOrder has the server answer a batch in reverse order: Recv
// hands messages over as they come, whatever order that is.
func TestWSOutOfOrder(t *testing.T) {
	const n = 50
	url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn, _ *http.Request) {
		var got [][]byte
		for len(got) < n {
			_, m, err := c.ReadMessage()
			if err != nil {
				return
			}
			got = append(got, m)
		}
		for i := n - 1; i >= 0; i-- {
			c.WriteMessage(websocket.TextMessage, got[i])
		}
		c.ReadMessage() // until the client goes
	})
	s := dialTestWS(t, url, StreamOptions{MaxFrame: 1 << 10})
	for i := range n {
		s.Send(fmt.Appendf(nil, `{"id":%d}`, i))
	}
	if err := s.Flush(soon()); err != nil {
		t.Fatal(err)
	}
	for i := n - 1; i >= 0; i-- {
		if got, err := s.Recv(); err != nil || string(got) != fmt.Sprintf(`{"id":%d}`, i) {
			t.Fatalf("got %q, %v; want id %d", got, err, i)
		}
	}
}

// TestWSFrameTooLarge sends messages around the limit, whole and in
// fragments, text and binary: each too-large one costs one ErrFrameTooLarge
// and the stream goes on, with a buffer never larger than the limit.
func TestWSFrameTooLarge(t *testing.T) {
	const max = 16
	x := func(n int) string { return strings.Repeat("x", n) }
	for _, typ := range []int{websocket.TextMessage, websocket.BinaryMessage} {
		for _, chunk := range []int{0, 3} { // 0: one frame; 3: fragments of a few bytes
			send := []string{"a", x(max), x(max + 1), x(100 * max), "", x(max-1) + "!", x(70_000), "last"}
			want := []string{"a", x(max), tooLarge, tooLarge, "", x(max-1) + "!", tooLarge, "last"}
			t.Run(fmt.Sprintf("type %d chunk %d", typ, chunk), func(t *testing.T) {
				url := wsServer(t, websocket.Upgrader{WriteBufferSize: 8}, func(c *websocket.Conn, _ *http.Request) {
					for _, m := range send {
						w, _ := c.NextWriter(typ)
						for b := []byte(m); len(b) > 0; {
							k := len(b)
							if chunk > 0 {
								k = min(k, chunk)
							}
							w.Write(b[:k])
							b = b[k:]
						}
						w.Close()
					}
					c.ReadMessage()
				})
				s := dialTestWS(t, url, StreamOptions{MaxFrame: max})
				var got []string
				for range want {
					m, err := s.Recv()
					switch {
					case errors.Is(err, ErrFrameTooLarge):
						got = append(got, tooLarge)
					case err != nil:
						t.Fatalf("after %q: %v", got, err)
					default:
						got = append(got, string(m))
					}
				}
				if strings.Join(got, "|") != strings.Join(want, "|") {
					t.Errorf("got %q\nwant %q", got, want)
				}
				if c := cap(s.(*wsStream).rbuf); c > max {
					t.Errorf("read buffer grew to %d bytes; limit %d", c, max)
				}
			})
		}
	}
}

// tooLargeFirst marks a case whose first Recv reports ErrFrameTooLarge.
const tooLargeFirst = "(too large)"

// TestWSServerDrops has the server write part of a frame and close the TCP
// connection: Recv says where the stream broke, and keeps saying it.
func TestWSServerDrops(t *testing.T) {
	tests := []struct {
		name  string
		write []byte
		first string // a message before the break, if any
		want  error
		says  string
	}{
		{"inside a message", append([]byte{0x81, 100}, "0123456789"...), "", io.ErrUnexpectedEOF, "inside a message"},
		{"after a message", append([]byte{0x81, 2, 'o', 'k', 0x81, 100}, "0123"...), "ok", io.ErrUnexpectedEOF, "inside a message"},
		// Too large is reported as soon as the message passes the limit,
		// before the break.
		{"inside a too-large message", append([]byte{0x82, 126, 0x10, 0}, bytes.Repeat([]byte("z"), 100)...), tooLargeFirst, io.ErrUnexpectedEOF, "inside a message"},
		{"between messages", []byte{0x81, 2, 'o', 'k'}, "ok", io.EOF, "without a close frame"},
		{"inside a frame header", []byte{0x81, 127, 0}, "", io.EOF, "without a close frame"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := wsRawServer(t, func(c net.Conn, _ *bufio.Reader) { c.Write(tc.write) })
			s := dialTestWS(t, url, StreamOptions{MaxFrame: 64})
			if tc.first == tooLargeFirst {
				if _, err := s.Recv(); !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("first Recv: %v; want ErrFrameTooLarge", err)
				}
			} else if tc.first != "" {
				if m, err := s.Recv(); err != nil || string(m) != tc.first {
					t.Fatalf("first Recv: %q, %v; want %q", m, err, tc.first)
				}
			}
			for range 2000 { // gorilla panics on the 1000th read after an error
				_, err := s.Recv()
				if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
					t.Fatalf("Recv error %v; want one wrapping %v that says %q", err, tc.want, tc.says)
				}
			}
		})
	}
}

// TestWSCloseCode has the server close with a code: Recv reports it, and
// gorilla's reply goes out through our connection wrapper.
func TestWSCloseCode(t *testing.T) {
	for _, tc := range []struct {
		code int
		text string
	}{{websocket.CloseNormalClosure, ""}, {websocket.CloseGoingAway, "restarting"}, {4001, "quota exceeded"}} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			reply := make(chan error, 1)
			url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn, _ *http.Request) {
				c.WriteMessage(websocket.TextMessage, []byte("last"))
				c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(tc.code, tc.text), soon())
				_, _, err := c.ReadMessage()
				reply <- err
			})
			s := dialTestWS(t, url, StreamOptions{MaxFrame: 64})
			if m, err := s.Recv(); err != nil || string(m) != "last" {
				t.Fatalf("Recv: %q, %v", m, err)
			}
			_, err := s.Recv()
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != tc.code || ce.Text != tc.text || !strings.Contains(err.Error(), "closed by the server") {
				t.Fatalf("Recv error %v; want the server's close %d %q", err, tc.code, tc.text)
			}
			if err := <-reply; !websocket.IsCloseError(err, tc.code) {
				t.Errorf("server got %v; want the client's close reply with code %d", err, tc.code)
			}
		})
	}
}

// TestWSPing checks that gorilla's pong reply to a server ping reaches the
// server, through our connection wrapper.
func TestWSPing(t *testing.T) {
	pong := make(chan string, 1)
	url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn, _ *http.Request) {
		c.SetPongHandler(func(s string) error { pong <- s; return nil })
		c.WriteControl(websocket.PingMessage, []byte("p1"), soon())
		c.WriteMessage(websocket.TextMessage, []byte("after ping"))
		c.ReadMessage()
	})
	s := dialTestWS(t, url, StreamOptions{MaxFrame: 64})
	if m, err := s.Recv(); err != nil || string(m) != "after ping" {
		t.Fatalf("Recv: %q, %v", m, err)
	}
	if p := <-pong; p != "p1" {
		t.Errorf("pong %q; want p1", p)
	}
}

// TestWSDialErrors checks that a refused upgrade names its status and that a
// server that does not answer the upgrade cannot outlive ctx.
func TestWSDialErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" {
			w.Write([]byte("plain HTTP"))
			return
		}
		http.Error(w, "no such endpoint", http.StatusNotFound)
	}))
	defer srv.Close()
	ws := "ws" + strings.TrimPrefix(srv.URL, "http")
	for _, tc := range []struct{ path, says string }{
		{"/missing", "HTTP 404 Not Found"},
		{"/ok", "HTTP 200 but no valid upgrade"},
	} {
		_, err := DialStream(context.Background(), Target{Scheme: WS, URL: ws + tc.path}, StreamOptions{MaxFrame: 64})
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: error %v; want one saying %q", tc.path, err, tc.says)
		}
	}
	_, err := DialStream(context.Background(), Target{Scheme: WS, URL: ws + "/missing"}, StreamOptions{})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 404 || !strings.Contains(se.Body, "no such endpoint") {
		t.Errorf("error %#v; want a *StatusError 404 with the body", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts, reads the upgrade request, then cancels and stalls
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		http.ReadRequest(bufio.NewReader(c))
		cancel()
		io.Copy(io.Discard, c)
	}()
	_, err = DialStream(ctx, Target{Scheme: WS, URL: "ws://" + ln.Addr().String() + "/"}, StreamOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("dial with ctx cancelled during the upgrade: %v; want context.Canceled", err)
	}
}

// TestWSHeaders checks that the handshake carries the user's headers, names
// in any case, with Host replacing the URL's like an http target's.
func TestWSHeaders(t *testing.T) {
	got := make(chan *http.Request, 1)
	url := wsServer(t, websocket.Upgrader{}, func(_ *websocket.Conn, r *http.Request) { got <- r })
	s := dialTestWS(t, url, StreamOptions{MaxFrame: 64, Header: map[string][]string{
		"authorization": {"Bearer t0ken"},
		"X-Trace":       {"a", "b"},
		"host":          {"virtual.example"},
	}})
	r := <-got
	if r.Host != "virtual.example" || r.Header.Get("Authorization") != "Bearer t0ken" || strings.Join(r.Header.Values("X-Trace"), ",") != "a,b" {
		t.Errorf("server saw host %q, headers %v", r.Host, r.Header)
	}
	s.Close()
}

// TestWSS checks wss: with Insecure a self-signed server is accepted,
// without it the dial fails on the certificate.
func TestWSS(t *testing.T) {
	var wg sync.WaitGroup
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wg.Add(1)
		defer wg.Done()
		c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		wsEcho(c, r)
	}))
	t.Cleanup(func() { srv.Close(); wg.Wait() })
	url := "wss" + strings.TrimPrefix(srv.URL, "https") + "/"
	if _, err := DialStream(context.Background(), Target{Scheme: WSS, URL: url}, StreamOptions{MaxFrame: 64}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("dial without Insecure: %v; want a certificate error", err)
	}
	s := dialTestWS(t, url, StreamOptions{MaxFrame: 64, TLS: TLS{Insecure: true}})
	s.Send([]byte(`{"id":1}`))
	s.Send([]byte(`{"id":2}`))
	if err := s.Flush(soon()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"id":1}`, `{"id":2}`} {
		if m, err := s.Recv(); err != nil || string(m) != want {
			t.Fatalf("Recv: %q, %v; want %s", m, err, want)
		}
	}
}

// TestWSCloseUnblocksRecv closes the stream while Recv waits on a server
// that sends nothing. The server does not read either: one that read would
// answer the close frame, and that answer could reach Recv before Close
// closed the connection.
func TestWSCloseUnblocksRecv(t *testing.T) {
	quiet := make(chan struct{})
	url := wsServer(t, websocket.Upgrader{}, func(*websocket.Conn, *http.Request) { <-quiet })
	t.Cleanup(func() { close(quiet) }) // before the server's cleanup, which waits for this handler
	s := dialTestWS(t, url, StreamOptions{MaxFrame: 64})
	done := make(chan error)
	go func() { _, err := s.Recv(); done <- err }()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Recv after Close: %v; want net.ErrClosed", err)
	}
}

// TestWSFlushDeadline runs the stream over net.Pipe, whose writes block
// until the server reads: a Flush the server never reads gives up at its
// deadline. If nothing went out the framing is intact and the stream goes on;
// if part of a frame went out, its writes are over.
func TestWSFlushDeadline(t *testing.T) {
	for _, tc := range []struct {
		name      string
		readFirst int // bytes the server reads before it stalls
	}{{"nothing written", 0}, {"part of a frame written", 10}} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			var wg sync.WaitGroup
			defer wg.Wait()
			dial := func(context.Context, string, string) (net.Conn, error) {
				client, server := net.Pipe()
				wg.Go(func() {
					defer server.Close()
					br, err := wsAccept(server)
					if err != nil {
						return
					}
					io.ReadFull(server, make([]byte, tc.readFirst)) // br is empty: the client waited for the 101
					<-release
					wsRawEcho(server, br)
				})
				return client, nil
			}
			st, err := dialWS(context.Background(), Target{Scheme: WS, URL: "ws://pipe/"}, StreamOptions{MaxFrame: 64}, dial)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			st.Send([]byte(`{"id":1,"method":"stalled"}`))
			err = st.Flush(time.Now().Add(20 * time.Millisecond))
			close(release)
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("Flush: %v; want a timeout", err)
			}
			st.Send([]byte(`{"id":2}`))
			err = st.Flush(soon())
			if tc.readFirst > 0 {
				if err == nil || !strings.Contains(err.Error(), "inside a frame") {
					t.Errorf("Flush after a partial write: %v; want the stream's writes ended", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m, err := st.Recv(); err != nil || string(m) != `{"id":2}` {
				t.Errorf("Recv after a timed-out Flush: %q, %v", m, err)
			}
		})
	}
}

// TestWSAllocs checks the hot path once buffers have grown: Send and Flush
// allocate nothing; Recv allocates only gorilla's 8-byte messageReader,
// which NextReader makes for every message.
func TestWSAllocs(t *testing.T) {
	const batch = 64
	msg := []byte(`{"jsonrpc":"2.0","id":123456,"method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]}`)
	discard := wsRawServer(t, func(c net.Conn, _ *bufio.Reader) { io.Copy(io.Discard, c) })
	s := dialTestWS(t, discard, StreamOptions{MaxFrame: 1 << 10})
	sendFlush := func() {
		for range batch {
			s.Send(msg)
		}
		if err := s.Flush(soon()); err != nil {
			t.Fatal(err)
		}
	}
	if n := testing.AllocsPerRun(100, sendFlush); n != 0 {
		t.Errorf("Send×%d+Flush allocates %v times; want 0", batch, n)
	}

	e := dialTestWS(t, wsRawServer(t, wsRawEcho), StreamOptions{MaxFrame: 1 << 10})
	roundTrip := func() {
		for range batch {
			e.Send(msg)
		}
		if err := e.Flush(soon()); err != nil {
			t.Fatal(err)
		}
		for range batch {
			if _, err := e.Recv(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 10 {
		roundTrip()
	}
	if n := testing.AllocsPerRun(100, roundTrip); n > batch {
		t.Errorf("a round trip of %d messages allocates %v times; want at most %d (gorilla's messageReader)", batch, n, batch)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const rounds = 500
	for range rounds {
		roundTrip()
	}
	runtime.ReadMemStats(&after)
	perMsg := float64(after.TotalAlloc-before.TotalAlloc) / (rounds * batch)
	t.Logf("%.2f allocations, %.2f bytes per message", float64(after.Mallocs-before.Mallocs)/(rounds*batch), perMsg)
	if perMsg > 10 { // 8, and room for the runtime's own allocations
		t.Errorf("%.1f bytes allocated per message; want 8 (gorilla's messageReader)", perMsg)
	}
}

// BenchmarkWSRoundTrip pipelines batches of messages through a loopback echo
// server: Send×batch, one Flush, Recv×batch. The gorilla-writes case is the
// baseline of writing with gorilla's own client writer, a Write (a syscall)
// and an allocation per message.
func BenchmarkWSRoundTrip(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":123456,"method":"eth_blockNumber","params":[]}`)
	url := wsRawServer(b, wsRawEcho)
	report := func(b *testing.B, batch int, writes int64) {
		msgs := float64(b.N * batch)
		b.ReportMetric(msgs/b.Elapsed().Seconds(), "msgs/s")
		b.ReportMetric(float64(writes)/msgs, "writes/msg")
	}
	for _, batch := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("stream/batch=%d", batch), func(b *testing.B) {
			s, writes := dialCountingWS(b, url, StreamOptions{MaxFrame: 1 << 10})
			b.ReportAllocs()
			b.SetBytes(int64(len(msg) * batch))
			w0 := writes.Load()
			for b.Loop() {
				for range batch {
					s.Send(msg)
				}
				if err := s.Flush(soon()); err != nil {
					b.Fatal(err)
				}
				for range batch {
					if _, err := s.Recv(); err != nil {
						b.Fatal(err)
					}
				}
			}
			report(b, batch, writes.Load()-w0)
		})
		b.Run(fmt.Sprintf("gorilla-writes/batch=%d", batch), func(b *testing.B) {
			writes := new(atomic.Int64)
			d := websocket.Dialer{ReadBufferSize: wsReadBuffer, NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := new(net.Dialer).DialContext(ctx, network, addr)
				return writeCounter{c, writes}, err
			}}
			c, _, err := d.Dial(url, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			buf := make([]byte, 1<<10)
			b.ReportAllocs()
			b.SetBytes(int64(len(msg) * batch))
			w0 := writes.Load()
			for b.Loop() {
				for range batch {
					if err := c.WriteMessage(websocket.TextMessage, msg); err != nil {
						b.Fatal(err)
					}
				}
				for range batch {
					_, r, err := c.NextReader()
					if err != nil {
						b.Fatal(err)
					}
					io.ReadFull(r, buf[:len(msg)])
				}
			}
			report(b, batch, writes.Load()-w0)
		})
	}
}

// FuzzWSFrame checks appendWSFrame against a byte-by-byte reading of RFC
// 6455 5.2: a final masked frame of the opcode, the shortest length
// encoding, and the payload back after unmasking with the key on the wire.
func FuzzWSFrame(f *testing.F) {
	f.Add([]byte(`{"id":1}`), uint32(0x01020304), uint16(0))
	f.Add([]byte{}, uint32(0), uint16(125))
	f.Add([]byte("x"), uint32(0xffffffff), uint16(65535))
	f.Fuzz(func(t *testing.T, payload []byte, key uint32, pad uint16) {
		// pad stretches the payload across the 125/126 and 65535/65536 edges.
		payload = append(payload, make([]byte, int(pad)%70_000)...)
		prefix := []byte("queued")
		fr := appendWSFrame(bytes.Clone(prefix), wsOpText, payload, key)
		if !bytes.HasPrefix(fr, prefix) {
			t.Fatal("frame overwrote what was queued before it")
		}
		fr = fr[len(prefix):]
		if fr[0] != 0x81 || fr[1]&0x80 == 0 {
			t.Fatalf("header % x: want FIN, text, MASK", fr[:2])
		}
		n, hdr := uint64(fr[1]&0x7f), 2
		switch n {
		case 126:
			n, hdr = uint64(binary.BigEndian.Uint16(fr[2:])), 4
			if n <= 125 {
				t.Fatalf("16-bit length %d", n)
			}
		case 127:
			n, hdr = binary.BigEndian.Uint64(fr[2:]), 10
			if n <= 0xffff {
				t.Fatalf("64-bit length %d", n)
			}
		}
		k, body := fr[hdr:hdr+4], fr[hdr+4:]
		if n != uint64(len(payload)) || len(body) != len(payload) {
			t.Fatalf("length %d, body %d; payload %d", n, len(body), len(payload))
		}
		for i := range body {
			if body[i]^k[i%4] != payload[i] {
				t.Fatalf("byte %d unmasks to %#x; want %#x", i, body[i]^k[i%4], payload[i])
			}
		}
	})
}

// TestWSReads: the read count moves between messages that came in different
// reads (the second reply cannot be sent before the client asked for it),
// and never goes back.
func TestWSReads(t *testing.T) {
	url := wsRawServer(t, wsRawEcho)
	s := dialTestWS(t, url, StreamOptions{MaxFrame: 1 << 20})
	rc, ok := s.(ReadCounter)
	if !ok {
		t.Fatal("a WebSocket stream does not count its reads")
	}
	var counts []uint64
	for _, batch := range [][]string{{"a", "b"}, {"c"}} {
		for _, m := range batch {
			s.Send([]byte(m))
		}
		if err := s.Flush(soon()); err != nil {
			t.Fatal(err)
		}
		for _, want := range batch {
			got, err := s.Recv()
			if err != nil || string(got) != want {
				t.Fatalf("got %q, %v; want %q", got, err, want)
			}
			counts = append(counts, rc.Reads())
		}
	}
	if counts[0] == 0 || counts[1] < counts[0] || counts[2] <= counts[1] {
		t.Fatalf("read counts %v: want them to grow, and to move for the message of a later read", counts)
	}
}

// TestWSOversizeEarly: a message past --max-frame is reported as soon as it
// passes the limit, even if it never ends; one announced far past it (a
// frame length of 2^62) costs the connection at its header.
func TestWSOversizeEarly(t *testing.T) {
	const max = 1 << 10
	endless := func(c net.Conn, _ *bufio.Reader) {
		c.Write([]byte{0x01, 4, 'a', 'b', 'c', 'd'}) // text, no FIN
		frame := append([]byte{0x00, 126, 0x10, 0x00}, bytes.Repeat([]byte("z"), 4096)...)
		for range 16 { // 64 KiB and then silence: the message never ends
			if _, err := c.Write(frame); err != nil {
				return
			}
		}
		io.Copy(io.Discard, c) // hold the connection until the client closes it
	}
	huge := func(c net.Conn, _ *bufio.Reader) {
		head := []byte{0x81, 127}
		head = binary.BigEndian.AppendUint64(head, 1<<62)
		c.Write(append(head, "{\"jsonrpc\""...))
		io.Copy(io.Discard, c)
	}
	tests := []struct {
		name  string
		serve func(net.Conn, *bufio.Reader)
		then  error // the second Recv's error, nil: it waits
	}{
		{"endless message", endless, nil},
		{"length 2^62", huge, errWSGiveUp},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := dialTestWS(t, wsRawServer(t, tc.serve), StreamOptions{MaxFrame: max})
			if _, err := s.Recv(); !errors.Is(err, ErrFrameTooLarge) {
				t.Fatalf("first Recv: %v; want ErrFrameTooLarge at once", err)
			}
			if tc.then == nil {
				return
			}
			for range 3 {
				if _, err := s.Recv(); !errors.Is(err, tc.then) {
					t.Fatalf("then Recv: %v; want %v", err, tc.then)
				}
			}
		})
	}
}
