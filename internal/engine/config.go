// Package engine is the run loop of rpcload. It runs a workload.Plan (what
// to send and when) against one target: a dispatcher turns the schedule
// into ticks carrying their intended send times, connection writers send
// them, readers match replies through the pending table and judge them, and a
// sweeper times out what was never answered. Everything measured flows into
// internal/stats through per-goroutine recorders.
package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/workload"
)

// ErrUnreachable is the class of every reason a run cannot run against its
// target (exit 3): the target could not be reached at all, or it was
// reached but cannot serve this run (it does not speak HTTP/2 for
// --http2, it answers the jsonrpc profile in SSE, its child process
// exited before answering anything). The latter say so in their own words
// (cannotRun) and still unwrap to it.
var ErrUnreachable = errors.New("target unreachable")

// cannotRunError is a target that was reached but cannot serve the run.
type cannotRunError struct {
	url string
	err error
}

func (e *cannotRunError) Error() string   { return "cannot run against " + e.url + ": " + e.err.Error() }
func (e *cannotRunError) Unwrap() []error { return []error{ErrUnreachable, e.err} }

// cannotRun is err as a reason the run cannot run against the target at
// url (exit 3, like ErrUnreachable).
func cannotRun(url string, err error) error { return &cannotRunError{url, err} }

// Config is a validated description of one run.
type Config struct {
	Target transport.Target
	// Plan is what to send and when: the load, the mix, the schedule's
	// shape, the shard. Its fields read as the Config's own.
	workload.Plan
	Conns    int                    // connections
	Restart  bool                   // stdio: start a new child when one exits, and go on
	Child    transport.ChildOptions // stdio: how children are started and stopped
	Header   http.Header
	MaxFrame int
	TLS      transport.TLS // https, wss: verification (TLS.Insecure is --insecure) and client certificate
	HTTP2    bool          // http(s): HTTP/2 (h2c on http://) instead of HTTP/1.1
	// Pipeline is how many requests an HTTP/1.1 connection may have written
	// before their replies are read (HTTP/1.1 pipelining, answered in
	// order); 0 or 1: one at a time.
	Pipeline int
	Interval time.Duration // time-series interval
	// OnInterval, if set, is called after each interval with the new point
	// and the totals so far (for a progress line).
	OnInterval func(p Interval)
	// OnStatus, if set, is called once a second between interval closes
	// with the interval so far (Length is its part elapsed; Hists is nil):
	// a status line refreshes every second even with long intervals.
	OnStatus func(p Interval)
	// IntervalHists asks for each interval's histograms in Interval.Hists
	// (for an HdrHistogram interval log).
	IntervalHists bool
	// OnDrain, if set, is called when sending has ended and the run starts
	// waiting up to wait (the drain) for the replies of the inFlight
	// requests still out; not when nothing is in flight or the run was
	// interrupted.
	OnDrain func(inFlight int64, wait time.Duration)
	// InterruptDrain bounds the drain after the context is cancelled,
	// whether that happens while sending or during the drain.
	InterruptDrain time.Duration
	// Profile is the ecosystem layer (handshake, params, answers to the
	// server's requests, cancellation, shutdown, rules); nil is jsonrpc.
	Profile profile.Profile
	// Steps are sent on every connection after the profile's handshake,
	// before load (LSP: textDocument/didOpen of --open).
	Steps []profile.Step
	// Tool is the MCP tool the load calls (--tool); before the load, the
	// server's tools/list must offer it.
	Tool string
	// Divert, if set, takes a share of the calls off the load (rpcload's
	// malformed traffic): a tick it Takes is encoded as one request (or
	// notification) of its call, with the tick's sequence number as its
	// id, or as the call's raw frame, and handed to Send instead of being
	// written on a load connection; it is counted nowhere in the run's
	// figures but requests.diverted. A plan with raw or mutated calls
	// needs one.
	Divert Divert
	// Warmup is the first part of the sending phase (which is Duration
	// long in all): the requests scheduled in it are sent as any other,
	// counted apart in Result.Warmup and left out of the run's figures,
	// whose sending phase starts where it ends.
	Warmup time.Duration
	// ReadServer, if set, reads the server's own gauges
	// (srvgauge.Sampler.Read) as each interval closes, into the point's
	// Server and ServerReadFailures. It runs on the interval's goroutine,
	// never on the load's path, and must bound its own time: the interval
	// waits for it.
	ReadServer func(ctx context.Context) (gauges map[string]float64, failed uint64)
	// Quiet is how long the run goes on once the load has stopped and the
	// drain has ended, sending nothing while the connections stay open
	// and the intervals keep closing (a soak's quiet phase, which tells a
	// leak from a backlog); 0: none. An interrupt ends it; a run that was
	// interrupted or ended early has none.
	Quiet time.Duration
	// OnQuiet, if set, is called when the quiet phase starts.
	OnQuiet func(d time.Duration)
}

// Validate checks c and fills in its defaults. The command line validates
// its Config before it starts anything and Run validates it again: the
// checks of the target, transport and profile are cheap and idempotent, so
// a Config changed after (--diff's second target) is checked as it is. Its
// Plan is validated only once (workload.Build validates the Plans it
// makes; Plan.Validate does nothing on a valid Plan).
func (c *Config) Validate() error {
	if err := c.Plan.Validate(c.Target.IsStream()); err != nil {
		return err
	}
	switch {
	case c.Conns < 1:
		return fmt.Errorf("%s must be at least 1 (got %d)", c.Name("conns"), c.Conns)
	case c.MaxFrame < 64:
		return fmt.Errorf("%s must be at least 64 bytes (got %d)", c.Name("max-frame"), c.MaxFrame)
	case c.Warmup < 0 || c.Warmup > 0 && c.Warmup >= c.Duration:
		return fmt.Errorf("the warm-up (%s) must be shorter than the sending phase (%s)", c.Warmup, c.Duration)
	case c.Warmup > 0 && (len(c.Stages) > 0 || c.Requests > 0):
		return errors.New("a warm-up needs a steady load ended by its duration: no stages, no request count")
	}
	if c.Profile == nil {
		c.Profile, _ = profile.New(profile.JSONRPC, profile.Options{})
	}
	if err := c.validateProfile(); err != nil {
		return err
	}
	if c.Interval <= 0 {
		c.Interval = time.Second
	}
	if c.InterruptDrain <= 0 {
		c.InterruptDrain = time.Second
	}
	if c.Quiet < 0 {
		return fmt.Errorf("the quiet phase must not be negative (got %s)", c.Quiet)
	}
	return nil
}

// validateProfile checks what the profile forbids or needs.
func (c *Config) validateProfile() error {
	p := c.Profile
	name := p.Name()
	switch {
	case c.Batches() && !p.AllowsBatch():
		return fmt.Errorf("%s: the %s profile does not allow JSON-RPC batches", c.batchName(), name)
	case !p.AllowsIDFormat(c.IDFormat):
		return fmt.Errorf("%s string: the %s profile sends integer ids only", c.Name("id-format"), name)
	case name == profile.LSP && !c.Target.IsStream():
		return fmt.Errorf("the lsp profile needs a stream target (stdio, tcp+lsp://, unix+lsp://), not %s", c.Target.Scheme)
	case name == profile.MCP && c.HTTP2:
		return fmt.Errorf("%s: the mcp profile speaks Streamable HTTP over HTTP/1.1", c.Name("http2"))
	case c.Pipeline > MaxPipeline:
		return fmt.Errorf("%s must be at most %d (got %d)", c.Name("pipeline"), MaxPipeline, c.Pipeline)
	case c.Pipeline > 1 && (c.HTTP2 || name == profile.MCP || c.Target.Scheme != transport.HTTP && c.Target.Scheme != transport.HTTPS):
		return fmt.Errorf("%s applies to plain JSON-RPC over HTTP/1.1 only (http:// or https://, without %s, not the mcp profile)", c.Name("pipeline"), c.Name("http2"))
	case len(c.Steps) > 0 && !c.Target.IsStream():
		return fmt.Errorf("opening steps (%s) need a stream target", c.Name("open"))
	}
	return nil
}

// Divert takes calls off a run's load (Config.Divert).
type Divert interface {
	// Takes reports whether the tick of sequence number seq, a tick of
	// the mix's call (an index into Plan.Calls), is diverted; it must
	// depend on them alone, so a run replays exactly. A raw call's ticks
	// must all be.
	Takes(seq uint64, call int) bool
	// Send receives a diverted tick's frame, which is valid only during
	// the call. It must not block: writers call it.
	Send(seq uint64, call int, frame []byte)
}

// Interval is what OnInterval receives.
type Interval struct {
	Elapsed   time.Duration // since the run clock started, at the interval's end
	Length    time.Duration // of this interval (the last one may be short)
	Sent      uint64        // this interval
	Answered  uint64        // this interval
	Errors    uint64        // rpc errors + transport errors + timeouts, this interval
	InFlight  int64
	P99us     int64
	TotalSent uint64
	// Point is the interval as the time series stores it.
	Point stats.Point
	// Hists holds the interval's histograms when Config.IntervalHists is
	// set; they are reused, valid only during the call.
	Hists *stats.IntervalHists
	// MethodHists visits the run's cumulative latency histograms per
	// method, as merged so far (for the Prometheus histograms): reading
	// them costs the callee, never the hot path. At the last interval
	// they are the result's.
	MethodHists stats.MethodHistsFunc
}

// batchName names the batch setting as the user wrote it: --batch for the
// one call of --method, the first batched call of a scenario's mix.
func (c *Config) batchName() string {
	if c.Single() {
		return "--batch"
	}
	for _, call := range c.Calls {
		if call.Batch > 1 {
			return fmt.Sprintf("call %q: batch", call.Name)
		}
	}
	return "--batch"
}
