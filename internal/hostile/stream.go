package hostile

import (
	"errors"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/transport"
)

// framer writes framed messages (newline or Content-Length) to one
// connection; the replies and a flood take turns through mu.
type framer struct {
	mu sync.Mutex
	w  io.Writer
	cl bool
}

// frame writes msg with its framing in one write.
func (f *framer) frame(msg []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frameLocked(msg)
}

func (f *framer) frameLocked(msg []byte) error {
	_, err := f.w.Write(f.framed(nil, msg))
	return err
}

// framed appends msg with its framing to dst.
func (f *framer) framed(dst, msg []byte) []byte {
	if f.cl {
		return append(transport.AppendCLHeader(dst, len(msg)), msg...)
	}
	return append(append(dst, msg...), '\n')
}

// requestReader reads request frames, newline or Content-Length framed,
// with transport's readers; a frame longer than maxRequest is skipped.
type requestReader struct {
	read func() ([]byte, error)
}

func newRequestReader(r io.Reader, cl bool) *requestReader {
	if cl {
		return &requestReader{transport.NewCLReader(r, maxRequest).Next}
	}
	return &requestReader{transport.NewLineReader(r, maxRequest).Next}
}

// next returns the next frame, valid until the next call.
func (r *requestReader) next() ([]byte, error) {
	for {
		f, err := r.read()
		if !errors.Is(err, transport.ErrFrameTooLarge) {
			return f, err
		}
	}
}

// pause waits d or until quit is closed, and reports whether the wait ran
// its course.
func pause(d time.Duration, quit <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-quit:
		return false
	}
}

// trickle writes b one byte per TrickleEvery.
func trickle(w io.Writer, b []byte, quit <-chan struct{}) error {
	for i := range b {
		if _, err := w.Write(b[i : i+1]); err != nil {
			return err
		}
		if !pause(TrickleEvery, quit) {
			return io.ErrClosedPipe
		}
	}
	return nil
}

// writeFiller writes n bytes of filler (n < 0: until a write fails or quit
// is closed).
func writeFiller(w io.Writer, n int64, quit <-chan struct{}) error {
	for n != 0 {
		select {
		case <-quit:
			return io.ErrClosedPipe
		default:
		}
		k := int64(len(filler))
		if n > 0 {
			k = min(k, n)
			n -= k
		}
		if _, err := w.Write(filler[:k]); err != nil {
			return err
		}
	}
	return nil
}

// flood writes unsolicited messages with f until a write fails, quit is
// closed or floodMax are sent.
func flood(f *framer, quit <-chan struct{}) {
	var msg, buf []byte
	for n := 0; n < floodMax; {
		select {
		case <-quit:
			return
		default:
		}
		// Many messages per write, so the flood outruns any reader.
		buf = buf[:0]
		for range 64 {
			msg = floodMessage(msg[:0], n)
			buf = f.framed(buf, msg)
			n++
		}
		f.mu.Lock()
		_, err := f.w.Write(buf)
		f.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// serveStream serves one framed byte stream (a TCP connection, a child's
// stdio) in mode m until the stream or quit ends. reset ends the
// connection abruptly (for Reset); it may be nil.
func serveStream(r io.Reader, w io.Writer, cl bool, m Mode, quit <-chan struct{}, reset func()) {
	f := &framer{w: w, cl: cl}
	if m == NeverRead {
		<-quit
		return
	}
	if m == Flood {
		go flood(f, quit)
	}
	rr := newRequestReader(r, cl)
	for {
		frame, err := rr.next()
		if err != nil {
			return
		}
		q, ok := parse(frame)
		if !ok {
			continue
		}
		if err := answerStream(f, q, m, quit, reset); err != nil {
			return
		}
	}
}

// errDone ends serving a connection after a mode's last word.
var errDone = errors.New("hostile: done with this connection")

// answerStream answers one request on a framed stream as m says.
func answerStream(f *framer, q request, m Mode, quit <-chan struct{}, reset func()) error {
	switch m {
	case Reset:
		if reset != nil {
			reset()
		}
		return errDone
	case HugeReply:
		f.mu.Lock()
		defer f.mu.Unlock()
		pre := hugePrefix(q.ID)
		var head []byte
		if f.cl {
			head = append([]byte("Content-Length: "), strconv.Itoa(HugeSize)...)
			head = append(head, "\r\n\r\n"...)
		}
		if _, err := f.w.Write(append(head, pre...)); err != nil {
			return err
		}
		if err := writeFiller(f.w, int64(HugeSize-len(pre)-len(hugeSuffix)), quit); err != nil {
			return err
		}
		tail := hugeSuffix
		if !f.cl {
			tail = append(append([]byte(nil), hugeSuffix...), '\n')
		}
		_, err := f.w.Write(tail)
		return err
	case EndlessLine:
		f.mu.Lock()
		defer f.mu.Unlock()
		start := hugePrefix(q.ID)
		if f.cl {
			start = []byte("X-Endless: ")
		}
		if _, err := f.w.Write(start); err != nil {
			return err
		}
		writeFiller(f.w, -1, quit)
		return errDone
	case HugeLength:
		f.mu.Lock()
		head := append([]byte("Content-Length: "), strconv.FormatInt(HugeLengthValue, 10)...)
		head = append(append(head, "\r\n\r\n"...), hugePrefix(q.ID)...)
		_, err := f.w.Write(head)
		f.mu.Unlock()
		if err == nil {
			<-quit // the rest of the body never comes
		}
		return errDone
	case Slowloris:
		f.mu.Lock()
		defer f.mu.Unlock()
		return trickle(f.w, f.framed(nil, okReply(q.ID)), quit)
	case Twice:
		f.mu.Lock()
		defer f.mu.Unlock()
		one := f.framed(nil, okReply(q.ID))
		_, err := f.w.Write(append(one, one...))
		return err
	}
	return f.frame(okReply(q.ID))
}
