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

// closeWrite half-closes a stream: the server reads end-of-file while
// replies can still be read. TCP and Unix sockets shut down their write
// side; a child process gets its stdin closed (after which it is expected
// to answer what it read and exit). WebSocket returns ErrNoRaw.
func closeWrite(s Stream) error {
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

// WriteRawClose writes b as WriteRaw does and then half-closes the stream
// as closeWrite does, so that the server reads b and the end of the
// stream at once where the system allows it (TCP on Linux: b and the FIN
// go in one segment). Otherwise a server may read b, act on it and only
// then see the end, or see both together, as the scheduling of this
// process between the two calls decides, and a server whose behaviour
// depends on that (jrpc2 panics when the end comes while a message is
// still queued) would answer one input in two ways.
func WriteRawClose(s Stream, b []byte, deadline time.Time) error {
	if bs, ok := s.(*byteStream); ok && bs.werr == nil {
		cork(bs.rw)
	}
	if err := WriteRaw(s, b, deadline); err != nil {
		return err
	}
	return closeWrite(s)
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
