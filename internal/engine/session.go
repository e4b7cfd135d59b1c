package engine

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// maxOutbox bounds the bytes of protocol messages (answers to the server's
// requests, cancellations) waiting for the write side. A server that floods
// requests while not reading would otherwise grow it without end; past the
// bound, messages are dropped and the drop is reported.
const maxOutbox = 4 << 20

// ctlPrefix starts the ids of the requests the profile layer sends itself
// (era probe, handshake, shutdown). They are strings in a namespace of their
// own, so they can never collide with the load's counter ids, and a late
// reply to one (a probe that timed out) is recognised and not judged as a
// reply with an unknown id.
var ctlPrefix = []byte(`"rpcload-`)

// errStepTimeout is a control request that got no reply within --timeout.
var errStepTimeout = errors.New("no reply within --timeout")

// errSessionEnded is a control request whose connection ended first.
var errSessionEnded = errors.New("the connection ended")

// eraBox holds the era a connection speaks; the handshake sets it while the
// connection's reader already judges frames.
type eraBox struct{ v atomic.Uint32 }

func (b *eraBox) load() profile.Era   { return profile.Era(b.v.Load()) }
func (b *eraBox) store(e profile.Era) { b.v.Store(uint32(e)) }

// session is the profile layer of one stream connection. What the reader and
// the sweeper send (answers to the server's own requests, cancellations)
// goes through an outbox that a goroutine of its own flushes, so the reader
// never blocks on the write side: a server that waits for an answer before
// it reads on would otherwise deadlock with it. Handshake and shutdown steps
// are written at once by the goroutine that runs them (writeNow).
type session struct {
	r    *run
	st   transport.Stream
	wmu  *sync.Mutex // shared with the connection's writer: one writer at a time
	era  eraBox
	ends <-chan struct{} // closed when the connection's reader has stopped

	mu     sync.Mutex // guards outbox and queued
	outbox [][]byte
	queued int
	wake   chan struct{}
	quit   chan struct{}
	done   chan struct{} // closed when the flusher has returned
	once   sync.Once     // closes quit
	dead   atomic.Bool   // a flush failed: the stream is broken, queue nothing more

	ctl    atomic.Pointer[ctlWait] // the control request waiting for its reply
	empty  atomic.Pointer[ctlWait] // the empty-batch probe waiting for its reply
	ctlSeq atomic.Uint64
	answer []byte // the reader's buffer for answers to server requests
}

// ctlWait is a control request waiting for its reply.
type ctlWait struct {
	id    []byte
	reply chan []byte
}

func newSession(r *run, st transport.Stream, wmu *sync.Mutex, readerDone <-chan struct{}) *session {
	s := &session{r: r, st: st, wmu: wmu, ends: readerDone, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	s.era.store(r.era)
	go s.flushLoop()
	return s
}

// stop ends the flusher; what is still queued is not sent.
func (s *session) stop() {
	s.once.Do(func() { close(s.quit) })
	<-s.done
}

func (s *session) flushLoop() {
	defer close(s.done)
	for {
		select {
		case <-s.quit:
			return
		case <-s.wake:
		}
		s.mu.Lock()
		msgs := s.outbox
		s.outbox, s.queued = nil, 0
		s.mu.Unlock()
		if len(msgs) == 0 {
			continue
		}
		s.wmu.Lock()
		for _, m := range msgs {
			s.st.Send(m)
		}
		err := s.st.Flush(time.Now().Add(s.r.cfg.Timeout))
		s.wmu.Unlock()
		if err != nil {
			s.dead.Store(true)
			return // the stream is broken; its reader reports that
		}
	}
}

// enqueue queues a copy of msg for the write side.
func (s *session) enqueue(msg []byte) bool {
	if s.dead.Load() {
		return false
	}
	s.mu.Lock()
	if s.queued+len(msg) > maxOutbox {
		s.mu.Unlock()
		s.r.outboxDropped.Add(1)
		return false
	}
	s.outbox = append(s.outbox, append([]byte(nil), msg...))
	s.queued += len(msg)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

// writeNow writes msg at once, between the load writer's and the flusher's
// writes. Handshake and shutdown steps go this way, not through the outbox,
// so they are on the wire in order, and before any load, when it returns.
func (s *session) writeNow(msg []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.st.Send(msg); err != nil {
		return err
	}
	return s.st.Flush(time.Now().Add(s.r.cfg.Timeout))
}

// control claims a reply to one of the profile layer's own requests and
// hands it to the waiter. It reports whether the message was such a reply
// (a late one too: those are dropped).
func (s *session) control(m *wire.Message, frame []byte) bool {
	if m.IDKind != wire.IDString || !bytes.HasPrefix(m.ID, ctlPrefix) {
		return false
	}
	if w := s.ctl.Load(); w != nil && bytes.Equal(w.id, m.ID) && s.ctl.CompareAndSwap(w, nil) {
		w.reply <- append([]byte(nil), frame...)
	}
	return true
}

// answerServer answers a request the server sent, as the profile says.
func (s *session) answerServer(m *wire.Message) {
	s.answer = s.r.prof.AnswerServerRequest(s.answer[:0], m)
	if len(s.answer) > 0 && s.enqueue(s.answer) {
		s.r.answered.Add(1)
	}
}

// cancel tells the server that these requests timed out, if the profile has
// a way to (MCP's notifications/cancelled, LSP's $/cancelRequest).
func (s *session) cancel(entries []pending.Entry) {
	var id, msg []byte
	for i := range entries {
		id = wire.AppendID(id[:0], entries[i].ID, entries[i].Format)
		msg = s.r.prof.Cancel(msg[:0], id)
		if len(msg) > 0 && s.enqueue(msg) {
			s.r.cancels.Add(1)
		}
	}
}

// ctlConn runs profile steps on a session (profile.StepConn), each
// request waiting up to timeout for its reply.
type ctlConn struct {
	s       *session
	timeout time.Duration
}

// ControlID appends the next id "rpcload-N" of the session's control
// requests.
func (c ctlConn) ControlID(dst []byte) []byte {
	dst = append(dst, ctlPrefix...)
	dst = strconv.AppendUint(dst, c.s.ctlSeq.Add(1), 10)
	return append(dst, '"')
}

// Send writes a notification step at once.
func (c ctlConn) Send(msg []byte) error { return c.s.writeNow(msg) }

// Call writes the control request msg and waits for the reply to id: the
// reader hands it over (control), and one that comes after the wait is
// dropped there.
func (c ctlConn) Call(id, msg []byte) ([]byte, error) {
	s := c.s
	w := &ctlWait{id: id, reply: make(chan []byte, 1)}
	s.ctl.Store(w)
	if err := s.writeNow(msg); err != nil {
		s.ctl.CompareAndSwap(w, nil)
		return nil, err
	}
	t := time.NewTimer(c.timeout)
	defer t.Stop()
	select {
	case rep := <-w.reply:
		return rep, nil
	case <-t.C:
		s.ctl.CompareAndSwap(w, nil)
		return nil, errStepTimeout
	case <-s.ends:
		return nil, errSessionEnded
	}
}

// call sends one control request and returns its reply.
func (s *session) call(method string, params []byte) ([]byte, error) {
	c := ctlConn{s: s, timeout: s.r.cfg.Timeout}
	id := c.ControlID(nil)
	return c.Call(id, profile.Step{Method: method, Params: params}.AppendControl(nil, id))
}

// handshake makes the connection ready for load: it detects the MCP era if
// it is not known yet (the server/discover probe; silence until --timeout
// means a legacy server), then runs the profile's handshake for that era and
// the run's own opening steps (e.g. LSP didOpen).
func (s *session) handshake() (profile.Era, error) {
	r := s.r
	h := profile.Handshake{Profile: r.prof, Era: r.era, Open: r.cfg.Steps, NoReply: errStepTimeout}
	era, err := h.Run(ctlConn{s: s, timeout: r.cfg.Timeout})
	if err != nil {
		return era, err
	}
	s.era.store(era)
	if n := r.prof.Name(); n == profile.MCP || n == profile.LSP {
		r.handshakes.Add(1) // a modern MCP connection needs none, but is as ready
	}
	return era, nil
}

// shutdownTimeout bounds each shutdown step: the run is over, and a server
// that does not answer shutdown is stopped by closing the connection.
const shutdownTimeout = 5 * time.Second

// shutdown runs the profile's shutdown steps (LSP: shutdown, then exit),
// if any, then stops the flusher and writes what is still queued.
func (s *session) shutdown() error {
	var err error
	if steps := s.r.prof.Shutdown(); len(steps) > 0 {
		timeout := min(s.r.cfg.Timeout, shutdownTimeout)
		if s.r.interrupted.Load() {
			timeout = min(timeout, s.r.cfg.InterruptDrain) // an interrupted run ends promptly
		}
		_, err = profile.RunSteps(ctlConn{s: s, timeout: timeout}, steps, s.era.load())
	}
	// Stopping the flusher first keeps the order: it finishes the batch it
	// took, and the rest is written here after it.
	s.stop()
	s.mu.Lock()
	msgs := s.outbox
	s.outbox, s.queued = nil, 0
	s.mu.Unlock()
	if len(msgs) > 0 {
		s.wmu.Lock()
		for _, m := range msgs {
			s.st.Send(m)
		}
		if ferr := s.st.Flush(time.Now().Add(time.Second)); err == nil {
			err = ferr
		}
		s.wmu.Unlock()
	}
	return err
}

// profileWarnings are the profile layer's findings that are not rule
// violations but must not go unnoticed.
func (r *run) profileWarnings() []string {
	var w []string
	if n := r.notifyRefused.Load(); n > 0 {
		w = append(w, fmt.Sprintf("the server refused %d notifications with an HTTP error status (Streamable HTTP allows it), the first with %v", n, r.notifyRefusedSample.Load()))
	}
	if n := r.outboxDropped.Load(); n > 0 {
		w = append(w, fmt.Sprintf("%d protocol messages (answers to the server's requests, cancellations) were not sent: more than 4 MiB waited for a server that did not read", n))
	}
	return w
}

// profileReport describes the profile layer's work for the result file.
func (r *run) profileReport() *stats.ProfileReport {
	p := &stats.ProfileReport{
		Name: string(r.prof.Name()), Handshakes: r.handshakes.Load(),
		ServerRequestsAnswered: r.answered.Load(), CancelsSent: r.cancels.Load(),
	}
	if r.prof.Name() == profile.MCP {
		p.Era, p.Version = r.era.String(), r.era.Version()
		p.Tools = r.tools
	}
	return p
}
