package fuzz

import (
	"bytes"
	"math/bits"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/wire"
)

// frameInfo is what the oracles say one input frame needs.
type frameInfo struct {
	class oracle.RequestClass
	needs bool // the server must answer it
	// required: its silence breaks a rule (needs, without a tolerance
	// that lets the server stay silent, as for id null). Pairing gives
	// replies to required frames first, and the wait counts them. Known
	// when reqDone; else asked of the oracle when first needed (see
	// requiredAt): most exchanges never need to ask.
	required bool
	reqDone  bool
	readable bool   // it carries an id the server could read: silence is a hang
	owed     bool   // its answer must carry its id (a call), or be an array (a batch holding calls)
	id       []byte // its raw id (single requests)
	// asBatch: a batch the protocol does not have, judged as an invalid
	// request; a server that answers it as a batch anyway is judged so.
	asBatch bool
}

// inspect classifies every frame of a case, as the profile's protocol
// reads it (pr may be nil: plain JSON-RPC). lifecycle reports a frame that
// starts or ends a session (initialize, shutdown, exit): the connection is
// not reused after it. Each frame is scanned once; a frame equal to the one
// before it (a notification flood repeats one frame up to a thousand
// times) takes its info as it is.
func inspect(c mutate.Case, pr *profileRules) (infos []frameInfo, lifecycle bool) {
	infos = make([]frameInfo, len(c.Frames))
	var m wire.Message
	cancelled := pr.cancels(c.Frames)
	for i, f := range c.Frames {
		if i > 0 && bytes.Equal(f, c.Frames[i-1]) {
			infos[i] = infos[i-1]
			continue
		}
		wire.Scan(f, &m)
		fi := frameInfo{class: classify(&m)}
		if pr != nil {
			if m.Method != nil && pr.isLifecycle(m.Method) {
				lifecycle = true
			}
			if pr.noBatches && (fi.class == oracle.Batch || fi.class == oracle.EmptyBatch) {
				// No batches in this protocol: an array is an invalid request.
				fi.class, fi.asBatch = oracle.InvalidRequest, fi.class == oracle.Batch
			}
		}
		switch fi.class {
		case oracle.Notification:
		case oracle.Batch:
			for off := 0; ; {
				elem, next, ok := wire.NextElement(f, off)
				if !ok {
					break
				}
				off = next
				wire.Scan(elem, &m)
				ec := classify(&m)
				if ec == oracle.Notification {
					continue
				}
				fi.needs = true
				fi.readable = fi.readable || readableID(ec, &m)
				fi.owed = fi.owed || ec == oracle.Call
			}
			fi.reqDone = !fi.needs
		default:
			// m is still the frame's own scan.
			fi.needs = fi.class != oracle.InvalidParams || readableID(fi.class, &m)
			fi.readable = readableID(fi.class, &m)
			fi.owed = fi.class == oracle.Call || fi.class == oracle.InvalidParams && fi.readable
			if m.IDKind != wire.IDAbsent {
				fi.id = m.ID
			}
			switch {
			case !fi.needs:
				fi.reqDone = true
			case fi.class == oracle.Call && fi.readable, fi.class == oracle.EmptyBatch:
				fi.required, fi.reqDone = true, true // silence is a hang, or breaks §6
			}
			for _, id := range cancelled {
				if fi.id != nil && bytes.Equal(fi.id, id) {
					// MCP: the receiver of a cancellation should not answer.
					fi.needs, fi.readable, fi.owed, fi.required, fi.reqDone = false, false, false, false, true
				}
			}
		}
		infos[i] = fi
	}
	return infos, lifecycle
}

// requiredAt reports whether frame i requires a reply, asking the oracle
// (through memo) the first time and keeping the answer in infos[i].
func requiredAt(frames [][]byte, infos []frameInfo, i int, memo *judgeMemo) bool {
	fi := &infos[i]
	if !fi.reqDone {
		rules, _ := memo.judge(frames[i], fi.class, nil, false)
		fi.required, fi.reqDone = rules != 0, true
	}
	return fi.required
}

// classify is oracle.ClassifyRequest of a frame already scanned into m: the
// engine scans each input frame once and reads everything off that scan.
func classify(m *wire.Message) oracle.RequestClass { return oracle.ClassifyScanned(m) }

func readableID(c oracle.RequestClass, m *wire.Message) bool {
	return c != oracle.ParseError && (m.IDKind == wire.IDNumber || m.IDKind == wire.IDString)
}

// replyScan is what the engine reads off a reply. Each reply is scanned
// once, where it arrives (a stream's reader) or when first needed, instead
// of once per question asked of it.
type replyScan struct {
	kind    wire.Kind
	idKind  wire.IDKind
	hasCode bool
	code    int64
	id      []byte // these alias the reply
	errMsg  []byte
	errData []byte
}

func scanOf(m *wire.Message) replyScan {
	return replyScan{kind: m.Kind, idKind: m.IDKind, hasCode: m.HasCode, code: m.Code, id: m.ID, errMsg: m.ErrMsg, errData: m.ErrData}
}

func scanReply(reply []byte) replyScan {
	var m wire.Message
	wire.Scan(reply, &m)
	return scanOf(&m)
}

// scanAll appends the scans of replies to dst.
func scanAll(dst []replyScan, replies [][]byte) []replyScan {
	for _, r := range replies {
		dst = append(dst, scanReply(r))
	}
	return dst
}

// replyScans returns the scans of o.replies, in their order: made by the
// stream's reader as the replies arrived, else here, once.
func (o *outcome) replyScans() []replyScan {
	if len(o.scans) != len(o.replies) {
		o.scans = scanAll(o.scans[:0], o.replies)
	}
	return o.scans
}

// frameScans returns the scans of the messages of HTTP frame i's response.
func (o *outcome) frameScans(i int) []replyScan {
	if o.frameScan == nil {
		o.frameScan = make([][]replyScan, len(o.frameReplies))
	}
	if len(o.frameScan[i]) != len(o.frameReplies[i]) {
		o.frameScan[i] = scanAll(o.frameScan[i][:0], o.frameReplies[i])
	}
	return o.frameScan[i]
}

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
	// batches that need a reply, those holding calls (owing "["), and the
	// arrays that came
	batches, owedBatches, arrays int
	maybeLate                    int // replies the input before may still have had coming, any (outcome.staleNull)
	unkeyed                      int // replies without an id so far
	// exact: required and loose count only the frames that require a
	// reply; until then they count those not asked yet too (see settle).
	exact bool
	memo  judgeMemo
	pairs *pairs // the pairs covered judged, kept for the next call
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

// answer takes a reply off the awaited ones: off its key when it carries
// an awaited one, else off the count of the others. It reports whether
// the reply took a key.
func (w *waitFor) answer(r *replyScan) bool {
	if w.take(r) {
		return true
	}
	keyed := r.idKind == wire.IDNumber || r.idKind == wire.IDString
	if !keyed {
		w.unkeyed++
	}
	switch {
	case !keyed && r.kind != wire.KindBatch && w.staleNull > 0:
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
	if !w.exact && !w.done(len(replies)) {
		w.settle()
	}
	switch {
	case !w.done(len(replies)):
		return false
	case w.loose == 0:
		return true // every reply required has its key, and came
	case w.stale == 0 && w.quiet == 0 && w.open == w.loose && (w.got >= w.open || len(replies) >= w.needs):
		return true // every frame without a key requires its reply: the count tells
	}
	w.settle()
	if w.pairs == nil {
		w.pairs = &pairs{frames: w.frames, infos: w.infos}
	}
	// (The replies only grow: the pairs judged for the last call stand.)
	w.pairs.replies, w.pairs.scans = replies, scans
	return w.pairs.covered(w.stale)
}

// covered reports whether replies answer every frame that requires a
// reply, paired as match pairs them (required frames first). A frame
// without a reply that fits it counts as answered by a reply no frame
// takes (a wrong answer is an answer, and waiting for another would wait
// for nothing), except the stale replies that may be the input before's.
func (p *pairs) covered(stale int) bool {
	frames, infos, replies := p.frames, p.infos, p.replies
	ids := make([][]byte, len(replies))
	for j := range replies {
		if sc := p.scan(j); sc.idKind == wire.IDNumber || sc.idKind == wire.IDString {
			ids[j] = sc.id
		}
	}
	got := make([]bool, len(frames))
	spare := -stale // replies no frame takes: wrong answers, but answers
	for _, f := range match(p, ids) {
		if f >= 0 {
			got[f] = true
		} else {
			spare++
		}
	}
	for i := range infos {
		if !got[i] && infos[i].needs && p.req(i) {
			if spare--; spare < 0 {
				return false
			}
		}
	}
	return true
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

// verdict is the oracles' judgement of one exchange.
type verdict struct {
	rules  check.Set
	rule   check.Rule // the finding's rule: the most severe broken
	code   int64      // the error code of the reply that broke it
	shape  string     // that reply's shape, or what ended the exchange
	note   string
	reply  []byte // the reply that broke it (or a stderr tail), for reply.txt
	tuples []tuple
}

// tuple is the feedback signal: an input that produces a tuple no input
// produced before is kept in the working corpus.
type tuple struct {
	status uint16 // the end kind, or the HTTP status
	kind   uint8  // the reply's wire.Kind, or noReply
	bucket uint8  // log2 of the latency in microseconds
	code   int32
	rules  check.Set
	// msg is a hash of the error's message and data with numbers and
	// quoted text blanked: servers say which check refused an input there
	// ("duplicate member", "nested batch"), the best view of their code
	// paths a black box gets.
	msg uint32
}

const noReply = 255

// rulePriority orders the rules a finding is named after (check's order,
// which JudgeFuzzReply's notes follow too): a crash explains everything
// after it, a hang explains missing replies.
func rulePriority(r check.Rule) int { return r.Rank() }

// mainRule returns the rule of s that names a finding.
func mainRule(s check.Set) check.Rule { return check.MostSevere(s) }

// judgement collects what the oracles say about each piece of an exchange.
type judgement struct {
	v      verdict
	bestP  int
	bucket uint8
	pr     *profileRules
	mask   check.Set // profile rules the input itself broke first: not the server's
	memo   judgeMemo
}

// judgeMemo remembers the last oracle.JudgeFuzzReply call and its answer:
// a flood repeats one frame up to a thousand times, often with the same
// reply (or none), and each repeat would get the same answer.
type judgeMemo struct {
	ok           bool
	frame, reply []byte
	class        oracle.RequestClass
	got          bool
	rules        check.Set
	note         string
}

// judge is oracle.JudgeFuzzReply, answered from the memo for the same
// arguments.
func (jm *judgeMemo) judge(frame []byte, class oracle.RequestClass, reply []byte, got bool) (check.Set, string) {
	if jm.ok && jm.class == class && jm.got == got && (jm.reply == nil) == (reply == nil) &&
		bytes.Equal(jm.frame, frame) && bytes.Equal(jm.reply, reply) {
		return jm.rules, jm.note
	}
	rules, note := oracle.JudgeFuzzReply(frame, class, reply, got)
	*jm = judgeMemo{ok: true, frame: frame, reply: reply, class: class, got: got, rules: rules, note: note}
	return rules, note
}

func newJudgement(o *outcome, pr *profileRules) judgement {
	us := o.latency.Microseconds()
	return judgement{bestP: -1, bucket: uint8(bits.Len64(uint64(max(us, 0)))), pr: pr}
}

// add records rules broken by one reply (or its absence); sc is the
// reply's scan (nil: scanned here).
func (j *judgement) add(rules check.Set, note string, reply []byte, sc *replyScan, status uint16) {
	kind := uint8(noReply)
	var code int64
	var msg uint32
	if reply != nil {
		if sc == nil {
			s := scanReply(reply)
			sc = &s
		}
		kind = uint8(sc.kind)
		if sc.hasCode {
			code = sc.code
		}
		if sc.kind == wire.KindError {
			msg = messageClass(sc.errMsg, sc.errData)
		}
		if j.pr != nil && j.pr.check != nil && sc.kind != wire.KindInvalid && sc.kind != wire.KindBatch {
			var m wire.Message
			wire.Scan(reply, &m)
			if extra := j.pr.check(&m) &^ j.mask; extra != 0 {
				if rules == 0 {
					note = "the profile's rules: " + m.Problems.String()
				}
				rules |= extra
			}
		}
	}
	t := tuple{status: status, kind: kind, bucket: j.bucket, code: int32(max(min(code, 1<<31-1), -1<<31)), rules: rules, msg: msg}
	if n := len(j.v.tuples); n == 0 || j.v.tuples[n-1] != t {
		// (A repeat adds nothing to the set the tuples go to: a flood's
		// thousand frames need not make a thousand tuples.)
		j.v.tuples = append(j.v.tuples, t)
	}
	if rules == 0 {
		return
	}
	j.v.rules |= rules
	r := mainRule(rules)
	if p := rulePriority(r); j.bestP < 0 || p < j.bestP {
		j.bestP = p
		j.v.rule, j.v.code, j.v.note = r, code, note
		j.v.reply = reply
		j.v.shape = replyShape(reply)
	}
}

// crash records an end of the exchange that is a crash; shape says how.
func (j *judgement) crash(shape, note string, evidence []byte, status uint16) {
	j.add(check.Set(0).Add(check.Crash), note, nil, nil, status)
	if j.v.rule == check.Crash {
		j.v.shape, j.v.reply, j.v.code = shape, evidence, 0
	}
}

// judgeOutcome applies the oracles to the exchange of case c, with the
// profile's rules (pr may be nil: plain JSON-RPC).
func judgeOutcome(c mutate.Case, infos []frameInfo, o *outcome, pr *profileRules) verdict {
	jv := newJudgement(o, pr)
	j := &jv
	if pr != nil && pr.check != nil && fractionalIDs(c.Frames) {
		// MCP wants integer ids; a server echoing the input's 1.0 back
		// answers what it was asked.
		j.mask = j.mask.Add(check.MCPBadID)
	}
	switch {
	case o.perFrame:
		judgeHTTP(j, c, infos, o)
	case o.wire:
		judgeWire(j, o)
	default:
		judgeStream(j, c, infos, o)
	}
	if len(j.v.tuples) == 0 {
		j.add(0, "", nil, nil, uint16(o.end))
	}
	return j.v
}

// judgeStream matches the replies of a stream to the case's frames and
// judges each pair.
func judgeStream(j *judgement, c mutate.Case, infos []frameInfo, o *outcome) {
	status := uint16(o.end)
	if died, shape, note, ev := streamCrash(o, infos, len(o.replies)); died {
		j.crash(shape, note, ev, status)
	}
	scans := o.replyScans()
	p := &pairs{frames: c.Frames, infos: infos, replies: o.replies, scans: scans, staleNull: o.staleNull, staleIDs: o.staleIDs}
	assigned := matchReplies(p)
	o.late += len(assigned[len(c.Frames)+1])
	for i, f := range c.Frames {
		reps := assigned[i]
		var rules check.Set
		var note string
		var rep []byte
		var sc *replyScan
		if len(reps) > 0 {
			rep, sc = o.replies[reps[0]], &scans[reps[0]]
			v := p.judge(i, reps[0])
			rules, note = v.rules, v.note
			if xr, xnote := j.pr.exchangeRules(c.Frames, nil, 0, rep); xr != 0 {
				rules, note = rules|xr, joinNotes(note, xnote)
			}
		} else if infos[i].needs && !(o.lifecycle && o.end != endNone && o.end != endTimeout) {
			// (An input that ended the session, as LSP's exit does, is owed
			// nothing after that.)
			rules, note = p.memo.judge(f, infos[i].class, nil, false)
			if o.end != endTimeout {
				// Silence is a hang only once the timeout has passed; an
				// exchange that ended sooner ended by a crash (judged above).
				rules &^= check.Set(0).Add(check.Hang)
			}
		}
		j.add(rules, note, rep, sc, status)
		for _, extra := range reps[min(1, len(reps)):] {
			r := check.Set(0).Add(check.DuplicateReply)
			if infos[i].class == oracle.Notification {
				r = check.Set(0).Add(check.ReplyToNotification)
			}
			j.add(r, "a second reply to the same frame", o.replies[extra], &scans[extra], status)
		}
	}
	for _, extra := range assigned[len(c.Frames)] {
		j.add(check.Set(0).Add(check.UnknownID), "a reply that answers no frame of the input", o.replies[extra], &scans[extra], status)
	}
	if o.tooLarge > 0 {
		j.add(check.Set(0).Add(check.FrameTooLarge), "a reply longer than the reply limit was skipped", nil, nil, status)
	}
}

// streamCrash says whether the end of a stream exchange is a crash: a child
// that exited on its own with a failure status or a signal, a reset, or a
// stream that ended while a reply was still owed.
func streamCrash(o *outcome, infos []frameInfo, got int) (bool, string, string, []byte) {
	switch o.end {
	case endExited:
		if o.exitCode == 0 || o.lifecycle && orderlyExit(o) {
			// The server chose to stop (LSP exit: status 0 after shutdown,
			// 1 without, as LSP 3.17 says); restarted, not blamed.
			return false, "", "", nil
		}
		line := stderrKey(o.stderr)
		if line == "" {
			line = "exit:" + exitKind(o.note)
		}
		return true, "stderr:" + line, "the child process exited: " + o.note, []byte(strings.Join(o.stderr, "\n"))
	case endReset:
		return true, "conn_reset", "the connection was reset: " + o.note, nil
	case endUnreachable:
		return true, "unreachable", "the server accepts no connection after the input: " + o.note, nil
	case endClosed:
		if o.lifecycle {
			return false, "", "", nil // the input ended the session (LSP exit): closing is the answer
		}
		owed := 0
		for _, fi := range infos {
			if fi.needs {
				owed++
			}
		}
		if got < owed {
			return true, "conn_closed", "the server closed the connection before replying: " + o.note, nil
		}
	}
	return false, "", "", nil
}

// orderlyExit reports whether a child exited on purpose, not by a crash:
// with a failure status, by itself (no signal), and without a panic, a
// fatal runtime error or a traceback on stderr. That is how a server gives
// up on a stream whose framing it can no longer read: once a Content-Length
// lies or a line holds half a message, where the next message starts is
// lost, neither JSON-RPC 2.0 (transport-agnostic) nor the LSP base
// protocol says how to resynchronise, and no reply is owed to bytes that
// are no message; closing the stream, or exiting when the stream is
// stdin, is the one answer left. A panic stays a crash however it came.
func orderlyExit(o *outcome) bool {
	if o.end != endExited || o.exitCode <= 0 {
		return false
	}
	for _, l := range o.stderr {
		if crashLine(strings.ToLower(strings.TrimSpace(l))) {
			return false
		}
	}
	return true
}

// crashLine reports whether a lower-cased stderr line names a crash: a
// panic, a fatal runtime error, a traceback, a segfault, an uncaught
// exception.
func crashLine(low string) bool {
	return strings.HasPrefix(low, "panic:") || strings.HasPrefix(low, "fatal error:") || strings.Contains(low, "traceback") ||
		strings.Contains(low, "segmentation fault") || strings.Contains(low, "exception") || strings.HasPrefix(low, "goroutine ")
}

// maxAlign bounds frames×replies for the matching of matchReplies; past it,
// replies are matched by id, and the rest in order.
const maxAlign = 2048

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
	budget    int // pairs judged for leftovers past maxAlign
}

type pairVerdict struct {
	rules check.Set
	note  string
}

func (p *pairs) judge(i, j int) pairVerdict {
	k := [2]int{i, j}
	if v, ok := p.seen[k]; ok {
		return v
	}
	class := p.infos[i].class
	if p.infos[i].asBatch && p.kind(j) == wire.KindBatch {
		class = oracle.Batch
	}
	rules, note := p.memo.judge(p.frames[i], class, p.replies[j], true)
	v := pairVerdict{rules, note}
	if len(p.frames) > 1 {
		// (One frame's pairs are judged once each: no matching asks.)
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
	if p.kind(j) == wire.KindBatch && p.infos[i].class != oracle.Batch && !p.infos[i].asBatch {
		return false
	}
	return p.judge(i, j).rules == 0
}

// scan is reply j's scan.
func (p *pairs) scan(j int) *replyScan {
	if len(p.scans) != len(p.replies) {
		p.scans = scanAll(p.scans[:0], p.replies)
	}
	return &p.scans[j]
}

func (p *pairs) kind(j int) wire.Kind { return p.scan(j).kind }

// matchReplies assigns stream replies to frames: assigned[i] holds the
// indices of frame i's replies, assigned[len(frames)] those of replies that
// answer no frame, assigned[len(frames)+1] those of replies recognised as
// late replies to the input before (p.staleNull, p.staleIDs), not judged.
// Most servers answer frames in order, so that is tried first (inOrder);
// JSON-RPC allows any order, though, which ids sort out unless the input
// repeats them or the replies carry id null: then the replies are matched
// to frames they answer correctly in any order, as many as possible,
// required frames (whose silence breaks a rule) first (match). So a reply
// that could answer two frames goes to the one that must have it, and no
// finding depends on a choice the replies leave open. A reply left over
// goes to the frame whose id it carries, is set aside as late when it can
// be the last input's, else goes to the next required frame still without
// a reply (judged against it: the most likely reading), then to any frame
// without one; one finding none is a second reply to the frame whose id it
// carries, or a reply to nothing.
func matchReplies(p *pairs) [][]int {
	n, m := len(p.infos), len(p.replies)
	assigned := make([][]int, n+2)
	if n == 1 && p.staleNull == 0 {
		// One frame: every reply is its own, but for one carrying an id
		// of the input before and not this frame's.
		for j := range m {
			slot := 0
			if sc := p.scan(j); len(p.staleIDs) > 0 && keyedScan(sc) && !p.echoes(0, sc.id) {
				null := 0
				if p.stale(sc.id, &null) {
					slot = n + 1
				}
			}
			assigned[slot] = append(assigned[slot], j)
		}
		return assigned
	}
	if inOrder(p, assigned) {
		return assigned
	}
	for i := range assigned {
		assigned[i] = assigned[i][:0]
	}
	ids := make([][]byte, m)
	for j := range p.replies {
		if sc := p.scan(j); sc.idKind == wire.IDNumber || sc.idKind == wire.IDString {
			ids[j] = sc.id
		}
	}
	frameOf := match(p, ids)
	taken := make([]bool, n)
	for _, f := range frameOf {
		if f >= 0 {
			taken[f] = true
		}
	}
	staleNull := p.staleNull
	by := make([]int, n) // the reply match gave each frame, or -1
	for i := range by {
		by[i] = -1
	}
	for j, f := range frameOf {
		if f >= 0 {
			assigned[f] = append(assigned[f], j)
			by[f] = j
		}
	}
	for j := range p.replies {
		if frameOf[j] >= 0 {
			continue
		}
		own := -1 // a frame whose id the reply carries
		for i := range p.infos {
			if p.echoes(i, ids[j]) {
				if own < 0 || !taken[i] && taken[own] {
					own = i
				}
			}
		}
		switch {
		case own >= 0 && !taken[own]:
			taken[own] = true
			assigned[own] = append(assigned[own], j)
			continue
		case ids[j] == nil && staleNull > 0:
			// A reply without an id that may be the input before's: a
			// frame of this input that requires a reply and has none
			// takes it first (a wrong answer is more likely its own than
			// a stray), else it is set aside.
			if i := p.freeRequired(taken); i >= 0 {
				taken[i] = true
				assigned[i] = append(assigned[i], j)
				continue
			}
			staleNull--
			assigned[n+1] = append(assigned[n+1], j)
			continue
		case p.stale(ids[j], &staleNull):
			assigned[n+1] = append(assigned[n+1], j)
			continue
		case own >= 0:
			assigned[own] = append(assigned[own], j) // a second reply to it
			continue
		}
		pick := p.leftoverFrame(j, taken, by, assigned)
		if pick < 0 {
			pick = n
		} else {
			taken[pick] = true
		}
		assigned[pick] = append(assigned[pick], j)
	}
	return assigned
}

// freeRequired returns the first frame without a reply, without a
// readable id, that requires one; -1 if none.
func (p *pairs) freeRequired(taken []bool) int {
	for i := range p.infos {
		if !taken[i] && !p.infos[i].readable && p.req(i) {
			return i
		}
	}
	return -1
}

// leftoverFrame picks the frame a reply that answers none correctly is
// judged against: the first frame, in the input's order (not the replies',
// which a concurrent server makes random), that requires a reply and has
// none, directly or by moving its reply to another such frame that reply
// fits too; else the first that needs one without having one, then any
// without one; -1 when every frame has one. The order of the input makes
// the verdict the same however the replies were ordered, as a sequential
// server would have ordered them. by and assigned are updated for a move.
//
// A reply without an id goes to a frame whose id the server could not read
// first: given to a call with a readable id it would make a finding
// (unexpected_null_id) of a choice. Moving replies is bounded like match:
// past maxAlign pairs, only frames without a reply are looked at.
func (p *pairs) leftoverFrame(j int, taken []bool, by []int, assigned [][]int) int {
	n := len(p.infos)
	keyed := keyedScan(p.scan(j))
	moves := n*len(p.replies) <= maxAlign
	if !moves {
		// Past the bound match compared ids only: a reply it left over may
		// still answer a frame correctly (a tolerated reply to a
		// notification), required frames first. Looked for within a
		// budget.
		for _, required := range [2]bool{true, false} {
			for i := range n {
				if p.budget >= maxAlign {
					break
				}
				if !taken[i] && p.req(i) == required {
					p.budget++
					if p.fits(i, j) {
						return i
					}
				}
			}
		}
	}
	for i := range n {
		if !p.req(i) || !keyed && p.infos[i].readable {
			continue // (a readable one is tried below, after the others)
		}
		if !taken[i] {
			return i
		}
		j2 := by[i]
		if j2 < 0 || !moves {
			continue
		}
		for k := range n {
			if k != i && !taken[k] && p.req(k) && p.fits(k, j2) {
				// Move reply j2 from frame i to frame k.
				taken[k], by[k], by[i] = true, j2, -1
				assigned[k] = append(assigned[k], j2)
				assigned[i] = slices.DeleteFunc(assigned[i], func(x int) bool { return x == j2 })
				return i
			}
		}
	}
	for _, ok := range [...]func(int) bool{
		func(i int) bool { return p.infos[i].needs && !p.infos[i].readable },
		func(i int) bool { return !p.infos[i].readable },
		func(i int) bool { return p.req(i) },
		func(i int) bool { return p.infos[i].needs },
		func(int) bool { return true },
	} {
		if i := firstFrameFrom(p.infos, taken, 0, ok); i >= 0 {
			return i
		}
	}
	return -1
}

// echoes reports whether frame i has a readable id that id (a reply's raw
// id, nil for none) carries, as the oracle compares ids.
func (p *pairs) echoes(i int, id []byte) bool {
	fi := &p.infos[i]
	return id != nil && fi.readable && fi.id != nil && wire.EchoesID(fi.id, id)
}

// stale reports whether a reply that answers no frame of the input can be
// a late reply to the input before: it carries one of that input's ids, or
// no id while that input still lacked replies without one (taking one of
// those off *null).
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

// inOrder tries the common case: the replies answer, in order, the frames
// that require one, and a frame that requires none (a notification, a
// call with id null) may take one where the spec allows an answer. A reply
// that fits both the next frame that requires one and a frame before it
// that does not is ambiguous; both choices are tried, depth first,
// remembering the states that failed, so the search stays within
// frames×replies steps.
func inOrder(p *pairs, assigned [][]int) bool {
	n, m := len(p.infos), len(p.replies)
	failed := map[[2]int]bool{}
	var solve func(i, j int) bool
	solve = func(i, j int) bool {
		if j == m {
			for ; i < n; i++ {
				if p.req(i) {
					return false
				}
			}
			return true
		}
		if failed[[2]int{i, j}] {
			return false
		}
		next, tolerated := n, -1
		for k := i; k < n; k++ {
			if p.req(k) {
				next = k
				break
			}
			if tolerated < 0 && p.fits(k, j) {
				tolerated = k
			}
		}
		for _, k := range [2]int{next, tolerated} {
			if k < 0 || k == n || (k == next && !p.fits(k, j)) {
				continue
			}
			if solve(k+1, j+1) {
				assigned[k] = append(assigned[k], j)
				return true
			}
		}
		failed[[2]int{i, j}] = true
		return false
	}
	return solve(0, 0)
}

// match pairs replies with frames they answer correctly, in any order,
// as many as possible (Kuhn's augmenting paths): frames that require a
// reply first, then frames that need one but may stay silent, then the
// others that may take one. An augmenting path never unmatches a frame, so
// the required frames keep the most replies any pairing gives them. A
// reply that carries a frame's id prefers it. frameOf[j] is reply j's
// frame, or -1. Past maxAlign pairs, only ids are compared.
func match(p *pairs, ids [][]byte) []int {
	n, m := len(p.infos), len(p.replies)
	frameOf := make([]int, m)
	for j := range frameOf {
		frameOf[j] = -1
	}
	same := func(i, j int) bool { return p.echoes(i, ids[j]) }
	edge := func(i, j int) bool {
		if n*m > maxAlign {
			return same(i, j)
		}
		return p.fits(i, j)
	}
	seen := make([]bool, m)
	var augment func(i int) bool
	augment = func(i int) bool {
		// Replies with the frame's id first, then the others, in order.
		for _, byID := range [2]bool{true, false} {
			for j := range m {
				if seen[j] || same(i, j) != byID || !edge(i, j) {
					continue
				}
				seen[j] = true
				if frameOf[j] < 0 || augment(frameOf[j]) {
					frameOf[j] = i
					return true
				}
			}
		}
		return false
	}
	for tier := range 3 {
		for i := range n {
			if p.tierOf(i) == tier {
				clear(seen)
				augment(i)
			}
		}
	}
	return frameOf
}

// tierOf orders frames for match: required, needing, the rest.
func (p *pairs) tierOf(i int) int {
	switch {
	case p.req(i):
		return 0
	case p.infos[i].needs:
		return 1
	}
	return 2
}

// req is requiredAt for frame i.
func (p *pairs) req(i int) bool { return requiredAt(p.frames, p.infos, i, &p.memo) }

func firstFrameFrom(infos []frameInfo, taken []bool, from int, ok func(int) bool) int {
	for i := from; i < len(infos); i++ {
		if !taken[i] && ok(i) {
			return i
		}
	}
	return -1
}

// judgeWire judges the replies to bytes that broke the framing on purpose:
// nothing is owed (the server may close the stream), but what comes back
// must be well-formed JSON-RPC, and the server must not die.
func judgeWire(j *judgement, o *outcome) {
	status := uint16(o.end)
	if died, shape, note, ev := streamCrash(o, nil, 0); died && o.end != endClosed && !orderlyExit(o) {
		j.crash(shape, note, ev, status)
	}
	var m wire.Message
	for _, r := range o.replies {
		wire.Scan(r, &m)
		rules := check.Envelope(&m)
		if m.Kind == wire.KindBatch {
			rules = 0 // an array answers the batch the broken framing delimited
		}
		sc := scanOf(&m)
		j.add(rules, "a reply to input with broken framing is not a valid response", r, &sc, status)
	}
}

// judgeHTTP judges each frame's response: its status, then its body.
func judgeHTTP(j *judgement, c mutate.Case, infos []frameInfo, o *outcome) {
	for i := 0; i < o.sent; i++ {
		status := uint16(o.httpStatus[i])
		if status == 0 {
			status = uint16(o.end)
		}
		reps := o.frameReplies[i]
		var body []byte
		if len(reps) > 0 {
			body = reps[0]
		}
		if i == o.endFrame && o.end != endNone {
			switch o.end {
			case endTimeout:
				j.add(check.Set(0).Add(check.Hang), "no HTTP response within the timeout", nil, nil, status)
				continue
			case endInterrupted:
				continue
			case endReset:
				if o.httpStatus[i] >= 500 {
					j.crash("http_"+strconv.Itoa(o.httpStatus[i])+":"+replyShape(body), "HTTP status "+strconv.Itoa(o.httpStatus[i]), body, status)
					continue
				}
				j.crash("conn_reset", "the connection was reset: "+o.note, nil, status)
				continue
			case endClosed:
				j.crash("conn_closed", o.note, nil, status)
				continue
			case endUnreachable:
				j.crash("unreachable", "the server accepts no connection: "+o.note, nil, status)
				continue
			}
		}
		if o.httpStatus[i] >= 400 && !looksLikeJSON(body) {
			// Refused at the HTTP level: nothing for the JSON-RPC oracles;
			// the profile's may want a given status.
			rules, note := j.pr.exchangeRules(c.Frames, o.header, o.httpStatus[i], nil)
			j.add(rules, note, nil, nil, status)
			continue
		}
		rules, note := j.memo.judge(c.Frames[i], infos[i].class, body, body != nil)
		required := body == nil && rules != 0  // silence breaks a rule: no tolerance lets the server stay silent
		rules &^= check.Set(0).Add(check.Hang) // the response came: silence is an empty body, not a hang
		if required && infos[i].needs && infos[i].readable {
			// (Not where silence is allowed: a response object sent to
			// the server, say, may get an empty body.)
			rules = rules.Add(check.NoResultOrError)
			note = "an empty HTTP response to a request with an id"
		}
		if xr, xnote := j.pr.exchangeRules(c.Frames, o.header, o.httpStatus[i], body); xr != 0 {
			rules, note = rules|xr, joinNotes(note, xnote)
		}
		var scans []replyScan
		var sc *replyScan
		if len(reps) > 0 {
			scans = o.frameScans(i)
			sc = &scans[0]
		}
		j.add(rules, note, body, sc, status)
		for x, extra := range reps[min(1, len(reps)):] {
			j.add(check.Set(0).Add(check.DuplicateReply), "a second message in the same HTTP response", extra, &scans[x+1], status)
		}
	}
	if o.tooLarge > 0 {
		j.add(check.Set(0).Add(check.FrameTooLarge), "a response body longer than the reply limit", nil, nil, uint16(o.end))
	}
}

func looksLikeJSON(b []byte) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// stderrNoise matches what differs between two crashes at one site:
// file paths, quoted text (the input's bytes a message cites), addresses
// and other numbers (indexes, lengths, goroutine ids, line numbers,
// timestamps).
var stderrNoise = regexp.MustCompile(`(?:[A-Za-z]:)?(?:[\w.@+-]*/)+[\w.@+-]+|"(?:[^"\\]|\\.)*"|'[^']*'|` + "`[^`]*`" + `|0x[0-9a-fA-F]+|[0-9]+`)

// stderrKey picks the line of a crashed child's stderr that names the
// crash: the first panic, fatal error, traceback or error line, else the
// last line; then blanks what differs between crashes at one site (see
// stderrNoise), so that they are one finding.
func stderrKey(lines []string) string {
	pick := ""
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		low := strings.ToLower(t)
		if crashLine(low) || strings.HasPrefix(low, "error:") {
			pick = t
			break
		}
		pick = t
	}
	pick = stderrNoise.ReplaceAllStringFunc(pick, func(n string) string {
		switch {
		case strings.HasPrefix(n, "0x"):
			return "0xN"
		case n[0] == '"' || n[0] == '\'' || n[0] == '`':
			return "?"
		case n[0] >= '0' && n[0] <= '9':
			return "N"
		}
		return "PATH"
	})
	pick = strings.Join(strings.Fields(pick), " ")
	if len(pick) > 200 {
		pick = pick[:200]
	}
	return pick
}

// exitKind is an exit status without its time: "exit status 2".
func exitKind(status string) string {
	if i := strings.Index(status, " after "); i >= 0 {
		return status[:i]
	}
	return status
}

// messageClass hashes an error's message and (string) data the way the
// feedback tuple needs: digits and quoted text blanked, lower case, the
// first 48 bytes, so "invalid character '}' at offset 12" and "invalid
// character ']' at offset 3" are one class and "no method" another.
func messageClass(msg, data []byte) uint32 {
	// FNV-1a, as hash/fnv's New32a computes it, without its allocation;
	// the buffers are the stack's unless a message is long.
	const offset32, prime32 = 2166136261, 16777619
	h := uint32(offset32)
	var textBuf [256]byte
	var classBuf [64]byte
	for _, part := range [2][]byte{msg, data} {
		if len(part) < 2 || part[0] != '"' {
			continue
		}
		text := part[1 : len(part)-1]
		if part[len(part)-1] != '"' || !plainText(text) {
			var ok bool
			if text, ok = wire.Unquote(textBuf[:0], part); !ok {
				continue
			}
		}
		b := appendMessageClass(classBuf[:0], text)
		for _, c := range b {
			h = (h ^ uint32(c)) * prime32
		}
		h *= prime32 // the 0 byte after each part: h^0 is h
	}
	return h
}

// appendMessageClass appends the class of an error text to dst: quoted
// text as '?', each run of digits as 'N', lower case, at most 48 bytes.
func appendMessageClass(dst, text []byte) []byte {
	b, start := dst, len(dst)
	quote := byte(0)
	for _, c := range text {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			continue
		case c == '\'' || c == '"' || c == '`':
			quote = c
			b = append(b, '?')
			continue
		case c >= '0' && c <= '9':
			if len(b) > start && b[len(b)-1] == 'N' {
				continue
			}
			c = 'N'
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		b = append(b, c)
		if len(b)-start == 48 {
			break
		}
	}
	return b
}

// plainText reports whether the contents of a JSON string are printable
// ASCII without quotes or escapes: then they are the text as they stand,
// and the string needs no decoding.
func plainText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// fractionalIDs reports whether a frame (or a batch element) has an id
// with a fraction or an exponent.
func fractionalIDs(frames [][]byte) bool {
	var m wire.Message
	for _, f := range frames {
		wire.Scan(f, &m)
		if m.Problems.Has(wire.ProblemFractionalID) {
			return true
		}
		if m.Kind != wire.KindBatch {
			continue
		}
		for off := 0; ; {
			elem, next, ok := wire.NextElement(f, off)
			if !ok {
				break
			}
			off = next
			if wire.Scan(elem, &m); m.Problems.Has(wire.ProblemFractionalID) {
				return true
			}
		}
	}
	return false
}
