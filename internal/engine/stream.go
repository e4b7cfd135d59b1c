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
}

// streamConn is one connection's lifetime. A connection that breaks is
// replaced by a new streamConn (new table, new ids) the next time its writer
// has a tick to send.
type streamConn struct {
	st         transport.Stream
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

func (d *streamDriver) dial(ctx context.Context) (*streamConn, error) {
	st, err := transport.DialStream(ctx, d.r.cfg.Target, d.r.streamOptions())
	if err != nil {
		return nil, err
	}
	sc := &streamConn{st: st, tb: pending.NewAt(d.r.cfg.MaxInFlight, d.r.cfg.Shard.idBase()), readerDone: make(chan struct{})}
	if c, ok := st.(transport.ChildStream); ok {
		sc.child = c
		d.r.addChild(c)
	}
	d.r.connsOpened.Add(1)
	sc.sess = newSession(d.r, st, &sc.wmu, sc.readerDone)
	d.r.addTable(sc.tb, sc.sess)
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
	sc.st.Close()
	<-sc.readerDone
	sc.sess.stop()
	d.r.removeTable(sc.tb)
	if sc.child != nil && !sc.lost {
		d.r.childGone(sc.child)
	}
}

func (d *streamDriver) start(ctx context.Context) error {
	for range d.r.cfg.Conns {
		sc, err := d.dial(ctx)
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
				d.r.childGone(sc.child)
			}
		}()
	}
	wg.Wait()
}

// write is the writer of slot i: it takes ticks, registers and encodes them,
// and writes them, several frames per write when ticks are waiting.
func (d *streamDriver) write(i int) {
	r := d.r
	rec := r.agg.NewRecorder()
	g := r.newParamGen()
	msg := make([]byte, 0, 1024)
	ids := make([]uint64, 0, writeCoalesce)
	var nextDial time.Time
	for t := range r.ticks {
		sc := d.slots[i]
		if sc.broken.Load() {
			<-sc.readerDone
			if sc.child != nil && !r.cfg.Restart {
				d.fail(rec, nil) // the child is gone and --restart was not given
				continue
			}
			if time.Now().Before(nextDial) {
				d.fail(rec, errors.New("connection lost and not yet re-established"))
				continue
			}
			fresh, err := d.dial(context.Background())
			if err != nil {
				nextDial = time.Now().Add(redialBackoff)
				r.noteTransportError(err)
				d.fail(rec, nil)
				continue
			}
			d.slots[i], sc = fresh, fresh
		}
		ids = ids[:0]
		sc.wmu.Lock()
		msg, ids = d.send(sc, rec, g, msg, ids, t)
	gather:
		for n := 1; n < writeCoalesce; n++ {
			select {
			case t, ok := <-r.ticks:
				if !ok {
					break gather
				}
				msg, ids = d.send(sc, rec, g, msg, ids, t)
			default:
				break gather
			}
		}
		err := sc.st.Flush(time.Now().Add(r.cfg.Timeout))
		sc.wmu.Unlock()
		if err != nil {
			if !r.stopping.Load() {
				r.noteTransportError(err)
			}
			sc.broken.Store(true)
			sc.st.Close()
			for _, id := range ids {
				if e, ok := sc.tb.Forget(id); ok {
					rec.Record(stats.Sample{Kind: stats.TransportError, Method: e.Method})
					r.done()
				}
			}
		}
	}
}

// fail records a tick that could not be sent at all.
func (d *streamDriver) fail(rec *stats.Recorder, err error) {
	if err != nil {
		d.r.noteTransportError(err)
	}
	rec.Record(stats.Sample{Kind: stats.TransportError, Method: d.r.unmatched})
	d.r.done()
}

// send registers and encodes tick t and queues its message on the stream.
func (d *streamDriver) send(sc *streamConn, rec *stats.Recorder, g *paramGen, msg []byte, ids []uint64, t tick) ([]byte, []uint64) {
	msg, ids, _ = d.r.encodeTickOn(sc.tb, &sc.reuse, rec, &sc.counters, g, msg, ids, t)
	if len(msg) > 0 {
		sc.st.Send(msg)
	}
	return msg, ids
}

// read is the reader of one connection: it judges every frame until the
// connection ends. If that happens before the run is stopping, every request
// still pending on it failed with a transport error.
func (d *streamDriver) read(sc *streamConn) {
	r := d.r
	defer close(sc.readerDone)
	j := judge{r: r, rec: r.agg.NewRecorder(), sent: &sc.counters, peer: sc.sess, era: &sc.sess.era, reuse: &sc.reuse}
	defer j.finish()
	defer r.settleProbes(&sc.reuse)
	var err error
	for {
		var frame []byte
		frame, err = sc.st.Recv()
		now := r.now()
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
	sc.st.Close()
	go sc.sess.stop() // not here: the flusher may wait for this reader's connection
	if sc.child != nil {
		r.childGone(sc.child)
	}
	r.removeTable(sc.tb)
	for _, e := range sc.tb.Leak(nil) {
		j.rec.Record(stats.Sample{Kind: stats.TransportError, Method: e.Method})
		r.done()
	}
}
