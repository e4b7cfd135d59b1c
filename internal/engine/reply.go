package engine

import (
	"sync/atomic"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/wire"
)

// unmatched is the stats method index for replies that matched no request.
const unmatched = 1

// judge handles every frame that arrives on one connection (or in one HTTP
// body): it matches the reply to its request and records the outcome and
// any broken rules. One judge per receiving goroutine.
type judge struct {
	r   *run
	rec *stats.Recorder
	msg wire.Message
	// notified counts notifications sent on this connection; the writer
	// increments it, so it is atomic. An id-null reply can only be a reply
	// to a notification when there was one.
	notified *atomic.Uint64
	// submitted counts samples this judge offered per rule; past the
	// aggregator's limit it stops offering, so a server that breaks a rule
	// in every reply does not cost a lock per reply.
	submitted [check.NumRules]int
}

// frame judges one received frame. A batch's elements are judged one by one.
func (j *judge) frame(tb *pending.Table, frame []byte, now int64) {
	wire.Scan(frame, &j.msg)
	if j.msg.Kind != wire.KindBatch {
		j.one(tb, frame, now)
		return
	}
	for off := 0; ; {
		elem, next, ok := wire.NextElement(frame, off)
		if !ok {
			return
		}
		off = next
		wire.Scan(elem, &j.msg)
		j.one(tb, elem, now)
	}
}

// one judges the message already scanned into j.msg.
func (j *judge) one(tb *pending.Table, frame []byte, now int64) {
	m := &j.msg
	if m.Kind == wire.KindRequest || m.Kind == wire.KindNotification {
		j.rec.Record(stats.Sample{Kind: stats.ServerMessage, Method: unmatched})
		return
	}
	rules := check.Envelope(m)
	method := uint16(unmatched)
	switch m.IDKind {
	case wire.IDNull:
		if j.notified != nil && j.notified.Load() > 0 {
			rules = rules.Add(check.ReplyToNotification)
		} else {
			rules = rules.Add(check.UnexpectedNullID)
		}
	case wire.IDNumber, wire.IDString:
		e, v, typeChanged := tb.Resolve(m.ID)
		switch v {
		case pending.Answered:
			method = e.Method
			if typeChanged {
				rules = rules.Add(check.IDTypeChanged)
			}
			kind := stats.OK
			var code int64
			switch {
			case m.Problems.Has(wire.ProblemBothResultAndError):
				kind = stats.InvalidReply // clients disagree on whether it succeeded
			case m.Kind == wire.KindError && m.HasCode:
				kind, code = stats.RPCError, m.Code
			case m.Kind != wire.KindResult:
				kind = stats.InvalidReply
			}
			j.rec.Record(stats.Sample{Kind: kind, Method: method, A: now - e.Intended, B: now - e.Sent, Code: code})
			j.r.done()
		case pending.Late:
			j.rec.Record(stats.Sample{Kind: stats.Late, Method: unmatched})
		case pending.DuplicateReply:
			rules = rules.Add(check.DuplicateReply)
		case pending.UnknownID:
			rules = rules.Add(check.UnknownID)
		}
	}
	j.violations(rules, method, frame)
}

func (j *judge) violations(rules check.Set, method uint16, frame []byte) {
	if rules == 0 {
		return
	}
	for rule := check.Rule(0); rule < check.NumRules; rule++ {
		if rules.Has(rule) {
			j.rec.Record(stats.Sample{Kind: stats.Violation, Rule: rule, Method: method})
			if j.submitted[rule] < 2*stats.MaxSamplesPerRule {
				j.submitted[rule]++
				j.r.agg.KeepSample(rule, int(method), frame, "")
			}
		}
	}
}
