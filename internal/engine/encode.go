package engine

import (
	"hash/maphash"
	"sync/atomic"

	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/wire"
)

// connCounters are what a connection's judge needs to know about what was
// sent on it. The writer increments them, so they are atomic.
type connCounters struct {
	notified atomic.Uint64 // notifications sent
	batches  atomic.Uint64 // batches sent
}

// encodeTick registers the requests of tick t in tb and encodes its message
// (one request, one notification, or a batch array of both) into msg[:0].
// It returns the message (empty when nothing is to be sent), the ids it
// registered appended to ids, and whether any reply is expected. The weight
// of a tick (its call's batch size, or 1) is what the dispatcher counted in
// flight; every element releases its slot once (a notification when
// written, a request when it resolves).
func (r *run) encodeTick(tb *pending.Table, rec *stats.Recorder, cc *connCounters, g *paramGen, msg []byte, ids []uint64, t tick) ([]byte, []uint64, bool) {
	return r.encodeTickOn(tb, nil, rec, cc, g, msg, ids, t)
}

// encodeTickOn is encodeTick on a connection that can carry id-reuse probes.
func (r *run) encodeTickOn(tb *pending.Table, reuse *idReuse, rec *stats.Recorder, cc *connCounters, g *paramGen, msg []byte, ids []uint64, t tick) ([]byte, []uint64, bool) {
	c := &r.calls[t.call]
	n := c.weight
	if r.interrupted.Load() {
		// An interrupt stops sending: ticks still queued are not sent (and
		// not counted: they never became requests).
		for range n {
			r.done()
		}
		return msg[:0], ids, false
	}
	params, ok, err := r.callParams(g, c, t.seq)
	if !ok {
		if err != nil {
			r.noteTransportError(err)
		}
		// The call's data ran out (or could not be made valid for the
		// profile): the run stops sending; this tick is not sent.
		r.endSending()
		for range n {
			r.done()
		}
		return msg[:0], ids, false
	}
	if c.IDReuse {
		r.done() // a probe is not a request of the load
		last, inFlight := tb.Last()
		return r.encodeProbe(reuse, last, inFlight, c, params, msg), ids, false
	}
	now := r.now()
	g.lastSent = now
	lag := now - t.intended
	first := (t.seq-1)*uint64(n) + 1 // element sequence number of the tick's first element (one call, uniform weight)
	requests := 0
	for k := range n {
		if !r.isNotification(c, first+uint64(k)) {
			requests++
		}
	}
	var id uint64
	if requests > 0 {
		e := pending.Entry{Format: r.cfg.IDFormat, Method: t.call, Class: c.class, Intended: t.intended, Sent: now, Deadline: now + int64(c.Timeout)}
		if c.Expect.ResultEqualsParams {
			e.Fingerprint = canonicalHash(params)
		}
		if n > 1 {
			id, err = tb.AddBatch(e, requests)
		} else {
			id, err = tb.Add(e)
		}
		if err != nil {
			// Tables are as large as the in-flight cap, so the cap was
			// raced past: count the tick like a dropped one.
			for range n {
				rec.Record(stats.Sample{Kind: stats.Dropped, Method: t.call})
				r.done()
			}
			return msg[:0], ids, false
		}
	}
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
		if r.isNotification(c, first+uint64(k)) {
			cc.notified.Add(1)
			msg = wire.AppendNotification(msg, c.method, params)
			rec.Record(stats.Sample{Kind: stats.NotifySent, Method: t.call, A: lag})
			r.done()
			continue
		}
		msg = wire.AppendRequest(msg, id, r.cfg.IDFormat, c.method, params)
		rec.Record(stats.Sample{Kind: stats.Sent, Method: t.call, A: lag})
		ids = append(ids, id)
		id++
	}
	if n > 1 {
		msg = append(msg, ']')
	}
	rec.Record(stats.Sample{Kind: stats.MessageSent, Method: t.call})
	return msg, ids, requests > 0
}

// isNotification reports whether the element with sequence number seq of
// call c is sent as a notification: every element of a notify call, or
// every --notify-every'th element of the flags' one call.
func (r *run) isNotification(c *callState, seq uint64) bool {
	return c.Notify || (r.cfg.NotifyEvery > 0 && seq%uint64(r.cfg.NotifyEvery) == 0)
}

var canonSeed = maphash.MakeSeed()
