package engine

import (
	"sync/atomic"

	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/wire"
)

// weight is how many elements one tick carries: the batch size, or 1. The
// in-flight count and closed-loop tokens count elements, and each element
// releases its slot once (a notification when written, a request when it
// resolves).
func (r *run) weight() int { return max(r.cfg.Batch, 1) }

// connCounters are what a connection's judge needs to know about what was
// sent on it. The writer increments them, so they are atomic.
type connCounters struct {
	notified atomic.Uint64 // notifications sent
	batches  atomic.Uint64 // batches sent
}

// encodeTick registers the requests of tick t in tb and encodes its message
// (one request, one notification, or a batch array of both) into msg[:0].
// It returns the message (empty when nothing is to be sent), the ids it
// registered appended to ids, and whether any reply is expected.
func (r *run) encodeTick(tb *pending.Table, rec *stats.Recorder, cc *connCounters, msg []byte, ids []uint64, t tick) ([]byte, []uint64, bool) {
	if r.interrupted.Load() {
		// An interrupt stops sending: ticks still queued are not sent (and
		// not counted: they never became requests).
		for range r.weight() {
			r.done()
		}
		return msg[:0], ids, false
	}
	now := r.now()
	lag := now - t.intended
	n := r.weight()
	first := (t.seq-1)*uint64(n) + 1 // sequence number of the tick's first element
	requests := 0
	for k := range n {
		if !r.isNotification(first + uint64(k)) {
			requests++
		}
	}
	var id uint64
	if requests > 0 {
		e := pending.Entry{Format: r.cfg.IDFormat, Intended: t.intended, Sent: now, Deadline: now + int64(r.cfg.Timeout), Fingerprint: r.fp}
		var err error
		if r.cfg.Batch > 1 {
			id, err = tb.AddBatch(e, requests)
		} else {
			id, err = tb.Add(e)
		}
		if err != nil {
			// Tables are as large as the in-flight cap, so the cap was
			// raced past: count the tick like a dropped one.
			for range n {
				rec.Record(stats.Sample{Kind: stats.Dropped})
				r.done()
			}
			return msg[:0], ids, false
		}
	}
	msg = msg[:0]
	if r.cfg.Batch > 1 {
		msg = append(msg, '[')
		cc.batches.Add(1)
	}
	for k := range n {
		if k > 0 {
			msg = append(msg, ',')
		}
		if r.isNotification(first + uint64(k)) {
			cc.notified.Add(1)
			msg = wire.AppendNotification(msg, r.method, r.params)
			rec.Record(stats.Sample{Kind: stats.NotifySent, A: lag})
			r.done()
			continue
		}
		msg = wire.AppendRequest(msg, id, r.cfg.IDFormat, r.method, r.params)
		rec.Record(stats.Sample{Kind: stats.Sent, A: lag})
		ids = append(ids, id)
		id++
	}
	if r.cfg.Batch > 1 {
		msg = append(msg, ']')
	}
	rec.Record(stats.Sample{Kind: stats.MessageSent})
	return msg, ids, requests > 0
}

func (r *run) isNotification(seq uint64) bool {
	return r.cfg.NotifyEvery > 0 && seq%uint64(r.cfg.NotifyEvery) == 0
}
