package fuzz

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
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
	// endReplaced: the server process the exchange used died, and
	// another worker's exchange, which saw it die, started a new one: the
	// death is judged there (and its suspects, this input among them,
	// tried), not here.
	endReplaced
)

var endNames = [...]string{"ok", "timeout", "closed", "reset", "exited", "unreachable", "interrupted", "replaced"}

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
	header       http.Header   // HTTP: the header fields the requests were sent with
	perFrame     bool          // HTTP: replies are attributed to frames already
	sent         int           // frames written (HTTP stops at the first failure)
	latency      time.Duration
	written      time.Time // streams: when the input was written, by the run's clock (the stopwatch's send and wait)
	end          endKind
	endFrame     int    // HTTP: the frame whose POST ended the exchange
	note         string // the error, the exit status
	exitCode     int    // a child's exit: -1 killed by a signal, else its status
	stderr       []string
	tooLarge     int  // replies skipped for exceeding MaxReply
	wire         bool // Case.Wire was written as-is
	lifecycle    bool // the input holds a frame that starts or ends a session
	// What the exchange before this one on the connection may still have
	// had coming: replies without a key it ended without (staleNull), and
	// its readable ids (staleIDs). A reply here that answers no frame of
	// this input but could be one of those is late, not this input's.
	staleNull int
	staleIDs  [][]byte
	late      int  // replies of an earlier exchange recognised as such and not judged
	synced    bool // the sync reply came: the server read the whole input, and lived
	// pairs are the pairs the wait judged (waitFor.pairs), for the judge
	// to go on from: the verdicts of the pairs it judged stand, and
	// judging them again cost a third of rpcfuzz's CPU.
	pairs *pairs
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
	probe    bool          // the era is detected (MCP on a stream): every connection sends the probe
	children atomic.Int64  // child processes started
	srv      *server       // the server process rpcfuzz starts (Config.ServerCommand), or nil
	// lateBy is the longest the server was seen silent before a reply
	// without an id after the sync reply (0: never), measured when it
	// came in its exchange (the silence since the last message) or
	// between exchanges (the time since the sync reply): the grace for
	// such replies is twice that. (A late reply found in the next exchange is set aside there;
	// its lateness is not known, and a guess would only ever grow.)
	lateBy atomic.Int64
	// slowNull is, per method, how long a reply to a request of it with
	// id null took in a confirmation that found it answered (grace.go).
	slowNull slowNullMethods
	// initResult is the result of the first initialize a handshake got
	// (nil until then): an LSP server's capabilities (apilsp.go).
	initResult atomic.Pointer[[]byte]
	// lsp are the workspace's documents every LSP connection opens after
	// its handshake (nil: none).
	lsp *lspDocs
}

func newDialer(cfg *Config) (*dialer, error) {
	p, err := profile.New(cfg.Profile, cfg.ProfileOptions)
	if err != nil {
		return nil, err
	}
	d := &dialer{cfg: cfg, prof: p}
	if d.lsp, err = openWorkspace(cfg); err != nil {
		return nil, err
	}
	if d.srv, err = newServer(cfg); err != nil {
		return nil, err
	}
	d.era.Store(uint32(p.Era()))
	_, hasProbe := p.Probe()
	d.probe = hasProbe && p.Era() == profile.EraAuto
	return d, nil
}

// dialTarget opens one connection to the target (dialWith starts the
// server first, when rpcfuzz starts one); a stream's runs the profile's
// handshake only with handshake set (an input that carries its own
// handshake is sent on a connection without one: ownHandshake).
func (d *dialer) dialTarget(ctx context.Context, handshake bool) (conn, error) {
	t := d.cfg.Target
	if !t.IsStream() {
		c := &httpConn{d: d}
		if err := c.redial(ctx); err != nil {
			return nil, err
		}
		return c, nil
	}
	st, err := transport.DialStream(ctx, t, transport.StreamOptions{MaxFrame: d.cfg.MaxReply, Header: d.cfg.Header, TLS: d.cfg.TLS, Child: d.cfg.Child})
	if err != nil {
		return nil, err
	}
	s := &streamConn{d: d, st: st, msgs: make(chan streamMsg, 16), done: make(chan struct{}), quit: make(chan struct{}), ovSpace: make(chan struct{}, 1)}
	if cs, ok := st.(transport.ChildStream); ok {
		s.child = cs
		d.children.Add(1)
	}
	go s.read()
	if !handshake {
		return s, nil
	}
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
	real     time.Time // when it came by the wall clock (at is the configured clock's)
	sync     uint64    // the sequence number of a sync reply, else 0
	control  uint64    // the sequence number of a handshake reply, else 0
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
	// The overflow of msgs (deliver): replies taken in while msgs is full,
	// moved into it in order by a pump goroutine while pumping.
	ovMu          sync.Mutex
	overflow      []streamMsg
	overflowBytes int
	pumping       bool
	pumpDone      chan struct{} // closed when the pump ends
	ovSpace       chan struct{} // capacity 1: the pump took a message out
	done          chan struct{} // closed by the reader when the stream ends
	quit          chan struct{} // closed by close
	rerr          error         // the reader's error, set before done is closed

	syncSeq, ctlSeq uint64
	dead            bool // an exchange ended abnormally; redial
	closeOnce       sync.Once
	answer          []byte
	syncMsg         []byte      // the exchange's sync request, rebuilt in place (Send copies it)
	timer           *time.Timer // the exchange's timeout, reset for each one
	// What the last exchanges may still have coming (see outcome.staleNull).
	late     lateWindow
	syncReal time.Time // when the last sync reply came, by the wall clock
	// stalled is set by the reader when an answer to a server's request
	// could not be written (see answerServer).
	stalled atomic.Bool
}

// read delivers every message from the server that is not its own request
// or notification; it answers the server's requests as the profile says.
func (s *streamConn) read() {
	defer close(s.done)
	defer s.drained()
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
		at, real := s.d.cfg.Now(), time.Now()
		// Copied before the scan, not after: Recv reuses its buffer, and
		// the scan handed to the exchange must point into the copy.
		frame = bytes.Clone(frame)
		wire.Scan(frame, &m)
		msg := streamMsg{at: at, real: real}
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

// idSeq reads N from an id "<prefix>N"; 0 when it is not one.
func idSeq(id, prefix []byte) uint64 {
	n, err := strconv.ParseUint(string(id[len(prefix):len(id)-1]), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// answerServer answers a request of the server's from the reader
// goroutine. The write waits a quarter of the timeout at most, and once one
// did not go out in that time the connection answers no more and is
// replaced after the current exchange: a server that floods requests and
// never reads stalled the reader (and so every reply) a whole timeout per
// request.
func (s *streamConn) answerServer(m *wire.Message) {
	if s.stalled.Load() {
		return
	}
	s.answer = s.d.prof.AnswerServerRequest(s.answer[:0], m)
	if len(s.answer) == 0 {
		return
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.st.Send(s.answer)
	if err == nil {
		err = s.st.Flush(time.Now().Add(answerWait(s.d.cfg.Timeout)))
	}
	if err != nil {
		s.stalled.Store(true)
	}
}

// answerWait is how long an answer to a server's request may take to be
// written.
func answerWait(timeout time.Duration) time.Duration { return max(timeout/4, time.Millisecond) }

// handshake runs the profile's steps (after detecting the MCP era on the
// first connection), each request waiting up to the timeout, then opens
// the LSP workspace's documents. Every later connection of a dual-era
// client sends the probe too (Handshake.Reprobe).
func (s *streamConn) handshake(ctx context.Context) error {
	c := stepConn{s: s, ctx: ctx}
	h := profile.Handshake{Profile: s.d.prof, Era: profile.Era(s.d.era.Load()), Reprobe: s.d.probe, NoReply: errStepTimeout,
		Open: s.d.openSteps()}
	era, err := h.Probe(c)
	if err != nil {
		return err
	}
	if h.Era == profile.EraAuto {
		s.d.era.Store(uint32(era))
	}
	_, err = h.Steps(c, era)
	return err
}

var errStepTimeout = errors.New("no reply within the timeout")

// stepConn runs profile steps on a stream connection (profile.StepConn).
type stepConn struct {
	s   *streamConn
	ctx context.Context
}

// ControlID appends the next id "rpcfuzz-ctl-N" of the connection's
// control requests.
func (c stepConn) ControlID(dst []byte) []byte {
	c.s.ctlSeq++
	dst = append(dst, controlPrefix...)
	dst = strconv.AppendUint(dst, c.s.ctlSeq, 10)
	return append(dst, '"')
}

func (c stepConn) Send(msg []byte) error { return c.s.write(msg) }

// Call writes msg and waits for the reply to id, the last control id made.
// The dialer keeps the first initialize result (noteInitialize).
func (c stepConn) Call(id, msg []byte) ([]byte, error) {
	if err := c.s.write(msg); err != nil {
		return nil, err
	}
	reply, err := c.s.awaitControl(c.ctx, idSeq(id, controlPrefix))
	if err == nil {
		c.s.d.noteInitialize(msg, reply)
	}
	return reply, err
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
	return profile.Step{Method: method, Params: params}.AppendControl(dst, id)
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
	if s.dead || s.stalled.Load() {
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
	if n := s.drainStale(); n > 0 {
		o.late += n // replies of earlier inputs that came after they ended
		s.late.took(n, true)
	}
	missed, owed := s.late.totals()
	ids := s.late.open(wait.infos)
	o.staleNull, o.staleIDs = missed, ids
	// The wait counts as earlier inputs' only the replies they lacked
	// for frames that need one: their notifications (which hardly ever
	// get a reply) would make every later input wait out its grace.
	wait.staleNull, wait.staleIDs, wait.maybeLate = owed, ids, missed
	if len(c.Frames) == 1 && bytes.HasPrefix(wait.infos[0].id, []byte(canaryPrefix)) {
		wait.strict = true // the canary: only its own reply ends the wait
	}
	defer func() {
		s.late.took(wait.stale, false)
		s.late.close(wait.missing(), wait.missingNeeded())
	}()
	// Latency is read off the configured clock (tests make it constant, so
	// the feedback tuples do not depend on timing); the timeout is real.
	start := s.d.cfg.Now()
	deadline := time.Now().Add(timeout + writeAllowance(caseSize(c)))
	s.syncSeq++
	seq := s.syncSeq
	w, werr := s.writeInput(c, seq, deadline)
	o.written = s.d.cfg.Now()
	halfClosed := w == wroteRawClosed
	if w != wroteFrames {
		o.wire = true
	}
	if w == wroteRawSynced {
		// Nothing is owed to broken framing, but each line the server
		// reads may get a reply, and a server answering out of order may
		// send it after the sync reply: the next input sets those aside
		// (see waitFor.rawLines).
		lines := lineCount(s.rawInput(c))
		wait = waitFor{needs: lines, loose: lines, open: lines, exact: true, rawLines: true,
			staleNull: wait.staleNull, staleIDs: wait.staleIDs, maybeLate: wait.maybeLate}
	}
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
	timer := s.armTimer(deadline)
	defer timer.Stop()
	graced, lingering := false, false
	var grace time.Duration
	rs := receiving{seq: seq, start: start}
	s.syncReal = time.Time{}
	for o.end == endNone {
		if rs.gotSync && !halfClosed && !lingering && wait.complete(o.replies, o.scans) {
			if grace = s.d.grace(rs.syncAt.Sub(start)); !wait.linger || grace >= time.Until(deadline) {
				break
			}
			// (From now on the grace of silence ends the exchange.)
			lingering, graced = true, true
			timer.Reset(grace)
		}
		if rs.gotSync && !halfClosed && !graced && (wait.keysDone() || wait.done(len(o.replies))) {
			// Only replies without a key are missing: wait a grace for
			// them, not the whole timeout (see looseGrace). A frame that
			// requires one and gets none breaks a rule; one that may
			// stay silent may.
			graced = true
			grace = max(s.d.grace(rs.syncAt.Sub(start)), wait.slowNull)
			if grace < time.Until(deadline) && !wait.patient {
				timer.Reset(grace)
			}
		}
		select {
		case m := <-s.msgs:
			replied := s.receive(&o, &m, &wait, &rs)
			replied = s.receiveQueued(&o, &wait, &rs) || replied
			if replied && graced && (lingering || !wait.patient) && grace < time.Until(deadline) {
				// The grace is for silence: a server still sending
				// replies has not finished (hundreds of refusals kept
				// coming past a grace counted from the sync reply, and
				// the -32700 among them was called missing).
				timer.Reset(grace)
			}
		case <-s.done:
			// Take what the reader delivered before it ended.
			s.takeQueued(&o, seq, &rs.gotSync, &rs.last)
			if halfClosed && s.child == nil && !isReset(s.rerr) {
				o.end = endNone // the end of the stream is the end of the replies
				halfClosed = false
				rs.gotSync, wait = true, waitFor{}
				continue
			}
			o.end, o.note = endClosed, errNote(s.rerr)
			if isReset(s.rerr) {
				o.end = endReset
			}
		case <-timer.C:
			if graced && (time.Now().Before(deadline) || wait.keysDone()) {
				// (At the deadline too, when only replies without an id
				// are missing: a hang is silence to a readable id, and the
				// connection, a child's above all, stays usable.)
				// The grace is over: what is still missing is judged so.
				o.pairs = wait.pairs
				return s.finish(&o, start, rs.last, timeout)
			}
			o.end = endTimeout
		case <-ctx.Done():
			o.end = endInterrupted
		}
	}
	o.pairs = wait.pairs
	return s.finish(&o, start, rs.last, timeout)
}

// How writeInput wrote an input.
type wroteKind uint8

const (
	wroteFrames    wroteKind = iota // the frames, then the sync request
	wroteRawSynced                  // broken framing, then the sync request on a line of its own (a child on newline framing)
	wroteRawClosed                  // broken framing, then the write side half-closed
	wroteRaw                        // broken framing, whose write or half-close failed
)

// writeInput writes case c and the sync request of sequence number seq,
// or the raw bytes of c's broken framing.
func (s *streamConn) writeInput(c mutate.Case, seq uint64, deadline time.Time) (wroteKind, error) {
	raw := s.rawInput(c)
	s.syncMsg = appendSync(s.syncMsg[:0], seq)
	syncMsg := s.syncMsg
	s.wmu.Lock()
	defer s.wmu.Unlock()
	switch {
	case raw != nil && s.child != nil && s.d.cfg.Target.Framing == transport.Newline:
		// Closing a child's stdin ends the process, and starting one per
		// input is slow: on newline framing the sync request on a line of
		// its own still tells when the server has read the broken lines.
		b := append(slices.Clip(raw), '\n')
		return wroteRawSynced, transport.WriteRaw(s.st, append(append(b, syncMsg...), '\n'), deadline)
	case raw != nil && s.d.cfg.Target.Framing != transport.Messages:
		if err := transport.WriteRawClose(s.st, raw, deadline); err != nil {
			return wroteRaw, err
		}
		return wroteRawClosed, nil
	}
	for _, f := range c.Frames {
		if err := s.st.Send(f); err != nil {
			return wroteFrames, err
		}
	}
	if err := s.st.Send(syncMsg); err != nil {
		return wroteFrames, err
	}
	return wroteFrames, s.st.Flush(deadline)
}

// rawInput returns the bytes of c's broken framing, or nil when c is
// frames sent the usual way.
func (s *streamConn) rawInput(c mutate.Case) []byte {
	if c.Wire == nil && s.d.cfg.Target.Framing == transport.Newline && framesBreakLines(c.Frames) {
		// A line break inside a frame (JSON whitespace, a comment) splits
		// it in two on a newline-delimited stream: the framing is broken
		// as surely as by a framing op.
		return streamBytes(transport.Newline.String(), c)
	}
	return c.Wire
}

// lineCount is the number of lines of b holding more than white space: on
// a newline-delimited stream, each may get one reply.
func lineCount(b []byte) int {
	n := 0
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	return n
}

// armTimer sets the connection's timer, made once, to fire at deadline.
func (s *streamConn) armTimer(deadline time.Time) *time.Timer {
	if s.timer == nil {
		s.timer = time.NewTimer(time.Until(deadline))
	} else {
		s.timer.Reset(time.Until(deadline)) // stopped after each exchange: no stale tick waits in it
	}
	return s.timer
}

// takeQueued takes what the reader delivered and nobody took yet.
func (s *streamConn) takeQueued(o *outcome, seq uint64, gotSync *bool, last *time.Time) {
	for {
		select {
		case m := <-s.msgs:
			s.take(o, &m, seq, gotSync, last)
		default:
			return
		}
	}
}

// finish settles the end of an exchange and its latency.
func (s *streamConn) finish(o *outcome, start, last time.Time, timeout time.Duration) outcome {
	if o.end != endNone {
		s.dead = true
	}
	s.settleEnd(o, start)
	switch {
	case !last.IsZero():
		o.latency = last.Sub(start)
	case o.end == endTimeout:
		o.latency = timeout
	default:
		o.latency = s.d.cfg.Now().Sub(start)
	}
	return *o
}

// keyedScan reports whether a reply carries a readable id.
func keyedScan(sc *replyScan) bool { return sc.idKind == wire.IDNumber || sc.idKind == wire.IDString }

// take records one message of the exchange; it reports whether it was a
// reply to the input.
func (s *streamConn) take(o *outcome, m *streamMsg, seq uint64, gotSync *bool, last *time.Time) bool {
	switch {
	case m.tooLarge:
		o.tooLarge++
		*last = m.at
	case m.sync == seq:
		*gotSync, o.synced = true, true
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
// previous exchange had finished with, which cannot be told from this
// one's. It returns how many were replies of the input (not sync or
// handshake replies), and notes how late they came after the sync reply.
func (s *streamConn) drainStale() int {
	n := 0
	for {
		select {
		case m := <-s.msgs:
			if m.sync == 0 && m.control == 0 && !m.tooLarge {
				n++
				if !s.syncReal.IsZero() && !keyedScan(&m.scan) {
					// (A reply with an id may be one to a call that timed
					// out: slow, not late.)
					s.d.noteLate(m.real.Sub(s.syncReal))
				}
			}
		default:
			return n
		}
	}
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
