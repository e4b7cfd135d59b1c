package fuzz

import (
	"context"

	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/wire"
)

// A verdict is a guess (verdict.guess) when the replies leave open which
// frame a reply answers: it has no id (or it is an array), and another
// frame could as well have had it, with another verdict for the frame
// named. Confirmation settles a guess by sending that frame alone
// (candidate.settleGuess); a guess never becomes a finding as it is.

// inDoubt reports whether the verdict about frame i and reply k (-1: no
// reply) rests on a guess the replies leave open: which of several frames
// without an id a reply answers (verdict.guess).
func (p *pairs) inDoubt(i, k int, assigned [][]int) bool {
	switch {
	case k < 0:
		return p.silenceInDoubt(i, assigned)
	case len(assigned[i]) > 0 && assigned[i][0] != k:
		return p.secondInDoubt(i, k) || p.secondInDoubt(i, assigned[i][0])
	}
	return p.blameInDoubt(i, k, assigned)
}

// keyedFrame reports whether a reply to fi carries an id that tells it
// is fi's: fi has a readable id, and not null ({"id":null,"method":[]}
// and a call with id null, answered one -32700 with id null: it is
// either's).
func keyedFrame(fi *frameInfo) bool {
	return fi.id != nil && fi.readable && string(fi.id) != "null"
}

// takesArray reports whether an array answers frame i (not [], whose
// answer is a single error).
func (p *pairs) takesArray(i int) bool {
	return p.infos[i].class == oracle.Batch || p.infos[i].asBatch
}

// silenceInDoubt reports whether frame i, without a readable id and left
// without a reply, may have had one that went to another frame: a reply
// without an id of the kind i takes (an array for a batch), on a frame
// that may go without it, or that it answers wrongly, or that would
// answer i correctly ([], a notification a server may refuse and
// {"method":0}, answered -32600 and -32700: the -32600 went to
// {"method":0}, the -32700 to the notification, and [] was called
// unanswered).
func (p *pairs) silenceInDoubt(i int, assigned [][]int) bool {
	if keyedFrame(&p.infos[i]) {
		return false
	}
	tries := 0
	for i2 := range p.infos {
		if i2 == i || len(assigned[i2]) == 0 {
			continue
		}
		k2 := assigned[i2][0]
		if keyedScan(p.scan(k2)) || (p.kind(k2) == wire.KindBatch) != p.takesArray(i) {
			continue
		}
		if tries++; tries > maxFitFrames {
			return true
		}
		if !p.req(i2) || !p.fits(i2, k2) || p.fits(i, k2) {
			return true
		}
	}
	return false
}

// secondInDoubt reports whether reply k, one of two replies to frame i,
// may be another frame's: it has no id, and another frame without a
// readable id takes its kind ({"id":null,"id":0} and {"method":0} answered
// -32600 with id 0 and -32700 with id null: the -32700 went to the first,
// whose id two members make unreadable, and the -32600 was called its
// second reply).
func (p *pairs) secondInDoubt(i, k int) bool {
	if sc := p.scan(k); keyedScan(sc) {
		// An id another frame has too may be that frame's (jrpc2: a
		// call with id "" and an invalid request with id "", answered
		// -32600 and -32700 with id "", and a -32700 with id null a
		// tolerance let the second take: the -32700 with id "" was
		// called the call's second reply).
		for i2 := range p.infos {
			if fi := &p.infos[i2]; i2 != i && keyedFrame(fi) && wire.EchoesID(fi.id, sc.id) {
				return true
			}
		}
		return false
	}
	array := p.kind(k) == wire.KindBatch
	for i2 := range p.infos {
		fi := &p.infos[i2]
		if i2 != i && fi.needs && !keyedFrame(fi) && p.takesArray(i2) == array {
			return true
		}
	}
	return false
}

// blameInDoubt reports whether reply k, which answers frame i wrongly, may
// as well be another frame's: it has no id, and another frame that
// requires a reply and has no readable id either has none, or has one
// without an id the two frames could as well have swapped
// (swapInDoubt). Then which frame the server answered wrongly is not known
// ([] and {"jsonrpc":false,"method":"echo"}, both owed -32600 with id
// null, answered -32600 and -32700: jrpc2's -32700 is the second's).
func (p *pairs) blameInDoubt(i, k int, assigned [][]int) bool {
	if p.kind(k) == wire.KindBatch {
		return p.arrayInDoubt(i, k, assigned)
	}
	if p.fits(i, k) {
		return false
	}
	if sc := p.scan(k); keyedScan(sc) {
		return p.sharedIDInDoubt(i, k, sc.id, assigned)
	}
	tries := 0
	for i2 := range p.infos {
		fi := &p.infos[i2]
		if i2 == i || keyedFrame(fi) {
			continue
		}
		if len(assigned[i2]) == 0 {
			// A frame the spec owes a reply may have had this one,
			// though the oracle lets it go without ({"id":null,
			// "method":[]} and a call with id null, answered one -32700
			// with id null: either's); one that needs none, if it
			// answers that frame correctly.
			if fi.needs || p.fits(i2, k) {
				return true
			}
			continue
		}
		// (A frame that may go without a reply and got one, without an
		// id, could as well have had the other: {"error":0}, which
		// reads as a response, and a notification with scalar params,
		// answered -32700 and -32600 by jrpc2, had the -32700 judged
		// against the notification.)
		if tries++; tries > maxFitFrames {
			return true // (a doubt not looked into is a doubt)
		}
		if k2 := assigned[i2][0]; !keyedScan(p.scan(k2)) && p.swapInDoubt(i, k, i2, k2) {
			return true
		}
	}
	return false
}

// sharedIDInDoubt is blameInDoubt for a reply k with an id: it may be
// another frame's that has the same id, and that the two frames could as
// well have swapped (mcp-go serves concurrently: a tools/list with id 3
// and an invalid request with id 3, answered -32602 and -32600 with id 3,
// had the -32602 judged against the invalid request).
func (p *pairs) sharedIDInDoubt(i, k int, id []byte, assigned [][]int) bool {
	tries := 0
	for i2 := range p.infos {
		fi := &p.infos[i2]
		if i2 == i || !fi.needs || fi.id == nil || !fi.readable || !wire.EchoesID(fi.id, id) {
			continue
		}
		if len(assigned[i2]) == 0 {
			return true
		}
		if tries++; tries > maxFitFrames {
			return true
		}
		if p.swapInDoubt(i, k, i2, assigned[i2][0]) {
			return true
		}
	}
	return false
}

// arrayInDoubt is blameInDoubt for an array k judged against batch i: it
// may be another batch's when another batch that needs a reply has none,
// or an array the two batches could as well have swapped (swapInDoubt: a
// concurrent server sends the arrays of [0,0] and [{"id":0,"id":0},0] in
// any order, and neither answers its batch correctly).
func (p *pairs) arrayInDoubt(i, k int, assigned [][]int) bool {
	if p.fits(i, k) {
		return false
	}
	for i2 := range p.infos {
		fi := &p.infos[i2]
		if i2 == i || !fi.needs || !p.takesArray(i2) {
			continue
		}
		if len(assigned[i2]) == 0 {
			return true
		}
		k2 := assigned[i2][0]
		if p.kind(k2) != wire.KindBatch {
			// A batch that took a single error (a refusal of the whole)
			// may as well have had the array ([{"method":"l","params":
			// null}], [{"method":"_","params":null},0] and }, answered
			// -32700 and [-32700] by jrpc2: the -32700 refused the
			// second batch, and the array was the first's).
			if p.scan(k).batchLen <= p.batchLen(i2) && !p.owns(i, k) {
				return true
			}
			continue
		}
		// Either array's verdict stands on the pairing alone: the swap
		// is in doubt even where it leaves i2 worse off ([{"method":
		// "\xbf"},[]] and [0,null], answered [-32700] and [-32700,
		// -32600]: the longer array answers the first batch well, and
		// the shorter was called the second's, an element short).
		if !p.tied(i, k, i2, k2) && (p.fits(i, k2) || p.judge(i, k2) != p.judge(i, k)) {
			return true
		}
	}
	return false
}

// tied reports whether what the arrays show (pairs.owns: ids, lengths)
// says whose they are: array k is batch i's and not i2's, or k2 is i2's
// and not i's.
func (p *pairs) tied(i, k, i2, k2 int) bool {
	return p.owns(i, k) && !p.owns(i2, k) || p.owns(i2, k2) && !p.owns(i, k2)
}

// swapInDoubt reports whether frames i and i2 could as well have each
// other's replies k and k2, and frame i's verdict would then differ: k2
// answers i correctly (the blame moves to i2), or it answers i otherwise
// wrongly while i2 is no worse off with k.
func (p *pairs) swapInDoubt(i, k, i2, k2 int) bool {
	if p.fits(i, k2) {
		return true
	}
	return p.judge(i, k2) != p.judge(i, k) && (p.fits(i2, k) || !p.fits(i2, k2))
}

// settleGuess settles a verdict whose reply may be another frame's
// (verdict.guess): the frame it was judged against, sent alone, must
// break the rule the same way; that frame is then the input. Otherwise
// the finding is dropped: which frame the server answered wrongly is not
// known, and a finding must not name the wrong one. (The frame that was
// answered wrongly breaks the rule alone too, and is found so.)
func (cand *candidate) settleGuess(ctx context.Context) bool {
	if !cand.v.guess || len(cand.in.Frames) < 2 || cand.v.in == nil {
		return true
	}
	alone := mutate.Case{Frames: [][]byte{cand.v.in}}
	for range confirmTries {
		if cand.check(ctx, alone) {
			cand.in = alone
			return true
		}
		if ctx.Err() != nil {
			return false
		}
	}
	return false
}
