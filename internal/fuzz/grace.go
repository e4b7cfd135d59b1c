package fuzz

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/wire"
)

// looseGrace is how long replies without a key an input still lacks are
// waited for after the sync reply (on top of twice the time the sync reply
// took): a server that reads in order answers them before it, one that
// serves messages concurrently within moments of it. A server seen
// answering later than that gets twice its lateness (dialer.grace), up to
// maxGrace, and a method seen answering id null later still gets twice
// its own lateness (dialer.nullGrace), up to the timeout.
const looseGrace = 50 * time.Millisecond

// noteLate records a reply without an id that came dt after the sync reply.
func (d *dialer) noteLate(dt time.Duration) {
	for {
		old := d.lateBy.Load()
		if int64(dt) <= old || d.lateBy.CompareAndSwap(old, int64(dt)) {
			return
		}
	}
}

// maxGrace bounds the grace: a quarter of the timeout (or looseGrace).
// Every input with a message that may stay silent waits it out when the
// message does, so it must stay well below the timeout for a run to go
// on at a useful pace; a reply later than that is set aside as late in
// the next input, never judged against it.
func (d *dialer) maxGrace() time.Duration { return max(looseGrace, d.cfg.Timeout/4) }

// grace is how long replies without an id are waited for after the sync
// reply that came syncLatency after the input was written.
func (d *dialer) grace(syncLatency time.Duration) time.Duration {
	g := looseGrace + 2*syncLatency
	return min(max(g, 2*time.Duration(d.lateBy.Load())), d.maxGrace())
}

// slowNullMethods remembers the methods a server answers late when the
// request has id null: a method that takes longer than maxGrace (the
// reference server's convert sleeps 100 ms and lookup_weather 300 ms)
// was called silent in every input that asked it with id null, and each
// such candidate cost a confirmation that waited for the reply with a
// fresh child. Once a confirmation saw the reply, inputs asking that
// method with id null wait for it as long (twice), and only they do: a
// server that reads id null as a notification still costs other inputs
// no more than the grace.
type slowNullMethods struct {
	any atomic.Bool // a method is known: nullGrace has something to look up
	mu  sync.Mutex
	by  map[string]time.Duration // the method's raw JSON name → the latest reply seen
}

// noteSlowNull records that a request with id null to the method of frame
// (a single request; anything else is ignored) was answered after took.
func (d *dialer) noteSlowNull(frame []byte, took time.Duration) {
	var m wire.Message
	wire.Scan(frame, &m)
	if m.Kind == wire.KindBatch || m.IDKind != wire.IDNull || len(m.Method) == 0 {
		return
	}
	s := &d.slowNull
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = make(map[string]time.Duration)
	}
	s.by[string(m.Method)] = max(took, s.by[string(m.Method)])
	s.any.Store(true)
}

// awaitSlowNull marks an input's requests with id null to methods seen
// answering late as required, so that the exchange waits for their
// replies (see waitFor.complete: frames that may stay silent are not
// waited for otherwise), and returns how long after the sync reply:
// twice the latest such reply (at least maxGrace), up to the timeout; 0
// when the input asks none of them.
func (d *dialer) awaitSlowNull(frames [][]byte, infos []frameInfo) time.Duration {
	s := &d.slowNull
	if !s.any.Load() || len(frames) != len(infos) {
		return 0
	}
	var longest time.Duration
	var m wire.Message
	slowSeen := false
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range infos {
		fi := &infos[i]
		if !fi.needs || fi.readable || fi.class == oracle.Batch || string(fi.id) != "null" {
			continue
		}
		wire.Scan(frames[i], &m)
		if len(m.Method) == 0 {
			continue
		}
		took, slow := s.by[string(m.Method)]
		if slow {
			slowSeen = true
			fi.required, fi.reqDone = true, true
			longest = max(longest, took)
		}
	}
	if !slowSeen {
		return 0
	}
	return min(max(2*longest, d.maxGrace()), d.cfg.Timeout)
}
