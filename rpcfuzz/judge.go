package rpcfuzz

import (
	"regexp"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/native"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
)

// frameInfo is what the oracles say about one message of an input.
type frameInfo struct {
	class oracle.RequestClass
	// asBatch: a batch in a protocol without batches (MCP, LSP), judged as
	// an invalid request unless the server answers it as a batch anyway.
	asBatch bool
	// exempt: silence is allowed (a request cancelled later in the input,
	// or a message after the input ended the session).
	exempt bool
}

// inspect classifies every message of c.
func (h *harness) inspect(c mutate.Case) []frameInfo {
	infos := make([]frameInfo, len(c.Frames))
	var m wire.Message
	ended := false
	cancels := h.rules.Cancels(c.Frames)
	for i, f := range c.Frames {
		fi := frameInfo{class: oracle.ClassifyRequest(f), exempt: ended}
		if h.rules.NoBatches() && (fi.class == oracle.Batch || fi.class == oracle.EmptyBatch) {
			fi.class, fi.asBatch = oracle.InvalidRequest, fi.class == oracle.Batch
		}
		if h.rules.Ends() || len(cancels) > 0 {
			wire.Scan(f, &m)
			if h.rules.EndsSession(m.Method) {
				ended = true
			}
			if m.IDKind != wire.IDAbsent && profile.Cancelled(cancels, i, m.ID) {
				fi.exempt = true // MCP: the receiver of a cancellation should not answer
			}
		}
		infos[i] = fi
	}
	return infos
}

// verdict is one piece of an input the oracles found wrong.
type verdict struct {
	rules check.Set
	note  string
	frame int    // the message it is about; -1 for a stream with broken framing
	reply []byte // the reply that broke the rules, if one did
}

// result is the judgement of one input.
type result struct {
	in       native.Input
	o        outcome
	verdicts []verdict
	// main is the index in verdicts of the one the finding is named after,
	// and rule its rule.
	main int
	rule check.Rule
	// failed: a broken rule fails the input (not a warning, or warnings
	// fail too).
	failed bool
}

// judge applies the oracles to what the target did with in. It returns
// nil when nothing is wrong.
func (h *harness) judge(in native.Input, infos []frameInfo, o *outcome) *result {
	frames := in.Case.Frames
	j := judging{ignore: h.ignore, matching: h.ignoreMatching, frames: frames, wireBytes: o.wireBytes}
	_, isStream := h.target.(streamTarget)
	if o.wire {
		var m wire.Message
		for _, r := range o.wireReplies {
			wire.Scan(r, &m)
			if m.Kind == wire.KindBatch {
				continue // an array answers whatever batch the broken framing delimited
			}
			j.add(check.Envelope(&m), "a reply to input with broken framing is not a valid response", -1, r)
		}
	} else {
		for i := 0; i < o.answered; i++ {
			if o.refused != nil && o.refused[i] {
				if !h.rules.HTTPRefusals() {
					if rules, note := oracle.JudgeRefusal(infos[i].class); rules != 0 {
						j.add(rules, note, i, nil)
					}
				}
				continue
			}
			rep := o.replies[i]
			if rep == nil {
				if infos[i].exempt || o.end != endNone && i >= o.endFrame {
					continue
				}
				rules, note := oracle.JudgeFuzzReply(frames[i], infos[i].class, nil, false)
				if !isStream && rules.Has(check.Hang) {
					// The target returned: the reply is empty, not late.
					rules = rules&^check.Set(0).Add(check.Hang) | check.Set(0).Add(check.NoResultOrError)
					note = "no reply to a request with an id"
				}
				j.add(rules, note, i, nil)
				continue
			}
			class := infos[i].class
			if infos[i].asBatch && replyKind(rep) == wire.KindBatch {
				class = oracle.Batch
			}
			rules, note := oracle.JudgeFuzzReply(frames[i], class, rep, true)
			j.add(rules, note, i, rep)
		}
		for _, x := range o.extra {
			r := check.Set(0).Add(check.DuplicateReply)
			if infos[x.frame].class == oracle.Notification {
				r = check.Set(0).Add(check.ReplyToNotification)
			}
			j.add(r, "a second reply to the same message", x.frame, x.reply)
		}
	}
	frame := o.endFrame
	if o.wire {
		frame = -1
	}
	switch o.end {
	case endPanic, endError:
		j.add(check.Set(0).Add(check.Crash), o.note, frame, nil)
	case endTimeout:
		j.add(check.Set(0).Add(check.Hang), o.note, frame, nil)
	}
	if len(j.verdicts) == 0 && o.end == endNone && h.slowFactor > 0 {
		if slow, limit := h.slow.judge(in.Case, o.latency); slow {
			j.add(check.Set(0).Add(check.SlowInput), "answered in "+o.latency.Round(time.Microsecond).String()+
				", more than the slow limit "+limit.Round(time.Microsecond).String(), 0, nil)
		}
	}
	if len(j.verdicts) == 0 {
		return nil
	}
	res := &result{in: in, verdicts: j.verdicts}
	res.name()
	for _, v := range res.verdicts {
		for r := range v.rules.All() {
			if !r.Warning() || h.failOnWarnings {
				res.failed = true
			}
		}
	}
	return res
}

// name picks the rule a finding is named after, and the verdict that
// breaks it: the most severe of all (check.MostSevere, the engine's order).
func (res *result) name() {
	var all check.Set
	for _, v := range res.verdicts {
		all |= v.rules
	}
	res.rule = check.MostSevere(all)
	for k, v := range res.verdicts {
		if v.rules.Has(res.rule) {
			res.main = k
			return
		}
	}
}

// judging collects the verdicts of one input, less the ignored rules.
type judging struct {
	ignore    check.Set
	matching  []ignoreEntry
	frames    [][]byte // the input's messages, the evidence of a verdict on one
	wireBytes []byte   // the raw stream, the evidence of a verdict on it
	verdicts  []verdict
}

func (j *judging) add(rules check.Set, note string, frame int, reply []byte) {
	rules &^= j.ignore
	for _, e := range j.matching {
		if rules.Has(e.rule) && j.matches(e.re, note, frame, reply) {
			rules &^= check.Set(0).Add(e.rule)
		}
	}
	if rules != 0 {
		j.verdicts = append(j.verdicts, verdict{rules: rules, note: note, frame: frame, reply: reply})
	}
}

// matches reports whether re matches the evidence of a verdict: its note,
// the message it is about (the raw stream for frame -1), or the reply.
func (j *judging) matches(re *regexp.Regexp, note string, frame int, reply []byte) bool {
	sent := j.wireBytes
	if frame >= 0 && frame < len(j.frames) {
		sent = j.frames[frame]
	}
	return re.MatchString(note) || sent != nil && re.Match(sent) || reply != nil && re.Match(reply)
}

func replyKind(reply []byte) wire.Kind {
	var m wire.Message
	wire.Scan(reply, &m)
	return m.Kind
}

// slowFloor is the harness's oracle.SlowRule.Floor: nothing faster is
// slow, as in-process timing jitters by that much.
const slowFloor = 10 * time.Millisecond

// slowTracker is the harness's slow_input rule, under a lock: inputs may be
// judged from several goroutines.
type slowTracker struct {
	mu   sync.Mutex
	rule oracle.SlowRule
}

// judge reports whether input c answered in d was slow, and the limit.
func (s *slowTracker) judge(c mutate.Case, d time.Duration) (bool, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rule.Judge(c, d), s.rule.Limit(oracle.InputSize(c))
}
