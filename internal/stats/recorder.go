// Package stats turns what the load generator observes into numbers: each
// goroutine that sends or receives owns a Recorder; recorders hand their
// samples to one Aggregator, which keeps HDR histograms and counters per
// method and overall, a per-interval time series, and builds the Result that
// renderers print and write.
//
// The measurement path takes no lock per request: a Recorder appends a
// fixed-size sample to a buffer only its owner writes, and the buffer is
// merged into the Aggregator (under its mutex) once per buffer-full or per
// interval. An interval flush swaps the owner's buffer out from under it; a
// sequence counter the owner bumps around each append (odd = writing) tells
// the collector when the old buffer is no longer being written.
package stats

import (
	"runtime"
	"sync/atomic"

	"github.com/rpcload/rpcload/internal/check"
)

// Kind is what one sample counts.
type Kind uint8

// The sample kinds.
const (
	Sent           Kind = iota // a request was written; A = schedule lag (ns)
	OK                         // a success reply; A = corrected latency, B = service time (ns)
	RPCError                   // an error reply; A, B as for OK, Code = error.code
	InvalidReply               // a reply that matched its request but is neither a valid result nor a valid error; A, B as for OK
	TransportError             // the request could not be sent or its connection failed before the reply
	Timeout                    // no reply within the timeout
	Late                       // a reply after the timeout
	Leaked                     // still pending when the run ended
	Dropped                    // an open-loop tick not sent because the in-flight cap was reached
	Violation                  // a broken rule; Rule says which
	NotifySent                 // a notification was written (no reply expected)
	MessageSent                // a message was written: one request, one notification, or one batch
	ServerMessage              // a request or notification sent by the server
	BatchSent                  // a batch was written (also counted as a MessageSent)
	numKinds
)

// Sample is one observation. Method is an index into the run's method list;
// the index equal to the list's length means "no method known" (a reply whose
// id matched nothing).
type Sample struct {
	A, B   int64
	Code   int64
	Method uint16
	Kind   Kind
	Rule   check.Rule
	// Warmup marks a sample of a request scheduled during the run's
	// warm-up: it is counted apart (Result.Warmup) and in the time
	// series, not in the run's figures. It fits in the struct's padding.
	Warmup bool
}

const batchSize = 512

type batch struct {
	n int
	s [batchSize]Sample
}

// Recorder collects the samples of one goroutine. Only its owner may call
// Record; the Aggregator reads it concurrently through the swap protocol.
type Recorder struct {
	agg *Aggregator
	seq atomic.Uint64 // odd while the owner is appending
	cur atomic.Pointer[batch]
}

// Record adds one sample. It never allocates and never blocks, except for a
// merge into the Aggregator when the owner's buffer is full.
func (r *Recorder) Record(s Sample) {
	r.seq.Add(1)
	b := r.cur.Load()
	b.s[b.n] = s
	b.n++
	if b.n == batchSize {
		r.agg.mu.Lock()
		r.agg.mergeLocked(b)
		r.agg.mu.Unlock()
		b.n = 0
	}
	r.seq.Add(1)
}

// RecordAll adds the samples of ss in order, as Record would one by one,
// but marks the buffer as being written once for all of them: a sender that
// records two or three samples per request records a whole write's worth
// with two atomic operations instead of two per sample. ss may be reused
// once it returns.
func (r *Recorder) RecordAll(ss []Sample) {
	if len(ss) == 0 {
		return
	}
	r.seq.Add(1)
	b := r.cur.Load()
	for {
		k := copy(b.s[b.n:], ss)
		b.n += k
		ss = ss[k:]
		if b.n == batchSize {
			r.agg.mu.Lock()
			r.agg.mergeLocked(b)
			r.agg.mu.Unlock()
			b.n = 0
		}
		if len(ss) == 0 {
			break
		}
	}
	r.seq.Add(1)
}

// swap takes the owner's current buffer away, replacing it with the spare,
// and waits until the owner is no longer appending to the old one. The
// caller must not hold the Aggregator's mutex: the owner may need it to
// finish a merge.
func (r *Recorder) swap(fresh *batch) *batch {
	old := r.cur.Swap(fresh)
	if s := r.seq.Load(); s&1 == 1 {
		for r.seq.Load() == s {
			runtime.Gosched()
		}
	}
	return old
}
