package fuzz

import (
	"context"
	"time"
)

// spareChild is a worker's next child process, started (handshake
// included) while the current one works. A child that dies of inputs
// costs its whole start-up at every restart (a Go server's runtime, a
// language server's initialization, the handshake: 20 ms of the 23 ms an
// input took against a child that ended its session on each parse error);
// a spare started ahead overlaps it with the current child's inputs.
// Spares start only once the worker's first child has died, so a child
// that lives through the run never has a second one beside it; one spare
// at a time, since two starting together slowed each other down on a
// loaded machine; and a server that does not bear two instances (its
// spares die, or fail to start, spareMisses times in a row) gets none from
// then on.
type spareChild struct {
	on      bool            // the main loop of a child-process target
	dials   int             // connections made
	misses  int             // spares in a row that could not be used
	pending chan dialResult // the spare's dial, or nil
}

// spareMisses is how many unusable spares in a row turn spares off.
const spareMisses = 3

// dialResult is a dial done in the background.
type dialResult struct {
	c   conn
	err error
}

// connect makes the worker's next connection: the spare when one is
// usable, else a dial (retried a few times), then starts the next spare.
func (w *worker) connect(bound context.Context) (conn, error) {
	d := w.r.d
	w.spare.dials++
	nc := w.spare.take(d)
	var err error
	if nc == nil {
		nc, err = d.dial(bound)
		for wait := redialWait; err != nil && wait <= 4*redialWait && bound.Err() == nil; wait *= 2 {
			// A refused connection may be a full accept queue, not a dead
			// server: try again a little later before calling it one.
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-bound.Done():
			}
			t.Stop()
			nc, err = d.dial(bound)
		}
	}
	if err == nil && w.spare.on && w.spare.dials > 1 && w.spare.misses < spareMisses {
		ch := make(chan dialResult, 1)
		w.spare.pending = ch
		go func() {
			c, err := d.dial(bound)
			ch <- dialResult{c, err}
		}()
	}
	return nc, err
}

// take returns the spare if it is usable (waiting for its start when it is
// still under way), else nil.
func (s *spareChild) take(d *dialer) conn {
	if s.pending == nil {
		return nil
	}
	r := <-s.pending
	s.pending = nil
	if r.err != nil || !r.c.usable() {
		s.misses++
		s.discard(d, r.c)
		return nil
	}
	s.misses = 0
	return r.c
}

// drop closes a spare that will not be used.
func (s *spareChild) drop(d *dialer) {
	if s.pending != nil {
		s.discard(d, (<-s.pending).c)
		s.pending = nil
	}
}

// discard closes an unused spare: it is not a restart.
func (s *spareChild) discard(d *dialer, c conn) {
	if c != nil {
		c.close()
		d.children.Add(-1)
	}
}
