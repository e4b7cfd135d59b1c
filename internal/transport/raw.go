package transport

import (
	"errors"
	"time"
)

// ErrNoRaw reports a stream that cannot write unframed bytes (WebSocket:
// its messages are the framing) or cannot half-close.
var ErrNoRaw = errors.New("transport: this stream cannot write raw bytes or half-close")

// WriteRaw writes b to the stream exactly as given, with no framing added,
// after anything already queued by Send. The fuzzer uses it to send inputs
// that break the framing itself (a Content-Length that lies, a newline inside
// an NDJSON message). Byte streams (TCP, Unix sockets) and child processes
// support it; WebSocket returns ErrNoRaw.
func WriteRaw(s Stream, b []byte, deadline time.Time) error {
	bs := byteStreamOf(s)
	if bs == nil {
		return ErrNoRaw
	}
	if bs.werr != nil {
		bs.wbuf = bs.wbuf[:0]
		return bs.werr
	}
	bs.wbuf = append(bs.wbuf, b...)
	return s.Flush(deadline)
}

// CloseWrite half-closes a stream: the server reads end-of-file while
// replies can still be read. TCP and Unix sockets shut down their write
// side; a child process gets its stdin closed (after which it is expected
// to answer what it read and exit). WebSocket returns ErrNoRaw.
func CloseWrite(s Stream) error {
	if cs, ok := s.(*childStream); ok {
		return cs.stdin.Close()
	}
	bs, ok := s.(*byteStream)
	if !ok {
		return ErrNoRaw
	}
	cw, ok := bs.rw.(interface{ CloseWrite() error })
	if !ok {
		return ErrNoRaw
	}
	return cw.CloseWrite()
}

// byteStreamOf returns the byte stream under s (a socket's own, or a child
// process's), or nil.
func byteStreamOf(s Stream) *byteStream {
	switch v := s.(type) {
	case *byteStream:
		return v
	case *childStream:
		bs, _ := v.Stream.(*byteStream)
		return bs
	}
	return nil
}
