package fuzz

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// How an exchange ended besides its replies.
type endKind uint8

const (
	endNone        endKind = iota // every expected reply (and the sync reply) came
	endTimeout                    // the timeout passed first
	endClosed                     // the server closed the connection (EOF) before the replies were in
	endReset                      // the connection was reset, or a write failed
	endExited                     // the child process exited
	endUnreachable                // a new connection could not be made
	endInterrupted                // the run's context ended
)

var endNames = [...]string{"ok", "timeout", "closed", "reset", "exited", "unreachable", "interrupted"}

func (e endKind) String() string { return endNames[e] }

// outcome is what one exchange observed.
type outcome struct {
	// replies are the messages that came back, in arrival order (streams);
	// for HTTP, frameReplies[i] are the messages of frame i's response.
	replies      [][]byte
	frameReplies [][][]byte
	scans        []replyScan   // of replies, when the stream's reader made them (see replyScans)
	frameScan    [][]replyScan // of frameReplies, made when first needed (see frameScans)
	httpStatus   []int         // HTTP: the status of each frame's response (0: none)
	perFrame     bool          // HTTP: replies are attributed to frames already
	sent         int           // frames written (HTTP stops at the first failure)
	latency      time.Duration
	end          endKind
	endFrame     int    // HTTP: the frame whose POST ended the exchange
	note         string // the error, the exit status
	exitCode     int    // a child's exit: -1 killed by a signal, else its status
	stderr       []string
	tooLarge     int  // replies skipped for exceeding MaxReply
	wire         bool // Case.Wire was written as-is
	lifecycle    bool // the input holds a frame that starts or ends a session
}

// conn is one connection to the target, used by one goroutine.
type conn interface {
	// exchange sends c and collects what comes back, waiting at most
	// timeout for the replies wait describes.
	exchange(ctx context.Context, c mutate.Case, wait waitFor, timeout time.Duration) outcome
	// usable reports whether another exchange may go on this connection.
	usable() bool
	close()
}

// dialer makes connections to the run's target: the transport, the
// profile's handshake, the era it detected, and the count of child
// processes started.
type dialer struct {
	cfg      *Config
	base     context.Context // the run's context, without its deadline: dials are not cut short by it
	prof     profile.Profile
	era      atomic.Uint32 // profile.Era; EraAuto until the first connection detects it
	children atomic.Int64  // child processes started
}

func newDialer(cfg *Config) (*dialer, error) {
	p, err := profile.New(cfg.Profile, cfg.ProfileOptions)
	if err != nil {
		return nil, err
	}
	d := &dialer{cfg: cfg, prof: p}
	d.era.Store(uint32(p.Era()))
	return d, nil
}

// dial opens one connection, handshake included.
func (d *dialer) dial(ctx context.Context) (conn, error) {
	t := d.cfg.Target
	if !t.IsStream() {
		c := &httpConn{d: d}
		if err := c.redial(ctx); err != nil {
			return nil, err
		}
		return c, nil
	}
	st, err := transport.DialStream(ctx, t, transport.StreamOptions{MaxFrame: d.cfg.MaxReply, Header: d.cfg.Header, Insecure: d.cfg.Insecure, Child: d.cfg.Child})
	if err != nil {
		return nil, err
	}
	s := &streamConn{d: d, st: st, msgs: make(chan streamMsg, 16), done: make(chan struct{}), quit: make(chan struct{})}
	if cs, ok := st.(transport.ChildStream); ok {
		s.child = cs
		d.children.Add(1)
	}
	go s.read()
	if err := s.handshake(ctx); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// streamMsg is one message from a stream's reader.
type streamMsg struct {
	frame    []byte
	scan     replyScan // of frame
	at       time.Time
	sync     uint64 // the sequence number of a sync reply, else 0
	control  uint64 // the sequence number of a handshake reply, else 0
	tooLarge bool
}

// Ids of the fuzzer's own requests. They are strings in a namespace of
// their own so that a fuzz input's reply is never taken for one.
var (
	syncPrefix    = []byte(`"rpcfuzz-sync-`)
	controlPrefix = []byte(`"rpcfuzz-ctl-`)
)

// streamConn is a message stream (TCP, Unix socket, WebSocket, a child's
// stdio). After the frames of a case it sends a sync request, whose reply
// tells that the server has read everything before it: a reply the case
// still owes after that is waited for until the timeout, and a reply the
// case should not get (to a notification) arrives before it.
type streamConn struct {
	d     *dialer
	st    transport.Stream
	child transport.ChildStream

	wmu  sync.Mutex // the worker's writes and the reader's answers to server requests
	msgs chan streamMsg
	done chan struct{} // closed by the reader when the stream ends
	quit chan struct{} // closed by close
	rerr error         // the reader's error, set before done is closed

	syncSeq, ctlSeq uint64
	dead            bool // an exchange ended abnormally; redial
	closeOnce       sync.Once
	answer          []byte
	syncMsg         []byte      // the exchange's sync request, rebuilt in place (Send copies it)
	timer           *time.Timer // the exchange's timeout, reset for each one
}

// read delivers every message from the server that is not its own request
// or notification; it answers the server's requests as the profile says.
func (s *streamConn) read() {
	defer close(s.done)
	var m wire.Message
	for {
		frame, err := s.st.Recv()
		if errors.Is(err, transport.ErrFrameTooLarge) {
			if !s.deliver(streamMsg{tooLarge: true, at: s.d.cfg.Now()}) {
				return
			}
			continue
		}
		if err != nil {
			s.rerr = err
			return
		}
		at := s.d.cfg.Now()
		// Copied before the scan, not after: Recv reuses its buffer, and
		// the scan handed to the exchange must point into the copy.
		frame = bytes.Clone(frame)
		wire.Scan(frame, &m)
		msg := streamMsg{at: at}
		switch {
		case m.Kind == wire.KindRequest && m.Method != nil:
			s.answerServer(&m)
			continue
		case m.Kind == wire.KindNotification:
			continue
		case m.IDKind == wire.IDString && bytes.HasPrefix(m.ID, syncPrefix):
			msg.sync = idSeq(m.ID, syncPrefix)
		case m.IDKind == wire.IDString && bytes.HasPrefix(m.ID, controlPrefix):
			msg.control = idSeq(m.ID, controlPrefix)
			msg.frame = frame
		default:
			msg.frame, msg.scan = frame, scanOf(&m)
		}
		if !s.deliver(msg) {
			return
		}
	}
}

func (s *streamConn) deliver(m streamMsg) bool {
	select {
	case s.msgs <- m:
		return true
	case <-s.quit:
		return false
	}
}

// idSeq reads N from an id "<prefix>N"; 0 when it is not one.
func idSeq(id, prefix []byte) uint64 {
	n, err := strconv.ParseUint(string(id[len(prefix):len(id)-1]), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func (s *streamConn) answerServer(m *wire.Message) {
	s.answer = s.d.prof.AnswerServerRequest(s.answer[:0], m)
	if len(s.answer) == 0 {
		return
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.st.Send(s.answer) == nil {
		s.st.Flush(time.Now().Add(s.d.cfg.Timeout))
	}
}

// handshake runs the profile's steps (after detecting the MCP era on the
// first connection), each request waiting up to the timeout.
func (s *streamConn) handshake(ctx context.Context) error {
	prof := s.d.prof
	era := profile.Era(s.d.era.Load())
	if era == profile.EraAuto {
		probe, _ := prof.Probe()
		detected, err := s.steps(ctx, []profile.Step{probe}, era)
		switch {
		case errors.Is(err, errStepTimeout):
			era = profile.EraLegacy
		case err != nil:
			return fmt.Errorf("MCP era probe: %w", err)
		default:
			era = detected
		}
		s.d.era.Store(uint32(era))
	}
	if _, err := s.steps(ctx, prof.Handshake(era), era); err != nil {
		return fmt.Errorf("%s handshake: %w", prof.Name(), err)
	}
	return nil
}

var errStepTimeout = errors.New("no reply within the timeout")

func (s *streamConn) steps(ctx context.Context, steps []profile.Step, era profile.Era) (profile.Era, error) {
	var m wire.Message
	for _, st := range steps {
		if st.Notification {
			if err := s.write(st.Append(nil, 0, wire.IDInt)); err != nil {
				return era, fmt.Errorf("%s: %w", st.Method, err)
			}
			continue
		}
		s.ctlSeq++
		id := append(bytes.Clone(controlPrefix), strconv.FormatUint(s.ctlSeq, 10)...)
		id = append(id, '"')
		if err := s.write(appendCall(nil, id, st.Method, st.Params)); err != nil {
			return era, fmt.Errorf("%s: %w", st.Method, err)
		}
		rep, err := s.awaitControl(ctx, s.ctlSeq)
		if err != nil {
			return era, fmt.Errorf("%s: %w", st.Method, err)
		}
		if st.Accept != nil {
			wire.Scan(rep, &m)
			if era, err = st.Accept(&m, era); err != nil {
				return era, err
			}
		}
	}
	return era, nil
}

// appendSync appends the sync request of sequence number seq.
func appendSync(dst []byte, seq uint64) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, syncPrefix...)
	dst = strconv.AppendUint(dst, seq, 10)
	return append(dst, `","method":"rpcfuzz.sync"}`...)
}

// appendCall appends a request with a raw id.
func appendCall(dst, id []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"method":`...)
	dst = wire.AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

func (s *streamConn) awaitControl(ctx context.Context, seq uint64) ([]byte, error) {
	t := time.NewTimer(s.d.cfg.Timeout)
	defer t.Stop()
	for {
		select {
		case m := <-s.msgs:
			if m.control == seq {
				return m.frame, nil
			}
		case <-s.done:
			return nil, s.endError()
		case <-t.C:
			return nil, errStepTimeout
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *streamConn) endError() error {
	if s.rerr != nil {
		return s.rerr
	}
	return io.EOF
}

func (s *streamConn) write(msg []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.st.Send(msg); err != nil {
		return err
	}
	return s.st.Flush(time.Now().Add(s.d.cfg.Timeout))
}

func (s *streamConn) usable() bool {
	if s.dead {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

func (s *streamConn) close() {
	s.closeOnce.Do(func() {
		close(s.quit)
		s.st.Close()
	})
}

// exchange writes the case and a sync request, then collects replies until
// the sync reply and the replies wait asks for are in, the stream ends, or the timeout
// passes. A case with Wire bytes is written as-is and the stream
// half-closed, since its framing is broken on purpose: what comes back
// before the end of the stream is its reply.
func (s *streamConn) exchange(ctx context.Context, c mutate.Case, wait waitFor, timeout time.Duration) outcome {
	var o outcome
	s.drainStale()
	// Latency is read off the configured clock (tests make it constant, so
	// the feedback tuples do not depend on timing); the timeout is real.
	start := s.d.cfg.Now()
	deadline := time.Now().Add(timeout + writeAllowance(caseSize(c)))
	s.syncSeq++
	seq := s.syncSeq
	var werr error
	halfClosed := false
	raw := c.Wire
	if raw == nil && s.d.cfg.Target.Framing == transport.Newline && framesBreakLines(c.Frames) {
		// A line break inside a frame (JSON whitespace, a comment) splits
		// it in two on a newline-delimited stream: the framing is broken
		// as surely as by a framing op.
		raw = streamBytes(transport.Newline.String(), c)
	}
	s.syncMsg = appendSync(s.syncMsg[:0], seq)
	syncMsg := s.syncMsg
	s.wmu.Lock()
	switch {
	case raw != nil && s.child != nil && s.d.cfg.Target.Framing == transport.Newline:
		// Closing a child's stdin ends the process, and starting one per
		// input is slow: on newline framing the sync request on a line of
		// its own still tells when the server has read the broken lines.
		o.wire, wait = true, waitFor{} // nothing is owed to broken framing
		b := append(slices.Clip(raw), '\n')
		werr = transport.WriteRaw(s.st, append(append(b, syncMsg...), '\n'), deadline)
	case raw != nil && s.d.cfg.Target.Framing != transport.Messages:
		o.wire = true
		werr = transport.WriteRaw(s.st, raw, deadline)
		if werr == nil {
			werr = transport.CloseWrite(s.st)
			halfClosed = werr == nil
		}
	default:
		for _, f := range c.Frames {
			if werr = s.st.Send(f); werr != nil {
				break
			}
		}
		if werr == nil {
			werr = s.st.Send(syncMsg)
		}
		if werr == nil {
			werr = s.st.Flush(deadline)
		}
	}
	s.wmu.Unlock()
	o.sent = len(c.Frames)
	if werr != nil {
		s.dead = true
		o.end, o.note = endReset, werr.Error()
		if errors.Is(werr, os.ErrDeadlineExceeded) {
			o.end, o.note = endTimeout, "the server did not read the input within the timeout"
		}
		s.settleEnd(&o, start)
		return o
	}
	if halfClosed {
		s.dead = true // the stream is done for writing
	}
	if s.timer == nil {
		s.timer = time.NewTimer(time.Until(deadline))
	} else {
		s.timer.Reset(time.Until(deadline)) // stopped below: no stale tick waits in it
	}
	timer := s.timer
	defer timer.Stop()
	gotSync := false
	var last time.Time
	for o.end == endNone && (halfClosed || !gotSync || !wait.done(len(o.replies))) {
		select {
		case m := <-s.msgs:
			if s.take(&o, &m, seq, &gotSync, &last) {
				wait.answer(&m.scan)
			}
		case <-s.done:
			// Take what the reader delivered before it ended.
			for drained := false; !drained; {
				select {
				case m := <-s.msgs:
					s.take(&o, &m, seq, &gotSync, &last)
				default:
					drained = true
				}
			}
			if halfClosed && s.child == nil && !isReset(s.rerr) {
				o.end = endNone // the end of the stream is the end of the replies
				halfClosed = false
				gotSync, wait = true, waitFor{}
				continue
			}
			o.end, o.note = endClosed, errNote(s.rerr)
			if isReset(s.rerr) {
				o.end = endReset
			}
		case <-timer.C:
			o.end = endTimeout
		case <-ctx.Done():
			o.end = endInterrupted
		}
	}
	if o.end != endNone {
		s.dead = true
	}
	s.settleEnd(&o, start)
	switch {
	case !last.IsZero():
		o.latency = last.Sub(start)
	case o.end == endTimeout:
		o.latency = timeout
	default:
		o.latency = s.d.cfg.Now().Sub(start)
	}
	return o
}

// take records one message of the exchange; it reports whether it was a
// reply to the input.
func (s *streamConn) take(o *outcome, m *streamMsg, seq uint64, gotSync *bool, last *time.Time) bool {
	switch {
	case m.tooLarge:
		o.tooLarge++
		*last = m.at
	case m.sync == seq:
		*gotSync = true
		if last.IsZero() {
			*last = m.at
		}
	case m.sync != 0 || m.control != 0:
		// a stale sync or handshake reply
	default:
		o.replies = append(o.replies, m.frame)
		o.scans = append(o.scans, m.scan)
		*last = m.at
		return true
	}
	return false
}

// drainStale drops what arrived between exchanges: replies to a case the
// previous exchange had finished with, which cannot be told from this one's.
func (s *streamConn) drainStale() {
	for {
		select {
		case <-s.msgs:
		default:
			return
		}
	}
}

// settleEnd finds out, for a child process, whether it exited: a crash is
// an exit, and its stderr tells why.
func (s *streamConn) settleEnd(o *outcome, start time.Time) {
	if s.child == nil || o.end == endNone || o.end == endTimeout || o.end == endInterrupted {
		return
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-s.child.Exited():
	case <-t.C:
		return
	}
	o.end = endExited
	o.note = s.child.ExitStatus()
	o.exitCode = exitCodeOf(o.note)
	o.stderr = s.child.StderrTail()
}

// exitCodeOf reads the exit code from a status like "exit status 2 after
// 3ms"; -1 for a signal.
func exitCodeOf(status string) int {
	var n int
	if _, err := fmt.Sscanf(status, "exit status %d", &n); err == nil {
		return n
	}
	return -1
}

func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func errNote(err error) string {
	if err == nil {
		return "connection closed"
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrDeadlineExceeded) {
		return "connection closed by the server"
	}
	return err.Error()
}

// framesBreakLines reports whether a frame holds a line feed.
func framesBreakLines(frames [][]byte) bool {
	for _, f := range frames {
		if bytes.IndexByte(f, '\n') >= 0 {
			return true
		}
	}
	return false
}

// writeAllowance is the time a big input may take to be written on top of
// the timeout: a server reading 1 MiB frames at 1 MB/s is slow, not hung.
func writeAllowance(size int) time.Duration {
	return time.Duration(size) * time.Microsecond
}
