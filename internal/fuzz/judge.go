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
	"github.com/rpcload/rpcload/internal/wire"
)

// frameInfo is what the oracles say one input frame needs.
type frameInfo struct {
	class    check.RequestClass
	needs    bool   // the server must answer it
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
			if pr.noBatches && (fi.class == check.Batch || fi.class == check.EmptyBatch) {
				// No batches in this protocol: an array is an invalid request.
				fi.class, fi.asBatch = check.InvalidRequest, fi.class == check.Batch
			}
		}
		switch fi.class {
		case check.Notification:
		case check.Batch:
			for off := 0; ; {
				elem, next, ok := wire.NextElement(f, off)
				if !ok {
					break
				}
				off = next
				wire.Scan(elem, &m)
				ec := classify(&m)
				if ec == check.Notification {
					continue
				}
				fi.needs = true
				fi.readable = fi.readable || readableID(ec, &m)
				fi.owed = fi.owed || ec == check.Call
			}
		default:
			// m is still the frame's own scan.
			fi.needs = fi.class != check.InvalidParams || readableID(fi.class, &m)
			fi.readable = readableID(fi.class, &m)
			fi.owed = fi.class == check.Call || fi.class == check.InvalidParams && fi.readable
			if m.IDKind != wire.IDAbsent {
				fi.id = m.ID
			}
			for _, id := range cancelled {
				if fi.id != nil && bytes.Equal(fi.id, id) {
					// MCP: the receiver of a cancellation should not answer.
					fi.needs, fi.readable, fi.owed = false, false, false
				}
			}
		}
		infos[i] = fi
	}
	return infos, lifecycle
}

// classify is check.ClassifyRequest of a frame already scanned into m: the
// engine scans each input frame once and reads everything off that scan.
func classify(m *wire.Message) check.RequestClass { return check.ClassifyScanned(m) }

func readableID(c check.RequestClass, m *wire.Message) bool {
	return c != check.ParseError && (m.IDKind == wire.IDNumber || m.IDKind == wire.IDString)
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
// (a batch holding calls: an array). A call may be answered late and out
// of order, so its reply is waited for; a reply to anything else (a parse
// error, an invalid request, answered with id null) comes before the sync
// reply from a server that reads in order, or not at all, and waiting for
// it would cost the whole timeout on every server that ignores garbage.
// When two frames that need a reply share an id, a reply cannot say which
// it answers: then only the count ends the wait.
type waitFor struct {
	needs     int        // frames that need a reply
	owed      []owedKeys // ids of calls (idKey), "[" for batches holding calls: replies still awaited
	many      map[string]int
	ambiguous bool
}

// owedKeys counts the replies still awaited that carry key. An input has a
// few keys as a rule, so a slice searched in order serves them better than
// maps made for every input; past manyKeys keys they move to a map.
type owedKeys struct {
	key string
	n   int
}

const manyKeys = 16

func newWaitFor(infos []frameInfo) waitFor {
	var w waitFor
	var ids []string // keys of readable ids, to find repeats
	var seen map[string]bool
	for _, fi := range infos {
		if !fi.needs {
			continue
		}
		w.needs++
		key := ""
		switch {
		case fi.class == check.Batch:
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
		if fi.owed && key != "" {
			w.owe(key)
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

// answer takes a reply off the awaited ones when it carries an awaited id.
func (w waitFor) answer(r *replyScan) {
	if len(w.owed) == 0 && len(w.many) == 0 {
		return
	}
	var key string
	switch {
	case r.kind == wire.KindBatch:
		key = "["
	case r.idKind == wire.IDNumber || r.idKind == wire.IDString:
		key = idKey(r.id)
	default:
		return // no key is awaited without an id
	}
	if w.many != nil {
		if w.many[key] > 0 {
			w.many[key]--
		}
		return
	}
	for i := range w.owed {
		if w.owed[i].key == key && w.owed[i].n > 0 {
			w.owed[i].n--
			return
		}
	}
}

// done reports whether replies replies are all the exchange waits for.
func (w waitFor) done(replies int) bool {
	if replies >= w.needs {
		return true
	}
	if w.ambiguous {
		return false
	}
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

// idKey is a raw id's identity as a server may echo it: a string by its
// content, a number by its value as float64 (1.0 and 1e0 answer 1).
func idKey(raw []byte) string {
	var buf [64]byte
	if len(raw) > 0 && raw[0] == '"' {
		if s, ok := wire.Unquote(append(buf[:0], 's'), raw); ok {
			return string(s)
		}
		return "r" + string(raw)
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return string(strconv.AppendFloat(append(buf[:0], 'n'), f, 'g', -1, 64))
	}
	return "r" + string(raw)
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

// rulePriority orders the rules a finding is named after: a crash explains
// everything after it, a hang explains missing replies.
func rulePriority(r check.Rule) int {
	switch r {
	case check.Crash:
		return 0
	case check.Hang:
		return 1
	case check.CanaryFailed:
		return 2
	case check.SlowInput:
		return 1000
	}
	if r.Warning() {
		return 900 + int(r)
	}
	return 10 + int(r)
}

// mainRule returns the rule of s that names a finding.
func mainRule(s check.Set) check.Rule {
	best, bestP := check.Rule(0), -1
	for x := uint32(s); x != 0; x &= x - 1 {
		r := check.Rule(bits.TrailingZeros32(x))
		if p := rulePriority(r); bestP < 0 || p < bestP {
			best, bestP = r, p
		}
	}
	return best
}

// judgement collects what the oracles say about each piece of an exchange.
type judgement struct {
	v      verdict
	bestP  int
	bucket uint8
	pr     *profileRules
	mask   check.Set // profile rules the input itself broke first: not the server's
	memo   judgeMemo
}

// judgeMemo remembers the last check.JudgeFuzzReply call and its answer:
// a flood repeats one frame up to a thousand times, often with the same
// reply (or none), and each repeat would get the same answer.
type judgeMemo struct {
	ok           bool
	frame, reply []byte
	class        check.RequestClass
	got          bool
	rules        check.Set
	note         string
}

// judge is check.JudgeFuzzReply, answered from the memo for the same
// arguments.
func (jm *judgeMemo) judge(frame []byte, class check.RequestClass, reply []byte, got bool) (check.Set, string) {
	if jm.ok && jm.class == class && jm.got == got && (jm.reply == nil) == (reply == nil) &&
		bytes.Equal(jm.frame, frame) && bytes.Equal(jm.reply, reply) {
		return jm.rules, jm.note
	}
	rules, note := check.JudgeFuzzReply(frame, class, reply, got)
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
	p := &pairs{frames: c.Frames, infos: infos, replies: o.replies, scans: scans}
	assigned := matchReplies(p)
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
			if infos[i].class == check.Notification {
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
		if o.exitCode == 0 {
			return false, "", "", nil // the server chose to stop (LSP exit); restarted, not blamed
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
		class = check.Batch
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
	if p.kind(j) == wire.KindBatch && p.infos[i].class != check.Batch && !p.infos[i].asBatch {
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
// answer no frame. Most servers answer frames in order, so that is tried
// first (inOrder); JSON-RPC allows any order, though, which ids sort out
// unless the input repeats them: then the replies are matched to frames
// they answer correctly in any order, as many as possible (match). A reply
// left over goes to the next frame still owed a reply, then to any frame
// without one; one finding none is a second reply to the frame whose id it
// carries, or a reply to nothing.
func matchReplies(p *pairs) [][]int {
	n, m := len(p.infos), len(p.replies)
	assigned := make([][]int, n+1)
	if n == 1 {
		for j := range m {
			assigned[0] = append(assigned[0], j)
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
	next := 0 // the frame after the last one answered, for leftovers
	for j := range p.replies {
		if f := frameOf[j]; f >= 0 {
			assigned[f] = append(assigned[f], j)
			next = f + 1
			continue
		}
		pick := -1
		for _, try := range []struct {
			from int
			ok   func(int) bool
		}{
			{next, func(i int) bool { return p.infos[i].needs && p.fits(i, j) }},
			{next, func(i int) bool { return p.fits(i, j) }},
			{next, func(i int) bool { return p.infos[i].needs }},
			{0, func(i int) bool { return p.infos[i].needs && p.fits(i, j) }},
			{0, func(i int) bool { return p.fits(i, j) }},
			{0, func(i int) bool { return p.infos[i].needs }},
			{0, func(int) bool { return true }},
		} {
			if pick = firstFrameFrom(p.infos, taken, try.from, try.ok); pick >= 0 {
				break
			}
		}
		if pick >= 0 {
			taken[pick] = true
			assigned[pick] = append(assigned[pick], j)
			next = pick + 1
			continue
		}
		pick = n
		for i, fi := range p.infos {
			if ids[j] != nil && bytes.Equal(fi.id, ids[j]) {
				pick = i
				break
			}
		}
		assigned[pick] = append(assigned[pick], j)
	}
	return assigned
}

// inOrder tries the common case: the replies answer, in order, the frames
// that need one, and a frame that needs none (a notification, say) may
// take one where the spec tolerates an answer. A reply that fits both the
// next frame that needs one and a frame before it that needs none is
// ambiguous; both choices are tried, depth first, remembering the states
// that failed, so the search stays within frames×replies steps.
func inOrder(p *pairs, assigned [][]int) bool {
	n, m := len(p.infos), len(p.replies)
	failed := map[[2]int]bool{}
	var solve func(i, j int) bool
	solve = func(i, j int) bool {
		if j == m {
			for ; i < n; i++ {
				if p.infos[i].needs {
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
			if p.infos[k].needs {
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
// as many as possible (Kuhn's augmenting paths): frames that need a reply
// first, then frames that need none but may take one. A reply that carries
// a frame's id prefers it. frameOf[j] is reply j's frame, or -1. Past
// maxAlign pairs, only ids are compared.
func match(p *pairs, ids [][]byte) []int {
	n, m := len(p.infos), len(p.replies)
	frameOf := make([]int, m)
	for j := range frameOf {
		frameOf[j] = -1
	}
	same := func(i, j int) bool { return ids[j] != nil && bytes.Equal(p.infos[i].id, ids[j]) }
	edge := func(i, j int) bool {
		if n*m > maxAlign {
			return same(i, j)
		}
		return p.fits(i, j)
	}
	var seen []bool
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
	for _, needs := range [2]bool{true, false} {
		for i := range n {
			if p.infos[i].needs == needs {
				seen = make([]bool, m)
				augment(i)
			}
		}
	}
	return frameOf
}

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
	if died, shape, note, ev := streamCrash(o, nil, 0); died && o.end != endClosed {
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
			j.add(0, "", nil, nil, status) // refused at the HTTP level; nothing for the JSON-RPC oracles
			continue
		}
		rules, note := j.memo.judge(c.Frames[i], infos[i].class, body, body != nil)
		rules &^= check.Set(0).Add(check.Hang) // the response came: silence is an empty body, not a hang
		if body == nil && infos[i].needs && infos[i].readable {
			rules = rules.Add(check.NoResultOrError)
			note = "an empty HTTP response to a request with an id"
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

// numberRuns makes stderr lines of one crash site equal whatever the input:
// "index out of range [5] with length 3" and "[7] with length 2" are one
// bug, and so are two addresses.
var numberRuns = regexp.MustCompile(`0x[0-9a-fA-F]+|[0-9]+`)

// stderrKey picks the line of a crashed child's stderr that names the
// crash: the first panic or fatal error line, else the last line, with
// numbers blanked.
func stderrKey(lines []string) string {
	pick := ""
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		low := strings.ToLower(t)
		if strings.HasPrefix(low, "panic:") || strings.HasPrefix(low, "fatal error:") || strings.Contains(low, "traceback") ||
			strings.Contains(low, "segmentation fault") || strings.HasPrefix(low, "error:") || strings.Contains(low, "exception") {
			pick = t
			break
		}
		pick = t
	}
	pick = numberRuns.ReplaceAllStringFunc(pick, func(n string) string {
		if strings.HasPrefix(n, "0x") {
			return "0xN"
		}
		return "N"
	})
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
		b := classBuf[:0]
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
				if len(b) > 0 && b[len(b)-1] == 'N' {
					continue
				}
				c = 'N'
			case c >= 'A' && c <= 'Z':
				c += 'a' - 'A'
			}
			b = append(b, c)
			if len(b) == 48 {
				break
			}
		}
		for _, c := range b {
			h = (h ^ uint32(c)) * prime32
		}
		h *= prime32 // the 0 byte after each part: h^0 is h
	}
	return h
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
