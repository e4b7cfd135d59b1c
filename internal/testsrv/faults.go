package testsrv

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rpcload/rpcload/internal/wire"
)

// Fault names one way the server misbehaves on purpose. The string values are
// part of the CLI contract (`rpcload serve --faults drop,close=1%`), so they
// never change.
type Fault string

// Faults the server can inject. Each applies to at most one frame at a time
// and a frame gets at most one fault; see the package documentation for what
// each one looks like on TCP and on HTTP.
const (
	FaultDrop            Fault = "drop"             // never reply to the request
	FaultDuplicate       Fault = "duplicate"        // send the correct reply twice
	FaultUnknownID       Fault = "unknown_id"       // reply with an id the client never sent, same JSON type
	FaultIDType          Fault = "id_type"          // 7 -> "7", "7" -> 7 (same digits, other JSON type)
	FaultBoth            Fault = "both"             // reply carries both result and error
	FaultNeither         Fault = "neither"          // reply carries neither result nor error
	FaultBadVersion      Fault = "bad_version"      // "jsonrpc":"1.0"
	FaultGarbage         Fault = "garbage"          // a line/body that is not JSON at all
	FaultInvalidEnvelope Fault = "invalid_envelope" // valid JSON that is no JSON-RPC response: {"hello":"world"}
	FaultBadError        Fault = "bad_error"        // error object with a string code and no message
	FaultNullID          Fault = "null_id"          // answer a valid request with -32600 and "id":null
	FaultNotifyReply     Fault = "notify_reply"     // answer notifications with "id":null
	FaultClose           Fault = "close"            // close the connection instead of replying
	FaultDelay           Fault = "delay"            // reply correctly, Config.FaultDelay later
)

// FaultNotifyReplyNoID answers notifications with a response that has no id
// member, as a server that echoes a notification's absent id does.
const FaultNotifyReplyNoID Fault = "notify_reply_no_id"

// fid is the dense index of a Fault, so the hot path switches on small
// integers and counts in a fixed array instead of a map.
type fid uint8

const (
	fNone fid = iota
	fDrop
	fDuplicate
	fUnknownID
	fIDType
	fBoth
	fNeither
	fBadVersion
	fGarbage
	fInvalidEnvelope
	fBadError
	fNullID
	fNotifyReply
	fClose
	fDelay
	fNotifyReplyNoID
	numFIDs
)

// allFaults lists every fault in fid order (index = fid-1); it is the
// "valid names" list in error messages and the key set of Injected.
var allFaults = [...]Fault{
	FaultDrop, FaultDuplicate, FaultUnknownID, FaultIDType, FaultBoth,
	FaultNeither, FaultBadVersion, FaultGarbage, FaultInvalidEnvelope,
	FaultBadError, FaultNullID, FaultNotifyReply, FaultClose, FaultDelay,
	FaultNotifyReplyNoID,
}

// Faults returns every fault name, in a stable order (for help texts).
func Faults() []Fault { return append([]Fault(nil), allFaults[:]...) }

func faultID(f Fault) fid {
	for i, g := range allFaults {
		if g == f {
			return fid(i + 1)
		}
	}
	return fNone
}

func (f fid) fault() Fault {
	if f == fNone || f >= numFIDs {
		return ""
	}
	return allFaults[f-1]
}

// validNames is the comma-separated list quoted in error messages so a typo
// can be fixed without reading the docs.
func validNames() string {
	var b strings.Builder
	for i, f := range allFaults {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(f))
	}
	return b.String()
}

// FaultSpec asks for one fault with probability Prob per eligible frame.
type FaultSpec struct {
	Fault Fault
	Prob  float64 // in (0,1]
}

// ErrFaultSpec is wrapped by every error of ParseFaults and by New for bad
// Config.Faults entries, so callers can tell a usage error from an I/O error.
var ErrFaultSpec = errors.New("testsrv: bad fault spec")

// ParseFaults parses a comma-separated list such as
// "drop,duplicate=0.05,close=1%". A bare name gets defaultProb; a probability
// is a decimal fraction or a percentage. Unknown names, repeated names and
// probabilities outside (0,1] are errors naming the bad item and listing the
// valid names. An empty (or all-blank) spec yields no faults.
func ParseFaults(spec string, defaultProb float64) ([]FaultSpec, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	var out []FaultSpec
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		name, probText, hasProb := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("%w: empty item in %q (valid names: %s)", ErrFaultSpec, spec, validNames())
		}
		f := Fault(name)
		if faultID(f) == fNone {
			return nil, fmt.Errorf("%w: %q: unknown fault %q (valid names: %s)", ErrFaultSpec, item, name, validNames())
		}
		p := defaultProb
		if hasProb {
			var err error
			if p, err = parseProb(strings.TrimSpace(probText)); err != nil {
				return nil, fmt.Errorf("%w: %q: %w", ErrFaultSpec, item, err)
			}
		}
		if !(p > 0 && p <= 1) {
			return nil, fmt.Errorf("%w: %q: probability %v is outside (0,1]", ErrFaultSpec, item, p)
		}
		for _, o := range out {
			if o.Fault == f {
				return nil, fmt.Errorf("%w: %q: fault %q listed twice", ErrFaultSpec, item, name)
			}
		}
		out = append(out, FaultSpec{Fault: f, Prob: p})
	}
	return out, nil
}

// parseProb reads "0.05" or "5%".
func parseProb(s string) (float64, error) {
	scale := 1.0
	if t, ok := strings.CutSuffix(s, "%"); ok {
		s, scale = strings.TrimSpace(t), 100
	}
	p, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("bad probability %q: %w", s, err)
	}
	return p / scale, nil
}

// fspec is a validated FaultSpec in hot-path form.
type fspec struct {
	id   fid
	prob float64
}

func compileFaults(in []FaultSpec) ([]fspec, error) {
	out := make([]fspec, 0, len(in))
	seen := map[fid]bool{}
	for _, fs := range in {
		id := faultID(fs.Fault)
		switch {
		case id == fNone:
			return nil, fmt.Errorf("%w: unknown fault %q (valid names: %s)", ErrFaultSpec, fs.Fault, validNames())
		case !(fs.Prob > 0 && fs.Prob <= 1):
			return nil, fmt.Errorf("%w: %s: probability %v is outside (0,1]", ErrFaultSpec, fs.Fault, fs.Prob)
		case seen[id]:
			return nil, fmt.Errorf("%w: fault %q listed twice", ErrFaultSpec, fs.Fault)
		}
		seen[id] = true
		out = append(out, fspec{id: id, prob: fs.Prob})
	}
	return out, nil
}

// roller is the per-connection source of fault decisions. It is not safe for
// concurrent use; the owner (one TCP reader, or one HTTP connection under a
// lock) serialises calls so decisions replay in order for a given seed.
type roller interface{ Float64() float64 }

// roll picks the fault for the frame just evaluated into p: the first entry of
// specs, in order, that applies to this frame and wins its coin flip. Only
// applicable entries consume randomness, so adding a fault that never applies
// does not shift the decisions of the others. It returns the fault and the
// index of the part it targets (-1 for whole-frame faults).
func (p *proc) roll(specs []fspec, r roller) (fid, int) {
	for _, sp := range specs {
		target, ok := p.applicable(sp.id)
		if !ok {
			continue
		}
		if sp.prob >= 1 || r.Float64() < sp.prob {
			return sp.id, target
		}
	}
	return fNone, -1
}

// applicable reports whether fault f can be shown on the frame in p, and on
// which part. unknown_id needs a reply with a string or number id, null_id
// the same for a valid request, id_type an id that can change type;
// notify_reply and notify_reply_no_id need a notification; all others need
// a reply to exist.
func (p *proc) applicable(f fid) (int, bool) {
	switch f {
	case fNotifyReply, fNotifyReplyNoID:
		return -1, p.hasNotif
	case fUnknownID:
		return p.firstID, p.firstID >= 0
	case fNullID:
		return p.firstValid, p.firstValid >= 0
	case fIDType:
		return p.firstIDType, p.firstIDType >= 0
	case fBoth, fNeither, fBadVersion, fBadError:
		return p.firstReply, p.firstReply >= 0
	default:
		return -1, p.firstReply >= 0
	}
}

// garbageBody is what FaultGarbage sends: no JSON parser accepts it, and it
// has no newline so it stays one NDJSON line.
const garbageBody = "<<garbage: not JSON>>"

// invalidEnvelope is valid JSON that is no JSON-RPC message at all.
const invalidEnvelope = `{"hello":"world"}`

// unknownBase is far above any counter a load generator reaches in a run,
// yet exactly representable as a float64 for clients that decode to float.
const unknownBase = 9_000_000_000_000_000

// altID writes the replacement id for unknown_id / id_type into p.idbuf.
func (p *proc) altID(f fid, pt *part) {
	b := p.idbuf[:0]
	switch {
	case f == fIDType && pt.idKind == wire.IDNumber:
		b = append(append(append(b, '"'), pt.id...), '"')
	case f == fIDType:
		b = append(b, pt.id[1:len(pt.id)-1]...)
	default:
		n := p.s.unknownSeq.Add(1)
		for {
			b = b[:0]
			if pt.idKind == wire.IDNumber {
				b = strconv.AppendUint(b, unknownBase+n, 10)
			} else {
				b = strconv.AppendUint(append(b, `"unknown-`...), n, 10)
				b = append(b, '"')
			}
			if !bytes.Equal(b, pt.id) {
				break
			}
			n = p.s.unknownSeq.Add(1)
		}
	}
	p.idbuf = b
}

// appendFaulty writes part pt broken as fault f prescribes. The broken shapes
// are written by hand on purpose: wire's encoders only produce valid replies.
func (p *proc) appendFaulty(dst []byte, pt *part, f fid) []byte {
	switch f {
	case fUnknownID, fIDType:
		return p.appendPart(dst, pt, p.idbuf)
	case fNullID:
		return wire.AppendError(dst, nil, wire.CodeInvalidRequest, msgInvalidRequest, nil)
	case fNeither:
		return append(appendHead(dst, "2.0", pt.id), '}')
	case fBadError:
		return append(appendHead(dst, "2.0", pt.id), `,"error":{"code":"-32603"}}`...)
	case fBadVersion:
		return append(p.appendOutcome(appendHead(dst, "1.0", pt.id), pt), '}')
	case fBoth:
		dst = appendHead(dst, "2.0", pt.id)
		if pt.code == 0 {
			dst = append(dst, `,"result":`...)
			dst = appendRaw(dst, p.value(pt))
			dst = append(dst, `,"error":{"code":-32603,"message":"Internal error"}}`...)
		} else {
			dst = append(dst, `,"result":null`...)
			dst = append(p.appendErrorMember(dst, pt), '}')
		}
		return dst
	}
	return p.appendPart(dst, pt, pt.id)
}

// appendHead writes `{"jsonrpc":"<v>","id":<id>` (no trailing comma).
func appendHead(dst []byte, version string, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"`...)
	dst = append(dst, version...)
	dst = append(dst, `","id":`...)
	return appendRaw(dst, id)
}

// appendOutcome writes the part's `,"result":...` or `,"error":{...}`.
func (p *proc) appendOutcome(dst []byte, pt *part) []byte {
	if pt.code == 0 {
		return appendRaw(append(dst, `,"result":`...), p.value(pt))
	}
	return p.appendErrorMember(dst, pt)
}

// appendErrorMember writes `,"error":{...}` for an error part.
func (p *proc) appendErrorMember(dst []byte, pt *part) []byte {
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, pt.code, 10)
	dst = append(dst, `,"message":`...)
	dst = wire.AppendString(dst, pt.msg)
	if v := p.value(pt); len(v) > 0 {
		dst = append(append(dst, `,"data":`...), v...)
	}
	return append(dst, '}')
}
