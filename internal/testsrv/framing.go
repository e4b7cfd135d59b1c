package testsrv

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
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

// maxHeader bounds the header block of one Content-Length frame, so a client
// cannot make the server buffer an endless header.
const maxHeader = 8 << 10

// headerError is a Content-Length header (or frame) the server cannot read:
// the framing is lost. Its text is the data of the -32700 reply.
type headerError string

func (e headerError) Error() string { return "testsrv: bad Content-Length frame: " + string(e) }

// Header errors, one per way a frame can break.
const (
	errNoLength   headerError = "no Content-Length header"
	errBadLength  headerError = "Content-Length is not a decimal number"
	errTwoLengths headerError = "two different Content-Length headers"
	errHeaderLine headerError = "malformed header line"
	errHeaderLong headerError = "header block over 8192 bytes"
	errTruncated  headerError = "stream ended inside a frame"
)

const (
	contentLength  = "Content-Length"
	maxLengthValue = 1 << 50 // larger values saturate: still too large, never an overflow
)

// readFrame returns the next frame's body. The slice aliases the read
// buffer (or c.long) until the next call.
func (c *streamConn) readFrame() ([]byte, error) {
	switch c.framing {
	case FramingContentLength:
		return c.readCL()
	case framingWS:
		return c.readWS()
	}
	return c.readLine()
}

// readLine returns the next line without its line ending.
func (c *streamConn) readLine() ([]byte, error) {
	limit := c.s.cfg.MaxFrame
	line, err := c.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		c.long = append(c.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(c.long) > limit+2 { // +2: the line ending is not part of the frame
				c.long = nil
				return nil, errTooLarge
			}
			line, err = c.br.ReadSlice('\n')
			c.long = append(c.long, line...)
		}
		line = c.long
		if cap(c.long) > 4*readBufSize {
			c.long = nil // do not pin a huge buffer per idle connection
		}
	}
	if err != nil && (!errors.Is(err, io.EOF) || len(line) == 0) {
		return nil, err
	}
	// A last line without '\n' before EOF is still a frame; EOF comes next call.
	n := len(line)
	if n > 0 && line[n-1] == '\n' {
		n--
	}
	if n > 0 && line[n-1] == '\r' {
		n--
	}
	if n > limit {
		return nil, errTooLarge
	}
	return line[:n], nil
}

// readCL returns the body of the next Content-Length frame. A body that fits
// the read buffer is returned in place, without copying.
func (c *streamConn) readCL() ([]byte, error) {
	n, err := c.readHeader()
	if err != nil {
		return nil, err
	}
	if n > int64(c.s.cfg.MaxFrame) {
		return nil, errTooLarge
	}
	size := int(n)
	if size <= c.br.Size() {
		body, err := c.br.Peek(size)
		if err != nil {
			return nil, truncated(err)
		}
		_, _ = c.br.Discard(size) // buffered already: body stays valid
		return body, nil
	}
	if cap(c.long) < size {
		c.long = make([]byte, size)
	}
	body := c.long[:size]
	if cap(c.long) > 4*readBufSize {
		c.long = nil // do not pin a huge buffer per idle connection
	}
	if _, err := io.ReadFull(c.br, body); err != nil {
		return nil, truncated(err)
	}
	return body, nil
}

// truncated maps the end of the stream inside a frame to errTruncated.
func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errTruncated
	}
	return err
}

// readHeader reads one header block and returns the announced length; io.EOF
// when the stream ends cleanly before a frame.
func (c *streamConn) readHeader() (int64, error) {
	if n, ok := c.quickHeader(); ok {
		return n, nil
	}
	length, total := int64(-1), 0
	for first := true; ; first = false {
		line, err := c.br.ReadSlice('\n')
		total += len(line)
		if total > maxHeader || errors.Is(err, bufio.ErrBufferFull) {
			return 0, errHeaderLong
		}
		if err != nil {
			if first && len(line) == 0 && errors.Is(err, io.EOF) {
				return 0, io.EOF
			}
			return 0, truncated(err)
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) == 0 {
			if length < 0 {
				return 0, errNoLength
			}
			return length, nil
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok || !isToken(name) {
			return 0, errHeaderLine // e.g. a JSON line sent to an LSP port
		}
		if !bytes.EqualFold(name, []byte(contentLength)) {
			continue // Content-Type and the like: nothing to do
		}
		n, ok := parseLength(bytes.Trim(value, " \t"))
		switch {
		case !ok:
			return 0, errBadLength
		case length >= 0 && n != length:
			return 0, errTwoLengths
		}
		length = n
	}
}

// quickHeader reads the header most clients send, exactly
// "Content-Length: N\r\n\r\n", when it is buffered whole; false leaves the
// input untouched for readHeader's general parser.
func (c *streamConn) quickHeader() (int64, bool) {
	const prefix, maxDigits = "Content-Length: ", 15
	b, _ := c.br.Peek(min(c.br.Buffered(), len(prefix)+maxDigits+4))
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0, false
	}
	var n int64
	i := len(prefix)
	for ; i < len(b) && i < len(prefix)+maxDigits && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	if i == len(prefix) || len(b) < i+4 || string(b[i:i+4]) != "\r\n\r\n" {
		return 0, false
	}
	_, _ = c.br.Discard(i + 4)
	return n, true
}

// isToken reports whether b is a valid header field name (an RFC 9110 token).
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, ch := range b {
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", ch) >= 0:
		default:
			return false
		}
	}
	return true
}

// parseLength reads a non-empty run of decimal digits, saturating at
// maxLengthValue.
func parseLength(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		n = min(n*10+int64(ch-'0'), maxLengthValue)
	}
	return n, true
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
		hdr := appendCLHeader(h[:0], len(dst)-start)
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

// appendCLHeader appends the header of a Content-Length frame of n bytes.
func appendCLHeader(dst []byte, n int) []byte {
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, "\r\n\r\n"...)
}
