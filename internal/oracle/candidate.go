package oracle

import "github.com/rpcload/rpcload/internal/wire"

// Candidate is one request as the pairing of replies with requests ranks
// it, for callers that pair the replies of a stream with its frames: the
// order a reply looks for its request in is the one the pairing of a
// batch's replies uses (docs/oracle.md), so that a reply goes to the same
// request whether the requests came as a batch or as frames of their own.
type Candidate struct {
	id   []byte // the readable id other than null, or nil
	cat  byte
	tier int8 // nullTier, or -1
}

// NewCandidate ranks the request frame, of the given class (from
// ClassifyRequest, or as the caller judges it).
func NewCandidate(frame []byte, class RequestClass) Candidate {
	var q request
	q.init(frame, 0, len(frame))
	q.class = class
	c := Candidate{cat: category(&q), tier: int8(q.nullTier())}
	if q.keyed() {
		c.id = q.m.ID
	}
	return c
}

// Rank returns where the request stands among those the reply r looks for
// in the first passes of the pairing, lower first, and whether it is among
// them at all. A reply that carries an id looks only among the requests
// with that id (wire.EchoesID), and among those by the kind of answer it
// is (an error -32600 to invalid requests first, a result to calls); a
// reply without a readable id looks among the requests an id-null answer
// may go to, those that can only be answered with id null first. Pairings
// that take a tolerance (a repeated "id" member, an answer the spec merely
// allows) come after these passes.
func (c *Candidate) Rank(r *wire.Message) (rank int, ok bool) {
	pos := 0
	for k, cat := range categoryOrder(r) {
		if cat == c.cat {
			pos = k
			break
		}
	}
	if r.IDKind == wire.IDNumber || r.IDKind == wire.IDString {
		if c.id == nil || !wire.EchoesID(c.id, r.ID) {
			return 0, false
		}
		return pos, true
	}
	if c.tier < 0 {
		return 0, false
	}
	return int(c.tier)*numCategories + pos, true
}
