package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxCLHeader bounds the header block of one Content-Length frame.
const maxCLHeader = 8 << 10

// ErrBadHeader reports a Content-Length frame header that cannot be read;
// the stream's framing is lost and it cannot go on.
var ErrBadHeader = errors.New("transport: bad Content-Length frame header")

// HeaderError is a Content-Length frame header (or frame) a request reader
// cannot read. It wraps ErrBadHeader; Reason alone is what a server answers
// the frame with (the data of its -32700 reply).
type HeaderError struct{ Reason string }

func (e *HeaderError) Error() string { return ErrBadHeader.Error() + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrBadHeader) hold.
func (e *HeaderError) Unwrap() error { return ErrBadHeader }

// The ways a header breaks for a request reader; sentinels, so that reporting
// one allocates nothing.
var (
	errNoLength        = &HeaderError{"no Content-Length header"}
	errBadLength       = &HeaderError{"Content-Length is not a decimal number"}
	errTwoLengths      = &HeaderError{"two different Content-Length headers"}
	errHeaderLine      = &HeaderError{"malformed header line"}
	errHeaderLong      = &HeaderError{fmt.Sprintf("header block over %d bytes", maxCLHeader)}
	errHeaderTruncated = &HeaderError{"stream ended inside a header"}
	errBodyTruncated   = &HeaderError{"stream ended inside a frame"}
)

// maxCLValue caps the lengths a request reader reads: larger ones saturate
// (still too large for any limit), so a 30-digit length is too large rather
// than unreadable.
const maxCLValue = 1 << 50

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
	br      *bufio.Reader
	buf     []byte
	max     int
	skip    int64 // bytes of an oversized body still to be skipped
	request bool  // NewRequestCLReader
}

// clBufSize is the read buffer of a CLReader: a body that fits it is
// returned in place.
const clBufSize = 64 << 10

// NewCLReader reads frames of at most max bytes from r.
func NewCLReader(r io.Reader, max int) *CLReader {
	return &CLReader{br: bufio.NewReaderSize(r, clBufSize), max: max}
}

// NewRequestCLReader is NewCLReader for a server reading requests, where a
// header that is not what the LSP base protocol and RFC 9110 say is an
// error to answer rather than a quirk to get past: field names must be
// tokens with the colon right after them, the length only decimal digits
// (saturating, so a huge one is too large), and no blank line may come
// before a header. Every way a header or frame breaks, a stream ending
// inside one included, is a *HeaderError.
func NewRequestCLReader(r io.Reader, max int) *CLReader {
	c := NewCLReader(r, max)
	c.request = true
	return c
}

// Buffered reports whether Next will return a frame without reading: a
// whole frame with the common header ("Content-Length: N" alone) is
// buffered. It may report false when Next would not read after all, never
// true when Next would read.
func (c *CLReader) Buffered() bool {
	if c.skip > 0 {
		return false
	}
	n, hdr, ok := c.peekQuickHeader()
	return ok && int64(c.br.Buffered()-hdr) >= n
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
	var n int64
	var err error
	if c.request {
		n, err = c.requestHeader()
	} else {
		n, err = c.header()
	}
	if err != nil {
		return nil, err
	}
	if n > int64(c.max) {
		c.skip = n
		return nil, ErrFrameTooLarge
	}
	if n <= int64(c.br.Size()) {
		// In place: the body stays valid until the next read of br, which
		// only the next call makes.
		body, err := c.br.Peek(int(n))
		if err != nil {
			return nil, c.bodyCut(err)
		}
		_, _ = c.br.Discard(int(n))
		return body, nil
	}
	if int64(cap(c.buf)) < n {
		c.buf = make([]byte, n)
	}
	body := c.buf[:n]
	if cap(c.buf) > 4*clBufSize {
		c.buf = nil // do not pin a huge buffer on an idle stream
	}
	if _, err := io.ReadFull(c.br, body); err != nil {
		return nil, c.bodyCut(err)
	}
	return body, nil
}

// bodyCut reports a read that failed inside a body.
func (c *CLReader) bodyCut(err error) error {
	if c.request && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
		return errBodyTruncated
	}
	return cutOff("a frame", err)
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

// requestHeader reads one header block as NewRequestCLReader says and returns
// the body length; io.EOF when the stream ends cleanly before a frame.
func (c *CLReader) requestHeader() (int64, error) {
	if n, hdr, ok := c.peekQuickHeader(); ok {
		_, _ = c.br.Discard(hdr)
		return n, nil
	}
	length, total := int64(-1), 0
	for first := true; ; first = false {
		line, err := c.br.ReadSlice('\n')
		total += len(line)
		if total > maxCLHeader || errors.Is(err, bufio.ErrBufferFull) {
			return 0, errHeaderLong
		}
		if err != nil {
			switch {
			case first && len(line) == 0 && errors.Is(err, io.EOF):
				return 0, io.EOF
			case errors.Is(err, io.EOF):
				return 0, errHeaderTruncated
			}
			return 0, err
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
		if !asciiEqualFold(name, "content-length") {
			continue // Content-Type and the like carry no framing
		}
		n, ok := parseCLValue(bytes.Trim(value, " \t"))
		switch {
		case !ok:
			return 0, errBadLength
		case length >= 0 && n != length:
			return 0, errTwoLengths
		}
		length = n
	}
}

// peekQuickHeader reads, without consuming it, the header most peers send,
// exactly "Content-Length: N\r\n\r\n", when it is buffered whole: the length
// and the header's size.
func (c *CLReader) peekQuickHeader() (n int64, size int, ok bool) {
	const prefix, maxDigits = "Content-Length: ", 15
	b, _ := c.br.Peek(min(c.br.Buffered(), len(prefix)+maxDigits+4))
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0, 0, false
	}
	i := len(prefix)
	for ; i < len(b) && i < len(prefix)+maxDigits && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	if i == len(prefix) || len(b) < i+4 || string(b[i:i+4]) != "\r\n\r\n" {
		return 0, 0, false
	}
	return n, i + 4, true
}

// isToken reports whether b is a header field name (an RFC 9110 token).
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

// parseCLValue reads a non-empty run of decimal digits, saturating at
// maxCLValue.
func parseCLValue(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		n = min(n*10+int64(ch-'0'), maxCLValue)
	}
	return n, true
}
