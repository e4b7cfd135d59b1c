package oracle

import (
	"bytes"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

// Pairing pairs the replies of a stream with its request frames by the
// pairing that pairs a batch's replies with its elements (docs/oracle.md),
// so that a reply goes to the same request, and one fault gets the same
// rule, whether the requests came as a batch or as frames of their own.
// By id first: a reply with an id to a request with that id, by the kind
// of answer it is (an error -32600 or -32700 to invalid requests first, a result to
// calls), one that request takes plainly before one that takes it only by
// a tolerance; then replies whose id is in doubt; then replies with id
// null, results before errors, to the requests only id null can answer
// before those whose id was readable. Then replies left over, by moving
// paired ones along. What is still left is settled: judged against the
// request it most likely answers, a second reply, a reply to nothing, or
// (the caller says) a late reply of an earlier exchange.
//
// The zero value is ready; Reset makes it ready for another exchange,
// keeping its memory. It is not safe for concurrent use.
type Pairing struct {
	sc      batchScratch
	replies int
	fates   []Fate
}

// Judges are the caller's judgements the pairing asks for.
type Judges struct {
	// Fits reports whether reply k answers request i correctly,
	// tolerances included, as the caller judges the pair (a frame may be
	// a batch, and the envelope counts). It is asked of the candidates
	// of each reply only, within a budget linear in the number of
	// requests and replies.
	Fits func(i, k int) bool
	// Required reports whether silence about request i breaks a rule that
	// fails a run (a warning's silence, null_id_unanswered, does not make
	// a request required).
	// It is asked once per request at most.
	Required func(i int) bool
	// Late, when set, reports whether reply k, which no request takes as
	// a correct answer, is a late reply of an earlier exchange (one of
	// its ids, or id null while it still lacked such replies), to be set
	// aside. It is asked once per such reply at most.
	Late func(k int) bool
	// Owns, when set, reports whether reply k, an array, is request i's,
	// a batch, by what it shows (an id of i's, i's length): of several
	// batches no array answers correctly, the one an array shows it is
	// for takes it.
	Owns func(i, k int) bool
}

// FateKind is what the pairing made of a reply.
type FateKind uint8

// The fates of a reply.
const (
	Stray  FateKind = iota // it answers no request of the exchange
	Answer                 // it answers request Of correctly
	Blamed                 // it answers no request correctly; judged against request Of, the one it most likely answers
	Second                 // a second reply to request Of
	Late                   // a late reply of an earlier exchange (Judges.Late)
)

// Fate is where the pairing put a reply.
type Fate struct {
	Kind FateKind
	Of   int // the request, for Answer, Blamed and Second; else -1
}

// Reset forgets the requests and replies added.
func (p *Pairing) Reset() {
	clear(p.sc.reqs)
	clear(p.sc.pend)
	p.sc.reqs, p.sc.pend, p.replies = p.sc.reqs[:0], p.sc.pend[:0], 0
}

// AddRequest adds the next request frame, of the given class (from
// ClassifyRequest, or as the caller judges it). takesArray says an array
// may answer it: a batch, or a frame the caller judges as one when it is
// answered as one.
func (p *Pairing) AddRequest(frame []byte, class RequestClass, takesArray bool) {
	s := &p.sc
	if n := len(s.reqs); n > 0 && s.reqs[n-1].class == class && s.reqs[n-1].takesArray == takesArray && bytes.Equal(s.reqs[n-1].raw, frame) {
		// A flood repeats one frame up to a thousand times.
		s.reqs = append(s.reqs, s.reqs[n-1])
		return
	}
	s.reqs = append(s.reqs, request{})
	q := &s.reqs[len(s.reqs)-1]
	q.init(frame, 0, len(frame))
	q.class, q.takesArray = class, takesArray || class == Batch || class == EmptyBatch
}

// AddReply adds the next reply, scanned into m.
func (p *Pairing) AddReply(m *wire.Message) {
	p.sc.addReply(m, p.replies, true)
	p.replies++
}

// Pair pairs the replies added with the requests added and returns the
// fate of each reply, by number; a request gets at most one Answer or
// Blamed reply. The slice is valid until the next Pair or Reset. A caller
// may pair again as more replies come.
func (p *Pairing) Pair(j Judges) []Fate { return p.pair(j, false) }

// Fitting is Pair stopped before what is left over is settled: each reply
// is an Answer, paired with a request it answers correctly, or a Stray.
// It tells whether the replies so far answer the requests that must be
// answered, while more replies may come (a settled reply may be moved
// again by a later one); Judges.Late is not asked.
func (p *Pairing) Fitting(j Judges) []Fate { return p.pair(j, true) }

func (p *Pairing) pair(j Judges, fitOnly bool) []Fate {
	for i := range p.sc.reqs {
		q := &p.sc.reqs[i]
		q.matched, q.blamed, q.by, q.stamp = false, false, 0, 0
	}
	for k := range p.sc.pend {
		p.sc.pend[k].unpair()
	}
	p.fates = p.fates[:0]
	for range p.replies {
		p.fates = append(p.fates, Fate{Kind: Stray, Of: -1})
	}
	b := newBatchMatch(&p.sc, p.replies, &j, p.fates)
	b.fitOnly = fitOnly
	b.pairReplies()
	for i := range b.reqs {
		if q := &b.reqs[i]; q.matched {
			kind := Answer
			if q.blamed {
				kind = Blamed
			}
			p.fates[p.sc.pend[q.by].k] = Fate{Kind: kind, Of: i}
		}
	}
	return p.fates
}

// StrayRule names reply m, a Stray of the last Pair: a reply to a
// notification when the exchange had one, unexpected_null_id when m has
// id null and every request had a readable id, else unknown_id. The text
// says why, to follow a description of the reply.
func (p *Pairing) StrayRule(m *wire.Message) (check.Rule, string) {
	return strayRule(m, p.sc.match.notifs, p.sc.match.allIDs, false)
}
