package testsrv

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// pipelined measures round trips with many requests in flight on one
// connection: one goroutine writes chunks of requests, another reads the
// replies. Time per op is per request.
func pipelined(b *testing.B, write func() error, chunk int, read func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	per := (b.N + chunk - 1) / chunk
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range per {
			if err := write(); err != nil {
				b.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range per * chunk {
			if err := read(); err != nil {
				b.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	b.StopTimer()
	n := per * chunk
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "req/s")
}

const benchChunk = 256

// BenchmarkStreamPipelined is BenchmarkTCPPipelined's conns=1 case over the
// other byte-stream transports.
func BenchmarkStreamPipelined(b *testing.B) {
	for _, tc := range []struct {
		name    string
		network string
		f       Framing
	}{{"tcp+lsp", "tcp", FramingContentLength}, {"unix", "unix", FramingNewline}, {"unix+lsp", "unix", FramingContentLength}} {
		b.Run(tc.name, func(b *testing.B) {
			s := newTestServer(b, Config{Now: time.Now})
			c := dialSocket(tc.network, tc.f)(b, s).(*streamClient)
			var sb strings.Builder
			for i := range benchChunk {
				sb.WriteString(frameAs(tc.f, req(strconv.Itoa(i), "get_time", "")))
			}
			payload := []byte(sb.String())
			_ = c.w.(net.Conn).SetDeadline(time.Time{})
			r := bufio.NewReaderSize(c.r, 64<<10)
			read := func() error { _, err := r.ReadSlice('\n'); return err }
			if tc.f == FramingContentLength {
				read = func() error { return readCLReply(r) }
			}
			pipelined(b, func() error { _, err := c.w.Write(payload); return err }, benchChunk, read)
		})
	}
}

// readCLReply skips one Content-Length reply without allocating.
func readCLReply(r *bufio.Reader) error {
	h, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	n := 0
	for _, d := range h[len("Content-Length: ") : len(h)-2] {
		n = 10*n + int(d-'0')
	}
	if _, err := r.ReadSlice('\n'); err != nil {
		return err
	}
	_, err = r.Discard(int(n))
	return err
}

// BenchmarkWSPipelined is the same over WebSocket, one message per request.
// With client=gorilla both sides use gorilla/websocket, which writes every
// message with its own syscall and allocates per message read; client=raw
// writes a chunk of masked frames in one write and reads frames by hand, so
// the time and allocations are the server's.
func BenchmarkWSPipelined(b *testing.B) {
	for _, raw := range []bool{false, true} {
		name := map[bool]string{false: "client=gorilla", true: "client=raw"}[raw]
		b.Run(name, func(b *testing.B) {
			s := newTestServer(b, Config{Now: time.Now})
			bound, err := s.Listen(context.Background(), Addrs{HTTP: "127.0.0.1:0"})
			if err != nil {
				b.Fatal(err)
			}
			ws, _, err := websocket.DefaultDialer.Dial("ws://"+bound.HTTP+"/ws", nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ws.Close()
			msgs := make([][]byte, benchChunk)
			var frames []byte
			for i := range msgs {
				msgs[i] = []byte(req(strconv.Itoa(i), "get_time", ""))
				// FIN+text, masked, 7-bit length, a zero mask key: the
				// payload goes as it is.
				frames = append(append(frames, 0x81, 0x80|byte(len(msgs[i])), 0, 0, 0, 0), msgs[i]...)
			}
			write := func() error {
				for _, m := range msgs {
					if err := ws.WriteMessage(websocket.TextMessage, m); err != nil {
						return err
					}
				}
				return nil
			}
			read := func() error {
				_, r, err := ws.NextReader()
				if err == nil {
					_, err = io.Copy(io.Discard, r)
				}
				return err
			}
			if raw {
				nc := ws.NetConn()
				br := bufio.NewReaderSize(nc, 64<<10)
				write = func() error { _, err := nc.Write(frames); return err }
				read = func() error { return readWSFrame(br) }
			}
			pipelined(b, write, benchChunk, read)
		})
	}
}

// readWSFrame skips one unmasked server frame without allocating.
func readWSFrame(r *bufio.Reader) error {
	h, err := r.Peek(2)
	if err != nil {
		return err
	}
	n, skip := int(h[1]&0x7f), 2
	switch n {
	case 126:
		ext, err := r.Peek(4)
		if err != nil {
			return err
		}
		n, skip = int(ext[2])<<8|int(ext[3]), 4
	case 127:
		return errors.New("frame too long for the benchmark")
	}
	_, err = r.Discard(skip + n)
	return err
}
