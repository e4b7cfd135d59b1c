package testsrv

import (
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/wire"
)

// Spec error messages, written once so every path says the same thing.
const (
	msgParseError     = "Parse error"
	msgInvalidRequest = "Invalid Request"
	msgMethodNotFound = "Method not found"
	msgInvalidParams  = "Invalid params"
)

// part is one response the frame will get: the single reply, or one element
// of a batch reply. Values live in the frame (echo), in static strings, or in
// proc.scratch; the latter are kept as offsets because scratch may grow (and
// move) while later parts are computed.
type part struct {
	id     []byte      // raw request id; nil means null
	idKind wire.IDKind // what id holds, for the id-based faults
	notif  bool        // answers a notification: only sent with notify_reply
	valid  bool        // answers a valid request (method called)
	code   int64       // 0 for success, else the error code
	msg    string      // error message
	val    []byte      // result (success) or error data, when not in scratch
	lo, hi int         // result/data range in scratch when inScratch
	inScr  bool
	delay  time.Duration // the method's service time (timers, not goroutines)
	spin   time.Duration // the method's busy-wait (CPU time)
}

// proc computes replies. It owns all scratch memory so that, once warm, a
// frame is answered without allocating. A proc is used by one goroutine at a
// time: one per stream or WebSocket connection, pooled for HTTP and
// HandleFrame.
type proc struct {
	s       *Server
	m, em   wire.Message
	parts   []part
	scratch []byte // computed results and error data
	name    []byte // unquoted method or key names that contained escapes
	idbuf   []byte // the replacement id of unknown_id / id_type
	out     []byte // HTTP reply body

	batch       bool // reply is an array
	hasNotif    bool // frame holds at least one valid notification
	firstReply  int  // first part that is not a notification, or -1
	firstID     int  // first reply part with a string or number id, or -1
	firstIDType int  // first reply part whose id can change JSON type, or -1
	firstValid  int  // first reply part of a valid request with a non-null id, or -1
}

var procPool = sync.Pool{New: func() any { return new(proc) }}

func (s *Server) getProc() *proc {
	p := procPool.Get().(*proc)
	p.s = s
	return p
}

func putProc(p *proc) {
	if cap(p.scratch) > 1<<16 || cap(p.parts) > 1<<10 || cap(p.out) > 1<<20 {
		// A huge batch should not pin its memory in the pool forever.
		*p = proc{}
	}
	p.s = nil
	procPool.Put(p)
}

// HandleFrame computes the reply for one frame (no faults, no delays, no
// busy-waits) and appends it to dst; reply is false when nothing is to be sent
// (a notification, or a batch of only notifications). It is safe for
// concurrent use and allocates nothing for small requests once warm, so the
// fuzz harness can drive it directly.
func (s *Server) HandleFrame(dst, frame []byte) (out []byte, reply bool) {
	s.countRequest()
	p := s.getProc()
	p.eval(frame)
	if p.firstReply >= 0 {
		dst, reply = p.assemble(dst, fNone, -1), true
	}
	putProc(p)
	return dst, reply
}

// eval scans frame and computes every part of its reply.
func (p *proc) eval(frame []byte) {
	p.parts = p.parts[:0]
	p.scratch = p.scratch[:0]
	p.batch, p.hasNotif = false, false
	wire.Scan(frame, &p.m)
	switch {
	case p.m.Problems&(wire.ProblemInvalidJSON|wire.ProblemInvalidUTF8) != 0:
		// Invalid UTF-8 is treated as unparseable: JSON text must be UTF-8, and
		// echoing such bytes would make our own replies invalid.
		if id := p.s.cfg.ParseErrorID; id != nil && p.m.Problems.Has(wire.ProblemInvalidJSON) {
			p.s.parseErrIDs.Add(1)
			p.fail(p.add(id, wire.IDNumber), wire.CodeParseError, msgParseError, nil)
			break
		}
		p.fail(p.add(nil, wire.IDNull), wire.CodeParseError, msgParseError, nil)
	case p.m.Kind == wire.KindBatch && p.m.BatchLen == 0:
		p.fail(p.add(nil, wire.IDNull), wire.CodeInvalidRequest, msgInvalidRequest, []byte(`"empty batch"`))
	case p.m.Kind == wire.KindBatch:
		p.batch = true
		for off := 0; ; {
			elem, next, ok := wire.NextElement(frame, off)
			if !ok {
				break
			}
			off = next
			wire.Scan(elem, &p.em)
			p.one(&p.em)
		}
	default:
		p.one(&p.m)
	}
	p.setTargets()
}

// invalidMask lists the problems that make a request invalid. Extra members
// are tolerated (the spec does not forbid them and common servers ignore
// them); fractional ids are allowed by JSON-RPC and echoed as they are.
const invalidMask = ^(wire.ProblemExtraMember | wire.ProblemFractionalID)

// one evaluates one scanned message (the frame, or a batch element).
func (p *proc) one(m *wire.Message) {
	switch {
	case m.Kind == wire.KindBatch:
		p.fail(p.add(nil, wire.IDNull), wire.CodeInvalidRequest, msgInvalidRequest, []byte(`"nested batch"`))
	case m.Problems&wire.ProblemInvalidUTF8 != 0:
		p.fail(p.add(nil, wire.IDNull), wire.CodeInvalidRequest, msgInvalidRequest, []byte(`"invalid UTF-8"`))
	case m.Kind == wire.KindResult || m.Kind == wire.KindError:
		id, k := readableID(m)
		p.fail(p.add(id, k), wire.CodeInvalidRequest, msgInvalidRequest, []byte(`"a response is not a request"`))
	case m.Kind != wire.KindRequest && m.Kind != wire.KindNotification, m.Problems&invalidMask != 0:
		// An invalid "notification" is still answered (with id null): the
		// no-reply rule protects valid notifications only.
		id, k := readableID(m)
		pt := p.add(id, k)
		lo := len(p.scratch)
		p.scratch = append(m.Problems.Append(append(p.scratch, '"')), '"')
		p.failScratch(pt, wire.CodeInvalidRequest, msgInvalidRequest, lo)
	case m.Kind == wire.KindNotification:
		p.hasNotif = true
		pt := p.add(nil, wire.IDNull)
		p.parts[pt].notif = true
		if p.s.notifyFault {
			// Only computed when it might be sent: a notification flood
			// should cost a scan, nothing more.
			p.call(pt, m.Method, m.Params)
		}
	default:
		i := p.add(m.ID, m.IDKind)
		p.parts[i].valid = true
		p.call(i, m.Method, m.Params)
	}
}

// readableID returns the id to echo in an error for an invalid message: the
// raw id when it is a string or number, else null.
func readableID(m *wire.Message) ([]byte, wire.IDKind) {
	if m.IDKind == wire.IDNumber || m.IDKind == wire.IDString {
		return m.ID, m.IDKind
	}
	return nil, wire.IDNull
}

// add appends a part and returns its index.
func (p *proc) add(id []byte, k wire.IDKind) int {
	i := len(p.parts)
	p.parts = append(p.parts, part{id: id, idKind: k})
	return i
}

// setTargets records, after the part's kind is known, which faults it can host.
func (p *proc) setTargets() {
	p.firstReply, p.firstID, p.firstIDType, p.firstValid = -1, -1, -1, -1
	for i := range p.parts {
		pt := &p.parts[i]
		if pt.notif {
			continue
		}
		if p.firstReply < 0 {
			p.firstReply = i
		}
		hasID := pt.idKind == wire.IDNumber || pt.idKind == wire.IDString
		if p.firstID < 0 && hasID {
			p.firstID = i
		}
		if p.firstValid < 0 && hasID && pt.valid {
			p.firstValid = i
		}
		if p.firstIDType < 0 && canSwapType(pt) {
			p.firstIDType = i
		}
	}
}

// canSwapType: numbers can always become strings; a string only becomes a
// number when its contents already spell one.
func canSwapType(pt *part) bool {
	switch pt.idKind {
	case wire.IDNumber:
		return true
	case wire.IDString:
		return len(pt.id) > 2 && wire.IsNumber(pt.id[1:len(pt.id)-1])
	}
	return false
}

func (p *proc) ok(i int, val []byte) {
	p.parts[i].val, p.parts[i].code = val, 0
}

// okScratch sets part i's result to scratch[lo:].
func (p *proc) okScratch(i, lo int) {
	pt := &p.parts[i]
	pt.code, pt.inScr, pt.lo, pt.hi = 0, true, lo, len(p.scratch)
}

func (p *proc) fail(i int, code int64, msg string, data []byte) {
	pt := &p.parts[i]
	pt.code, pt.msg, pt.val, pt.inScr = code, msg, data, false
}

// failScratch sets part i's error with data scratch[lo:].
func (p *proc) failScratch(i int, code int64, msg string, lo int) {
	pt := &p.parts[i]
	pt.code, pt.msg, pt.inScr, pt.lo, pt.hi = code, msg, true, lo, len(p.scratch)
}

func (p *proc) value(pt *part) []byte {
	if pt.inScr {
		return p.scratch[pt.lo:pt.hi]
	}
	return pt.val
}

// emitted reports whether part pt is sent when fault f is applied.
func emitted(pt *part, f fid) bool { return !pt.notif || f.answersNotifications() }

// answersNotifications reports whether fault f answers notifications.
func (f fid) answersNotifications() bool { return f == fNotifyReply || f == fNotifyReplyNoID }

// cost returns the service time of the reply under fault f: the slowest
// timer of the sent parts, and the sum of their busy-waits (CPU work is
// sequential, waiting overlaps).
func (p *proc) cost(f fid) (delay, spin time.Duration) {
	for i := range p.parts {
		pt := &p.parts[i]
		if emitted(pt, f) {
			delay = max(delay, pt.delay)
			spin += pt.spin
		}
	}
	return delay, spin
}

// requests counts the frame's requests (its parts that are not
// notifications): what the virtual worker of Config.ServiceTime serves.
func (p *proc) requests() int {
	n := 0
	for i := range p.parts {
		if !p.parts[i].notif {
			n++
		}
	}
	return n
}

// willReply reports whether fault f leaves anything to send.
func (p *proc) willReply(f fid) bool {
	return f != fDrop && (p.firstReply >= 0 || (f.answersNotifications() && p.hasNotif))
}

// assemble appends the reply under fault f (target = the part it changes).
// Whole-frame faults (drop, duplicate, close, delay) do not change the bytes.
func (p *proc) assemble(dst []byte, f fid, target int) []byte {
	switch f {
	case fGarbage:
		return append(dst, garbageBody...)
	case fInvalidEnvelope:
		return append(dst, invalidEnvelope...)
	case fUnknownID, fIDType:
		p.altID(f, &p.parts[target])
	}
	if p.batch {
		dst = append(dst, '[')
	}
	n := 0
	for i := range p.parts {
		pt := &p.parts[i]
		if !emitted(pt, f) {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		switch {
		case i == target:
			dst = p.appendFaulty(dst, pt, f)
		case pt.notif && f == fNotifyReplyNoID:
			dst = p.appendPartNoID(dst, pt)
		default:
			dst = p.appendPart(dst, pt, pt.id)
		}
	}
	if p.batch {
		dst = append(dst, ']')
	}
	return dst
}

// appendPartNoID writes part pt as a response without an id member, the
// way a server that echoes a notification's (absent) id answers it.
func (p *proc) appendPartNoID(dst []byte, pt *part) []byte {
	return append(p.appendOutcome(append(dst, `{"jsonrpc":"2.0"`...), pt), '}')
}

func (p *proc) appendPart(dst []byte, pt *part, id []byte) []byte {
	if pt.code == 0 {
		return wire.AppendResult(dst, id, p.value(pt))
	}
	return wire.AppendError(dst, id, pt.code, pt.msg, p.value(pt))
}

func appendRaw(dst, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, raw...)
}
