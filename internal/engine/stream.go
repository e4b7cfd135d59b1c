package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
)

// writeCoalesce is how many messages a writer gathers into one flush when
// ticks are already waiting.
const writeCoalesce = 512

// redialBackoff is how long a connection that could not be re-established
// fails its ticks at once before dialing again.
const redialBackoff = 100 * time.Millisecond

// streamDriver runs Conns connections, each with one writer and one reader
// goroutine and its own pending table; many requests are in flight on each.
type streamDriver struct {
	r       *run
	slots   []*streamConn
	started bool // start has returned: dials come from writers now
	// peak is the most requests each slot's table can hold at once in
	// closed loop (its part of the credits at the top concurrency), to size
	// its table once; 0 in open loop, where tables grow as they need.
	peak []int
	// gone counts the slots whose child process exited without
	// --restart: when it reaches --conns the run cannot go on.
	gone atomic.Int32
}

// streamConn is one connection's lifetime. A connection that breaks is
// replaced by a new streamConn (new table, new ids) the next time its writer
// has a tick to send.
type streamConn struct {
	st         transport.Stream
	pool       *credits              // the slot's closed-loop credits; nil in open loop
	child      transport.ChildStream // set when the stream is a child process
	lost       bool                  // the reader saw it end (and reported it); read after readerDone
	tb         *pending.Table
	reuse      idReuse
	sess       *session
	wmu        sync.Mutex // the writer and the session's flusher take turns on st
	broken     atomic.Bool
	abandoned  atomic.Bool // closed by dial after a failed handshake
	counters   connCounters
	readerDone chan struct{}
}

// dial connects slot i.
func (d *streamDriver) dial(ctx context.Context, i int) (*streamConn, error) {
	st, err := transport.DialStream(ctx, d.r.cfg.Target, d.r.streamOptions())
	if err != nil {
		return nil, err
	}
	sc := &streamConn{st: st, tb: pending.NewAt(d.r.cfg.MaxInFlight, d.r.cfg.Shard.IDBase()), readerDone: make(chan struct{})}
	if d.r.pools != nil {
		sc.pool = d.r.pools[i]
		sc.tb.Grow(d.peak[i])
	}
	if c, ok := st.(transport.ChildStream); ok {
		sc.child = c
		d.r.addChild(c)
	}
	d.r.connsOpened.Add(1)
	sc.sess = newSession(d.r, st, &sc.wmu, sc.readerDone)
	d.r.addTable(sc.tb, sc.sess, sc.pool)
	// The reader starts now: the handshake's replies come through it, and
	// so do the requests a server makes of its client while it starts up.
	go d.read(sc)
	era, err := sc.sess.handshake()
	if err != nil {
		d.abandon(sc)
		return nil, err
	}
	if len(d.slots) == 0 && !d.started {
		// The first connection, dialled by start before any other
		// goroutine reads the era: what it negotiated is the run's era,
		// which later connections ask for directly.
		d.r.era = era
		if d.r.cfg.Batch > 1 {
			sc.sess.probeEmptyBatch()
		}
		if err := d.r.checkTool(era, sc.sess.call); err != nil {
			d.abandon(sc)
			return nil, err
		}
	}
	return sc, nil
}

// abandon closes a connection that never became usable (its handshake
// failed): the caller reports why, so its reader stops without reporting
// the close as a lost connection.
func (d *streamDriver) abandon(sc *streamConn) {
	sc.abandoned.Store(true)
	sc.broken.Store(true)
	self := sc.child != nil && sc.child.ExitStatus() != ""
	sc.st.Close()
	<-sc.readerDone
	sc.sess.stop()
	d.r.removeTable(sc.tb)
	if sc.child != nil && !sc.lost {
		d.r.childGone(sc.child, self)
	}
}

func (d *streamDriver) start(ctx context.Context) error {
	if r := d.r; r.limit > 0 {
		d.peak = r.makePools(r.cfg.Conns)
	}
	for i := range d.r.cfg.Conns {
		sc, err := d.dial(ctx, i)
		if err != nil {
			for _, sc := range d.slots {
				sc.st.Close()
			}
			d.slots = nil
			return err
		}
		d.slots = append(d.slots, sc)
	}
	d.started = true
	return nil
}

func (d *streamDriver) serve() {
	var wg sync.WaitGroup
	for i := range d.slots {
		wg.Add(1)
		go func() { defer wg.Done(); d.write(i) }()
	}
	wg.Wait()
}

// interrupt does nothing for streams: writers are bounded by their flush
// deadline and replies by the drain.
func (d *streamDriver) interrupt(time.Duration) {}

// close shuts every connection down as its profile says (LSP: shutdown and
// exit), stops every reader (the run is stopping, so they fail nothing) and
// waits for them. Connections close in parallel: a child process may take
// up to twice its grace period to stop.
func (d *streamDriver) close() {
	var wg sync.WaitGroup
	for _, sc := range d.slots {
		if sc == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !sc.broken.Load() {
				if err := sc.sess.shutdown(); err != nil {
					d.r.noteTransportError(fmt.Errorf("%s shutdown: %w", d.r.prof.Name(), err))
				}
			}
			sc.sess.stop()
			sc.st.Close()
			<-sc.readerDone
			if sc.child != nil && !sc.lost {
				d.r.childGone(sc.child, false)
			}
		}()
	}
	wg.Wait()
}

// streamWriter is the writer of one connection slot: it takes ticks (from
// the dispatcher in open loop, or makes them from the slot's credits in
// closed loop), registers and encodes them, and writes each batch in one
// write, redialling the slot's connection when it broke.
type streamWriter struct {
	d            *streamDriver
	i            int
	rec          *stats.Recorder
	g            *paramGen
	msg          []byte
	out          outgoing
	batch        []tick
	nextDial     time.Time
	deadline     time.Time // the write deadline last set
	deadlineFrom int64     // run-clock time it was computed at
	// Closed loop: the slot's credits, and the ticks made from them.
	pool   *credits
	ticker creditTicker
	// baton is held by whoever runs this writer: its own goroutine, except
	// while it is parked, when the slot's reader may run a step (handoff).
	baton sync.Mutex
}

// write is the writer of slot i.
func (d *streamDriver) write(i int) {
	r := d.r
	w := &streamWriter{d: d, i: i, rec: r.agg.NewRecorder(), g: r.newParamGen(), msg: make([]byte, 0, 1024), batch: make([]tick, 0, writeCoalesce)}
	if r.pools != nil {
		w.pool = r.pools[i]
		w.ticker = newCreditTicker(r, w.pool, w.g, writeCoalesce)
		if d.peak[i] == 1 && r.maxRate == nil {
			// One request in flight on the slot: the reader that settles
			// its reply sends the next request itself (credits.handoff).
			// Not with --max-rate, whose wait for a token would hold up
			// the reader.
			w.baton.Lock()
			defer w.baton.Unlock()
			w.pool.handoff = w.step
		}
	}
	for {
		if w.retired() {
			return
		}
		var ok bool
		if w.pool != nil {
			ok = w.fromCredits()
		} else {
			ok = w.fromTicks()
		}
		if !ok {
			return
		}
		if r.pastCutoff() {
			// A writer held up by a server that does not read: what is
			// still queued at the end of the drain is not sent.
			w.drop(w.batch)
			continue
		}
		if sc := w.conn(); sc != nil {
			w.send(sc)
		}
	}
}

// drop counts ticks that will never be sent as dropped and releases what
// they held in flight.
func (w *streamWriter) drop(ticks []tick) {
	for _, t := range ticks {
		w.d.r.dropLate(w.rec, w.pool, t)
	}
}

// retired reports whether this writer stops: its slot's child process
// exited without --restart, so nothing will be sent on the slot again, and
// other slots are left to take the ticks, or it makes its own (closed
// loop). The writer of the last slot left drops the ticks still queued.
func (w *streamWriter) retired() bool {
	d := w.d
	sc := d.slots[w.i]
	if sc.child == nil || d.r.cfg.Restart || !sc.broken.Load() {
		return false
	}
	<-sc.readerDone // its reader has counted the slot in gone
	return w.pool != nil || int(d.gone.Load()) < d.r.cfg.Conns
}

// fromTicks gathers the next batch from the dispatcher: one tick, waiting
// for it, and up to writeCoalesce in all of those already waiting. It
// returns false once the ticks channel is closed and empty.
func (w *streamWriter) fromTicks() bool {
	ticks := w.d.r.ticks
	t, ok := <-ticks
	if !ok {
		return false
	}
	w.batch = append(w.batch[:0], t)
	for len(w.batch) < writeCoalesce {
		select {
		case t, ok := <-ticks:
			if !ok {
				return true
			}
			w.batch = append(w.batch, t)
		default:
			return true
		}
	}
	return true
}

// fromCredits makes the next batch from the slot's credits, waiting for
// credits when there are none (see fill). It returns false when sending
// has ended.
func (w *streamWriter) fromCredits() bool {
	r := w.d.r
	for {
		select {
		case <-r.sendDone:
			return false
		default:
		}
		made, ended := w.fill()
		switch {
		case ended:
			return false
		case made:
			return true
		case w.pool.handoff != nil:
			w.parkUntilWoken()
			continue
		}
		select {
		case <-w.pool.wake:
		case <-r.sendDone:
			return false
		}
	}
}

// parkUntilWoken waits for credits with the writer's state left to its
// slot's reader, which sends the next request itself when it gives the
// credit back; the writer only wakes when that reader could not (see
// credits.repark), for a credit given by anyone else, or when sending ends.
func (w *streamWriter) parkUntilWoken() {
	if !w.pool.park() {
		return // credits came back meanwhile
	}
	w.baton.Unlock()
	select {
	case <-w.pool.wake:
	case <-w.d.r.sendDone:
	}
	w.baton.Lock() // after any step a reader is running
	w.pool.unpark()
}

// step is the slot's hand-off (credits.handoff), run by the reader that
// gave a parked writer its credit back: make the next tick and send it from
// the reader's goroutine, then leave the writer parked. What needs the
// writer's own goroutine (a broken connection to redial, sending that has
// ended) is left to it: repark wakes it while credits are left unused.
func (w *streamWriter) step() {
	if !w.baton.TryLock() {
		// The writer woke (sending ended) and runs again: it takes the
		// credit itself. Waiting for it here could deadlock, as it may
		// wait for this reader to end.
		return
	}
	defer w.baton.Unlock()
	defer w.pool.repark()
	r := w.d.r
	select {
	case <-r.sendDone:
		return
	default:
	}
	sc := w.d.slots[w.i]
	if sc.broken.Load() {
		return
	}
	if made, ended := w.fill(); !made || ended {
		return
	}
	if r.pastCutoff() {
		w.drop(w.batch)
		return
	}
	w.send(sc)
}

// fill makes as many ticks as the credits in hand pay for (up to
// writeCoalesce) into the batch: made reports whether it holds any; ended
// that sending ended while it waited for a --max-rate token.
func (w *streamWriter) fill() (made, ended bool) {
	w.batch, ended = w.ticker.fill(w.batch[:0], writeCoalesce)
	return len(w.batch) > 0, ended
}

// conn returns the slot's connection, dialling a new one if it broke. When
// there is none to use it fails the batch and returns nil.
func (w *streamWriter) conn() *streamConn {
	d, r := w.d, w.d.r
	sc := d.slots[w.i]
	if !sc.broken.Load() {
		return sc
	}
	<-sc.readerDone
	var err error
	switch {
	case sc.child != nil && !r.cfg.Restart:
		// The child is gone and --restart was not given: what it was to
		// be sent is dropped, and the run ends once every slot's is gone.
		w.drop(w.batch)
		return nil
	case time.Now().Before(w.nextDial):
		err = errors.New("connection lost and not yet re-established")
	default:
		fresh, derr := d.dial(context.Background(), w.i)
		if derr == nil {
			d.slots[w.i] = fresh
			return fresh
		}
		w.nextDial = time.Now().Add(redialBackoff)
		r.noteTransportError(derr)
	}
	if err != nil {
		r.noteTransportError(err)
	}
	w.fail(w.batch)
	return nil
}

// fail counts ticks that could not be sent at all as transport errors and
// releases what they held in flight.
func (w *streamWriter) fail(ticks []tick) {
	r := w.d.r
	n := 0
	for _, t := range ticks {
		w.rec.Record(stats.Sample{Kind: stats.TransportError, Method: r.unmatched})
		n += r.calls[t.call].weight
	}
	r.release(w.pool, n, r.now())
}

// maxStaged bounds the elements of one write, so the table slots a writer
// reserves for it stay few even for big batches.
const maxStaged = 4096

// send writes the batch on sc, in as few writes as maxStaged allows; if a
// write fails, the ticks after it fail too.
func (w *streamWriter) send(sc *streamConn) {
	for ticks := w.batch; len(ticks) > 0; {
		var ok bool
		if ticks, ok = w.writeSome(sc, ticks); !ok {
			if sc.child != nil && !w.d.r.cfg.Restart {
				w.drop(ticks) // never to be sent: the child is gone for good
			} else {
				w.fail(ticks)
			}
			return
		}
	}
}

// writeSome registers, encodes and writes the first of ticks on sc in one
// write, and returns the rest: one clock read for the send time of all its
// frames, read once they are encoded, right before their entries are
// registered and the write that sends them. It reports false if the write
// failed (the connection is broken).
func (w *streamWriter) writeSome(sc *streamConn, ticks []tick) ([]tick, bool) {
	r := w.d.r
	// The write takes ticks up to maxStaged elements (at least one tick).
	n, elems := 0, 0
	for n < len(ticks) && (n == 0 || elems+r.calls[ticks[n].call].weight <= maxStaged) {
		elems += r.calls[ticks[n].call].weight
		n++
	}
	sc.wmu.Lock()
	w.out.begin(sc.tb, elems)
	for _, t := range ticks[:n] {
		w.msg = r.prepare(&w.out, &sc.reuse, w.rec, &sc.counters, w.g, w.msg, t)
		if len(w.msg) > 0 {
			sc.st.Send(w.msg)
		}
	}
	now := r.now()
	r.commit(&w.out, w.rec, w.g, sc.pool, now)
	err := sc.st.Flush(w.writeDeadline(now))
	sc.wmu.Unlock()
	if err == nil {
		return ticks[n:], true
	}
	if !r.stopping.Load() {
		r.noteTransportError(err)
	}
	sc.broken.Store(true)
	sc.st.Close()
	first, n := w.out.ids()
	ended := 0
	for id := first; id < first+uint64(n); id++ {
		if e, ok := sc.tb.Forget(id); ok {
			w.rec.Record(stats.Sample{Kind: stats.TransportError, Method: e.Method, Warmup: r.warm(e.Intended)})
			ended++
		}
	}
	if ended > 0 {
		r.release(sc.pool, ended, now)
	}
	return ticks[n:], false
}

// writeDeadline is the deadline for a write that starts at now (run clock):
// --timeout from now. Setting a deadline costs a clock read and a timer
// update in the runtime, so one computed less than 1/64 of the timeout ago
// is used again: a write always gets at least 63/64 of --timeout.
func (w *streamWriter) writeDeadline(now int64) time.Time {
	timeout := int64(w.d.r.cfg.Timeout)
	if w.deadline.IsZero() || now-w.deadlineFrom > timeout/64 {
		w.deadline = w.d.r.wallClock(now).Add(time.Duration(timeout))
		w.deadlineFrom = now
	}
	return w.deadline
}

// read is the reader of one connection: it judges every frame until the
// connection ends. If that happens before the run is stopping, every request
// still pending on it failed with a transport error.
func (d *streamDriver) read(sc *streamConn) {
	r := d.r
	defer close(sc.readerDone)
	j := judge{r: r, rec: r.agg.NewRecorder(), sent: &sc.counters, peer: sc.sess, era: &sc.sess.era, reuse: &sc.reuse, pool: sc.pool}
	defer j.finish()
	defer r.settleProbes(&sc.reuse)
	// A stream that counts its reads lets the clock be read once per read
	// rather than per frame: every frame a read completed arrived when that
	// read returned, which is when the first of them is handed out.
	rc, _ := sc.st.(transport.ReadCounter)
	// A stream that tells when Recv would wait lets the judge settle the
	// requests answered in one read together (see judge.hold).
	bf, _ := sc.st.(transport.Buffering)
	j.hold = bf != nil
	var reads uint64
	var now int64
	var err error
	for {
		if j.hold && j.owed > 0 && !bf.Buffered() {
			j.settle()
		}
		var frame []byte
		frame, err = sc.st.Recv()
		if rc == nil {
			now = r.now()
		} else if n := rc.Reads(); n != reads {
			reads, now = n, r.now()
		}
		if errors.Is(err, transport.ErrFrameTooLarge) {
			j.violations(check.Set(0).Add(check.FrameTooLarge), r.unmatched, nil)
			continue
		}
		if err != nil {
			break
		}
		j.frame(sc.tb, frame, now)
	}
	if r.stopping.Load() || sc.abandoned.Load() {
		return
	}
	if err == io.EOF { // a bare EOF from a socket; child streams say more
		err = errors.New("connection closed by the server")
	}
	r.noteTransportError(fmt.Errorf("%s: %w", r.cfg.Target.URL, err))
	r.connsLost.Add(1)
	sc.lost = true
	sc.broken.Store(true)
	self := sc.child != nil && sc.child.ExitStatus() != "" // not killed by the Close below
	sc.st.Close()
	go sc.sess.stop() // not here: the flusher may wait for this reader's connection
	if sc.child != nil {
		r.childGone(sc.child, self)
		if !r.cfg.Restart && int(d.gone.Add(1)) == r.cfg.Conns && r.cutoff.Load() == 0 {
			// Still sending: the run cannot go on.
			r.endEarly(r.childrenGone(), nil)
		}
	}
	r.removeTable(sc.tb)
	lost := sc.tb.Leak(nil)
	for _, e := range lost {
		j.rec.Record(stats.Sample{Kind: stats.TransportError, Method: e.Method, Warmup: r.warm(e.Intended)})
	}
	if len(lost) > 0 {
		r.release(sc.pool, len(lost), r.now())
	}
}
