package testsrv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/rpcload/rpcload/internal/transport"
)

// Framing is how messages are delimited on a byte stream (TCP, Unix socket,
// stdio). Both framings carry one JSON-RPC message (or batch) per frame, and
// replies are framed the way requests are.
type Framing uint8

const (
	// FramingNewline is newline-delimited JSON: one message per line, an
	// optional '\r' before the '\n', blank lines skipped, and a last line
	// without '\n' before EOF still read. Replies end with "\n".
	FramingNewline Framing = iota
	// FramingContentLength is the LSP base protocol: header lines
	// "Content-Length: N" (required) and optionally "Content-Type: ..."
	// (other well-formed headers are ignored too; names are
	// case-insensitive), each ending in "\r\n" (a bare "\n" is accepted), a
	// blank line, then exactly N bytes. Every frame is a message: an empty
	// body is a -32700, not a blank line. Replies carry only Content-Length.
	FramingContentLength

	// framingWS is one WebSocket message per frame. It exists only inside the
	// server (WSHandler); ServeStream and ServeStdio reject it.
	framingWS
)

// String returns the name ParseFraming accepts.
func (f Framing) String() string {
	switch f {
	case FramingNewline:
		return "newline"
	case FramingContentLength:
		return "content-length"
	case framingWS:
		return "websocket"
	}
	return "Framing(" + strconv.Itoa(int(f)) + ")"
}

// ParseFraming reads a framing name: "newline" (alias "ndjson") or
// "content-length" (alias "lsp"). Errors wrap ErrConfig.
func ParseFraming(name string) (Framing, error) {
	switch name {
	case "newline", "ndjson":
		return FramingNewline, nil
	case "content-length", "lsp":
		return FramingContentLength, nil
	}
	return 0, fmt.Errorf("%w: unknown framing %q (valid: newline, content-length)", ErrConfig, name)
}

// streamFraming checks that f is one of the exported framings.
func streamFraming(f Framing) error {
	if f != FramingNewline && f != FramingContentLength {
		return fmt.Errorf("%w: framing %v cannot serve a byte stream", ErrConfig, f)
	}
	return nil
}

// frameReader splits a byte stream into frames: transport's request
// readers. Buffered tells whether the next frame is in the buffer, so the
// replies gathered so far can wait for it instead of being flushed.
type frameReader interface {
	Next() ([]byte, error)
	Buffered() bool
}

// newFrameReader returns the reader of rw's requests in framing f.
func newFrameReader(rw io.Reader, f Framing, maxFrame int) frameReader {
	if f == FramingContentLength {
		return transport.NewRequestCLReader(rw, maxFrame)
	}
	return transport.NewRequestLineReader(rw, maxFrame)
}

// readFrame returns the next frame's body, valid until the next call. A
// Content-Length header the server cannot read is a *transport.HeaderError,
// whose Reason is the data of the -32700 reply.
func (c *streamConn) readFrame() ([]byte, error) {
	if c.framing == framingWS {
		return c.readWS()
	}
	f, err := c.fr.Next()
	if errors.Is(err, transport.ErrFrameTooLarge) {
		return nil, errTooLarge
	}
	return f, err
}

// beginFrame starts a reply frame at the end of dst; the body is appended
// next and endFrame(dst, start) completes it.
func (c *streamConn) beginFrame(dst []byte) ([]byte, int) {
	start := len(dst)
	if c.framing == framingWS {
		dst = append(dst, 0, 0, 0, 0) // the writer's record length, see writeWS
	}
	return dst, start
}

// endFrame completes the frame begun at start: a newline, a Content-Length
// header moved in front of the body, or the WebSocket record length.
func (c *streamConn) endFrame(dst []byte, start int) []byte {
	switch c.framing {
	case FramingContentLength:
		var h [32]byte
		hdr := transport.AppendCLHeader(h[:0], len(dst)-start)
		end := len(dst)
		dst = append(dst, hdr...) // room for the header
		copy(dst[start+len(hdr):], dst[start:end])
		copy(dst[start:], hdr)
		return dst
	case framingWS:
		binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
		return dst
	}
	return append(dst, '\n')
}
