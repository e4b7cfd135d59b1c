package engine

import (
	"sync/atomic"

	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/wire"
	"github.com/rpcload/rpcload/internal/workload"
)

// connCounters are what a connection's judge needs to know about what was
// sent on it. The writer increments them, so they are atomic.
type connCounters struct {
	notified atomic.Uint64 // notifications sent
	batches  atomic.Uint64 // batches sent
}

// outgoing is what a writer has encoded for its next write and not yet
// registered: the pending entries of its requests, staged in their table's
// slots with consecutive ids (the writer is its table's only adder, so it
// knows them before it registers them), and per message what to record once
// the send time is known. The send time is read once per write, after the
// messages are encoded and right before their entries are registered and
// the write system call: every frame of one write leaves at that moment.
type outgoing struct {
	tb      *pending.Table
	st      pending.Stage
	msgs    []outMessage
	release int // elements that end at the write: notifications, ticks not sent
	// samples stages what commit records, recordChunk at a time: recorded
	// together they cost one mark of the recorder's buffer, not one each,
	// and the stage stays small whatever the size of the write.
	samples []stats.Sample
}

// recordChunk is how many samples commit hands the recorder at once.
const recordChunk = 64

// outMessage is one message of a write, for the samples commit records.
type outMessage struct {
	intended int64
	call     uint16
	requests uint32 // elements registered in the table
	notes    uint32 // elements sent as notifications
}

// begin starts a write on tb of at most requests requests.
func (o *outgoing) begin(tb *pending.Table, requests int) {
	o.tb = tb
	tb.Open(&o.st, requests)
	o.msgs, o.release = o.msgs[:0], 0
}

// ids returns the first id of the write's requests and how many there are
// (ids first .. first+n-1).
func (o *outgoing) ids() (first uint64, n int) { return o.st.First(), o.st.Len() }

// encodeTick encodes tick t alone and registers its requests in tb with the
// send time read now, using o for the bookkeeping: one message per write
// (HTTP, the dry run). It returns the message (empty when nothing is to be
// sent), the ids it registered appended to ids, and whether any reply is
// expected.
func (r *run) encodeTick(o *outgoing, tb *pending.Table, rec *stats.Recorder, cc *connCounters, g *paramGen, pool *credits, msg []byte, ids []uint64, t tick) ([]byte, []uint64, bool) {
	o.begin(tb, r.calls[t.call].weight)
	msg = r.prepare(o, nil, rec, cc, g, msg, t)
	r.commit(o, rec, g, pool, r.now())
	first, n := o.ids()
	for k := range n {
		ids = append(ids, first+uint64(k))
	}
	return msg, ids, n > 0
}

// prepare encodes tick t (one request, one notification, or a batch array
// of both) into msg[:0] and stages its requests in o, to be registered by
// commit. It returns the message, empty when nothing is to be sent. The
// weight of a tick (its call's batch size, or 1) is what was counted in
// flight; every element releases its slot once (a notification at commit,
// a request when it resolves).
func (r *run) prepare(o *outgoing, reuse *idReuse, rec *stats.Recorder, cc *connCounters, g *paramGen, msg []byte, t tick) []byte {
	c := &r.calls[t.call]
	n := c.weight
	if r.interrupted.Load() {
		// An interrupt stops sending: ticks still queued are not sent (and
		// not counted: they never became requests).
		o.release += n
		return msg[:0]
	}
	params, ok, err := r.callParams(g, c, t.seq)
	if !ok {
		if err != nil {
			r.noteTransportError(err)
		}
		// The call's data ran out (or could not be made valid for the
		// profile): the run stops sending; this tick is not sent.
		r.endSending()
		o.release += n
		return msg[:0]
	}
	if d := r.cfg.Divert; d != nil && d.Takes(t.seq, int(t.call)) {
		first := (t.seq-1)*uint64(n) + 1
		switch {
		case c.Raw != nil:
			g.diverted = append(g.diverted[:0], c.Raw...)
		case r.cfg.Notification(&c.Call, first):
			g.diverted = wire.AppendNotification(g.diverted[:0], c.method, params)
		default:
			g.diverted = wire.AppendRequest(g.diverted[:0], t.seq, r.cfg.IDFormat, c.method, params)
		}
		d.Send(t.seq, int(t.call), g.diverted)
		r.diverted.Add(1)
		o.release += n
		return msg[:0]
	}
	if c.IDReuse {
		o.release++ // a probe is not a request of the load
		last, inFlight := o.st.First()+uint64(o.st.Len())-1, true
		if o.st.Len() == 0 {
			// Nothing of this write yet: the last request sent before it.
			last, inFlight = o.tb.Last()
		}
		return r.encodeProbe(reuse, last, inFlight, c, params, msg)
	}
	first := (t.seq-1)*uint64(n) + 1 // element sequence number of the tick's first element (one call, uniform weight)
	requests := 0
	for k := range n {
		if !r.cfg.Notification(&c.Call, first+uint64(k)) {
			requests++
		}
	}
	if requests > o.st.Room() {
		// Tables are as large as the in-flight cap, so the cap was raced
		// past: count the tick like a dropped one.
		for range n {
			rec.Record(stats.Sample{Kind: stats.Dropped, Method: t.call, Warmup: r.warm(t.intended)})
		}
		o.release += n
		return msg[:0]
	}
	id := o.st.First() + uint64(o.st.Len())
	batch := id // the batch's first id, recorded in each of its entries
	m := outMessage{intended: t.intended, call: t.call, requests: uint32(requests)}
	msg = msg[:0]
	if n > 1 {
		msg = append(msg, '[')
		cc.batches.Add(1)
	}
	for k := range n {
		if k > 0 {
			msg = append(msg, ',')
			if !c.isStatic {
				// Each element of a batch gets params of its own, drawn on
				// from the same seeded stream.
				g.buf, _ = c.Params.Append(g.buf[:0], g.rnd, t.seq)
				params = g.buf
				if r.rewrites {
					params, _ = r.prof.Params(r.era, c.Method, g.buf)
				}
			}
		}
		if r.cfg.Notification(&c.Call, first+uint64(k)) {
			cc.notified.Add(1)
			msg = wire.AppendNotification(msg, c.method, params)
			m.notes++
			continue
		}
		// Each request's entry is filled as it is encoded, so that it keeps
		// the fingerprint of its own params, not those of the batch's first.
		e := o.st.Entry()
		e.Format, e.Method, e.Class, e.Intended = r.cfg.IDFormat, t.call, c.class, t.intended
		if c.Expect.ResultEqualsParams {
			e.Fingerprint = workload.Fingerprint(params)
		}
		if n > 1 {
			e.Batch, e.BatchLen = batch, uint32(requests)
		}
		msg = wire.AppendRequest(msg, id, r.cfg.IDFormat, c.method, params)
		id++
	}
	if n > 1 {
		msg = append(msg, ']')
	}
	o.msgs = append(o.msgs, m)
	o.release += int(m.notes)
	return msg
}

// commit registers the write's requests with send time now (deadlines
// follow from it), records what was sent, and releases what ended with the
// write (into pool, the writer's closed-loop credits, if it has one).
func (r *run) commit(o *outgoing, rec *stats.Recorder, g *paramGen, pool *credits, now int64) {
	o.tb.Commit(&o.st, now, &r.timeouts)
	if len(o.msgs) > 0 {
		g.lastSent = now
		if o.samples == nil {
			o.samples = make([]stats.Sample, 0, recordChunk)
		}
		for _, m := range o.msgs {
			lag, warm := now-m.intended, r.warm(m.intended)
			for range m.requests {
				o.stage(rec, stats.Sample{Kind: stats.Sent, Method: m.call, A: lag, Warmup: warm})
			}
			for range m.notes {
				o.stage(rec, stats.Sample{Kind: stats.NotifySent, Method: m.call, A: lag, Warmup: warm})
			}
			o.stage(rec, stats.Sample{Kind: stats.MessageSent, Method: m.call, Warmup: warm})
			if m.requests+m.notes > 1 {
				o.stage(rec, stats.Sample{Kind: stats.BatchSent, Method: m.call, Warmup: warm})
			}
		}
		rec.RecordAll(o.samples)
		o.samples = o.samples[:0]
	}
	if o.release > 0 {
		r.release(pool, o.release, now)
		o.release = 0
	}
}

// stage adds s to the samples to record, recording them when the stage is full.
func (o *outgoing) stage(rec *stats.Recorder, s stats.Sample) {
	if len(o.samples) == cap(o.samples) {
		rec.RecordAll(o.samples)
		o.samples = o.samples[:0]
	}
	o.samples = append(o.samples, s)
}
