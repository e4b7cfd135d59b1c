package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// maxCLHeader bounds the header block of one Content-Length frame.
const maxCLHeader = 8 << 10

// ErrBadHeader reports a Content-Length frame header that cannot be read;
// the stream's framing is lost and it cannot go on.
var ErrBadHeader = errors.New("transport: bad Content-Length frame header")

// AppendCLHeader appends the LSP base-protocol header for a body of n bytes.
func AppendCLHeader(dst []byte, n int) []byte {
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, "\r\n\r\n"...)
}

// CLReader splits a byte stream framed as in the LSP base protocol: header
// lines ("Content-Length: N", optionally "Content-Type: ..."), a blank line,
// then exactly N bytes. A body longer than max is skipped without being held
// in memory and reported once as ErrFrameTooLarge; the stream goes on. A
// header that lies in any other way (no length, two different lengths, a
// negative or non-numeric one, a header block over 8 KiB) ends the stream
// with ErrBadHeader, because the next frame's start is unknown.
type CLReader struct {
	br  *bufio.Reader
	buf []byte
	max int
}

// NewCLReader reads frames of at most max bytes from r.
func NewCLReader(r io.Reader, max int) *CLReader {
	return &CLReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next frame's body, valid until the next call.
func (c *CLReader) Next() ([]byte, error) {
	n, err := c.header()
	if err != nil {
		return nil, err
	}
	if n > int64(c.max) {
		if _, err := io.CopyN(io.Discard, c.br, n); err != nil {
			return nil, fmt.Errorf("transport: stream ended inside a frame: %w", io.ErrUnexpectedEOF)
		}
		return nil, ErrFrameTooLarge
	}
	if int64(cap(c.buf)) < n {
		c.buf = make([]byte, n)
	}
	body := c.buf[:n]
	if _, err := io.ReadFull(c.br, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("transport: stream ended inside a frame: %w", err)
	}
	return body, nil
}

// header reads one header block and returns the body length.
func (c *CLReader) header() (int64, error) {
	length, total := int64(-1), 0
	for first := true; ; first = false {
		line, err := c.br.ReadSlice('\n')
		total += len(line)
		if total > maxCLHeader || errors.Is(err, bufio.ErrBufferFull) {
			return 0, fmt.Errorf("%w: header block over %d bytes", ErrBadHeader, maxCLHeader)
		}
		if err != nil {
			if first && len(line) == 0 && errors.Is(err, io.EOF) {
				return 0, io.EOF
			}
			return 0, fmt.Errorf("transport: stream ended inside a frame header: %w", io.ErrUnexpectedEOF)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if first {
				continue // tolerate stray blank lines between frames
			}
			if length < 0 {
				return 0, fmt.Errorf("%w: no Content-Length", ErrBadHeader)
			}
			return length, nil
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			return 0, fmt.Errorf("%w: line %q is not 'Name: value'", ErrBadHeader, snippet(line))
		}
		if !asciiEqualFold(bytes.TrimSpace(name), "content-length") {
			continue // Content-Type and unknown headers carry no framing
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%w: Content-Length %q", ErrBadHeader, snippet(value))
		}
		if length >= 0 && length != n {
			return 0, fmt.Errorf("%w: two Content-Length values, %d and %d", ErrBadHeader, length, n)
		}
		length = n
	}
}
