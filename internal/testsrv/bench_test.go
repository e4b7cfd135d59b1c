package testsrv

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// hotFrames are the methods whose replies must not allocate.
var hotFrames = map[string]string{
	"get_time":        req("12345", "get_time", ""),
	"echo":            req(`"abc-42"`, "echo", `{"k":[1,2,3],"s":"v"}`),
	"add":             req("9", "add", `{"a":1.25,"b":2}`),
	"eth_blockNumber": req("77", "eth_blockNumber", "[]"),
	"batch":           `[` + req("1", "add", "[1,2]") + `,` + req("2", "get_time", "") + `]`,
}

func TestZeroAllocs(t *testing.T) {
	if raceEnabled || testing.CoverMode() != "" {
		t.Skip("allocation counts need a plain build")
	}
	s := newTestServer(t, Config{Now: nil})
	for name, frame := range hotFrames {
		in := []byte(frame)
		dst := make([]byte, 0, 4096)
		if n := testing.AllocsPerRun(200, func() { dst, _ = s.HandleFrame(dst[:0], in) }); n != 0 {
			t.Errorf("HandleFrame %s: %v allocs", name, n)
		}
		// The stream path without the socket: the per-connection handler, and
		// the frame reader over an endless stream of this frame.
		for _, f := range []Framing{FramingNewline, FramingContentLength, framingWS} {
			c := s.newConn(nil, nil, f, s.nextRand())
			if n := testing.AllocsPerRun(200, func() { c.handle(in); c.local = c.local[:0] }); n != 0 {
				t.Errorf("%v handle %s: %v allocs", f, name, n)
			}
			if f == framingWS {
				continue
			}
			c = s.newConn(&loopStream{b: []byte(frameAs(f, frame))}, nil, f, s.nextRand())
			if n := testing.AllocsPerRun(200, func() {
				b, err := c.readFrame()
				if err != nil || string(b) != frame {
					t.Fatalf("readFrame = %q, %v", b, err)
				}
				c.handle(b)
				c.local = c.local[:0]
			}); n != 0 {
				t.Errorf("%v read+handle %s: %v allocs", f, name, n)
			}
		}
	}
}

// loopStream reads b over and over; writes and Close are no-ops.
type loopStream struct {
	b   []byte
	off int
}

func (l *loopStream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], l.b[l.off:])
		n += k
		l.off = (l.off + k) % len(l.b)
	}
	return n, nil
}

func (l *loopStream) Write(p []byte) (int, error) { return len(p), nil }
func (l *loopStream) Close() error                { return nil }

func benchHandle(b *testing.B, frame string) {
	s := newTestServer(b, Config{Now: time.Now})
	in := []byte(frame)
	dst := make([]byte, 0, 4096)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		dst, _ = s.HandleFrame(dst[:0], in)
	}
}

func BenchmarkHandleFrameGetTime(b *testing.B) { benchHandle(b, hotFrames["get_time"]) }
func BenchmarkHandleFrameEcho(b *testing.B)    { benchHandle(b, hotFrames["echo"]) }
func BenchmarkHandleFrameAdd(b *testing.B)     { benchHandle(b, hotFrames["add"]) }
func BenchmarkHandleFrameBlock(b *testing.B)   { benchHandle(b, hotFrames["eth_blockNumber"]) }
func BenchmarkHandleFrameBatch(b *testing.B)   { benchHandle(b, hotFrames["batch"]) }

// BenchmarkTCPPipelined measures round trips over loopback with many
// requests in flight per connection: one goroutine writes requests in
// chunks, another reads the replies. Time per op is per request.
func BenchmarkTCPPipelined(b *testing.B) {
	for _, conns := range []int{1, 4} {
		b.Run("conns="+strconv.Itoa(conns), func(b *testing.B) {
			s := newTestServer(b, Config{Now: time.Now})
			_, addr := serve(b, s)
			const chunk = 256
			var sb strings.Builder
			for i := range chunk {
				sb.WriteString(req(strconv.Itoa(i), "get_time", "") + "\n")
			}
			payload := []byte(sb.String())
			ncs := make([]net.Conn, conns)
			for i := range ncs {
				nc, err := net.Dial("tcp", addr)
				if err != nil {
					b.Fatal(err)
				}
				defer nc.Close()
				ncs[i] = nc
			}
			b.ReportAllocs()
			b.ResetTimer()
			per := (b.N + conns*chunk - 1) / (conns * chunk) // chunks per connection
			var wg sync.WaitGroup
			for _, nc := range ncs {
				wg.Add(2)
				go func() {
					defer wg.Done()
					for range per {
						if _, err := nc.Write(payload); err != nil {
							b.Error(err)
							return
						}
					}
				}()
				go func() {
					defer wg.Done()
					r := bufio.NewReaderSize(nc, 64<<10)
					for range per * chunk {
						if _, err := r.ReadSlice('\n'); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			n := per * chunk * conns
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "req/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/req")
		})
	}
}

// BenchmarkHTTP is one request per POST over keep-alive connections, for
// comparison: HTTP cannot pipeline, so it is bound by round trips.
func BenchmarkHTTP(b *testing.B) {
	s := newTestServer(b, Config{Now: time.Now})
	url, _ := serve(b, s)
	cl := newClient(b)
	body := hotFrames["get_time"]
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := cl.Post(url, "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
