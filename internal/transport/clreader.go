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
	br   *bufio.Reader
	buf  []byte
	max  int
	skip int64 // bytes of an oversized body still to be skipped
}

// NewCLReader reads frames of at most max bytes from r.
func NewCLReader(r io.Reader, max int) *CLReader {
	return &CLReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next frame's body, valid until the next call.
//
// An oversized frame is reported as soon as its header is read, and its body
// skipped on the next call: a server that announces 2^62 bytes and then sends
// nothing is counted at once rather than when its body would have ended.
func (c *CLReader) Next() ([]byte, error) {
	if c.skip > 0 {
		n, err := discard(c.br, c.skip)
		c.skip -= n
		if err != nil {
			return nil, cutOff("a frame", err)
		}
	}
	n, err := c.header()
	if err != nil {
		return nil, err
	}
	if n > int64(c.max) {
		c.skip = n
		return nil, ErrFrameTooLarge
	}
	if int64(cap(c.buf)) < n {
		c.buf = make([]byte, n)
	}
	body := c.buf[:n]
	if _, err := io.ReadFull(c.br, body); err != nil {
		return nil, cutOff("a frame", err)
	}
	return body, nil
}

// cutOff reports a read that failed inside a frame: the end of the stream
// there is unexpected; any other error (a reset, a closed connection) is
// kept as it is.
func cutOff(where string, err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("transport: stream ended inside %s: %w", where, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("transport: reading %s: %w", where, err)
}

// header reads one header block and returns the body length.
func (c *CLReader) header() (int64, error) {
	length, total, seen := int64(-1), 0, false // seen: a header line was read
	for {
		line, err := c.br.ReadSlice('\n')
		total += len(line)
		if total > maxCLHeader || errors.Is(err, bufio.ErrBufferFull) {
			return 0, fmt.Errorf("%w: header block over %d bytes", ErrBadHeader, maxCLHeader)
		}
		if err != nil {
			if !seen && len(line) == 0 {
				return 0, err // between frames: io.EOF is the clean end
			}
			return 0, cutOff("a frame header", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if !seen {
				continue // tolerate stray blank lines between frames
			}
			if length < 0 {
				return 0, fmt.Errorf("%w: no Content-Length", ErrBadHeader)
			}
			return length, nil
		}
		seen = true
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

// discard skips n bytes of r without allocating.
func discard(r *bufio.Reader, n int64) (int64, error) {
	var done int64
	for done < n {
		k, err := r.Discard(int(min(n-done, 1<<30)))
		done += int64(k)
		if err != nil {
			return done, err
		}
	}
	return done, nil
}
