package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Stream is a bidirectional message stream: one goroutine sends (Send, then
// Flush), another receives (Recv), concurrently. Messages are complete
// JSON-RPC frames without framing; the Stream adds and removes it.
type Stream interface {
	// Send queues one message; it may be buffered until Flush. msg may be
	// reused by the caller once Send returns.
	Send(msg []byte) error
	// Flush writes everything queued, within the deadline.
	Flush(deadline time.Time) error
	// Recv returns the next message, valid until the next Recv.
	// ErrFrameTooLarge is recoverable: the message was skipped. Any other
	// error ends the stream.
	Recv() ([]byte, error)
	// Close ends the stream and unblocks Recv.
	Close() error
}

// ReadCounter is implemented by streams that count the reads from their
// connection that returned data. Every message Recv hands out between two
// changes of the count was complete when the last read returned, so a
// receiver can take the time once per read instead of once per message.
// Reads is called by the receiving goroutine only.
type ReadCounter interface {
	Reads() uint64
}

// Buffering is implemented by streams that can tell whether their next
// Recv will return a message without reading from the connection (so
// without waiting). A receiver can put off work it must do before it waits
// until then. Buffered is called by the receiving goroutine only; it may
// report false when Recv would not wait after all, never true when it would.
type Buffering interface {
	Buffered() bool
}

// countingReader counts the reads of r that returned data. Only the
// receiving goroutine reads, so the count needs no synchronisation.
type countingReader struct {
	r io.Reader
	n uint64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.n++
	}
	return n, err
}

// StreamOptions configure DialStream.
type StreamOptions struct {
	MaxFrame int
	Header   map[string][]string // WebSocket handshake headers
	TLS      TLS                 // wss: verification and client certificate
	Child    ChildOptions        // stdio: how the child process runs
}

// ErrNoDialer is returned for a scheme this build cannot dial.
var ErrNoDialer = errors.New("transport: no stream dialer for this scheme")

// streamDialers maps the schemes served by other files (WebSocket, child
// processes) to their dialers; the byte-stream schemes are built in.
var streamDialers = map[Scheme]func(ctx context.Context, t Target, o StreamOptions) (Stream, error){}

// DialStream opens one stream to t.
func DialStream(ctx context.Context, t Target, o StreamOptions) (Stream, error) {
	switch t.Scheme {
	case TCP, TCPLSP, Unix, UnixLSP:
		network := "tcp"
		if t.Scheme == Unix || t.Scheme == UnixLSP {
			network = "unix"
		}
		dl := net.Dialer{Timeout: 5 * time.Second}
		c, err := dl.DialContext(ctx, network, t.Addr)
		if err != nil {
			return nil, err
		}
		return NewByteStream(c, t.Framing, o.MaxFrame), nil
	}
	if d := streamDialers[t.Scheme]; d != nil {
		return d(ctx, t, o)
	}
	return nil, fmt.Errorf("%w: %s", ErrNoDialer, t.Scheme)
}

// deadliner is the part of net.Conn a byteStream needs for write deadlines.
type deadliner interface{ SetWriteDeadline(time.Time) error }

// byteStream frames messages on a byte stream (a socket or a pipe pair).
type byteStream struct {
	rw      io.ReadWriteCloser
	framing Framing
	wbuf    []byte
	werr    error     // a failed write may have left part of a frame: every later Flush fails
	wdl     time.Time // the write deadline last set: setting the same again is skipped
	in      *countingReader
	lines   *LineReader
	cl      *CLReader
}

// NewByteStream frames messages over rw with newline or Content-Length
// framing. If rw has SetWriteDeadline, Flush honours its deadline.
func NewByteStream(rw io.ReadWriteCloser, f Framing, maxFrame int) Stream {
	// The write buffer starts small and grows to the largest write seen: an
	// idle or lightly used connection should not hold 64 KB for nothing.
	s := &byteStream{rw: rw, framing: f, wbuf: make([]byte, 0, 4<<10), in: &countingReader{r: rw}}
	if f == ContentLength {
		s.cl = NewCLReader(s.in, maxFrame)
	} else {
		s.lines = NewLineReader(s.in, maxFrame)
	}
	return s
}

// Reads counts the reads from the connection that returned data.
func (s *byteStream) Reads() uint64 { return s.in.n }

// Buffered reports whether a whole message is buffered (newline framing
// only; with Content-Length framing it reports false).
func (s *byteStream) Buffered() bool { return s.lines != nil && s.lines.Buffered() }

func (s *byteStream) Send(msg []byte) error {
	if s.framing == ContentLength {
		s.wbuf = AppendCLHeader(s.wbuf, len(msg))
		s.wbuf = append(s.wbuf, msg...)
		return nil
	}
	s.wbuf = append(append(s.wbuf, msg...), '\n')
	return nil
}

func (s *byteStream) Flush(deadline time.Time) error {
	if s.werr != nil {
		s.wbuf = s.wbuf[:0]
		return s.werr
	}
	if len(s.wbuf) == 0 {
		return nil
	}
	// Setting a deadline costs a clock read and a runtime timer update; a
	// sender that writes often passes the same deadline for a while.
	if d, ok := s.rw.(deadliner); ok && !deadline.Equal(s.wdl) {
		if err := d.SetWriteDeadline(deadline); err != nil {
			s.werr = err
			return err
		}
		s.wdl = deadline
	}
	_, err := s.rw.Write(s.wbuf)
	s.wbuf = s.wbuf[:0]
	if err != nil {
		s.werr = err
	}
	return err
}

func (s *byteStream) Recv() ([]byte, error) {
	if s.cl != nil {
		return s.cl.Next()
	}
	return s.lines.Next()
}

func (s *byteStream) Close() error { return s.rw.Close() }
