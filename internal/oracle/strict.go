package oracle

import (
	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/wire"
)

// strict is the verdict without tolerances. The note is written only when
// notes is set: pairing a batch's replies judges many pairs that are not
// findings, and a note costs allocations.
func (q *request) strict(r *wire.Message, notes bool) (check.Set, string) {
	wrong := check.Set(0).Add(check.WrongErrorCode)
	switch q.class {
	case Notification:
		if r == nil {
			return 0, ""
		}
		if !notes {
			return check.Set(0).Add(check.ReplyToNotification), ""
		}
		return check.Set(0).Add(check.ReplyToNotification), "a notification was answered with " + describe(r)
	case ParseError:
		const want = "; want error -32700 with id null"
		switch {
		case r == nil:
			return wrong, "no reply to unparseable input" + want
		case !notes && (r.Kind != wire.KindError || !r.HasCode || r.Code != wire.CodeParseError || r.IDKind != wire.IDNull && r.IDKind != wire.IDAbsent):
			return wrong, ""
		case r.Kind != wire.KindError || !r.HasCode || r.Code != wire.CodeParseError:
			return wrong, "unparseable input answered with " + describe(r) + want
		case r.IDKind != wire.IDNull && r.IDKind != wire.IDAbsent:
			return wrong, "the parse error carries id " + short(r.ID) + want
		}
		return 0, ""
	case InvalidRequest:
		switch {
		case r == nil && q.readableID() && q.m.IDKind != wire.IDNull:
			if !notes {
				return check.Set(0).Add(check.Hang), ""
			}
			return check.Set(0).Add(check.Hang), "no reply to an invalid request with id " + short(q.m.ID) + "; want error -32600"
		case r == nil:
			return wrong, "no reply to an invalid request; want error -32600 with id null"
		case r.Kind != wire.KindError || !r.HasCode || r.Code != wire.CodeInvalidRequest:
			if !notes {
				return wrong, ""
			}
			return wrong, "an invalid request answered with " + describe(r) + "; want error -32600"
		}
		return q.checkID(r, true, notes)
	case InvalidParams:
		switch {
		case r == nil && q.readableID() && q.m.IDKind != wire.IDNull:
			if !notes {
				return check.Set(0).Add(check.Hang), ""
			}
			return check.Set(0).Add(check.Hang), "no reply to a request with scalar params, id " + short(q.m.ID) + "; want error -32602 or -32600"
		case r == nil:
			return 0, ""
		case r.Kind != wire.KindError || !r.HasCode || (r.Code != wire.CodeInvalidParams && r.Code != wire.CodeInvalidRequest && r.Code != wire.CodeMethodNotFound):
			if !notes {
				return wrong, ""
			}
			return wrong, "a request with scalar params answered with " + describe(r) + "; want error -32602, -32600 or -32601"
		}
		return q.checkID(r, r.Code == wire.CodeInvalidRequest, notes)
	case Call:
		switch {
		case r == nil:
			if !notes {
				return check.Set(0).Add(check.Hang), ""
			}
			return check.Set(0).Add(check.Hang), "no reply to a call with id " + short(q.m.ID)
		case r.Kind == wire.KindError && r.HasCode && r.Code == wire.CodeParseError:
			s, note := q.checkID(r, false, notes)
			if !notes {
				return s.Add(check.WrongErrorCode), ""
			}
			return s.Add(check.WrongErrorCode), "a call in valid JSON answered with -32700 (parse error)" + prefixed(note)
		}
		return q.checkID(r, false, notes)
	}
	return 0, ""
}

// checkID holds the response's id against the request's (§5): the same
// value and JSON type, or null where the id was unreadable (or, with
// nullOK, for an invalid request). A response without an id or with an id
// of a wrong type is left to Envelope. The note is written only with notes.
func (q *request) checkID(r *wire.Message, nullOK, notes bool) (check.Set, string) {
	if r.IDKind == wire.IDAbsent || r.IDKind == wire.IDOther {
		return 0, ""
	}
	var s check.Set
	if !q.readableID() {
		if r.IDKind == wire.IDNull {
			return 0, ""
		}
		if s = check.Set(0).Add(check.WrongErrorCode); !notes {
			return s, ""
		}
		return s, "the request's id is unreadable, so the reply's id must be null, not " + short(r.ID)
	}
	if r.IDKind == wire.IDNull {
		if q.m.IDKind == wire.IDNull || nullOK {
			return 0, ""
		}
		if s = check.Set(0).Add(check.UnexpectedNullID); !notes {
			return s, ""
		}
		return s, "reply id null; the request's id " + short(q.m.ID) + " was readable"
	}
	switch wire.CompareIDs(q.m.ID, r.ID, q.looseNumericID()) {
	case wire.IDEqual:
		return 0, ""
	case wire.IDTypeChanged:
		if s = check.Set(0).Add(check.IDTypeChanged); !notes {
			return s, ""
		}
		return s, "reply id " + short(r.ID) + " for request id " + short(q.m.ID) + ": same value, other JSON type"
	}
	if s = check.Set(0).Add(check.UnknownID); !notes {
		return s, ""
	}
	return s, "reply id " + short(r.ID) + "; want " + short(q.m.ID)
}

// looseNumericID reports whether the request's id is a number float64
// cannot hold exactly, so that a server echoing it through a float64 is
// forgiven (the id tolerance of docs/oracle.md).
func (q *request) looseNumericID() bool {
	return q.m.IDKind == wire.IDNumber && (q.m.Problems.Has(wire.ProblemFractionalID) || !wire.SafeInteger(q.m.ID))
}
