package oracle

import (
	"bytes"

	"github.com/rpcload/rpcload/internal/wire"
)

// edge is a bit set of the traits of an input that make the spec leave a
// server a choice (the tolerance table of docs/oracle.md).
type edge uint16

const (
	edgeDeep         edge = 1 << iota // nesting deeper than depthEdge
	edgeBadUTF8                       // invalid UTF-8
	edgeSurrogate                     // a lone surrogate escape
	edgeHugeNumber                    // a number beyond float64
	edgeHugeFrame                     // a frame longer than sizeEdge
	edgeDupKey                        // a member name repeated in some object
	edgeDupID                         // the envelope's "id" repeated
	edgeIDShape                       // id null, fractional, exponent, or an integer beyond float64's exact range
	edgeExtra                         // envelope members besides jsonrpc, id, method, params
	edgeResponseLike                  // a response object (result or error, no method) sent to the server
	edgeNullParams                    // "params": null
	edgeEmptyMethod                   // "method": "", which names no method
)

// edgeLimit are the traits that may hit a parser's limit. They are told
// apart only for InputTraits: a finding whose exchange says nothing of its
// cause (a crash, a hang) is known by them.
const edgeLimit = edgeDeep | edgeBadUTF8 | edgeSurrogate | edgeHugeNumber | edgeHugeFrame

// refusable are the edges for which a whole batch may be refused with one
// error (the last row of the tolerance table). Extra members and odd ids
// are not among them: the spec's own batch example has an element with an
// extra member and wants an array back.
const refusable = edgeLimit | edgeDupKey | edgeResponseLike | edgeNullParams

// scanEdges returns the edges the scan shows, without walking the frame.
func (q *request) scanEdges(params []byte) edge {
	m := &q.m
	var e edge
	if q.frameLen > sizeEdge {
		e |= edgeHugeFrame
	}
	if m.Problems.Has(wire.ProblemInvalidUTF8) {
		e |= edgeBadUTF8
	}
	if m.Problems.Has(wire.ProblemDuplicateKey) {
		e |= edgeDupKey | q.dupIDEdge()
	}
	if m.Problems&(wire.ProblemExtraMember|wire.ProblemMixedMembers) != 0 {
		e |= edgeExtra
	}
	if m.Kind == wire.KindResult || m.Kind == wire.KindError || m.Problems.Has(wire.ProblemMixedMembers) {
		// A message with a method and a result or error is a request or a
		// response with members too many, and the spec does not say which:
		// a peer that also receives responses (MCP, LSP) may take it for
		// one and drop it (mcp-go does), or refuse it with -32600.
		e |= edgeResponseLike
	}
	if m.IDKind == wire.IDNull || q.looseNumericID() {
		e |= edgeIDShape
	}
	if string(params) == "null" {
		e |= edgeNullParams
	}
	return e
}

// analyse returns all of q's edges, walking the request the first time:
// only a second look at a strict verdict needs what the walk finds.
func (q *request) analyse() edge {
	if !q.walked {
		q.walked = true
		q.edges |= walkEdges(q.raw, int(q.depth))
	}
	return q.edges
}

// echoes reports whether r carries q's id: an equal value of the same JSON
// type, null for null.
func (q *request) echoes(r *wire.Message) bool {
	if !q.readableID() {
		return false
	}
	if q.m.IDKind == wire.IDNull || r.IDKind == wire.IDNull {
		return q.m.IDKind == r.IDKind
	}
	return r.IDKind != wire.IDAbsent && wire.CompareIDs(q.m.ID, r.ID, q.looseNumericID()) == wire.IDEqual
}

// silenceTolerated reports whether no reply at all is an answer the
// tolerances allow although the strict verdict wants one. It walks the
// request only for an element without an id, where a repeated name
// anywhere allows silence, and only with walk (without, such a request
// counts as one that needs a reply).
func (q *request) silenceTolerated(walk bool) bool {
	return q.m.IDKind == wire.IDNull || q.otherSilence(walk)
}

// nullIDSilence reports whether silence is tolerated only because q's id
// is null: a server that reads id null as JSON-RPC 1.0 did, as a
// notification, and so never answers. That is rule null_id_unanswered, a
// warning: JSON-RPC 2.0 makes the message a request, but discourages the
// id.
func (q *request) nullIDSilence() bool {
	return q.m.IDKind == wire.IDNull && q.class != ParseError && q.needsReply() && !q.otherSilence(true)
}

// otherSilence is silenceTolerated for a reason other than an id null.
func (q *request) otherSilence(walk bool) bool {
	switch {
	case q.edges&edgeResponseLike != 0:
		return true
	case q.m.Problems.Has(wire.ProblemDuplicateKey) && q.readingAccepts(nil):
		return true
	case q.m.IDKind != wire.IDAbsent || !walk && !q.walked:
		return q.edges&edgeDupKey != 0 && q.m.IDKind == wire.IDAbsent
	}
	return q.analyse()&edgeDupKey != 0
}

// required reports whether silence about q, a batch element, is a finding.
func (q *request) required() bool { return q.needsReply() && !q.silenceTolerated(true) }

// tolerates reports whether r (nil: silence) is an answer the spec allows
// for one of q's edges although the strict verdict rejected it.
func (q *request) tolerates(r *wire.Message) bool {
	if r == nil {
		return q.silenceTolerated(true)
	}
	e := q.analyse()
	if e == 0 {
		return false
	}
	isErr := r.Kind == wire.KindError
	sameID := q.echoes(r)
	idOK := r.IDKind == wire.IDNull || sameID
	switch {
	case e&edgeDupID != 0:
		return true
	case e&(edgeLimit|edgeDupKey) != 0 && isErr && idOK:
		return true
	case e&edgeDupKey != 0 && sameID:
		return true
	case e&(edgeIDShape|edgeExtra|edgeResponseLike|edgeEmptyMethod) != 0 && isErr && r.HasCode && r.Code == wire.CodeInvalidRequest && idOK:
		return true
	case e&edgeNullParams != 0 && q.class == InvalidParams:
		// Read as absent, null leaves a valid request.
		alt := *q
		alt.class = Call
		if q.m.IDKind == wire.IDAbsent {
			alt.class = Notification
		}
		if s, _ := alt.strict(r, false); s == 0 {
			return true
		}
	}
	return e&edgeDupKey != 0 && q.m.Problems.Has(wire.ProblemDuplicateKey) && q.readingAccepts(r)
}

// readingAccepts reports whether r (nil: silence) is the correct answer to
// q as read by a parser that keeps the first, or the last, occurrence of
// each repeated envelope member.
func (q *request) readingAccepts(r *wire.Message) bool {
	var alt request
	for _, first := range [2]bool{true, false} {
		if !q.reading(first, &alt) {
			return false
		}
		// (Silence that reading only warns about, an id null left
		// unanswered, is accepted: which id the server read is a guess.)
		if s, _ := alt.verdict(r, false); s.Failures() == 0 {
			return true
		}
	}
	return false
}

// Envelope members whose repeats change how a request reads.
const (
	memJSONRPC uint8 = 1 << iota
	memID
	memMethod
	memParams
)

// readingProblems are the problem bits that depend on which occurrence of
// a repeated member a reader keeps.
const readingProblems = wire.ProblemBadVersion | wire.ProblemBadID | wire.ProblemFractionalID |
	wire.ProblemBadMethod | wire.ProblemBadParams

// reading sets *alt to q as read keeping the first (or the last) occurrence
// of each repeated envelope member; false when q is not an object. The
// reading has no repeats, and q's edges except those of the repeats and of
// the id and params it replaces, so judging it does not come back here.
func (q *request) reading(first bool, alt *request) bool {
	it, ok := wire.ObjectMembers(q.raw)
	if !ok {
		return false
	}
	*alt = *q
	m := &alt.m
	m.Problems &^= readingProblems | wire.ProblemDuplicateKey
	m.ID, m.IDKind = nil, wire.IDAbsent
	var params []byte
	var got uint8
	versionOK := false
	for {
		name, v, ok := it.Next()
		if !ok {
			break
		}
		mem := memberOf(name)
		if mem == 0 || first && got&mem != 0 {
			continue
		}
		got |= mem
		switch mem {
		case memJSONRPC:
			versionOK = isVersion(v)
		case memID:
			// A later occurrence replaces what an earlier one made wrong.
			m.Problems &^= wire.ProblemBadID | wire.ProblemFractionalID
			m.ID, m.IDKind = v, wire.IDOther
			switch c := v[0]; {
			case c == '"':
				m.IDKind = wire.IDString
			case c == 'n':
				m.IDKind = wire.IDNull
			case c == '-' || c >= '0' && c <= '9':
				m.IDKind = wire.IDNumber
				if bytes.ContainsAny(v, ".eE") {
					m.Problems |= wire.ProblemFractionalID
				}
			default:
				m.Problems |= wire.ProblemBadID
			}
		case memMethod:
			m.Problems &^= wire.ProblemBadMethod
			if v[0] != '"' {
				m.Problems |= wire.ProblemBadMethod
			}
		case memParams:
			params = v
			m.Problems &^= wire.ProblemBadParams
			if v[0] != '[' && v[0] != '{' {
				m.Problems |= wire.ProblemBadParams
			}
		}
	}
	if !versionOK {
		m.Problems |= wire.ProblemBadVersion
	}
	alt.class = classifyMessage(m.Kind, m.Problems, 0, q.depth == 0)
	alt.edges = q.analyse()&^(edgeDupKey|edgeDupID|edgeIDShape|edgeNullParams) |
		alt.scanEdges(params)&(edgeIDShape|edgeNullParams)
	alt.walked = true
	return true
}

// dupIDEdge returns edgeDupID when the envelope q.raw holds "id" twice.
func (q *request) dupIDEdge() edge {
	it, ok := wire.ObjectMembers(q.raw)
	if !ok {
		return 0
	}
	ids := 0
	for {
		name, _, ok := it.Next()
		if !ok {
			return 0
		}
		if memberOf(name) == memID {
			if ids++; ids == 2 {
				return edgeDupID
			}
		}
	}
}

// memberOf returns the envelope member bit of the raw member name, or 0.
func memberOf(name []byte) uint8 {
	if len(name) > 64 {
		return 0
	}
	var buf [64]byte
	s, ok := wire.StringContent(buf[:0], name)
	if !ok {
		return 0
	}
	switch string(s) {
	case "jsonrpc":
		return memJSONRPC
	case "id":
		return memID
	case "method":
		return memMethod
	case "params":
		return memParams
	}
	return 0
}

// isVersion reports whether the raw JSON value v is the string "2.0".
func isVersion(v []byte) bool {
	if len(v) > 64 || v[0] != '"' {
		return false
	}
	var buf [64]byte
	s, ok := wire.StringContent(buf[:0], v)
	return ok && string(s) == "2.0"
}
