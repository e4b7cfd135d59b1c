package testsrv

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// TestWSFrameTooLarge: a message over MaxFrame closes the connection with
// 1009 after the replies before it; the message after it is not answered.
func TestWSFrameTooLarge(t *testing.T) {
	for _, size := range []int{1001, 100_000} { // inside one read buffer, and across several
		for _, dial := range []func(testing.TB, *Server) client{dialWS, dialWSHandler} {
			s := newTestServer(t, Config{MaxFrame: 1000})
			c := dial(t, s).(*wsClient)
			c.send(r7, req("1", "echo", `["`+strings.Repeat("x", size)+`"]`), req("2", "eth_chainId", ""))
			var got []string
			for l, ok := c.recv(); ok; l, ok = c.recv() {
				got = append(got, l)
			}
			if !slices.Equal(got, []string{ok7}) || c.code != websocket.CloseMessageTooBig {
				t.Errorf("size %d: got %q, close code %d; want [%s] and 1009", size, got, c.code, ok7)
			}
			if s.Requests() != 1 {
				t.Errorf("Requests() = %d, want 1", s.Requests())
			}
		}
	}
}

// TestWSExactlyMax: a message of exactly MaxFrame bytes is served.
func TestWSExactlyMax(t *testing.T) {
	s := newTestServer(t, Config{MaxFrame: len(r7)})
	c := dialWS(t, s)
	c.send(r7, r7)
	if got := c.rest(); !slices.Equal(got, []string{ok7, ok7}) {
		t.Errorf("got %q", got)
	}
}

// TestWSBinaryAndPing: binary messages are read like text ones (replies are
// text), and pings are answered without disturbing replies.
func TestWSBinaryAndPing(t *testing.T) {
	s := newTestServer(t, Config{})
	c := dialWS(t, s).(*wsClient)
	pong := make(chan string, 1)
	c.ws.SetPongHandler(func(data string) error { pong <- data; return nil })
	if err := c.ws.WriteMessage(websocket.BinaryMessage, []byte(r7)); err != nil {
		t.Fatal(err)
	}
	if err := c.ws.WriteMessage(websocket.PingMessage, []byte("p1")); err != nil {
		t.Fatal(err)
	}
	c.send(rabc)
	if got := c.rest(); !slices.Equal(got, []string{ok7, okabc}) {
		t.Errorf("got %q", got)
	}
	if p := <-pong; p != "p1" {
		t.Errorf("pong %q", p)
	}
}

// TestHTTPWSRouting: one HTTP port serves POST everywhere (on /ws too) and
// WebSocket upgrades on /ws only; WSHandler answers plain requests with an
// error.
func TestHTTPWSRouting(t *testing.T) {
	s := newTestServer(t, Config{})
	b, err := s.Listen(context.Background(), Addrs{HTTP: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	cl := newClient(t)
	if code, body, _ := post(t, cl, "http://"+b.HTTP+"/ws", r7); code != 200 || body != ok7 {
		t.Errorf("POST /ws: %d %s", code, body)
	}
	resp, err := cl.Get("http://" + b.HTTP + "/ws")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /ws without upgrade: %d", resp.StatusCode)
	}
	if _, resp, err := websocket.DefaultDialer.Dial("ws://"+b.HTTP+"/other", nil); err == nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("upgrade on /other: %v", err)
	}
	hs := httptest.NewServer(s.WSHandler())
	defer hs.Close()
	if code, _, _ := post(t, newClient(t), hs.URL, r7); code/100 != 4 {
		t.Errorf("POST to WSHandler: %d, want a 4xx", code)
	}
	_ = s.Close()
	rec := httptest.NewRecorder()
	s.WSHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("WSHandler after Close: %d", rec.Code)
	}
}

// TestWSConnectionSeed: the WebSocket connection of an HTTP connection uses
// that connection's PRNG, so the first connection replays Seed+0 whether it
// came through Handler (with ConnContext) or through WSHandler.
func TestWSConnectionSeed(t *testing.T) {
	const n, prob = 200, 0.5
	r := newRand(7)
	var want []string
	for i := range n {
		if r.Float64() >= prob { // not dropped
			want = append(want, res(strings.Repeat("1", i%3+1), `"0x539"`))
		}
	}
	var in []string
	for i := range n {
		in = append(in, req(strings.Repeat("1", i%3+1), "eth_chainId", ""))
	}
	for _, dial := range []func(testing.TB, *Server) client{dialWS, dialWSHandler} {
		s := newTestServer(t, Config{Seed: 7, Faults: []FaultSpec{{FaultDrop, prob}}})
		c := dial(t, s)
		c.send(in...)
		if got := c.rest(); !slices.Equal(got, want) {
			t.Errorf("got %d replies, want %d", len(got), len(want))
		}
		if got := s.Injected()[FaultDrop]; got != uint64(n-len(want)) {
			t.Errorf("Injected[drop] = %d, want %d", got, n-len(want))
		}
	}
}
