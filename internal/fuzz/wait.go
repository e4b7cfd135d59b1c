package fuzz

import (
	"slices"
	"strconv"
	"time"

	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/wire"
)

// waitFor says when a stream exchange has its replies, once the sync reply
// shows the server read everything: when every frame that needs a reply
// has one by count, or when every call has the reply that carries its id
// (a batch holding calls: an array) and as many other replies came as
// there are required frames without such a key (a parse error, an invalid
// request, answered with id null). A server may answer in any order, so
// those may come after the sync reply too: they are waited for (how long
// is the exchange's to say, see streamConn.exchange). Frames whose silence
// the spec tolerates (id null, JSON extensions) are not waited for. When
// two frames that need a reply share an id, a reply cannot say which it
// answers: then the count of required frames ends the wait.
type waitFor struct {
	needs     int        // frames that need a reply
	required  int        // frames whose silence breaks a rule
	loose     int        // required frames no awaited key stands for
	open      int        // frames that need a reply no awaited key stands for (loose ones, and those that may stay silent)
	quiet     int        // frames that need no reply (a notification): a reply to one may come, and is no other's
	got       int        // replies that took no awaited key
	owed      []owedKeys // ids of calls (idKey), "[" for batches holding calls: replies still awaited
	many      map[string]int
	ambiguous bool
	// frames and infos let covered pair the replies so far with the
	// frames when counting cannot tell (see covered).
	frames [][]byte
	infos  []frameInfo
	// What the exchange before may still have had coming (set by the
	// exchange, see outcome.staleNull): replies that may be those count
	// for nothing here, or a late reply would end the wait of a call
	// whose own reply is on its way.
	staleNull int
	staleIDs  [][]byte
	stale     int  // replies that may be the input before's
	strict    bool // only the awaited keys end the wait (the canary's)
	// patient: replies without a key are waited for until the timeout,
	// not a grace after the sync reply (awaitNullIDs).
	patient bool
	// slowNull: how long frames with id null to methods seen answering
	// late are waited for after the sync reply (dialer.awaitSlowNull).
	slowNull time.Duration
	// linger: once complete, replies are still taken until the server
	// has been silent for the grace (worker.linger).
	linger bool
	// batches that need a reply, those holding calls (owing "["), and the
	// arrays that came
	batches, owedBatches, arrays int
	maybeLate                    int // replies the input before may still have had coming, any (outcome.staleNull)
	unkeyed                      int // replies without an id so far that answer no frame (see answer)
	// exact: required and loose count only the frames that require a
	// reply; until then they count those not asked yet too (see settle).
	exact bool
	memo  judgeMemo
	pairs *pairs // the pairs covered judged, kept for the next call
	// rawLines: the input was broken lines written as they are, each of
	// which may get a reply (needs, loose and open count them): they are
	// waited for a grace after the sync reply, and any still missing may
	// come in a later exchange, where they are set aside.
	rawLines bool
}

// settle makes the counts exact, asking the oracle which frames not asked
// yet require a reply. It is called only when the counts would keep an
// exchange waiting.
func (w *waitFor) settle() {
	if w.exact || w.infos == nil {
		return
	}
	w.exact = true
	w.required, w.loose = 0, 0
	for i := range w.infos {
		fi := &w.infos[i]
		if !fi.needs {
			continue
		}
		if !requiredAt(w.frames, w.infos, i, &w.memo) {
			continue
		}
		w.required++
		keyed := fi.class == oracle.Batch || fi.id != nil && fi.readable
		if !(fi.owed && keyed) {
			w.loose++
		}
	}
}

// owedKeys counts the replies still awaited that carry key. An input has a
// few keys as a rule, so a slice searched in order serves them better than
// maps made for every input; past manyKeys keys they move to a map.
type owedKeys struct {
	key string
	n   int
}

const manyKeys = 16

func newWaitFor(frames [][]byte, infos []frameInfo) waitFor {
	w := waitFor{frames: frames, infos: infos}
	var ids []string // keys of readable ids, to find repeats
	var seen map[string]bool
	w.exact = true
	for _, fi := range infos {
		if !fi.needs {
			w.quiet++
			continue
		}
		w.needs++
		if fi.required || !fi.reqDone {
			w.required++ // (an upper bound until exact)
		}
		w.exact = w.exact && fi.reqDone
		key := ""
		switch {
		case fi.class == oracle.Batch:
			key = "["
		case fi.id != nil && fi.readable:
			key = idKey(fi.id)
		}
		if key != "" && key != "[" {
			switch {
			case seen != nil:
				w.ambiguous = w.ambiguous || seen[key]
				seen[key] = true
			case slices.Contains(ids, key):
				w.ambiguous = true
			default:
				if ids = append(ids, key); len(ids) > manyKeys {
					seen = make(map[string]bool, 2*len(ids))
					for _, k := range ids {
						seen[k] = true
					}
				}
			}
		}
		if fi.class == oracle.Batch {
			w.batches++
			if fi.owed {
				w.owedBatches++
			}
		}
		switch {
		case fi.owed && key != "":
			w.owe(key)
		case fi.required || !fi.reqDone:
			w.loose++
			w.open++
		default:
			w.open++
		}
	}
	return w
}

// owe adds one awaited reply carrying key.
func (w *waitFor) owe(key string) {
	if w.many != nil {
		w.many[key]++
		return
	}
	for i := range w.owed {
		if w.owed[i].key == key {
			w.owed[i].n++
			return
		}
	}
	if w.owed = append(w.owed, owedKeys{key: key, n: 1}); len(w.owed) > manyKeys {
		w.many = make(map[string]int, 2*len(w.owed))
		for _, o := range w.owed {
			w.many[o.key] = o.n
		}
		w.owed = nil
	}
}

// answer takes a reply, the last of replies (scans are theirs), off the
// awaited ones: off its key when it carries an awaited one, else off the
// count of the others. It reports whether the reply took a key.
func (w *waitFor) answer(replies [][]byte, scans []replyScan) bool {
	r := &scans[len(scans)-1]
	if w.take(r) {
		return true
	}
	keyed := r.idKind == wire.IDNumber || r.idKind == wire.IDString
	// A reply without an id that answers a frame of the input is taken
	// as its own, though an earlier input may still have one coming.
	own := !keyed && r.kind != wire.KindBatch && (w.staleNull > 0 || w.maybeLate > 0) && w.fitsAFrame(replies, scans)
	if !keyed && !own {
		w.unkeyed++
	}
	switch {
	case !keyed && r.kind != wire.KindBatch && w.staleNull > 0 && !own:
		w.staleNull--
		w.stale++
		return false
	case keyed && len(w.staleIDs) > 0 && w.staleNull > 0 && !w.ownID(r.id):
		// (Only after an input that ended without replies it required:
		// inputs reuse ids all the time.)
		for _, id := range w.staleIDs {
			if wire.EchoesID(id, r.id) {
				w.staleNull--
				w.stale++
				return false
			}
		}
	}
	w.got++
	return false
}

// maxFitFrames bounds the frames fitsAFrame judges a reply against: past
// it, a reply without an id is set aside as late by the count alone.
const maxFitFrames = 64

// fitsAFrame reports whether the last of replies answers a frame of the
// input correctly: then it is not set aside as a late reply of an earlier
// input. (An input with invalid UTF-8 in a call is answered -32700 with
// id null; set aside, its own reply left the call waiting out the
// timeout, a hang.)
func (w *waitFor) fitsAFrame(replies [][]byte, scans []replyScan) bool {
	if len(w.frames) == 0 || len(w.frames) > maxFitFrames {
		return false
	}
	if w.pairs == nil {
		w.pairs = &pairs{frames: w.frames, infos: w.infos}
	}
	w.pairs.replies, w.pairs.scans = replies, scans
	for i := range w.frames {
		if w.pairs.fits(i, len(replies)-1) {
			return true
		}
	}
	return false
}

func (w *waitFor) take(r *replyScan) bool {
	if len(w.owed) == 0 && len(w.many) == 0 {
		return false
	}
	var key string
	switch {
	case r.kind == wire.KindBatch:
		if w.arrays++; w.arrays <= w.batches-w.owedBatches {
			// Several batches, not all holding calls: which one an array
			// answers is not known here, so the first ones count for the
			// others, and the key is taken once every batch could have
			// its array.
			return false
		}
		key = "["
	case r.idKind == wire.IDNumber || r.idKind == wire.IDString:
		key = idKey(r.id)
	default:
		return false // no key is awaited without an id
	}
	if w.many != nil {
		if w.many[key] > 0 {
			w.many[key]--
			return true
		}
		return false
	}
	for i := range w.owed {
		if w.owed[i].key == key && w.owed[i].n > 0 {
			w.owed[i].n--
			return true
		}
	}
	return false
}

// ownID reports whether id is the readable id of a frame of the input.
func (w *waitFor) ownID(id []byte) bool {
	for i := range w.infos {
		if fi := &w.infos[i]; fi.readable && fi.id != nil && wire.EchoesID(fi.id, id) {
			return true
		}
	}
	return false
}

// keysDone reports whether every awaited key has its reply.
func (w *waitFor) keysDone() bool {
	for _, o := range w.owed {
		if o.n > 0 {
			return false
		}
	}
	for _, n := range w.many {
		if n > 0 {
			return false
		}
	}
	return true
}

// done reports whether replies replies are all the exchange waits for.
func (w *waitFor) done(replies int) bool {
	replies -= w.stale
	switch {
	case w.strict:
		return w.keysDone()
	case replies >= w.needs && (w.maybeLate == 0 || replies-min(w.unkeyed, w.maybeLate) >= w.needs || w.keysDone()):
		// (Replies without an id that may be the input before's do not
		// end the wait of a call whose reply has not come.)
		return true
	case w.ambiguous:
		return replies >= w.required && w.keysDone()
	}
	return w.keysDone() && w.got >= w.loose
}

// complete reports whether the exchange has all it waits for: a reply for
// every frame that requires one. Replies without a key may answer frames
// that may stay silent, or frames that need no reply but may get one (a
// notification refused for an extra member), as well as those that must
// have one: when the input has such frames and counting cannot tell, the
// replies are paired with the frames as the judge will pair them. Frames
// that may stay silent are not waited for (a server that leaves them
// silent would cost every such input the wait): a reply of theirs that
// comes later is set aside in the next input (outcome.staleNull).
func (w *waitFor) complete(replies [][]byte, scans []replyScan) bool {
	if w.rawLines {
		return w.done(len(replies)) // (no frames to pair the replies with)
	}
	if !w.exact && !w.done(len(replies)) {
		w.settle()
	}
	switch {
	case !w.done(len(replies)):
		return false
	case w.quiet > 0 && !w.keysDone():
		// Notifications' refusals count too, and one with id null may
		// fit a call a tolerance lets take it: the calls' own replies
		// are waited for the grace (streamConn.exchange), then what came
		// is judged (a thousand refused notifications ended the wait of
		// a batch and two calls by count, before their replies came).
		return false
	case w.loose == 0:
		return true // every reply required has its key, and came
	case w.stale == 0 && w.maybeLate == 0 && w.quiet == 0 && w.open == w.loose && (w.got >= w.open || len(replies) >= w.needs):
		return true // every frame without a key requires its reply: the count tells
	}
	w.settle()
	if w.pairs == nil {
		w.pairs = &pairs{frames: w.frames, infos: w.infos}
	}
	// (The replies only grow: the pairs judged for the last call stand.)
	w.pairs.replies, w.pairs.scans = replies, scans
	return w.pairs.covered(w.stale, w.maybeLate)
}

// missing is the number of replies without an awaited key the exchange
// may still have coming when it ends (frames that need a reply and those
// that may get one, less the replies that came): they may arrive late, in
// the next exchange, where they are not that input's.
func (w *waitFor) missing() int { return max(0, w.open+w.quiet-w.got) }

// missingNeeded is how many replies frames that require one still lacked
// when the exchange ended: the ones that may well come late. (Frames that
// may stay silent mostly do.)
func (w *waitFor) missingNeeded() int {
	if w.rawLines {
		return w.missing()
	}
	if w.loose > w.got {
		w.settle()
	}
	return max(0, w.loose-w.got)
}

// idKey is a raw id's identity as a server may echo it (wire.EchoesID): a
// string by its decoded content, a run of U+FFFD as one (wire.AppendIDKey);
// a number by its value as float64 (1.0 and 1e0 answer 1), since a number
// float64 cannot hold exactly may come back rounded, or by its exact value
// (wire.AppendIDKey) when it is beyond float64's range.
func idKey(raw []byte) string {
	var buf [64]byte
	if len(raw) > 0 && raw[0] != '"' {
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
			return string(strconv.AppendFloat(append(buf[:0], 'f'), f, 'g', -1, 64))
		}
	}
	return string(wire.AppendIDKey(buf[:0], raw))
}
