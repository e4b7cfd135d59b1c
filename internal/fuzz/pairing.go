package fuzz

import (
	"sync"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/wire"
)

// covered reports whether replies answer every frame that requires a
// reply, paired as the judge pairs them, correct answers first
// (oracle.Pairing.Fitting). A frame without a reply that fits it counts
// as answered by a reply no frame takes as a fitting one (a wrong answer
// is an answer, and waiting for another would wait for nothing), except
// the replies that may be earlier inputs': those set aside as stale, and
// up to maybeLate without an id (an earlier input's -32600 came before
// this input's -32700, which a parse error then waited for no longer).
func (p *pairs) covered(stale, maybeLate int) bool {
	got := make([]bool, len(p.frames))
	spare, unkeyed, arrays := 0, 0, 0
	for k, f := range p.pair(false, true) {
		if f.Kind == oracle.Answer {
			got[f.Of] = true
			continue
		}
		switch sc := p.scan(k); {
		case sc.kind == wire.KindBatch:
			arrays++
		case !keyedScan(sc):
			unkeyed++
			spare++
		default:
			spare++
		}
	}
	spare -= max(stale, min(maybeLate, unkeyed))
	for i := range p.infos {
		if got[i] || !p.infos[i].needs || !p.req(i) {
			continue
		}
		// (An array stands in for a batch's answer only, and a single
		// reply for a single message's: a batch among a thousand
		// refused notifications was called unanswered when a refusal
		// that fitted no notification ended the wait for its array.)
		if p.infos[i].class == oracle.Batch {
			if arrays--; arrays < 0 {
				return false
			}
		} else if spare--; spare < 0 {
			return false
		}
	}
	return true
}

// pairs judges (frame, reply) pairs once each: matching replies to frames
// and judging the pairs found ask the same questions.
type pairs struct {
	frames  [][]byte
	infos   []frameInfo
	replies [][]byte
	scans   []replyScan // of each reply
	seen    map[[2]int]pairVerdict
	memo    judgeMemo
	// What the input before may still have had coming (outcome.staleNull
	// and staleIDs).
	staleNull int
	staleIDs  [][]byte
	pairing   *oracle.Pairing // made when first needed
	fates     []oracle.Fate
	one       [1]oracle.Fate // fates' memory for the common exchange
	first     pairVerdict    // the verdict of frame 0 and reply 0, once judged0
	judged0   bool
	// arrays among the replies and batches among the frames that need a
	// reply, counted when there were countedAt replies and countedOf
	// frames (arraysForBatches).
	arrays, batches      int
	countedAt, countedOf int
	// The number of elements of each batch frame (-1: not a batch), for
	// owns; set when first needed (lens).
	batchLens []int
	carried   map[[2]int]bool // carries's answers by frame and reply
	// framesAdded: the pairing holds the frames, and the first
	// repliesAdded replies (the replies only grow).
	framesAdded  bool
	repliesAdded int
}

type pairVerdict struct {
	rules check.Set
	note  string
}

func (p *pairs) judge(i, j int) pairVerdict {
	k := [2]int{i, j}
	if k == [2]int{} && p.judged0 {
		return p.first
	}
	if v, ok := p.seen[k]; ok {
		return v
	}
	class := p.infos[i].class
	if p.infos[i].asBatch && p.kind(j) == wire.KindBatch {
		class = oracle.Batch
	}
	rules, note := p.memo.judge(p.frames[i], class, p.replies[j], true)
	v := pairVerdict{rules, note}
	switch {
	case k == [2]int{}:
		// The pair the common exchange (one frame, one reply) judges:
		// once to pair it, once for the verdict.
		p.first, p.judged0 = v, true
	case len(p.frames) > 1 || len(p.replies) > 1:
		if p.seen == nil {
			p.seen = map[[2]int]pairVerdict{}
		}
		p.seen[k] = v
	}
	return v
}

// fits reports whether reply j answers frame i correctly. An array answers
// nothing but a batch, which needs no judging (a notification flood before
// a big batch would otherwise scan its reply once per notification).
func (p *pairs) fits(i, j int) bool {
	batch := p.infos[i].class == oracle.Batch || p.infos[i].asBatch
	switch {
	case p.kind(j) == wire.KindBatch && !batch:
		return false
	case p.kind(j) != wire.KindBatch && batch && (p.arraysForBatches() || p.ownedElsewhere(i, j)):
		// A batch's own answer is an array: with an array for every
		// batch among the replies, a single error a tolerance would let
		// answer a batch is another message's ([0,0,1] and {"method":0}
		// answered with an array and a -32700: the -32700 took the batch
		// and the array was called a second reply). So it is when an
		// array shows it is the batch's (owns): a batch of 101
		// elements, which may be refused with one error, took a -32700
		// of a string beside it, and its array of 101 errors went to [].
		return false
	case p.kind(j) == wire.KindBatch && !p.owns(i, j) && p.ownedElsewhere(i, j):
		// (Nor an array while another shows it is the batch's: [""] and
		// a batch of two notifications jrpc2 refuses, answered [-32700]
		// and [-32600, -32600], where the one-element array refused one
		// notification well enough, and took the batch of two when it
		// came first; [[],{}] and a deep call with id 0 beside a 0,
		// answered [-32601 with id 0, -32700] and [-32700, -32600],
		// where the second array answered the deep batch well enough,
		// as a parser may refuse depth.)
		return false
	}
	return p.judge(i, j).rules == 0
}

// arraysForBatches reports whether the replies hold as many arrays as the
// input has batches.
func (p *pairs) arraysForBatches() bool {
	if p.countedAt != len(p.replies) || p.countedOf != len(p.infos) {
		p.countedAt, p.countedOf = len(p.replies), len(p.infos)
		p.arrays, p.batches = 0, 0
		for j := range p.replies {
			if p.kind(j) == wire.KindBatch {
				p.arrays++
			}
		}
		for i := range p.infos {
			if p.takesArray(i) {
				p.batches++ // (one of notifications too: a refusal may answer it)
			}
		}
	}
	return p.batches > 0 && p.arrays >= p.batches
}

// lens counts the elements of each batch frame, once.
func (p *pairs) lens() {
	if len(p.batchLens) == len(p.frames) {
		return
	}
	p.batchLens = p.batchLens[:0]
	var m wire.Message
	for k, f := range p.frames {
		n := -1
		if p.takesArray(k) {
			wire.Scan(f, &m)
			n = m.BatchLen
		}
		p.batchLens = append(p.batchLens, n)
	}
}

// batchLen is the number of elements of batch frame i (-1: no batch).
func (p *pairs) batchLen(i int) int {
	p.lens()
	return p.batchLens[i]
}

// owns reports whether reply k, an array, is batch frame i's by what it
// shows: an id of i's, or a length no other batch could have an array
// of (longer than each of them; an array is shorter than its batch when
// the server leaves elements unanswered, so a batch of two with a
// notification takes an array of one as well as a batch of one does).
func (p *pairs) owns(i, k int) bool {
	if p.kind(k) != wire.KindBatch || !p.takesArray(i) {
		return false
	}
	if p.carries(i, k) {
		return true
	}
	n := p.scan(k).batchLen
	if n <= 0 || n > p.batchLen(i) {
		return false
	}
	for i2, n2 := range p.batchLens {
		if i2 != i && n2 >= n {
			return false
		}
	}
	return true
}

// ownedElsewhere reports whether an array other than reply k is batch
// frame i's (owns).
func (p *pairs) ownedElsewhere(i, k int) bool {
	if !p.takesArray(i) {
		return false
	}
	for j := range p.replies {
		if j != k && p.owns(i, j) {
			return true
		}
	}
	return false
}

// carries reports whether reply k, an array, holds an id other than
// null that batch frame i has (among the first carryLimit elements of
// each); owns asks it of arrays and batches only. The answers are kept:
// the pairing asks again.
func (p *pairs) carries(i, k int) bool {
	key := [2]int{i, k}
	if c, ok := p.carried[key]; ok {
		return c
	}
	c := p.carriesIDs(i, k)
	if p.carried == nil {
		p.carried = map[[2]int]bool{}
	}
	p.carried[key] = c
	return c
}

func (p *pairs) carriesIDs(i, k int) bool {
	var ids [carryLimit][]byte
	n := 0
	var m wire.Message
	for off := 0; n < carryLimit; {
		elem, next, ok := wire.NextElement(p.replies[k], off)
		if !ok {
			break
		}
		off = next
		if wire.Scan(elem, &m); m.IDKind == wire.IDNumber || m.IDKind == wire.IDString {
			ids[n] = m.ID
			n++
		}
	}
	if n == 0 {
		return false
	}
	for off, seen := 0, 0; seen < carryLimit; seen++ {
		elem, next, ok := wire.NextElement(p.frames[i], off)
		if !ok {
			break
		}
		off = next
		if wire.Scan(elem, &m); m.IDKind != wire.IDNumber && m.IDKind != wire.IDString {
			continue
		}
		for _, id := range ids[:n] {
			if wire.EchoesID(m.ID, id) {
				return true
			}
		}
	}
	return false
}

// carryLimit bounds the elements carries looks at in an array and a batch.
const carryLimit = 64

// scan is reply j's scan.
func (p *pairs) scan(j int) *replyScan {
	if len(p.scans) != len(p.replies) {
		p.scans = scanAll(p.scans[:0], p.replies)
	}
	return &p.scans[j]
}

func (p *pairs) kind(j int) wire.Kind { return p.scan(j).kind }

// matchReplies assigns stream replies to frames: assigned[i] holds the
// indices of frame i's replies (the one it is judged with first, then any
// second replies), assigned[len(frames)] those of replies that answer no
// frame, assigned[len(frames)+1] those of replies recognised as late
// replies to the input before (p.staleNull, p.staleIDs), not judged.
// JSON-RPC allows a server to answer in any order, so the replies are
// paired as a batch's replies are paired with its elements (p.pair):
// by id first, then without ids and by tolerances, then by moving paired
// replies along; a reply that answers no frame correctly is judged
// against the frame it most likely answers, in the input's order (not
// the replies', which a concurrent server makes random), so no finding
// depends on a choice the replies leave open.
func matchReplies(p *pairs) [][]int {
	n := len(p.infos)
	assigned := make([][]int, n+2)
	fates := p.pair(true, false)
	for k, f := range fates {
		if f.Kind == oracle.Answer || f.Kind == oracle.Blamed {
			assigned[f.Of] = append(assigned[f.Of], k)
		}
	}
	for k, f := range fates {
		switch f.Kind {
		case oracle.Second:
			assigned[f.Of] = append(assigned[f.Of], k)
		case oracle.Stray:
			assigned[n] = append(assigned[n], k)
		case oracle.Late:
			assigned[n+1] = append(assigned[n+1], k)
		}
	}
	return assigned
}

// pair pairs the replies with the frames by oracle.Pairing and returns
// each reply's fate (with fitOnly, only the correct answers: Fitting). With late, the replies the input before may still
// have had coming (p.staleNull, p.staleIDs) are set aside when no frame
// of this input takes them.
func (p *pairs) pair(late, fitOnly bool) []oracle.Fate {
	if len(p.infos) == 1 && len(p.replies) == 1 && p.fits(0, 0) {
		// The common exchange: one frame, one reply that answers it. (The
		// pairing would pair them too; this spares it the indexing.)
		p.one[0] = oracle.Fate{Kind: oracle.Answer, Of: 0}
		return p.one[:]
	}
	if p.pairing == nil {
		p.pairing = new(oracle.Pairing)
	}
	pg := p.pairing
	if !p.framesAdded {
		// (The frames are scanned into the pairing once: the wait pairs
		// again at every burst of replies, and the judge after it.)
		pg.Reset()
		for i := range p.infos {
			pg.AddRequest(p.frames[i], p.infos[i].class, p.infos[i].asBatch)
		}
		p.framesAdded, p.repliesAdded = true, 0
	}
	for j := p.repliesAdded; j < len(p.replies); j++ {
		rm := p.message(j)
		pg.AddReply(&rm)
	}
	p.repliesAdded = len(p.replies)
	judges := oracle.Judges{Fits: p.fits, Required: p.req, Owns: p.owns}
	if late && (p.staleNull > 0 || len(p.staleIDs) > 0) {
		null := p.staleNull
		judges.Late = func(k int) bool {
			var id []byte
			if sc := p.scan(k); keyedScan(sc) {
				id = sc.id
			}
			return p.stale(id, &null)
		}
	}
	if fitOnly {
		p.fates = append(p.fates[:0], pg.Fitting(judges)...)
	} else {
		p.fates = append(p.fates[:0], pg.Pair(judges)...)
	}
	return p.fates
}

var pairsPool = sync.Pool{New: func() any { return new(pairs) }}

// newPairs returns pairs for the judgement of one exchange, from a pool:
// the pairs and the Pairing in them keep their memory from one exchange
// to the next. release gives them back.
func newPairs(frames [][]byte, infos []frameInfo, replies [][]byte, scans []replyScan) *pairs {
	p := pairsPool.Get().(*pairs)
	p.frames, p.infos, p.replies, p.scans = frames, infos, replies, scans
	return p
}

// release gives p back to the pool, with its references to the frames
// and replies dropped.
func (p *pairs) release() {
	pg, fates, seen := p.pairing, p.fates[:0], p.seen
	if pg != nil {
		pg.Reset()
	}
	if len(seen) > 4096 {
		seen = nil // (a huge input's map is not kept for the next)
	}
	clear(seen)
	*p = pairs{pairing: pg, fates: fates, seen: seen}
	pairsPool.Put(p)
}

// strayVerdict judges a reply that answers no frame of the input, as a
// batch's reply that answers no element is judged (oracle.Pairing's
// StrayRule), with its envelope's own faults; what is no response (not
// JSON) has those only.
func (p *pairs) strayVerdict(reply []byte) (check.Set, string) {
	var m wire.Message
	wire.Scan(reply, &m)
	env := check.Envelope(&m)
	if m.Kind != wire.KindResult && m.Kind != wire.KindError && m.Kind != wire.KindBatch {
		if env == 0 {
			env = env.Add(check.InvalidEnvelope)
		}
		return env, "a reply that is no response: " + m.Problems.String()
	}
	rule, why := p.pairing.StrayRule(&m)
	if rule == check.ReplyToNotification {
		env = check.EnvelopeToNotification(&m) // a notification has no id to echo
	}
	return env.Add(rule), "a reply" + why
}

// message is reply j as the pairing takes it.
func (p *pairs) message(j int) wire.Message {
	sc := p.scan(j)
	return wire.Message{Kind: sc.kind, IDKind: sc.idKind, ID: sc.id, Code: sc.code, HasCode: sc.hasCode}
}

// stale reports whether a reply that answers no frame of the input can be
// a late reply to the input before: it carries one of that input's ids
// (id, nil for none), or no id while that input still lacked replies
// without one (taking one of those off *null).
func (p *pairs) stale(id []byte, null *int) bool {
	if id != nil {
		for _, old := range p.staleIDs {
			if wire.EchoesID(old, id) {
				return true
			}
		}
		return false
	}
	if *null > 0 {
		*null--
		return true
	}
	return false
}

// req is requiredAt for frame i.
func (p *pairs) req(i int) bool { return requiredAt(p.frames, p.infos, i, &p.memo) }
