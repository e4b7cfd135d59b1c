package fuzztarget

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rpcload/rpcload/internal/wire"
)

// MaxFrame is the largest frame (a line, a Content-Length body, an HTTP
// body) the server reads, in bytes. A larger one is answered with -32600 and
// id null, and ends a stream (its framing is lost).
const MaxFrame = 16 << 20

// maxHeader bounds the header block of one Content-Length frame.
const maxHeader = 8 << 10

// errTooLarge is a frame over MaxFrame.
var errTooLarge = errors.New("request too large")

// framingError is a Content-Length header the server cannot read; its text
// is the data of the -32700 reply that ends the stream.
type framingError string

func (e framingError) Error() string { return string(e) }

// ServeStream serves one connection of newline-delimited JSON: one frame per
// line (a '\r' before the '\n' and blank lines are ignored; a last line
// without '\n' still counts), one reply line per frame that has one, in
// order. It has the signature the native harness expects of a stream server.
//
// It returns nil when r reaches EOF or ctx ends, and after answering a frame
// over MaxFrame; a Crash when a planted crash fires (the replies before it
// are written); the error of a failed read or write otherwise. After a
// planted hang it answers nothing more and returns when r ends or ctx does.
// It closes neither r nor w; a Read it is blocked in when ctx ends is left
// to return when the caller closes r.
func (s *Server) ServeStream(ctx context.Context, r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	return s.serve(ctx, func() ([]byte, error) { return readLine(br, s.maxFrame) }, w, newlineFrame)
}

// ServeStreamContentLength is ServeStream with the LSP base protocol's
// framing: "Content-Length: N" (other headers are ignored), a blank line,
// N bytes. A header it cannot read is answered with -32700 (id null, the
// problem as data) and ends the stream.
func (s *Server) ServeStreamContentLength(ctx context.Context, r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	return s.serve(ctx, func() ([]byte, error) { return readCL(br, s.maxFrame) }, w, clFrame)
}

// read is one result of the reader goroutine.
type read struct {
	frame []byte
	err   error
}

func (s *Server) serve(ctx context.Context, next func() ([]byte, error), w io.Writer, frame func([]byte) []byte) error {
	reads := make(chan read)
	stop := make(chan struct{})
	defer close(stop)
	// Reads run on their own goroutine so that ctx can end the connection
	// while a Read blocks; the goroutine ends when that Read returns.
	go func() {
		for {
			f, err := next()
			select {
			case reads <- read{f, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		var rd read
		select {
		case <-ctx.Done():
			return nil
		case rd = <-reads:
		}
		var reply []byte
		switch {
		case errors.Is(rd.err, io.EOF):
			return nil
		case errors.Is(rd.err, errTooLarge):
			reply = errorReply(nil, wire.CodeInvalidRequest, msgInvalidRequest, errTooLarge.Error())
		case errors.As(rd.err, new(framingError)):
			reply = errorReply(nil, wire.CodeParseError, msgParseError, rd.err.Error())
		case rd.err != nil:
			return fmt.Errorf("fuzztarget: reading a frame: %w", rd.err)
		default:
			var hang bool
			var crash *Crash
			reply, hang, crash = s.recoverAnswer(rd.frame)
			switch {
			case crash != nil:
				return *crash
			case hang:
				return waitEnd(ctx, reads)
			}
		}
		if reply != nil {
			if _, err := w.Write(frame(reply)); err != nil {
				return fmt.Errorf("fuzztarget: writing a reply: %w", err)
			}
		}
		if rd.err != nil {
			return nil // the framing is lost after an oversized or unreadable frame
		}
	}
}

// recoverAnswer is answer with a planted crash turned into a value. Any
// other panic is a bug of this package and goes on up.
func (s *Server) recoverAnswer(frame []byte) (reply []byte, hang bool, crash *Crash) {
	defer func() {
		if v := recover(); v != nil {
			c, ok := v.(Crash)
			if !ok {
				panic(v)
			}
			crash = &c
		}
	}()
	reply, hang = s.answer(frame)
	return reply, hang, nil
}

// waitEnd is a hung connection: input is read and ignored until it ends.
func waitEnd(ctx context.Context, reads <-chan read) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case rd := <-reads:
			if rd.err != nil {
				return nil
			}
		}
	}
}

func newlineFrame(reply []byte) []byte { return append(reply, '\n') }

func clFrame(reply []byte) []byte {
	out := make([]byte, 0, len(reply)+24)
	out = append(out, "Content-Length: "...)
	out = strconv.AppendInt(out, int64(len(reply)), 10)
	out = append(out, "\r\n\r\n"...)
	return append(out, reply...)
}

// readLine returns the next non-blank line, copied, without its line end;
// errTooLarge past limit bytes.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	for {
		var line []byte
		for {
			chunk, err := br.ReadSlice('\n')
			if len(line)+len(chunk) > limit+2 { // +2: the line end is not part of the frame
				return nil, errTooLarge
			}
			line = append(line, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && (!errors.Is(err, io.EOF) || len(line) == 0) {
				return nil, err
			}
			break // a whole line, or the last one without '\n'
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) > limit {
			return nil, errTooLarge
		}
		if len(bytes.Trim(line, " \t\r")) > 0 {
			return line, nil
		}
	}
}

// readCL returns the body of the next Content-Length frame; io.EOF when the
// stream ends cleanly between frames; errTooLarge past limit bytes.
func readCL(br *bufio.Reader, limit int) ([]byte, error) {
	length, total := -1, 0
	for first := true; ; first = false {
		line, err := br.ReadSlice('\n')
		total += len(line)
		switch {
		case total > maxHeader || errors.Is(err, bufio.ErrBufferFull):
			return nil, framingError("header block over 8192 bytes")
		case first && len(line) == 0 && errors.Is(err, io.EOF):
			return nil, io.EOF
		case errors.Is(err, io.EOF):
			return nil, framingError("stream ended inside a header")
		case err != nil:
			return nil, err
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'})
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok || !isToken(name) {
			return nil, framingError("malformed header line " + strconv.Quote(string(line)))
		}
		if !bytes.EqualFold(name, []byte("Content-Length")) {
			continue
		}
		n, err := strconv.Atoi(string(bytes.TrimSpace(value)))
		switch {
		case err != nil || n < 0:
			return nil, framingError("Content-Length is not a decimal number")
		case length >= 0 && n != length:
			return nil, framingError("two different Content-Length headers")
		}
		length = n
	}
	switch {
	case length < 0:
		return nil, framingError("no Content-Length header")
	case length > limit:
		return nil, errTooLarge
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(br, body); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, framingError("stream ended inside a frame")
		}
		return nil, err
	}
	return body, nil
}

// isToken reports whether b is a header field name (an RFC 9110 token).
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
