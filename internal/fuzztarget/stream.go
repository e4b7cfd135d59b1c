package fuzztarget

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// MaxFrame is the largest frame (a line, a Content-Length body, an HTTP
// body) the server reads, in bytes. A larger one is answered with -32600 and
// id null, and ends a stream (its framing is lost).
const MaxFrame = 16 << 20

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
	return s.serve(ctx, copied(transport.NewRequestLineReader(r, s.maxFrame).Next), w, newlineFrame)
}

// ServeStreamContentLength is ServeStream with the LSP base protocol's
// framing: "Content-Length: N" (other headers are ignored), a blank line,
// N bytes. A header it cannot read is answered with -32700 (id null, the
// problem as data) and ends the stream.
func (s *Server) ServeStreamContentLength(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.serve(ctx, copied(transport.NewRequestCLReader(r, s.maxFrame).Next), w, clFrame)
}

// copied adapts a transport reader's Next to the reader goroutine: the
// frame is copied (the reader reuses its buffer while the frame is being
// answered) and its errors become the server's.
func copied(next func() ([]byte, error)) func() ([]byte, error) {
	return func() ([]byte, error) {
		f, err := next()
		var he *transport.HeaderError
		switch {
		case err == nil:
			return append([]byte{}, f...), nil
		case errors.Is(err, transport.ErrFrameTooLarge):
			return nil, errTooLarge
		case errors.As(err, &he):
			return nil, framingError(he.Reason)
		}
		return nil, err
	}
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
	// mcp is set once the connection started an MCP session (an
	// initialize or server/discover answered with a result): MCP has no
	// batches, so an array is then one invalid request.
	mcp := false
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
			reply, hang, crash = s.recoverAnswer(rd.frame, mcp)
			switch {
			case crash != nil:
				return *crash
			case hang:
				return waitEnd(ctx, reads)
			}
			mcp = mcp || startsMCPSession(rd.frame, reply)
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

// recoverAnswer is answer with a planted crash turned into a value (in an
// MCP session, an array is one -32600 once the tokenizer read it). Any
// other panic is a bug of this package and goes on up.
func (s *Server) recoverAnswer(frame []byte, mcp bool) (reply []byte, hang bool, crash *Crash) {
	defer func() {
		if v := recover(); v != nil {
			c, ok := v.(Crash)
			if !ok {
				panic(v)
			}
			crash = &c
		}
	}()
	if mcp {
		if top, err := parse(frame, s.bugs); err == nil && top == kindArray {
			return errorReply(nil, wire.CodeInvalidRequest, msgInvalidRequest, "MCP has no batches"), false, nil
		}
	}
	reply, hang = s.answer(frame)
	return reply, hang, nil
}

// startsMCPSession reports whether frame, answered with reply, started an
// MCP session: an initialize or a server/discover answered with a result.
func startsMCPSession(frame, reply []byte) bool {
	var req, rep wire.Message
	wire.Scan(frame, &req)
	if req.Kind != wire.KindRequest || string(req.Method) != `"initialize"` && string(req.Method) != `"server/discover"` {
		return false
	}
	wire.Scan(reply, &rep)
	return rep.Kind == wire.KindResult
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
	return append(transport.AppendCLHeader(make([]byte, 0, len(reply)+24), len(reply)), reply...)
}
