package fuzz

import (
	"bytes"
	"math/bits"
	"regexp"
	"strconv"
	"strings"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/profile"
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
	// cancelled: a later frame cancels the request (with a readable id),
	// which may then go unanswered (MCP); its id is remembered all the
	// same (keepID), so that a reply that comes after the exchange is
	// late, not a stray.
	cancelled bool
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
	cancels := pr.Cancels(c.Frames)
	for i, f := range c.Frames {
		if i > 0 && bytes.Equal(f, c.Frames[i-1]) {
			infos[i] = infos[i-1]
			continue
		}
		wire.Scan(f, &m)
		fi := frameInfo{class: classify(&m)}
		if pr != nil {
			if pr.Lifecycle(m.Method) {
				lifecycle = true
			}
			if pr.NoBatches() && (fi.class == oracle.Batch || fi.class == oracle.EmptyBatch) {
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
			if profile.Cancelled(cancels, i, fi.id) {
				// MCP: the receiver of a cancellation should not answer.
				fi.cancelled = fi.readable
				fi.needs, fi.readable, fi.owed, fi.required, fi.reqDone = false, false, false, false, true
			}
		}
		infos[i] = fi
	}
	return infos, lifecycle
}

// requiredAt reports whether frame i requires a reply, asking the oracle
// (through memo) the first time and keeping the answer in infos[i].
// Silence that is only a warning (null_id_unanswered) does not make a
// frame required: the wait would cost every such input its grace against
// a server that reads id null as a notification, and the pairing would
// give it replies a required frame needs.
func requiredAt(frames [][]byte, infos []frameInfo, i int, memo *judgeMemo) bool {
	fi := &infos[i]
	if !fi.reqDone {
		rules, _ := memo.judge(frames[i], fi.class, nil, false)
		fi.required, fi.reqDone = rules.Failures() != 0, true
	}
	return fi.required
}

// awaitNullIDs marks the frames whose silence is null_id_unanswered as
// required, so that the exchange waits for their replies until the
// timeout rather than a grace after the sync reply, and reports whether
// there were any. Only the checks of such a finding (its confirmation,
// minimization and replay) wait so: a server that reads id null as a
// notification would make every such input of the run wait out the
// timeout, and one that answers late must not be called silent.
func awaitNullIDs(frames [][]byte, infos []frameInfo) bool {
	var memo judgeMemo
	found := false
	for i := range infos {
		fi := &infos[i]
		if !fi.needs || fi.reqDone && fi.required {
			continue
		}
		if rules, _ := memo.judge(frames[i], fi.class, nil, false); rules.Has(check.NullIDUnanswered) {
			fi.required, fi.reqDone, found = true, true, true
		}
	}
	return found
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
	// batchLen: an array's number of elements.
	batchLen int
}

func scanOf(m *wire.Message) replyScan {
	return replyScan{kind: m.Kind, idKind: m.IDKind, hasCode: m.HasCode, code: m.Code, id: m.ID, errMsg: m.ErrMsg, errData: m.ErrData, batchLen: m.BatchLen}
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

// verdict is the oracles' judgement of one exchange.
type verdict struct {
	rules  check.Set
	rule   check.Rule // the finding's rule: the most severe broken
	code   int64      // the error code of the reply that broke it
	shape  string     // that reply's shape, or what ended the exchange
	note   string
	reply  []byte // the reply that broke it (or a stderr tail), for reply.txt
	tuples []tuple
	// in is the input frame the verdict is about (nil: none, as for a
	// reply that answers no frame) and inClass its class: the input's part
	// of the dedup key.
	in      []byte
	inClass oracle.RequestClass
	// guess: which frame the reply that broke the rule answers (or which
	// frame a missing reply was owed to) is left open by the replies:
	// another frame could as well have had it, with another verdict for
	// this one (guess.go). Confirmation settles it by sending the frame
	// alone (candidate.settleGuess).
	guess bool
	// hits counts, per rule, the pieces of the exchange that broke it:
	// each frame with its reply (or its missing one), each extra reply.
	hits [check.NumRules]uint16
	// api is the API method the frame of the verdict's rule called ("":
	// none); calls are the exchange's calls of the API (api.go).
	api   string
	calls []apiCall
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
	// api holds the exchange to the API's schemas (nil: none); curAPI is
	// the method the frame being judged called, echoes the results of the
	// idempotent calls judged so far (api.go).
	api    *apiRules
	curAPI string
	echoes []apiEcho
	memo   judgeMemo
	// cur is the frame being judged and curClass its class (cur nil: no
	// frame), which the verdict takes with its rule.
	cur      []byte
	curClass oracle.RequestClass
	// curPair is the frame and reply (indices) being judged on a stream,
	// and vPair those the verdict took its rule from ({-1, -1}: none), for
	// verdict.guess.
	curPair, vPair [2]int
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
	return judgement{bestP: -1, bucket: uint8(bits.Len64(uint64(max(us, 0)))), pr: pr, curPair: [2]int{-1, -1}, vPair: [2]int{-1, -1}}
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
		if j.pr.Checks() && sc.kind != wire.KindInvalid && sc.kind != wire.KindBatch {
			var m wire.Message
			wire.Scan(reply, &m)
			if extra := j.pr.Check(&m) &^ j.mask; extra != 0 {
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
	for r := range check.NumRules {
		if rules.Has(r) {
			j.v.hits[r]++
		}
	}
	j.v.rules |= rules
	r := mainRule(rules)
	if p := rulePriority(r); j.bestP < 0 || p < j.bestP {
		j.bestP = p
		j.v.rule, j.v.code, j.v.note = r, code, note
		j.v.reply = reply
		j.v.shape = replyShape(reply)
		j.v.in, j.v.inClass = j.cur, j.curClass
		j.vPair = j.curPair
		j.v.api = j.curAPI
	}
}

// crash records an end of the exchange that is a crash; shape says how.
func (j *judgement) crash(shape, note string, evidence []byte, status uint16) {
	j.add(check.Set(0).Add(check.Crash), note, nil, nil, status)
	if j.v.rule == check.Crash {
		j.v.shape, j.v.reply, j.v.code = shape, evidence, 0
	}
}

// parseErrorIDs counts the replies of o that are a parse error (-32700)
// carrying an id no frame of the input could have given it: not null, and
// none of the frames' readable ids. It reads every reply, however they
// pair with the frames: a frame broken in its framing reaches the server
// as pieces, each of which may get its own parse error. The replies'
// scans are those the judging made.
func parseErrorIDs(infos []frameInfo, o *outcome) uint16 {
	if !o.perFrame {
		return countParseErrorIDs(infos, o.replyScans())
	}
	var n uint16
	for i := range o.frameReplies {
		n += countParseErrorIDs(infos, o.frameScans(i))
	}
	return n
}

func countParseErrorIDs(infos []frameInfo, scans []replyScan) uint16 {
	var n uint16
	for k := range scans {
		sc := &scans[k]
		if sc.kind != wire.KindError || !sc.hasCode || sc.code != wire.CodeParseError || sc.idKind == wire.IDNull || sc.idKind == wire.IDAbsent {
			continue
		}
		echoed := false
		for i := range infos {
			if infos[i].id != nil && wire.EchoesID(infos[i].id, sc.id) {
				echoed = true
				break
			}
		}
		if !echoed {
			n++
		}
	}
	return n
}

// judgeOutcome applies the oracles to the exchange of case c, with the
// profile's rules (pr may be nil: plain JSON-RPC).
func judgeOutcome(c mutate.Case, infos []frameInfo, o *outcome, pr *profileRules) verdict {
	return judgeExchange(c, infos, o, pr, nil)
}

// judgeExchange is judgeOutcome with the API's oracles too (api may be
// nil: none).
func judgeExchange(c mutate.Case, infos []frameInfo, o *outcome, pr *profileRules, api *apiRules) verdict {
	jv := newJudgement(o, pr)
	j := &jv
	j.api = api
	if pr.Checks() && fractionalIDs(c.Frames) {
		// MCP wants integer ids; a server echoing the input's 1.0 back
		// answers what it was asked.
		j.mask = j.mask.Add(check.MCPBadID)
	}
	switch {
	case o.end == endReplaced:
		// (Nothing to judge: the exchange was cut by another input's
		// crash, judged where it was seen.)
	case o.perFrame:
		judgeHTTP(j, c, infos, o)
	case o.wire:
		j.cur, j.curClass = c.Wire, wireClass
		judgeWire(j, o)
	default:
		judgeStream(j, c, infos, o)
	}
	if len(j.v.tuples) == 0 {
		j.add(0, "", nil, nil, uint16(o.end))
	}
	if (j.v.rule == check.Crash || j.v.rule == check.Hang) && j.v.rules != 0 {
		api.blameCall(&j.v, c, infos, o)
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
	p := o.pairs
	if p == nil {
		p = newPairs(c.Frames, infos, o.replies, scans)
		defer p.release()
	} else {
		// (The same frames; the replies only grew since the wait.)
		p.replies, p.scans = o.replies, scans
	}
	p.staleNull, p.staleIDs = o.staleNull, o.staleIDs
	assigned := matchReplies(p)
	o.late += len(assigned[len(c.Frames)+1])
	if j.v.rule == check.Crash {
		j.v.in, j.v.inClass = crashFrame(c.Frames, infos, assigned)
	}
	for i, f := range c.Frames {
		j.cur, j.curClass = f, infos[i].class
		reps := assigned[i]
		var rules check.Set
		var note string
		var rep []byte
		var sc *replyScan
		if len(reps) > 0 {
			rep, sc = o.replies[reps[0]], &scans[reps[0]]
			v := p.judge(i, reps[0])
			rules, note = v.rules, v.note
			j.curPair = [2]int{i, reps[0]}
			if xr, xnote := j.pr.Exchange(c.Frames, nil, 0, rep); xr != 0 {
				rules, note = rules|xr, joinNotes(note, xnote)
			}
			if ar, anote := j.apiExchange(c, infos, i, rep); ar != 0 {
				rules, note = rules|ar, joinNotes(note, anote)
			}
		} else if infos[i].needs && !(o.lifecycle && o.end != endNone && o.end != endTimeout) {
			// (An input that ended the session, as LSP's exit does, is owed
			// nothing after that.)
			rules, note = p.memo.judge(f, infos[i].class, nil, false)
			j.apiExchange(c, infos, i, nil)
			j.curPair = [2]int{i, -1}
			if o.end != endTimeout {
				// Silence is a hang only once the timeout has passed; an
				// exchange that ended sooner ended by a crash (judged above).
				rules &^= check.Set(0).Add(check.Hang)
			}
			if o.end != endNone {
				// Nor is an id null unanswered a notification's reading
				// unless the server answered the sync request: one that
				// died, or answered nothing within the timeout, showed
				// no reading of it.
				rules &^= check.Set(0).Add(check.NullIDUnanswered)
			}
		}
		j.add(rules, note, rep, sc, status)
		j.curPair, j.curAPI = [2]int{-1, -1}, ""
		for _, extra := range reps[min(1, len(reps)):] {
			r := check.Set(0).Add(check.DuplicateReply)
			if infos[i].class == oracle.Notification {
				r = check.Set(0).Add(check.ReplyToNotification)
			}
			j.curPair = [2]int{i, extra}
			j.add(r, "a second reply to the same frame", o.replies[extra], &scans[extra], status)
		}
		j.curPair = [2]int{-1, -1}
	}
	j.cur = nil
	for _, extra := range assigned[len(c.Frames)] {
		rules, note := p.strayVerdict(o.replies[extra])
		j.add(rules, note, o.replies[extra], &scans[extra], status)
	}
	if o.tooLarge > 0 {
		j.add(check.Set(0).Add(check.FrameTooLarge), "a reply longer than the reply limit was skipped", nil, nil, status)
	}
	if i, k := j.vPair[0], j.vPair[1]; i >= 0 && j.v.rule != check.Crash {
		j.v.guess = p.inDoubt(i, k, assigned)
	}
}

// crashFrame returns the frame a stream's crash is blamed on, and its
// class: the first that got no reply although it is not a notification (a
// server that serves a stream in order died on it), else the last.
func crashFrame(frames [][]byte, infos []frameInfo, assigned [][]int) ([]byte, oracle.RequestClass) {
	for i, f := range frames {
		if len(assigned[i]) == 0 && infos[i].class != oracle.Notification {
			return f, infos[i].class
		}
	}
	if n := len(frames); n > 0 {
		return frames[n-1], infos[n-1].class
	}
	return nil, 0
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
		// A line that names the crash (a panic, a traceback) is its key;
		// else how it exited is, with the input (see dedupKey): a server
		// that exits on every message it cannot decode prints what its
		// decoder said, which changes with every input.
		shape, note := "exit:"+exitKind(o.note), "the child process exited: "+o.note
		if line := stderrKey(o.stderr); crashLine(strings.ToLower(line)) {
			shape = "stderr:" + line
		} else if line != "" {
			note += "; stderr: " + oneLine(stderrPick(o.stderr), 200)
		}
		return true, shape, note, []byte(strings.Join(o.stderr, "\n"))
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

// judgeHTTP judges each frame's response: its status, then its body.
func judgeHTTP(j *judgement, c mutate.Case, infos []frameInfo, o *outcome) {
	for i := 0; i < o.sent; i++ {
		if i < len(c.Frames) {
			j.cur, j.curClass = c.Frames[i], infos[i].class
		}
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
			if o.end != endInterrupted && o.end != endUnreachable {
				j.apiExchange(c, infos, i, nil) // sent, and never answered: the coverage's no reply
			}
			switch o.end {
			case endTimeout:
				j.add(check.Set(0).Add(check.Hang), "no HTTP response within the timeout", nil, nil, status)
				continue
			case endInterrupted:
				continue
			case endReset:
				if o.httpStatus[i] >= 500 {
					j.crash("http_"+strconv.Itoa(o.httpStatus[i])+":"+bodyClass(body), "HTTP status "+strconv.Itoa(o.httpStatus[i]), body, status)
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
			case endExited:
				// The server rpcfuzz started died (server.settle): known
				// by its output, as a child is.
				if died, shape, note, ev := streamCrash(o, nil, 0); died {
					j.crash(shape, note, ev, status)
				}
				continue
			}
		}
		if o.httpStatus[i] >= 400 && (!looksLikeJSON(body) || j.pr.HTTPRefusals() && !infos[i].needs && idlessError(body)) {
			// Refused at the HTTP level: the profile's rules may want a
			// given status; else a parse error so refused is a warning.
			// (MCP's Streamable HTTP refuses a notification or response
			// it cannot accept with an HTTP error status, whose body "MAY
			// comprise a JSON-RPC error response that has no id": that
			// is no reply to a notification.)
			rules, note := j.pr.Exchange(c.Frames, o.header, o.httpStatus[i], nil)
			if rules == 0 && !j.pr.HTTPRefusals() {
				rules, note = oracle.JudgeRefusal(infos[i].class)
			}
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
		if xr, xnote := j.pr.Exchange(c.Frames, o.header, o.httpStatus[i], body); xr != 0 {
			rules, note = rules|xr, joinNotes(note, xnote)
		}
		if ar, anote := j.apiExchange(c, infos, i, body); ar != 0 {
			rules, note = rules|ar, joinNotes(note, anote)
		}
		var scans []replyScan
		var sc *replyScan
		if len(reps) > 0 {
			scans = o.frameScans(i)
			sc = &scans[0]
		}
		j.add(rules, note, body, sc, status)
		j.curAPI = ""
		for x, extra := range reps[min(1, len(reps)):] {
			j.add(check.Set(0).Add(check.DuplicateReply), "a second message in the same HTTP response", extra, &scans[x+1], status)
		}
	}
	if o.tooLarge > 0 {
		j.cur = nil
		j.add(check.Set(0).Add(check.FrameTooLarge), "a response body longer than the reply limit", nil, nil, uint16(o.end))
	}
}

// stderrNoise matches what differs between two crashes at one site: file
// paths and positions (/x/y.go:12, main.go:123:4), quoted text (the input's
// bytes a message cites), addresses and other numbers as whole tokens, sign,
// fraction and exponent included (indexes, lengths, goroutine ids, line
// numbers, timestamps, and the input's ids -0, 1.5 or 1e3 a message
// repeats).
var stderrNoise = regexp.MustCompile(`(?:[A-Za-z]:)?(?:[\w.@+-]*/)+[\w.@+-]+(?::[0-9]+)*|[\w.-]+\.[A-Za-z]{1,4}:[0-9]+(?::[0-9]+)?|` +
	`"(?:[^"\\]|\\.)*"|'[^']*'|` + "`[^`]*`" + `|0x[0-9a-fA-F]+|[-+]?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?`)

// stderrNumber is a number token of stderrNoise.
var stderrNumber = regexp.MustCompile(`^[-+]?[0-9]`)

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
