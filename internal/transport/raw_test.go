package transport

import (
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"testing"
)

// readAllListener answers each connection, once the client has half-closed
// it, with one line saying what it read before the end of the stream.
func readAllListener(t *testing.T, ln net.Listener) {
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, err := io.ReadAll(c)
				fmt.Fprintf(c, "{\"read\":%q,\"err\":%q}\n", b, fmt.Sprint(err))
			}()
		}
	}()
}

// TestWriteRawClose checks that WriteRawClose puts what Send queued and
// then the raw bytes on the wire, ends the stream for the server, and
// leaves it open for reading its reply; and that a stream without a
// half-close says so.
func TestWriteRawClose(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	readAllListener(t, tcp)
	sock := filepath.Join(t.TempDir(), "raw.sock")
	unix, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	readAllListener(t, unix)
	for _, tc := range []struct{ network, addr string }{{"tcp", tcp.Addr().String()}, {"unix", sock}} {
		t.Run(tc.network, func(t *testing.T) {
			nc, err := net.Dial(tc.network, tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			s := NewByteStream(nc, Newline, 1<<10)
			defer s.Close()
			s.Send([]byte(`{"id":1}`))
			if err := WriteRawClose(s, []byte("{\"id\":\n2}"), soon()); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("{\"read\":%q,\"err\":%q}", "{\"id\":1}\n{\"id\":\n2}", "<nil>")
			if m, err := s.Recv(); err != nil || string(m) != want {
				t.Fatalf("the server's reply: %s, %v; want %s", m, err, want)
			}
		})
	}
	t.Run("pipe", func(t *testing.T) {
		a, b := net.Pipe()
		defer b.Close()
		go func() { _, _ = io.Copy(io.Discard, b) }()
		s := NewByteStream(a, Newline, 1<<10)
		defer s.Close()
		if err := WriteRawClose(s, []byte("x"), soon()); !errors.Is(err, ErrNoRaw) {
			t.Fatalf("WriteRawClose on a pipe: %v, want ErrNoRaw", err)
		}
	})
}
