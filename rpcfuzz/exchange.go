package rpcfuzz

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/wire"
)

// endKind is how the target's part of an input ended.
type endKind uint8

const (
	endNone    endKind = iota // every message was answered or judged
	endPanic                  // the target panicked
	endError                  // the target returned an error (a stream's serve, a RoundTrip)
	endTimeout                // the target did not return within the timeout
)

// outcome is what the target did with one input.
type outcome struct {
	// replies[i] is the first reply to message i, nil for none. A stream's
	// replies are attributed to messages by the sync replies.
	replies [][]byte
	// extra are further replies to a message (a stream's).
	extra []extraReply
	// refused[i]: message i was refused at the HTTP level, so only
	// oracle.JudgeRefusal judges it (nil when none was).
	refused []bool
	// answered is how many messages the target took: after a crash or a
	// hang at endFrame, the messages after it were never sent or read.
	answered int
	end      endKind
	endFrame int
	note     string // what ended it: the panic value, the error
	stack    []byte // the panicking goroutine's stack
	// wire is set for a stream input whose framing is broken (Case.Wire,
	// or a message with a line break in it): nothing is owed, and
	// wireReplies are only checked as envelopes.
	wire        bool
	wireBytes   []byte
	wireReplies [][]byte
	latency     time.Duration
}

type extraReply struct {
	frame int
	reply []byte
}

// job is one call into the target: a RoundTrip of frame, or a stream's
// serve of r and w when serve is set.
type job struct {
	ctx    *callCtx
	target Target
	frame  []byte
	serve  func(ctx context.Context, r io.Reader, w io.Writer) error
	r      io.Reader
	w      io.Writer
}

// callResult is what one call into the target gave.
type callResult struct {
	reply    []byte
	err      error
	panicked bool
	value    any
	stack    []byte
}

// do runs j, recovering a panic with the stack of the goroutine it
// happened on.
func (j *job) do() (res callResult) {
	defer func() {
		if v := recover(); v != nil {
			res = callResult{panicked: true, value: v, stack: debug.Stack()}
		}
	}()
	if j.serve != nil {
		res.err = j.serve(j.ctx, j.r, j.w)
	} else {
		res.reply, res.err = j.target.RoundTrip(j.ctx, j.frame)
	}
	return res
}

// worker is a goroutine that runs jobs one at a time, so that a call costs
// a channel hand-off instead of a new goroutine, context and timer. A
// worker stuck in a hang is abandoned (its jobs channel closed, so it ends
// if the call ever returns) and the next call starts another.
type worker struct {
	jobs    chan *job
	results chan callResult // buffered: an abandoned worker never blocks on it
}

func startWorker() *worker {
	w := &worker{jobs: make(chan *job), results: make(chan callResult, 1)}
	go func() {
		for j := range w.jobs {
			w.results <- j.do()
		}
	}()
	return w
}

// caller runs the calls of one harness.
type caller struct {
	mu    sync.Mutex
	w     *worker
	timer *time.Timer
}

// call runs j on a goroutine other than the caller's, so that a panic is
// recovered with its own stack and a hang can be given up on (the
// goroutine is then left behind: nothing can stop it). It reports
// timedOut when the timeout passed before the target returned, or the
// target returned an error only because its context had ended.
func (h *harness) call(j *job) (r callResult, timedOut bool) {
	c := &h.caller
	j.ctx = &callCtx{deadline: time.Now().Add(h.timeout)}
	if !c.mu.TryLock() {
		// Inputs run one at a time under go test; should a caller run
		// two at once, the second gets a goroutine of its own.
		w := startWorker()
		defer close(w.jobs)
		return h.await(w, j, time.NewTimer(h.timeout))
	}
	defer c.mu.Unlock()
	if c.w == nil {
		c.w = startWorker()
	}
	if c.timer == nil {
		c.timer = time.NewTimer(h.timeout)
	} else {
		c.timer.Reset(h.timeout)
	}
	r, timedOut = h.await(c.w, j, c.timer)
	if timedOut {
		close(c.w.jobs)
		c.w = nil
	}
	return r, timedOut
}

func (h *harness) await(w *worker, j *job, timer *time.Timer) (callResult, bool) {
	w.jobs <- j
	select {
	case r := <-w.results:
		timer.Stop()
		j.ctx.end(context.Canceled)
		if r.err != nil && !r.panicked && !time.Now().Before(j.ctx.deadline) {
			return callResult{}, true // an error because the deadline passed: a hang it noticed
		}
		return r, false
	case <-timer.C:
		j.ctx.end(context.DeadlineExceeded)
		return callResult{}, true
	}
}

// callCtx is the context of one call: a deadline, and a Done channel made
// only when the target asks for one (a Func never does). It ends when the
// call returns (Canceled, as an HTTP request's context does when its
// handler returns) or times out (DeadlineExceeded).
type callCtx struct {
	deadline time.Time
	mu       sync.Mutex
	done     chan struct{}
	err      error
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *callCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *callCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		if c.err != nil {
			return closedChan
		}
		c.done = make(chan struct{})
	}
	return c.done
}

func (c *callCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *callCtx) Value(any) any { return nil }

func (c *callCtx) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		if c.done != nil {
			close(c.done)
		}
	}
}

// exchange sends c to the target and collects what it did.
func (h *harness) exchange(c mutate.Case) outcome {
	start := h.now()
	var o outcome
	if st, ok := h.target.(streamTarget); ok {
		o = h.exchangeStream(st, c)
	} else {
		o = h.exchangeRoundTrip(c)
	}
	o.latency = h.now().Sub(start)
	return o
}

// exchangeRoundTrip sends the messages one RoundTrip each, in order,
// stopping at the first crash or hang.
func (h *harness) exchangeRoundTrip(c mutate.Case) outcome {
	o := outcome{replies: make([][]byte, len(c.Frames))}
	j := job{target: h.target}
	for i, f := range c.Frames {
		j.frame = bytes.Clone(f) // the target's to keep or modify
		r, timedOut := h.call(&j)
		o.answered = i + 1
		switch {
		case timedOut:
			o.end, o.endFrame = endTimeout, i
			o.note = "no reply within " + h.timeout.String() + ": the target did not return"
			return o
		case r.panicked:
			o.end, o.endFrame = endPanic, i
			o.note, o.stack = "panic: "+fmt.Sprint(r.value), r.stack
			return o
		case r.err != nil && errors.Is(r.err, errRefused):
			if o.refused == nil {
				o.refused = make([]bool, len(c.Frames))
			}
			o.refused[i] = true
		case r.err != nil:
			o.end, o.endFrame = endError, i
			o.note = "the target failed: " + r.err.Error()
			return o
		case len(bytes.TrimSpace(r.reply)) > 0:
			o.replies[i] = r.reply
		}
	}
	return o
}

// Ids of the sync requests: a string namespace of the harness's own, so
// that no reply to an input is taken for one.
var syncIDPrefix = []byte(`"rpcfuzz-sync-`)

// appendSync appends the sync request that follows message i, and its
// line break.
func appendSync(dst []byte, i int) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, syncIDPrefix...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	return append(dst, `","method":"rpcfuzz/sync"}`+"\n"...)
}

// streamInput is what a stream target reads for c, and whether its
// framing is broken on purpose (Wire bytes, or a line break inside a
// message, which splits it in two on a newline-delimited stream).
func streamInput(c mutate.Case) (in []byte, broken bool) {
	if c.Wire != nil {
		return c.Wire, true
	}
	size := 0
	for _, f := range c.Frames {
		size += len(f) + 64
		if bytes.IndexByte(f, '\n') >= 0 {
			broken = true
		}
	}
	in = make([]byte, 0, size)
	for i, f := range c.Frames {
		in = append(append(in, f...), '\n')
		if !broken && i < len(c.Frames)-1 {
			in = appendSync(in, i)
		}
	}
	return in, broken
}

// exchangeStream serves c on a fresh in-memory connection and attributes
// the replies: a reply before the sync reply following message i answers
// message i.
func (h *harness) exchangeStream(st streamTarget, c mutate.Case) outcome {
	n := len(c.Frames)
	o := outcome{replies: make([][]byte, n)}
	in, broken := streamInput(c)
	var out lockedBuffer
	r, timedOut := h.call(&job{serve: st.serve, r: bytes.NewReader(in), w: &out})
	lines := splitLines(out.close())
	if broken {
		o.wire, o.wireBytes = true, in
	}
	// seg is the message the next reply answers: the one after the
	// latest sync reply.
	seg := 0
	var m wire.Message
	for _, line := range lines {
		wire.Scan(line, &m)
		switch {
		case m.Kind == wire.KindRequest || m.Kind == wire.KindNotification:
			continue // the server's own messages: not replies
		case broken:
			o.wireReplies = append(o.wireReplies, line)
			continue
		case m.IDKind == wire.IDString && bytes.HasPrefix(m.ID, syncIDPrefix):
			if k, ok := syncIndex(m.ID); ok && k+1 > seg && k+1 < n {
				seg = k + 1
				continue
			}
		}
		if o.replies[seg] == nil {
			o.replies[seg] = line
		} else {
			o.extra = append(o.extra, extraReply{seg, line})
		}
	}
	o.answered, o.endFrame = n, seg
	switch {
	case timedOut:
		o.end = endTimeout
		o.note = "serve did not return within " + h.timeout.String() + " (it stopped answering, or does not return at the end of its input)"
	case r.panicked:
		o.end = endPanic
		o.note, o.stack = "panic: "+fmt.Sprint(r.value), r.stack
	case r.err != nil:
		o.end = endError
		o.note = "serve returned an error: " + r.err.Error()
	}
	if o.end != endNone {
		// The messages after the one being served when it ended were
		// never answered, through no fault of theirs.
		o.answered = seg + 1
	}
	return o
}

// syncIndex reads i from a sync id "rpcfuzz-sync-i".
func syncIndex(id []byte) (int, bool) {
	digits := id[len(syncIDPrefix) : len(id)-1]
	k, err := strconv.Atoi(string(digits))
	return k, err == nil && k >= 0
}
