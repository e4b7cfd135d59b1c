package shardhttp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// The default timing of a Gatherer.
const (
	// DefaultWait is how long a shard that never answered is waited for:
	// long enough for pods to be scheduled, pull their image and start.
	DefaultWait = 15 * time.Minute
	// DefaultLostAfter is how long a shard that answered may then go
	// without answering before the merge counts it lost.
	DefaultLostAfter = 2 * time.Second
	// DefaultPoll is the time between two polls of the shards.
	DefaultPoll = 500 * time.Millisecond
	// logEvery is how often the merger says what it still waits for.
	logEvery = 30 * time.Second
	// maxBadFetches is how many fetches of a done shard's result may fail
	// (cut short, or its ETag not matching) before the merge gives up on it.
	maxBadFetches = 3
)

// Gatherer is the merger's side of the protocol: it polls every shard
// until each has delivered its result, and fails as soon as one cannot:
// it failed (its exit code and error), stopped answering after it had
// answered (for LostAfter), was not reached at all within Wait, or answers
// as no shard does. With AllowMissing, the shards that cannot deliver are
// left out instead, each with the reason, and the others are still
// gathered. The clock and the client are fields, so tests can drive it.
type Gatherer struct {
	Client       Client
	Wait         time.Duration
	LostAfter    time.Duration
	Poll         time.Duration
	AllowMissing bool
	Now          func() time.Time
	After        func(time.Duration) <-chan time.Time
	Log          func(line string) // progress lines; nil: none

	trackers []*tracker
}

// NewGatherer gathers the results of the shards at sources (host:port or
// http:// URLs, see BaseURL), with the default timing and the real clock.
func NewGatherer(sources []string, client Client) (*Gatherer, error) {
	if len(sources) == 0 {
		return nil, errors.New("no shard address given")
	}
	g := &Gatherer{Client: client, Wait: DefaultWait, LostAfter: DefaultLostAfter, Poll: DefaultPoll, Now: time.Now, After: time.After}
	seen := map[string]string{}
	for _, src := range sources {
		base, err := BaseURL(src)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[base]; dup {
			return nil, fmt.Errorf("%s and %s are the same shard: its load would count twice", prev, src)
		}
		seen[base] = src
		g.trackers = append(g.trackers, &tracker{source: src, base: base})
	}
	return g, nil
}

// Fetched is one shard's result as it came.
type Fetched struct {
	Source   string // the address as given
	Shard    string // "i/n", "" for a run without --shard
	ExitCode int    // the shard's own exit code (0, or 1 for findings)
	Data     []byte // the result file's bytes
	ETag     string
}

// Outcome is what Gather gathered.
type Outcome struct {
	Results []Fetched // in the order of the sources
	// Missing says why each shard left out (AllowMissing) did not deliver,
	// one line each.
	Missing []string
	failed  []*tracker // shards whose failure was seen, to acknowledge
}

// MissingError is a gathering's failure for a shard whose result did not
// come (it failed, stopped answering or was never reached) or for shards
// no address was given for: the failures that allowing missing shards
// would have let pass.
type MissingError struct{ Why string }

func (e *MissingError) Error() string { return e.Why }

// end is how a shard's gathering ended.
type end int

const (
	open      end = iota // still being polled
	fetched              // its result is in hand
	failed               // it failed, or its result could not be fetched
	lost                 // it answered, then stopped answering
	unreached            // it never answered within Wait
	broken               // it answered as no shard does
)

// tracker follows one shard.
type tracker struct {
	source, base string
	status       Status
	seen         bool // it has answered
	lastSeen     time.Time
	lastErr      error
	badFetches   int
	result       *Fetched
	end          end
	why          string // what went wrong, for a bad end
}

// answer is what one poll of a shard got.
type answer struct {
	status   Status
	err      error // no status: no answer, or a ProtocolError
	data     []byte
	etag     string
	fetchErr error // the status was done, and its result did not come whole
}

func (t *tracker) name() string { return describe(t.status.Shard, t.source) }

// observe moves the tracker on by one poll's answer at now; start is when
// the gathering began.
func (t *tracker) observe(g *Gatherer, now, start time.Time, a answer) {
	if a.err != nil {
		t.lastErr = a.err
		switch {
		case isProtocol(a.err):
			t.end, t.why = broken, fmt.Sprintf("%s does not answer as a shard does: %v", t.name(), a.err)
		case t.seen && now.Sub(t.lastSeen) >= g.LostAfter:
			t.end, t.why = lost, fmt.Sprintf("%s stopped answering: nothing for %s since it said it was %s (killed?): %v",
				t.name(), now.Sub(t.lastSeen).Round(time.Millisecond), t.status.State, a.err)
		case !t.seen && now.Sub(start) >= g.Wait:
			t.end, t.why = unreached, fmt.Sprintf("%s did not answer within %s: %v", t.name(), g.Wait, a.err)
		}
		return
	}
	t.seen, t.lastSeen, t.status, t.lastErr = true, now, a.status, nil
	switch a.status.State {
	case Failed:
		t.end, t.why = failed, fmt.Sprintf("%s failed with exit code %d: %s", t.name(), *a.status.ExitCode, orNone(a.status.Error))
	case Done:
		switch {
		case a.fetchErr == nil:
			t.end = fetched
			t.result = &Fetched{Source: t.source, Shard: a.status.Shard, ExitCode: *a.status.ExitCode, Data: a.data, ETag: a.etag}
		case isProtocol(a.fetchErr):
			t.end, t.why = broken, fmt.Sprintf("%s is done, but does not serve its result as a shard does: %v", t.name(), a.fetchErr)
		default:
			t.lastErr = a.fetchErr
			if t.badFetches++; t.badFetches >= maxBadFetches {
				t.end, t.why = failed, fmt.Sprintf("%s is done, but its result did not come whole in %d tries: %v", t.name(), t.badFetches, a.fetchErr)
			}
		}
	}
}

func orNone(msg string) string {
	if msg == "" {
		return "(no error message)"
	}
	return msg
}

// Gather polls the shards until every one has delivered its result (or,
// with AllowMissing, been left out), and returns the results. The error
// names the shard at fault and what went wrong; it comes as soon as that
// is known.
func (g *Gatherer) Gather(ctx context.Context) (*Outcome, error) {
	start := g.Now()
	nextLog := start.Add(logEvery)
	out := &Outcome{}
	for {
		var polled []*tracker
		for _, t := range g.trackers {
			if t.end == open {
				polled = append(polled, t)
			}
		}
		if len(polled) == 0 {
			break
		}
		answers := g.pollAll(ctx, polled)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("stopped waiting for the shards: %w", err)
		}
		now := g.Now()
		for i, t := range polled {
			wasSeen := t.seen
			t.observe(g, now, start, answers[i])
			if err := g.settle(t, wasSeen, out); err != nil {
				return nil, err
			}
		}
		if err := g.checkShards(); err != nil {
			return nil, err
		}
		if !now.Before(nextLog) {
			g.logWaiting()
			nextLog = now.Add(logEvery)
		}
		if g.done() {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stopped waiting for the shards: %w", ctx.Err())
		case <-g.After(g.Poll):
		}
	}
	for _, t := range g.trackers {
		if t.result != nil {
			out.Results = append(out.Results, *t.result)
		}
	}
	return out, nil
}

func (g *Gatherer) done() bool {
	for _, t := range g.trackers {
		if t.end == open {
			return false
		}
	}
	return true
}

// pollAll polls the shards at once, so one that hangs delays none of the
// others beyond the client's timeout.
func (g *Gatherer) pollAll(ctx context.Context, ts []*tracker) []answer {
	answers := make([]answer, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Go(func() {
			st, err := g.Client.Status(ctx, t.base)
			a := answer{status: st, err: err}
			if err == nil && st.State == Done {
				a.data, a.etag, a.fetchErr = g.Client.Result(ctx, t.base)
			}
			answers[i] = a
		})
	}
	wg.Wait()
	return answers
}

// settle says what became of t in this poll, and fails the gathering on a
// bad end unless missing shards are allowed (a shard that answers as none
// does is a mistake in the addresses, and fails it always).
func (g *Gatherer) settle(t *tracker, wasSeen bool, out *Outcome) error {
	if t.seen && !wasSeen && t.end == open {
		g.log("%s: %s", t.name(), t.status.State)
	}
	switch t.end {
	case open:
		return nil
	case fetched:
		g.log("%s: done (exit code %d); result fetched (%s)", t.name(), t.result.ExitCode, byteSize(len(t.result.Data)))
		return nil
	case broken:
		return errors.New(t.why)
	}
	if t.end == failed && t.status.State == Failed {
		out.failed = append(out.failed, t)
	}
	if !g.AllowMissing {
		return &MissingError{t.why}
	}
	g.log("%s; merging without it", t.why)
	out.Missing = append(out.Missing, t.why)
	return nil
}

// checkShards fails the gathering when the shards that answered cannot be
// the shards of one run: two addresses serving the same shard, shards of
// different counts, or more addresses than shards; and, unless missing
// shards are allowed, fewer addresses than the run has shards.
func (g *Gatherer) checkShards() error {
	var first *tracker
	count := 0
	byIndex := map[int]*tracker{}
	for _, t := range g.trackers {
		if t.status.Shard == "" {
			continue
		}
		i, n, err := ParseShard(t.status.Shard)
		if err != nil {
			return fmt.Errorf("%s: %v", t.source, err)
		}
		if first == nil {
			first, count = t, n
		}
		if n != count {
			return fmt.Errorf("%s is shard %s but %s is shard %s: they are not shards of one run", first.source, first.status.Shard, t.source, t.status.Shard)
		}
		if other, dup := byIndex[i]; dup {
			return fmt.Errorf("%s and %s both serve shard %s: its load would count twice", other.source, t.source, t.status.Shard)
		}
		byIndex[i] = t
	}
	switch {
	case first == nil:
	case count < len(g.trackers):
		return fmt.Errorf("the run has %d shards (%s is shard %s), but %d addresses were given", count, first.source, first.status.Shard, len(g.trackers))
	case count > len(g.trackers) && !g.AllowMissing:
		return &MissingError{fmt.Sprintf("the run has %d shards (%s is shard %s), but only %d addresses were given: the merge would lack %d of them",
			count, first.source, first.status.Shard, len(g.trackers), count-len(g.trackers))}
	}
	return nil
}

// logWaiting says which shards the gathering still waits for, and why.
func (g *Gatherer) logWaiting() {
	var waiting []string
	for _, t := range g.trackers {
		switch {
		case t.end != open:
		case t.lastErr != nil && !t.seen:
			waiting = append(waiting, fmt.Sprintf("%s (not answering yet: %v)", t.name(), t.lastErr))
		case t.lastErr != nil:
			waiting = append(waiting, fmt.Sprintf("%s (%s; last try: %v)", t.name(), t.status.State, t.lastErr))
		default:
			waiting = append(waiting, fmt.Sprintf("%s (%s)", t.name(), t.status.State))
		}
	}
	g.log("waiting for %d of %d shards: %s", len(waiting), len(g.trackers), strings.Join(waiting, "; "))
}

func (g *Gatherer) log(format string, a ...any) {
	if g.Log != nil {
		g.Log(fmt.Sprintf(format, a...))
	}
}

// Ack acknowledges every result fetched and every failure seen, which
// lets those shards exit. The errors (a shard gone meanwhile: it exits
// at its own timeout anyway) come joined, for a warning.
func (g *Gatherer) Ack(ctx context.Context, out *Outcome) error {
	type ack struct{ source, base, etag string }
	var acks []ack
	for _, t := range g.trackers {
		if t.result != nil {
			acks = append(acks, ack{t.source, t.base, t.result.ETag})
		}
	}
	for _, t := range out.failed {
		acks = append(acks, ack{t.source, t.base, ""})
	}
	errs := make([]error, len(acks))
	var wg sync.WaitGroup
	for i, a := range acks {
		wg.Go(func() {
			if err := g.Client.Ack(ctx, a.base, a.etag); err != nil {
				errs[i] = fmt.Errorf("acknowledging %s: %w", a.source, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
