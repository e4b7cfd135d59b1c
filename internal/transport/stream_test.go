package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// framed is what a byte stream with framing f puts on the wire for msgs.
func framed(f Framing, msgs ...string) string {
	var b strings.Builder
	for _, m := range msgs {
		if f == ContentLength {
			b.WriteString(cl(m))
		} else {
			b.WriteString(m + "\n")
		}
	}
	return b.String()
}

// TestByteStream checks, for both framings over net.Pipe, that Flush puts
// exactly the framed messages on the wire (and Send alone nothing), and that
// Recv unframes what the peer writes, skipping a message over the limit.
func TestByteStream(t *testing.T) {
	msgs := []string{`{"jsonrpc":"2.0","id":1,"method":"a"}`, `{"id":2}`, `[]`}
	for _, f := range []Framing{Newline, ContentLength} {
		t.Run(f.String(), func(t *testing.T) {
			client, peer := net.Pipe()
			defer peer.Close()
			s := NewByteStream(client, f, 64)
			defer s.Close()
			for _, m := range msgs {
				if err := s.Send([]byte(m)); err != nil {
					t.Fatal(err)
				}
			}
			want := framed(f, msgs...)
			got := make(chan string, 1)
			go func() { // net.Pipe: the write blocks until this reads it
				b := make([]byte, len(want))
				io.ReadFull(peer, b)
				got <- string(b)
			}()
			if err := s.Flush(soon()); err != nil {
				t.Fatal(err)
			}
			if g := <-got; g != want {
				t.Errorf("peer read %q; want %q", g, want)
			}
			if err := s.Flush(soon()); err != nil { // nothing queued: no write, or the pipe would block
				t.Fatal(err)
			}

			replies := []string{`{"id":2,"result":1}`, strings.Repeat("x", 65), `{"id":1,"result":[]}`}
			go func() {
				io.WriteString(peer, framed(f, replies...))
				peer.Close()
			}()
			for _, want := range []string{replies[0], tooLarge, replies[2], cleanEOF} {
				m, err := s.Recv()
				g := string(m)
				switch {
				case errors.Is(err, ErrFrameTooLarge):
					g = tooLarge
				case err == io.EOF:
					g = cleanEOF
				case err != nil:
					t.Fatalf("Recv: %v", err)
				}
				if g != want {
					t.Fatalf("Recv %q; want %q", g, want)
				}
			}
		})
	}
}

// TestByteStreamFlushDeadline checks that a Flush to a peer that never
// reads (net.Pipe blocks every write) gives up at its deadline.
func TestByteStreamFlushDeadline(t *testing.T) {
	for _, f := range []Framing{Newline, ContentLength} {
		t.Run(f.String(), func(t *testing.T) {
			client, peer := net.Pipe()
			defer peer.Close()
			s := NewByteStream(client, f, 64)
			defer s.Close()
			s.Send([]byte(`{"id":1}`))
			if err := s.Flush(time.Now().Add(20 * time.Millisecond)); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("Flush: %v; want a timeout", err)
			}
		})
	}
}

// TestByteStreamCloseUnblocksRecv closes the stream while Recv waits.
func TestByteStreamCloseUnblocksRecv(t *testing.T) {
	client, peer := net.Pipe()
	defer peer.Close()
	s := NewByteStream(client, ContentLength, 64)
	done := make(chan error)
	go func() { _, err := s.Recv(); done <- err }()
	s.Close()
	if err := <-done; !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("Recv after Close: %v; want io.ErrClosedPipe", err)
	}
}

// echoListener accepts connections on ln and echoes each one's bytes back:
// framing is symmetric, so the replies are the framed requests.
func echoListener(t testing.TB, ln net.Listener) {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { defer c.Close(); io.Copy(c, c) })
		}
	})
}

// TestDialStream dials every byte-stream scheme against a loopback echo
// listener and round-trips messages through it.
func TestDialStream(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "rpc.sock")
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	echoListener(t, tcp)
	unix, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	echoListener(t, unix)
	for _, url := range []string{
		"tcp://" + tcp.Addr().String(),
		"tcp+lsp://" + tcp.Addr().String(),
		"unix://" + sock,
		"unix+lsp://" + sock,
	} {
		t.Run(strings.SplitN(url, ":", 2)[0], func(t *testing.T) {
			tg, err := ParseTarget(url)
			if err != nil {
				t.Fatal(err)
			}
			s, err := DialStream(context.Background(), tg, StreamOptions{MaxFrame: 1 << 10})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for i := range 10 {
				s.Send(fmt.Appendf(nil, `{"id":%d,"params":"a\r\nb"}`, i))
			}
			if err := s.Flush(soon()); err != nil {
				t.Fatal(err)
			}
			for i := range 10 {
				if m, err := s.Recv(); err != nil || string(m) != fmt.Sprintf(`{"id":%d,"params":"a\r\nb"}`, i) {
					t.Fatalf("Recv %d: %q, %v", i, m, err)
				}
			}
		})
	}
}

// TestDialStreamErrors checks an unknown scheme and a refused connection.
func TestDialStreamErrors(t *testing.T) {
	if _, err := DialStream(context.Background(), Target{Scheme: "carrier-pigeon"}, StreamOptions{}); !errors.Is(err, ErrNoDialer) {
		t.Errorf("unknown scheme: %v; want ErrNoDialer", err)
	}
	for _, s := range []Scheme{WS, WSS} {
		if streamDialers[s] == nil {
			t.Errorf("no dialer registered for %s", s)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := DialStream(context.Background(), Target{Scheme: TCP, Addr: addr}, StreamOptions{}); err == nil {
		t.Error("dial to a closed port succeeded")
	}
}

// loopbackPair returns the two ends of a TCP connection over 127.0.0.1.
func loopbackPair(t testing.TB) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-accepted
	if b == nil {
		t.Fatal("accept failed")
	}
	return a, b
}

// echoStream returns a stream with framing f whose peer, over loopback TCP,
// echoes its bytes back.
func echoStream(t testing.TB, f Framing) Stream {
	a, b := loopbackPair(t)
	done := make(chan struct{})
	go func() { defer close(done); io.Copy(b, b); b.Close() }()
	s := NewByteStream(a, f, 1<<20)
	t.Cleanup(func() { s.Close(); <-done })
	return s
}

// streamRoundTrip sends batch copies of msg, flushes and reads them back.
func streamRoundTrip(t testing.TB, s Stream, msg []byte, batch int) {
	for range batch {
		s.Send(msg)
	}
	if err := s.Flush(soon()); err != nil {
		t.Fatal(err)
	}
	for range batch {
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
}

var streamMsg = []byte(`{"jsonrpc":"2.0","id":123456,"method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]}`)

// TestByteStreamAllocs checks that Send, Flush and Recv allocate nothing in
// the steady state, for both framings.
func TestByteStreamAllocs(t *testing.T) {
	for _, f := range []Framing{Newline, ContentLength} {
		t.Run(f.String(), func(t *testing.T) {
			s := echoStream(t, f)
			for range 10 {
				streamRoundTrip(t, s, streamMsg, 64)
			}
			if n := testing.AllocsPerRun(100, func() { streamRoundTrip(t, s, streamMsg, 64) }); n != 0 {
				t.Errorf("a round trip of 64 messages allocates %v times; want 0", n)
			}
		})
	}
}

func benchmarkByteStream(b *testing.B, f Framing) {
	for _, batch := range []int{1, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			s := echoStream(b, f)
			b.ReportAllocs()
			b.SetBytes(int64(len(streamMsg) * batch))
			for b.Loop() {
				streamRoundTrip(b, s, streamMsg, batch)
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

func BenchmarkByteStreamNewline(b *testing.B) { benchmarkByteStream(b, Newline) }
func BenchmarkByteStreamCL(b *testing.B)      { benchmarkByteStream(b, ContentLength) }

// TestByteStreamReads: Reads counts the reads that brought data, not the
// messages: two frames that came in one read share a count, and a frame
// that took two reads is handed out after both.
func TestByteStreamReads(t *testing.T) {
	for _, f := range []Framing{Newline, ContentLength} {
		t.Run(f.String(), func(t *testing.T) {
			client, peer := net.Pipe()
			defer peer.Close()
			s := NewByteStream(client, f, 1024)
			defer s.Close()
			last := framed(f, "c")
			writes := []string{framed(f, "a", "b"), last[:len(last)-1], last[len(last)-1:]}
			go func() { // net.Pipe: each Write is one Read of the stream's big buffer
				for _, w := range writes {
					if _, err := peer.Write([]byte(w)); err != nil {
						return
					}
				}
			}()
			rc := s.(ReadCounter)
			for i, want := range []struct {
				msg   string
				reads uint64
			}{{"a", 1}, {"b", 1}, {"c", 3}} {
				got, err := s.Recv()
				if err != nil || string(got) != want.msg || rc.Reads() != want.reads {
					t.Fatalf("message %d: %q, %v after %d reads; want %q after %d", i, got, err, rc.Reads(), want.msg, want.reads)
				}
			}
		})
	}
}
