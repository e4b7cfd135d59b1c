package engine

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/wire"
)

// The id-reuse probe (a call with IDReuse) sends a request whose id is one
// still in flight on the same connection, to see what the server does with
// it: answer both, answer once, or refuse the second. It is not a request
// of the load: it is not registered, not counted in flight, and its replies
// are never judged against the generator (a second reply for the id is not
// a duplicate_reply). Its outcomes get their own section in the result.

// maxOpenProbes bounds the probes a connection remembers.
const maxOpenProbes = 10000

// idReuse is the probes of one connection, shared by its writer and reader.
type idReuse struct {
	any  atomic.Bool // a probe was ever sent here: only then do replies look
	mu   sync.Mutex
	open map[uint64]*probe // by the id reused
}

// probe is what the replies for one reused id were.
type probe struct {
	replies int
	codes   []int64 // error codes among them
}

// reuseCounts are the run's probe totals.
type reuseCounts struct {
	sent, noTarget atomic.Int64
	mu             sync.Mutex // guards settled
	settled        []probe
}

// encodeProbe encodes probe call c with the id of the request sent last on
// this connection, if it is still in flight; it returns nil when there is
// none to reuse (counted).
func (r *run) encodeProbe(reuse *idReuse, last uint64, inFlight bool, c *callState, params, msg []byte) []byte {
	if !inFlight || last == 0 {
		r.reuse.noTarget.Add(1)
		return msg[:0]
	}
	reuse.mu.Lock()
	defer reuse.mu.Unlock()
	if reuse.open == nil {
		reuse.open = map[uint64]*probe{}
	}
	if _, dup := reuse.open[last]; dup || len(reuse.open) >= maxOpenProbes {
		r.reuse.noTarget.Add(1)
		return msg[:0]
	}
	reuse.open[last] = &probe{}
	reuse.any.Store(true)
	r.reuse.sent.Add(1)
	return wire.AppendRequest(msg[:0], last, r.cfg.IDFormat, c.method, params)
}

// claim reports whether a reply for id belongs to a probe: any reply after
// the first for a probed id, and a -32600 (the server refusing the reused
// id) at any time. The first other reply answers the original request.
func (reuse *idReuse) claim(m *wire.Message, tb *pending.Table) bool {
	if reuse == nil || !reuse.any.Load() {
		return false
	}
	n, _, ok := wire.ParseCounterID(m.ID)
	if !ok {
		return false
	}
	first := tb.Pending(n)
	reuse.mu.Lock()
	defer reuse.mu.Unlock()
	p := reuse.open[n]
	if p == nil {
		return false
	}
	refused := m.Kind == wire.KindError && m.HasCode && m.Code == wire.CodeInvalidRequest
	if first && !refused {
		p.replies++ // the original's reply: counted, and judged as usual
		return false
	}
	p.replies++
	if m.Kind == wire.KindError && m.HasCode {
		p.codes = append(p.codes, m.Code)
	}
	return true
}

// settle hands a connection's probes to the run's totals.
func (r *run) settleProbes(reuse *idReuse) {
	if reuse == nil {
		return
	}
	reuse.mu.Lock()
	defer reuse.mu.Unlock()
	r.reuse.mu.Lock()
	defer r.reuse.mu.Unlock()
	for _, p := range reuse.open {
		r.reuse.settled = append(r.reuse.settled, *p)
	}
	reuse.open = nil
}

// reuseReport summarises the probes for the result (nil without any).
func (r *run) reuseReport() *stats.IDReuseReport {
	sent := r.reuse.sent.Load()
	if sent == 0 && r.reuse.noTarget.Load() == 0 {
		return nil
	}
	rep := &stats.IDReuseReport{Probes: sent, NoIDInFlight: r.reuse.noTarget.Load(), ErrorCodes: map[string]int64{}}
	r.reuse.mu.Lock()
	defer r.reuse.mu.Unlock()
	for _, p := range r.reuse.settled {
		switch {
		case p.replies >= 2:
			rep.BothAnswered++
		case p.replies == 1:
			rep.OneReply++
		default:
			rep.NoReply++
		}
		for _, c := range p.codes {
			rep.ErrorCodes[strconv.FormatInt(c, 10)]++
		}
	}
	return rep
}
