package engine

import (
	"fmt"
	"sync"
)

// credits is one stream slot's part of the closed-loop pool: a credit is the
// right to put one more request in flight on that slot's connection. Its
// reader (and the sweeper, and the writer for what it could not send) gives a
// credit back as each request ends, with the time it ended; the slot's writer
// takes them and turns them into ticks itself. Closed loop over streams thus
// needs no dispatcher goroutine and no channel operation per request, and a
// connection never holds more than its part, which bounds its pending table.
//
// Each idle credit carries the moment it came back: a tick's intended time
// is when the last of its credits came back, as when one dispatcher handed
// out tokens, but exact rather than read when the dispatcher got round to it.
type credits struct {
	mu sync.Mutex
	// ring holds the idle credits' return times (run clock), oldest first,
	// from head, n of them.
	ring    []int64
	head, n int
	// retire is how many credits still have to leave the pool as they come
	// back (closed-loop stages lowering the target).
	retire  int
	waiting bool          // the writer found none and waits on wake
	wake    chan struct{} // capacity 1
	// With a hand-off (a slot of one credit), the writer that finds no
	// credit parks instead of waiting: it leaves its state to the pool, and
	// the reader that gives the credit back runs the writer's next step
	// itself (send the next request) rather than waking the writer through
	// wake. At one request in flight that wake-up was the whole gap between
	// a reply and the next request (about 15 us on the reference VM, a
	// goroutine woken on a core asleep in epoll).
	handoff func() // runs the writer's next step in the caller's goroutine
	parked  bool   // the writer is parked: the next give may run handoff
}

// newCredits returns a slot's pool holding n credits that came back at
// time at, with room for size without growing.
func newCredits(n, size int, at int64) *credits {
	c := &credits{ring: make([]int64, max(size, n, 1)), wake: make(chan struct{}, 1)}
	c.pushLocked(n, at)
	return c
}

// pushLocked adds k idle credits that came back at time at.
func (c *credits) pushLocked(k int, at int64) {
	if c.n+k > len(c.ring) {
		ring := make([]int64, max(2*len(c.ring), c.n+k))
		for i := range c.n {
			ring[i] = c.ring[(c.head+i)%len(c.ring)]
		}
		c.ring, c.head = ring, 0
	}
	for range k {
		c.ring[(c.head+c.n)%len(c.ring)] = at
		c.n++
	}
	if (c.waiting || c.parked) && c.n > 0 {
		c.wakeLocked()
	}
}

// wakeLocked wakes the writer, parked or waiting: it takes its state back.
func (c *credits) wakeLocked() {
	c.waiting, c.parked = false, false
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// give returns k credits whose requests ended at time at; credits a stage
// retires are dropped instead. If the writer is parked, the caller runs
// its next step (see handoff): only a reader gives so, never a goroutine
// that must not block on a write (see giveWaking).
func (c *credits) give(k int, at int64) { c.giveFrom(k, at, true) }

// giveWaking is give for a caller that must never write on the slot's
// connection itself (the sweeper, which holds the run's lock): a parked
// writer is woken instead.
func (c *credits) giveWaking(k int, at int64) { c.giveFrom(k, at, false) }

func (c *credits) giveFrom(k int, at int64, step bool) {
	c.mu.Lock()
	if c.retire > 0 {
		r := min(c.retire, k)
		c.retire -= r
		k -= r
	}
	run := false
	if k > 0 {
		// Claimed before the push, so the push does not wake the writer.
		run = step && c.parked
		if run {
			c.parked = false
		}
		c.pushLocked(k, at)
	}
	c.mu.Unlock()
	if run {
		c.handoff()
	}
}

// releaseWaking is run.release for the sweeper, which holds the run's lock
// and goes on to other tables: a parked writer of a slot is woken to send
// rather than run in the sweeper's goroutine.
func (r *run) releaseWaking(pool *credits, n int, at int64) {
	if pool == nil {
		r.release(nil, n, at)
		return
	}
	r.inflight.Add(-int64(n))
	pool.giveWaking(n, at)
}

// park is the writer's, when it found no credits to send with and has a
// hand-off: it reports false if credits came back meanwhile (take them),
// and otherwise parks the writer, whose state the next give may use until
// the writer is woken.
func (c *credits) park() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n > 0 {
		return false
	}
	c.waiting, c.parked = false, true
	return true
}

// unpark is the writer's once woken: no give runs its steps any more.
func (c *credits) unpark() {
	c.mu.Lock()
	c.parked = false
	c.mu.Unlock()
}

// repark ends a step run by a give: the writer stays parked if the step
// used every credit, and is woken to take the rest otherwise (the step
// could not send: sending ended, or the connection broke and needs the
// writer to redial it).
func (c *credits) repark() {
	c.mu.Lock()
	if c.n > 0 {
		c.wakeLocked()
	} else {
		c.waiting, c.parked = false, true
	}
	c.mu.Unlock()
}

// take appends the return times of up to limit idle credits to dst, oldest
// first. When it leaves none, the next credit given signals wake.
func (c *credits) take(dst []int64, limit int) []int64 {
	c.mu.Lock()
	k := min(c.n, limit)
	for range k {
		dst = append(dst, c.ring[c.head])
		c.head++
		if c.head == len(c.ring) {
			c.head = 0
		}
	}
	c.n -= k
	// Whoever empties the pool asks for a wake-up: the writer may still be
	// short of a batch tick's credits after taking these.
	c.waiting = c.n == 0
	c.mu.Unlock()
	return dst
}

// makePools gives each of slots its part of the closed loop's credits,
// which came back at the start of the schedule (the run clock's zero), and
// returns the most each slot may ever hold.
func (r *run) makePools(slots int) (peak []int) {
	weight := r.cfg.MaxWeight()
	start := shares(r.pool, slots, weight)
	peak = shares(r.limit, slots, weight)
	r.pools = make([]*credits, slots)
	for i := range r.pools {
		r.pools[i] = newCredits(start[i], peak[i], 0)
	}
	return peak
}

// creditTicker makes a slot's closed-loop ticks from its credits, in the
// goroutine that sends them (a stream's writer, an HTTP worker): no
// dispatcher, and no channel operation per request.
type creditTicker struct {
	r    *run
	pool *credits
	g    *paramGen
	// The credits taken and not yet used (their return times; the next
	// tick needs more of them than there were), the next tick if it is
	// waiting for credits, and this slot's block of tick numbers.
	times       []int64
	next        tick
	hasNext     bool
	kNext, kEnd uint64
	maxWeight   int // the heaviest call's elements
}

func newCreditTicker(r *run, pool *credits, g *paramGen, limit int) creditTicker {
	w := r.cfg.MaxWeight()
	return creditTicker{r: r, pool: pool, g: g, times: make([]int64, 0, max(limit, w)), maxWeight: w}
}

// fill appends to batch as many ticks as the credits in hand pay for, up
// to limit, and returns it. A tick's intended time is when the last of its
// credits came back. ended reports that sending ended while it waited for
// a --max-rate token.
func (c *creditTicker) fill(batch []tick, limit int) (_ []tick, ended bool) {
	r := c.r
	// (Credits for the heaviest call at least: the next tick, not drawn
	// yet, may be a batch; those it does not use wait in times.)
	need := max(limit, c.maxWeight)
	if need > len(c.times) {
		c.times = c.pool.take(c.times, need-len(c.times))
	}
	used, admitted, made := 0, 0, 0
fill:
	for made < limit {
		if !c.hasNext {
			c.next, c.hasNext = c.nextTick(), true
		}
		if r.cfg.Beyond(c.next.seq) {
			break // --requests: this slot makes no more ticks
		}
		n := r.calls[c.next.call].weight
		if len(c.times)-used < n {
			break
		}
		intended := c.times[used]
		for _, at := range c.times[used+1 : used+n] {
			intended = max(intended, at)
		}
		if r.maxRate != nil {
			// --max-rate: the first tick of a write waits for its
			// token, the others go along only if theirs is there. The
			// wait is the cap's, not the server's: the tick is
			// intended when it has its token.
			switch {
			case made > 0 && !r.maxRate.Allow():
				break fill
			case made == 0 && r.maxRate.Wait(r.sending) != nil:
				return batch, true // no token before sending ends
			}
			intended = max(intended, r.now())
		}
		used += n
		admitted += n
		c.next.intended = intended
		batch = append(batch, c.next)
		made++
		c.hasNext = false
		if r.countDone != nil && r.countLeft.Add(-1) == 0 {
			close(r.countDone) // the last tick of the count: sending can end
		}
	}
	c.times = c.times[:copy(c.times, c.times[used:])]
	if made > 0 {
		r.admit(int64(admitted))
	}
	return batch, false
}

// nextTick numbers and picks the next tick this slot makes. Tick numbers
// are taken from the run's count in blocks (the credits in hand), so the
// slots rarely touch the shared counter; the call and its params depend
// on the number alone, whichever slot sends it.
func (c *creditTicker) nextTick() tick {
	r := c.r
	if c.kNext == c.kEnd {
		n := uint64(max(1, len(c.times)))
		c.kEnd = r.closedK.Add(n) + 1
		c.kNext = c.kEnd - n
	}
	k := c.kNext
	c.kNext++
	seq := r.cfg.Shard.Seq(k)
	return tick{seq: seq, call: r.cfg.Pick(c.g.pickPCG, c.g.pickRnd, seq)}
}

// grant adds k credits at time at (a stage raised the target); each first
// cancels a retirement not yet carried out.
func (c *credits) grant(k int, at int64) {
	c.mu.Lock()
	r := min(c.retire, k)
	c.retire -= r
	if k -= r; k > 0 {
		c.pushLocked(k, at)
	}
	c.mu.Unlock()
}

// revoke takes k credits out of the pool (a stage lowered the target): idle
// ones at once, the rest as they come back.
func (c *credits) revoke(k int) {
	c.mu.Lock()
	idle := min(c.n, k)
	// The newest idle credits go: the oldest keep their earlier times.
	c.n -= idle
	c.retire += k - idle
	c.mu.Unlock()
}

// shares splits total credits over conns slots in whole messages of the
// heaviest call (weight elements): as evenly as possible, over as few slots
// as it takes for each to hold at least one message, so a slot never waits
// forever for credits it can never have. Splitting the credits themselves
// evenly would strand a part of a message on every slot (32 over 4 slots in
// batches of 5: 8 each, 5 usable, 20 in flight instead of 30). What is left
// over from whole messages (total mod weight) goes one credit a slot from
// the first: a mix's lighter calls can use it. Below one message in all,
// the first slot gets them all.
func shares(total, conns, weight int) []int {
	s := make([]int, conns)
	if total <= 0 || conns <= 0 {
		return s
	}
	weight = max(weight, 1)
	msgs := total / weight
	if msgs == 0 {
		s[0] = total
		return s
	}
	active := min(conns, msgs)
	for i := range active {
		s[i] = msgs / active * weight
		if i < msgs%active {
			s[i] += weight
		}
	}
	for i := range total % weight {
		s[i%active]++
	}
	return s
}

// batchWarning says when closed-loop batches cannot fill the concurrency:
// every call sends batches of w, and a batch goes out only when w more
// requests may be in flight, so a concurrency that is not a multiple of w
// keeps the remainder idle. "" when it does not apply.
func (r *run) batchWarning() string {
	w := r.cfg.MaxWeight()
	if r.limit <= 0 || w <= 1 || r.limit%w == 0 {
		return ""
	}
	for _, c := range r.calls {
		if c.weight != w {
			return "" // a lighter call can use the remainder
		}
	}
	name := r.cfg.Name("concurrency")
	if r.limit < r.cfg.Concurrency {
		name = r.cfg.Name("max-inflight")
	}
	most := r.limit / w * w
	return fmt.Sprintf("%s %d is not a multiple of %s %d: a batch is sent only when %d more requests may be in flight, so at most %d requests (%d batches) were in flight at once",
		name, r.limit, r.cfg.batchName(), w, w, most, most/w)
}
