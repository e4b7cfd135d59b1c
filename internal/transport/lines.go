package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/rpcload/rpcload/internal/wire"
)

// ErrFrameTooLarge reports a frame longer than the reader's limit. The
// reader has skipped it; the stream can go on.
var ErrFrameTooLarge = errors.New("transport: frame larger than --max-frame")

// LineReader splits a byte stream into newline-delimited frames without
// allocating once its buffer has grown to the largest frame seen. A frame
// longer than max is skipped up to its newline and reported once as
// ErrFrameTooLarge, so a 100 MB line costs at most max+2 bytes of memory.
// A line longer than max is too large even when it is blank. A line is
// blank when it holds only JSON whitespace (space, tab, CR), the only bytes
// a peer may put around a JSON text.
type LineReader struct {
	r          io.Reader
	buf        []byte
	start, end int
	max        int
	skipping   bool
	final      bool // a last line the stream ends without a newline is a frame
}

// NewLineReader reads frames of at most max bytes from r.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{r: r, buf: make([]byte, min(64<<10, max+1)), max: max}
}

// NewRequestLineReader is NewLineReader for a server reading requests: a
// last line the stream ends without a newline is still a frame (a client
// may well close after its last request), where a reader of replies
// reports it cut off.
func NewRequestLineReader(r io.Reader, max int) *LineReader {
	l := NewLineReader(r, max)
	l.final = true
	return l
}

// Buffered reports whether Next will return a frame without reading: a
// complete line that is neither blank nor too long nor being skipped is
// buffered. It may report false when Next would not read after all, never
// true when Next would read.
func (l *LineReader) Buffered() bool {
	if l.skipping {
		return false
	}
	i := bytes.IndexByte(l.buf[l.start:l.end], '\n')
	if i < 0 || i > l.max {
		return false
	}
	return len(wire.TrimSpace(l.buf[l.start:l.start+i])) > 0
}

// Next returns the next frame, without its newline (and without a carriage
// return before it). Empty lines are skipped. The frame is valid until the
// next call. At the end of the stream it returns io.EOF, or
// io.ErrUnexpectedEOF when a partial frame was cut off (a frame, for a
// request reader).
func (l *LineReader) Next() ([]byte, error) {
	scanned := l.start
	for {
		if i := bytes.IndexByte(l.buf[scanned:l.end], '\n'); i >= 0 {
			nl := scanned + i
			frame := l.buf[l.start:nl]
			l.start = nl + 1
			if l.skipping {
				l.skipping = false
				scanned = l.start
				continue
			}
			if len(frame) > 0 && frame[len(frame)-1] == '\r' {
				frame = frame[:len(frame)-1]
			}
			// Length first: a line too long to buffer is reported whatever it
			// holds, so a blank line longer than max must be too, or the
			// verdict would depend on how reads were chunked.
			if len(frame) > l.max {
				return nil, ErrFrameTooLarge
			}
			if len(wire.TrimSpace(frame)) == 0 {
				scanned = l.start
				continue
			}
			return frame, nil
		}
		scanned = l.end
		if n := l.end - l.start; n > l.max+1 || n == l.max+1 && l.buf[l.end-1] != '\r' {
			// Too long even if a CR ends it (max bytes and a CR are a frame of
			// max): forget what we have and skip to the next newline.
			wasSkipping := l.skipping
			l.start, l.end, scanned = 0, 0, 0
			l.skipping = true
			if !wasSkipping {
				return nil, ErrFrameTooLarge
			}
		}
		if l.start > 0 && l.end == len(l.buf) {
			n := copy(l.buf, l.buf[l.start:l.end])
			scanned -= l.start
			l.start, l.end = 0, n
		}
		if l.end == len(l.buf) {
			// start is 0 here. Grow to exactly max+2 at most (a frame, its CR
			// and one byte more); append would round up by up to a quarter.
			nb := make([]byte, min(2*len(l.buf), l.max+2))
			copy(nb, l.buf[:l.end])
			l.buf = nb
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if err != nil && n == 0 {
			if err == io.EOF && l.end > l.start && !l.skipping {
				if l.final {
					return l.lastLine()
				}
				return nil, fmt.Errorf("transport: stream ended inside a frame: %w", io.ErrUnexpectedEOF)
			}
			return nil, err
		}
	}
}

// lastLine returns what is left before the end of the stream as the last
// frame of a request reader; io.EOF when it is blank.
func (l *LineReader) lastLine() ([]byte, error) {
	frame := l.buf[l.start:l.end]
	l.start = l.end
	if n := len(frame); n > 0 && frame[n-1] == '\r' {
		frame = frame[:n-1]
	}
	switch {
	case len(frame) > l.max:
		return nil, ErrFrameTooLarge
	case len(wire.TrimSpace(frame)) == 0:
		return nil, io.EOF
	}
	return frame, nil
}
