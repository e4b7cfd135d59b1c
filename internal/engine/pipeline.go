package engine

import (
	"fmt"
	"time"

	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
)

// MaxPipeline bounds Config.Pipeline: each request written ahead holds a
// pending entry and its part of the connection's write buffer.
const MaxPipeline = 1024

// pipelined is one POST written on a pipelined connection whose response
// has not been read yet.
type pipelined struct {
	ids         []uint64 // its requests (none: only notifications)
	expectReply bool
	sent        int64 // run clock: when it was written; its reply is due --timeout later
}

// pipe is one HTTP/1.1 worker with --pipeline N: it writes up to N POSTs on
// its connection before reading their responses, which HTTP/1.1 sends in
// the order of the requests. The POSTs in flight are a ring, oldest first.
type pipe struct {
	d       *httpDriver
	p       *poster
	j       *judge
	tb      *pending.Table
	q       []pipelined
	head, n int
	reply   []byte
}

// workPipelined is work with --pipeline N > 1 (HTTP/1.1 only): as many
// ticks as are waiting (up to N in flight) are encoded and written in one
// write, then the oldest response is read; it waits for a tick only when
// nothing is in flight. A connection that breaks, or that the server closes
// with POSTs still unanswered, takes them with it: the first is counted as
// its own error says, the others as transport errors (as timeouts when the
// first timed out: none of them can be answered before it).
func (d *httpDriver) workPipelined() {
	r := d.r
	depth := r.cfg.Pipeline
	tb := pending.NewAt(depth*r.cfg.MaxWeight(), r.cfg.Shard.IDBase())
	r.watchTable(tb)
	defer r.removeTable(tb)
	var counters connCounters
	j := judge{r: r, rec: r.agg.NewRecorder(), sent: &counters}
	defer j.finish()
	pp := &pipe{d: d, p: &poster{d: d}, j: &j, tb: tb, q: make([]pipelined, depth), reply: make([]byte, 0, 4096)}
	for i := range pp.q {
		pp.q[i].ids = make([]uint64, 0, r.cfg.MaxWeight())
	}
	defer pp.p.close()
	body := make([]byte, 0, 1024)
	g := r.newParamGen()
	var o outgoing
	open := true
	for open || pp.n > 0 {
		queued := 0
		for open && pp.n+queued < depth {
			var t tick
			if t, open = pp.next(pp.n+queued == 0); !open || t.call == noTick {
				break
			}
			if r.pastCutoff() {
				r.dropLate(j.rec, nil, t)
				continue
			}
			slot := &pp.q[(pp.head+pp.n+queued)%depth]
			body, slot.ids, slot.expectReply = r.encodeTick(&o, tb, j.rec, &counters, g, nil, body, slot.ids[:0], t)
			if len(body) == 0 {
				continue
			}
			if err := pp.p.dial(); err != nil {
				d.outcome(&j, tb, slot.ids, slot.expectReply, nil, err, r.now())
				continue
			}
			pp.p.conn.Queue(body)
			queued++
		}
		if queued > 0 {
			pp.flush(queued)
		}
		if pp.n > 0 {
			pp.receive()
		}
	}
}

// noTick marks a tick that next did not get.
const noTick = ^uint16(0)

// next takes the next tick, waiting for it if wait is set; without, a tick
// whose call is noTick means none was waiting. open is false once the
// ticks channel is closed and empty.
func (pp *pipe) next(wait bool) (t tick, open bool) {
	if wait {
		t, open = <-pp.d.r.ticks
		return t, open
	}
	select {
	case t, open = <-pp.d.r.ticks:
		return t, open
	default:
		return tick{call: noTick}, true
	}
}

// deadline is when a read or write started at now (run clock) for a POST
// sent at sent gives up: --timeout after sent, or the interrupt's drain.
func (pp *pipe) deadline(sent int64) time.Time {
	r := pp.d.r
	if r.interrupted.Load() {
		return time.Now().Add(r.cfg.InterruptDrain)
	}
	return r.wallClock(sent).Add(r.cfg.Timeout)
}

// flush writes the queued POSTs (the last queued of the ring) in one write.
func (pp *pipe) flush(queued int) {
	now := pp.d.r.now()
	for k := range queued {
		pp.q[(pp.head+pp.n+k)%len(pp.q)].sent = now
	}
	pp.n += queued
	if err := pp.p.conn.Flush(pp.deadline(now)); err != nil {
		pp.lose(err, nil)
	}
}

// receive reads the oldest POST's response and settles its requests.
func (pp *pipe) receive() {
	d, r := pp.d, pp.d.r
	h := &pp.q[pp.head]
	var err error
	pp.reply, _, err = pp.p.conn.Receive(pp.reply, pp.deadline(h.sent))
	d.outcome(pp.j, pp.tb, h.ids, h.expectReply, pp.reply, err, r.now())
	pp.head = (pp.head + 1) % len(pp.q)
	pp.n--
	if (err != nil && !isStatusError(err)) || !pp.p.conn.Reusable() {
		pp.lose(err, h)
	}
}

// lose gives the connection up with the POSTs still in flight on it: they
// can never be answered. After the first (first, settled already; nil when
// a write failed and none was), each is a timeout if the first timed out
// and a transport error otherwise.
func (pp *pipe) lose(err error, first *pipelined) {
	r := pp.d.r
	kind := stats.TransportError
	if first != nil && err != nil {
		if k := r.failKind(err); k != stats.TransportError {
			kind = k
		}
	}
	lost := 0
	for pp.n > 0 {
		h := &pp.q[pp.head]
		if len(h.ids) > 0 {
			lost += r.settle(pp.tb, pp.j.rec, h.ids, kind, nil, 0)
		} else {
			pp.j.rec.Record(stats.Sample{Kind: stats.TransportError}) // notifications only, as a failed POST of them
		}
		pp.head = (pp.head + 1) % len(pp.q)
		pp.n--
	}
	if kind == stats.TransportError && (lost > 0 || first == nil) {
		why := err
		if why == nil {
			why = transport.ErrConnClosed
		}
		r.noteTransportError(fmt.Errorf("%d pipelined requests lost with their connection: %w", lost, why))
	}
	pp.p.close()
}
