package minclient

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/testsrv"
)

func TestRunAgainstReferenceServer(t *testing.T) {
	srv, err := testsrv.New(testsrv.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bound, err := srv.Listen(ctx, testsrv.Addrs{HTTP: "127.0.0.1:0", TCP: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name            string
		url             string
		inflight, conns int
		timed           bool
	}{
		{"tcp one in flight", "tcp://" + bound.TCP, 1, 1, false},
		{"tcp pipelined on two connections", "tcp://" + bound.TCP, 64, 2, false},
		{"tcp timed", "tcp://" + bound.TCP, 1, 1, true},
		{"websocket one in flight", "ws://" + bound.HTTP + "/ws", 1, 1, false},
		{"websocket pipelined, uneven share", "ws://" + bound.HTTP + "/ws", 65, 2, false},
		{"websocket timed", "ws://" + bound.HTTP + "/ws", 1, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(ctx, Config{URL: tc.url, InFlight: tc.inflight, Conns: tc.conns, Duration: 200 * time.Millisecond,
				Method: "echo", Params: `[1,"a"]`, Timed: tc.timed})
			if err != nil {
				t.Fatal(err)
			}
			if res.Replies == 0 || res.Unmatched != 0 || res.ReqPerS <= 0 {
				t.Fatalf("result %+v: want replies, none unmatched", res)
			}
			if tc.timed != (res.P50 > 0 && res.Timed > 0) {
				t.Fatalf("result %+v: timed %v", res, tc.timed)
			}
		})
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	for _, c := range []Config{
		{URL: "tcp://127.0.0.1:1", InFlight: 1, Conns: 0, Duration: time.Second, Method: "echo"},
		{URL: "tcp://127.0.0.1:1", InFlight: 1, Conns: 2, Duration: time.Second, Method: "echo"},
		{URL: "tcp://127.0.0.1:1", InFlight: 1, Conns: 1, Duration: 0, Method: "echo"},
		{URL: "tcp://127.0.0.1:1", InFlight: 1, Conns: 1, Duration: time.Second},
		{URL: "http://127.0.0.1:1/", InFlight: 1, Conns: 1, Duration: time.Second, Method: "echo"},
		{URL: "tcp://127.0.0.1:1", InFlight: 2, Conns: 1, Duration: time.Second, Method: "echo", Timed: true},
	} {
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("Run(%+v): no error", c)
		}
	}
}

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{`{"jsonrpc":"2.0","id":42,"result":[1,"a"]}`, 42},
		{`{"jsonrpc":"2.0","result":true,"id":7}` + "\n", 7},
		{`{"jsonrpc":"2.0","id":"42","result":1}`, 0},
		{`{"jsonrpc":"2.0","result":1}`, 0},
	} {
		if got := parseID([]byte(tc.in)); got != tc.want {
			t.Errorf("parseID(%s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestAppendWSFrame unmasks each frame the way a server does (RFC 6455
// 5.3) and checks header, length encoding and payload.
func TestAppendWSFrame(t *testing.T) {
	c := &conn{mask: 1}
	for _, n := range []int{0, 1, 125, 126, 65535, 65536} {
		payload := bytes.Repeat([]byte("x"), n)
		f := c.appendWSFrame(nil, payload)
		if f[0] != 0x81 || f[1]&0x80 == 0 {
			t.Fatalf("len %d: header %x, want FIN text and the mask bit", n, f[:2])
		}
		var size, at int
		switch l := int(f[1] & 0x7f); l {
		case 126:
			size, at = int(binary.BigEndian.Uint16(f[2:])), 4
		case 127:
			size, at = int(binary.BigEndian.Uint64(f[2:])), 10
		default:
			size, at = l, 2
		}
		if size != n {
			t.Fatalf("len %d: frame says %d", n, size)
		}
		key, body := f[at:at+4], append([]byte(nil), f[at+4:]...)
		for i := range body {
			body[i] ^= key[i&3]
		}
		if !bytes.Equal(body, payload) {
			t.Fatalf("len %d: payload does not unmask to the original", n)
		}
	}
}

func TestRequestParts(t *testing.T) {
	p, s := requestParts("echo", `[1,"a"]`)
	if got, want := string(p)+"9"+string(s), `{"jsonrpc":"2.0","method":"echo","params":[1,"a"],"id":9}`; got != want {
		t.Errorf("request = %s, want %s", got, want)
	}
	p, s = requestParts("get_time", "")
	if got, want := string(p)+"1"+string(s), `{"jsonrpc":"2.0","method":"get_time","id":1}`; got != want {
		t.Errorf("request = %s, want %s", got, want)
	}
}
