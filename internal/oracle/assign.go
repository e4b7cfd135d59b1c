package oracle

import (
	"bytes"

	"github.com/rpcload/rpcload/internal/wire"
)

// Pairing pairs the replies of a stream with its request frames by the
// id-first passes that pair a batch's replies with its elements
// (docs/oracle.md), so that a reply goes to the same request whether the
// requests came as a batch or as frames of their own: a reply with an id
// to a request with that id, by the kind of answer it is (an error -32600
// to invalid requests first, a result to calls), one that request takes
// plainly before one that takes it only by a tolerance; then replies whose
// id is in doubt; then replies with id null, results before errors, to the
// requests only id null can answer before those whose id was readable.
// What it leaves unpaired (replies moved along, replies that answer
// nothing, late replies of an earlier input) is the caller's to settle.
//
// The zero value is ready; Reset makes it ready for another exchange,
// keeping its memory. It is not safe for concurrent use.
type Pairing struct {
	sc      batchScratch
	replies int
}

// Reset forgets the requests and replies added.
func (p *Pairing) Reset() {
	clear(p.sc.reqs)
	clear(p.sc.pend)
	p.sc.reqs, p.sc.pend, p.replies = p.sc.reqs[:0], p.sc.pend[:0], 0
}

// AddRequest adds the next request frame, of the given class (from
// ClassifyRequest, or as the caller judges it).
func (p *Pairing) AddRequest(frame []byte, class RequestClass) {
	s := &p.sc
	if n := len(s.reqs); n > 0 && s.reqs[n-1].class == class && bytes.Equal(s.reqs[n-1].raw, frame) {
		// A flood repeats one frame up to a thousand times.
		s.reqs = append(s.reqs, s.reqs[n-1])
		return
	}
	s.reqs = append(s.reqs, request{})
	q := &s.reqs[len(s.reqs)-1]
	q.init(frame, 0, len(frame))
	q.class = class
}

// AddReply adds the next reply, scanned into m. Only responses are paired;
// an array or anything else counts, so that the replies keep their
// numbers, but is left to the caller.
func (p *Pairing) AddReply(m *wire.Message) {
	p.sc.addReply(m, p.replies)
	p.replies++
}

// Pair pairs the replies added with the requests added, each request with
// at most one reply, and stores in frameOf (of one entry per reply) the
// request each reply went to, or -1. fits(i, k) reports whether reply k
// answers request i correctly, tolerances included, as the caller judges
// the pair; the pairing asks it of the candidates of each reply only, in
// the order above, within a budget linear in the number of requests and
// replies.
func (p *Pairing) Pair(fits func(i, k int) bool, frameOf []int) {
	for k := range frameOf {
		frameOf[k] = -1
	}
	// (A caller may pair again as more replies come.)
	for i := range p.sc.reqs {
		q := &p.sc.reqs[i]
		q.matched, q.by, q.stamp = false, 0, 0
	}
	for j := range p.sc.pend {
		p.sc.pend[j].unpair()
	}
	b := newBatchMatch(&p.sc, p.replies)
	b.fit = fits
	b.pairByID()
	for i := range b.reqs {
		if q := &b.reqs[i]; q.matched {
			frameOf[p.sc.pend[q.by].k] = i
		}
	}
}
