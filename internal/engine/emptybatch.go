package engine

import (
	"context"
	"errors"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// A run that sends batches first sends one empty batch, [], which JSON-RPC
// 2.0 says must be answered by a single -32600 error object with id null
// (not by an empty array, and not by silence). This is the rule
// empty_batch_reply_wrong; the probe is not a request and is not counted.

var emptyBatch = []byte("[]")

// emptyBatchVerdict records the probe's outcome: reply is what came back
// (nil when nothing did, with why saying what happened).
func (r *run) emptyBatchVerdict(reply []byte, why string) {
	var m wire.Message
	if reply != nil {
		wire.Scan(reply, &m)
		env := check.Envelope(&m)
		if m.Kind == wire.KindError && m.HasCode && m.Code == wire.CodeInvalidRequest && m.IDKind == wire.IDNull && env == 0 {
			return
		}
		why = "the reply to [] is not one -32600 error object with id null"
		if env != 0 {
			// A broken envelope is an invalid reply here too.
			why += " in a valid envelope (" + m.Problems.String() + ")"
		}
	}
	rec := r.agg.NewRecorder()
	rec.Record(stats.Sample{Kind: stats.Violation, Rule: check.EmptyBatchReplyWrong, Method: r.unmatched})
	r.agg.KeepSample(check.EmptyBatchReplyWrong, int(r.unmatched), reply, why)
}

// probeEmptyBatch sends [] on a stream whose reader is running and judges
// the first reply that could answer it: an array, or a reply with id null.
func (s *session) probeEmptyBatch() {
	w := &ctlWait{reply: make(chan []byte, 1)}
	s.empty.Store(w)
	s.enqueue(emptyBatch)
	t := time.NewTimer(s.r.cfg.Timeout)
	defer t.Stop()
	select {
	case rep := <-w.reply:
		s.r.emptyBatchVerdict(rep, "")
	case <-t.C:
		if s.empty.CompareAndSwap(w, nil) {
			s.r.emptyBatchVerdict(nil, "no reply to [] within --timeout")
		} else {
			s.r.emptyBatchVerdict(<-w.reply, "")
		}
	case <-s.ends:
		s.r.emptyBatchVerdict(nil, "the connection ended after []")
	}
}

// emptyBatchReply hands a frame that may answer the empty-batch probe to
// its waiter, and reports whether it took it.
func (s *session) emptyBatchReply(m *wire.Message, frame []byte) bool {
	w := s.empty.Load()
	if w == nil {
		return false
	}
	answers := m.Kind == wire.KindBatch || ((m.Kind == wire.KindError || m.Kind == wire.KindResult) && m.IDKind == wire.IDNull)
	if !answers || !s.empty.CompareAndSwap(w, nil) {
		return false
	}
	w.reply <- append([]byte(nil), frame...)
	return true
}

// probeEmptyBatchHTTP POSTs [] on a connection of its own.
func (d *httpDriver) probeEmptyBatchHTTP(ctx context.Context) {
	r := d.r
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	c, err := transport.DialH1(ctx, d.uncounted())
	if err != nil {
		r.emptyBatchVerdict(nil, "could not connect to send []: "+err.Error())
		return
	}
	defer c.Close()
	body, _, err := c.Post(emptyBatch, nil, time.Now().Add(r.cfg.Timeout))
	var se *transport.StatusError
	if err != nil && !errors.As(err, &se) {
		r.emptyBatchVerdict(nil, "no reply to []: "+err.Error())
		return
	}
	if len(body) == 0 {
		r.emptyBatchVerdict(nil, "an empty body in reply to []")
		return
	}
	r.emptyBatchVerdict(body, "")
}
