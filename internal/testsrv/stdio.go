package testsrv

import (
	"errors"
	"fmt"
	"io"
)

// ServeStdio serves one connection over a reader/writer pair, such as the
// stdin and stdout of a child process, framed as f: any number of requests
// in flight, replies in completion order, written to w and nothing else.
//
// It returns nil when r reaches EOF and every pending reply has been written,
// when the connection ends on purpose (the close fault, a frame over
// MaxFrame, a broken Content-Length header: earlier replies are written
// first), or on Close; it returns the error of a failed read or write
// otherwise. When it returns it has closed w and r if they are io.Closers
// (so the peer sees EOF); it does not wait for a Read it cannot interrupt,
// such as one on a terminal (input read after that is discarded).
func (s *Server) ServeStdio(r io.Reader, w io.Writer, f Framing) error {
	if err := streamFraming(f); err != nil {
		return err
	}
	rw := stdio{r, w}
	c := s.newConn(rw, nil, f, s.nextRand())
	if !s.addConn(c) {
		_ = rw.Close()
		return nil
	}
	defer s.wg.Done()
	c.wg.Add(1)
	go c.writer()
	read := make(chan struct{})
	go func() { // not counted in s.wg: it may be stuck in a Read nobody can end
		defer close(read)
		c.readLoop()
	}()
	select {
	case <-read:
	case <-c.done:
	}
	c.wg.Wait()
	c.finishConn()
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("testsrv: stdio: %w", err)
	}
	return nil
}

// stdio joins a reader and a writer into one stream. It cannot half-close,
// so a graceful close of the connection closes both at once.
type stdio struct {
	r io.Reader
	w io.Writer
}

func (s stdio) Read(p []byte) (int, error)  { return s.r.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return s.w.Write(p) }

// Close closes w, then r, when they are io.Closers.
func (s stdio) Close() error {
	var errs []error
	for _, v := range []any{s.w, s.r} {
		if cl, ok := v.(io.Closer); ok {
			errs = append(errs, cl.Close())
		}
	}
	return errors.Join(errs...)
}
