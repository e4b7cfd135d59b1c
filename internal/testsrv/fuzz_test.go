package testsrv

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// fuzzSeeds are the corner cases of protocols.md §5 on top of every table case.
var fuzzSeeds = []string{
	`{"jsonrpc":"2.0","id":1e400,"method":"echo"}`,
	`{"jsonrpc":"2.0","id":-0,"method":"echo","params":[-0]}`,
	`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"add","params":[1e308,1]}`,
	`{"jsonrpc":"2.0","id":"\ud800","method":"echo","params":["\ud800"]}`,
	"\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":1,"method":"echo"}`,
	`{"jsonrpc":"2.0","id":1,"method":"echo","params":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"echo"}`,
	`{"jsonrpc":"2.0","id":"a\u0000b","method":"get_time"}`,
	`[[[]],{},null,true,"x"]`,
	`{"jsonrpc":"2.0","id":1,"method":"add","params":{"a":1,"b":2,"a":3}}`,
	`{"jsonrpc":"2.0","id":1,"method":"lookup_weather","params":{"c\u0069ty":"x"}}`,
	`{"jsonrpc":"2.0","id":"7","method":"convert","params":[9223372036854775807,-1]}`,
	`{"jsonrpc":"2.0","id":1,"method":"convert","params":[-9223372036854775808,-1]}`,
	`{"jsonrpc":"2.0","id":1,"method":"spin","params":{"us":1e-300}}`,
}

// FuzzHandleFrame: no input panics; every reply is valid JSON that wire.Scan
// classifies as a clean response (or a batch of them); a valid request's
// reply carries its id byte for byte, and a valid notification gets nothing.
func FuzzHandleFrame(f *testing.F) {
	for _, tc := range allCases() {
		f.Add([]byte(tc.in))
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	s, err := New(Config{Now: fixedClock})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, reply := s.HandleFrame(nil, in)
		var rq wire.Message
		wire.Scan(in, &rq)
		valid := rq.Problems&^(wire.ProblemExtraMember|wire.ProblemFractionalID) == 0
		if !reply {
			if len(out) != 0 {
				t.Fatalf("reply=false with output %q", out)
			}
			if rq.Kind != wire.KindNotification && rq.Kind != wire.KindBatch {
				t.Fatalf("no reply to %q", in)
			}
			return
		}
		if rq.Kind == wire.KindNotification && valid {
			t.Fatalf("replied %s to a valid notification %q", out, in)
		}
		if !json.Valid(out) {
			t.Fatalf("reply is not JSON: %q (input %q)", out, in)
		}
		var m wire.Message
		wire.Scan(out, &m)
		if m.Kind == wire.KindBatch {
			n := 0
			for off := 0; ; n++ {
				elem, next, ok := wire.NextElement(out, off)
				if !ok {
					break
				}
				off = next
				var em wire.Message
				wire.Scan(elem, &em)
				checkResponse(t, &em, elem, in)
			}
			if n == 0 || n != m.BatchLen {
				t.Fatalf("batch reply with %d elements (BatchLen %d): %s", n, m.BatchLen, out)
			}
			return
		}
		checkResponse(t, &m, out, in)
		if rq.Kind == wire.KindRequest && valid && (rq.IDKind == wire.IDNumber || rq.IDKind == wire.IDString || rq.IDKind == wire.IDNull) {
			if !bytes.Equal(m.ID, rq.ID) {
				t.Fatalf("id %s answered with id %s", rq.ID, m.ID)
			}
		}
	})
}

func checkResponse(t *testing.T, m *wire.Message, out, in []byte) {
	t.Helper()
	if (m.Kind != wire.KindResult && m.Kind != wire.KindError) || m.Problems&^wire.ProblemFractionalID != 0 {
		t.Fatalf("reply %s is %s with problems %q (input %q)", out, m.Kind, m.Problems, in)
	}
	if m.Kind == wire.KindError && (m.Code >= 0 || !m.HasCode) {
		t.Fatalf("error reply with code %d: %s", m.Code, out)
	}
}

// FuzzContentLength: the frame reader never panics, never returns a body
// over MaxFrame, and ends every stream with EOF, errTooLarge or a header
// error; a body framed by the server's own encoder (endFrame) reads back
// byte for byte, whatever it holds, with or without a Content-Type.
func FuzzContentLength(f *testing.F) {
	f.Add([]byte(clHead(len(r7))+r7), []byte(r7), false)
	f.Add([]byte("Content-Length: 5\r\nContent-Type: x\r\n\r\nhello"), []byte(""), true)
	f.Add([]byte("content-length:3\n\nabcContent-Length: 99\r\n\r\n"), []byte("\r\n\r\n"), false)
	f.Add([]byte("Content-Length: 1\r\nContent-Length: 2\r\n\r\n"), []byte("Content-Length: 3\r\n\r\n"), true)
	s, err := New(Config{MaxFrame: 64})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, stream, body []byte, withType bool) {
		c := s.newConn(stdio{bytes.NewReader(stream), io.Discard}, nil, FramingContentLength, nil)
		for {
			b, err := c.readFrame()
			var he *transport.HeaderError
			if err == nil && len(b) <= 64 {
				continue
			}
			if err == nil || (!errors.Is(err, io.EOF) && !errors.Is(err, errTooLarge) && !errors.As(err, &he)) {
				t.Fatalf("readFrame = %d bytes, %v", len(b), err)
			}
			break
		}
		c = s.newConn(nil, nil, FramingContentLength, nil)
		dst, start := c.beginFrame(nil)
		wire := c.endFrame(append(dst, body...), start)
		if withType {
			wire = append([]byte("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"), wire...)
		}
		c = s.newConn(stdio{bytes.NewReader(append(wire, wire...)), io.Discard}, nil, FramingContentLength, nil)
		for range 2 {
			b, err := c.readFrame()
			if len(body) > 64 {
				if !errors.Is(err, errTooLarge) {
					t.Fatalf("%d-byte body: %v", len(body), err)
				}
				return
			}
			if err != nil || !bytes.Equal(b, body) {
				t.Fatalf("read back %q, %v; want %q", b, err, body)
			}
		}
		if _, err := c.readFrame(); !errors.Is(err, io.EOF) {
			t.Fatalf("after two frames: %v", err)
		}
	})
}
