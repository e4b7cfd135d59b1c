// Package engine is the run loop of rpcload: a dispatcher turns the schedule
// into ticks carrying their intended send times, connection writers send
// them, readers match replies through the pending table and judge them, and a
// sweeper times out what was never answered. Everything measured flows into
// internal/stats through per-goroutine recorders.
package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// ErrUnreachable wraps the failure to reach the target at all.
var ErrUnreachable = errors.New("target unreachable")

// Config is a validated description of one run.
type Config struct {
	Target      transport.Target
	Rate        float64       // open loop: requests per second; 0 = closed loop
	Concurrency int           // closed loop: requests kept in flight
	MaxRate     float64       // closed loop: at most this many messages a second over all connections (a batch counts once); 0 = no cap
	Conns       int           // connections
	Duration    time.Duration // length of the sending phase
	Timeout     time.Duration // per request
	Drain       time.Duration // how long to wait for replies after sending stops
	MaxInFlight int           // cap on requests scheduled and not yet resolved
	Method      string
	Params      []byte // raw JSON array or object, or nil
	IDFormat    wire.IDFormat
	NotifyEvery int                    // every Nth call is sent as a notification; 0 = never
	Batch       int                    // send each tick as a batch array of this many calls; 0 or 1 = no batches
	Restart     bool                   // stdio: start a new child when one exits, and go on
	Child       transport.ChildOptions // stdio: how children are started and stopped
	Header      http.Header
	MaxFrame    int
	TLS         transport.TLS // https, wss: verification (TLS.Insecure is --insecure) and client certificate
	HTTP2       bool          // http(s): HTTP/2 (h2c on http://) instead of HTTP/1.1
	Interval    time.Duration // time-series interval
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
	// InterruptDrain bounds the drain after the context is cancelled.
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

	// Calls is the mix of a scenario. Empty: Method, Params and Batch make
	// the one call (and NotifyEvery applies to it).
	Calls []Call
	// Seed drives every random choice (which call, generated params,
	// Poisson arrivals), so a run can be replayed exactly.
	Seed uint64
	// Stages shape the load over time instead of a steady Rate or
	// Concurrency; StartRate and StartConcurrency are where the first
	// stage ramps from.
	Stages           []Stage
	StartRate        float64
	StartConcurrency int
	// Poisson makes open-loop arrivals a Poisson process at the scheduled
	// rate instead of evenly spaced.
	Poisson bool
	// Shard makes this run part i of n runs that together make the load the
	// rest of the Config describes; the zero value is a whole run.
	Shard Shard
	// StartAt, if set, is the wall-clock time the schedule starts at, after
	// the connections are up: shards on many machines start together.
	StartAt time.Time

	single       bool       // the one call of the flags
	sharded      bool       // applyShard has divided the load
	whole        *WholeLoad // a shard's whole run, before the division
	stagedOpen   bool       // stages of rates: open loop
	stagedClosed bool       // stages of concurrency: closed loop
}

// Validate checks c and fills in defaults.
func (c *Config) Validate() error {
	if err := c.validateStages(); err != nil {
		return err
	}
	if err := c.applyShard(); err != nil {
		return err
	}
	switch {
	case c.Rate < 0:
		return fmt.Errorf("--rate must not be negative (got %g)", c.Rate)
	case c.Rate > 0 && c.Concurrency > 0:
		return errors.New("--rate (open loop) and --concurrency (closed loop) exclude each other")
	case c.Rate == 0 && c.Concurrency <= 0 && !c.stagedOpen:
		return errors.New("give --rate R (open loop) or --concurrency N (closed loop)")
	case !(c.MaxRate >= 0) || math.IsInf(c.MaxRate, 1):
		return fmt.Errorf("--max-rate must be a number of messages per second, 0 or more (got %g)", c.MaxRate)
	case c.MaxRate > 0 && (c.Rate > 0 || c.stagedOpen):
		return errors.New("--max-rate caps a closed loop (--concurrency); an open loop (--rate) sends at its intended times, which a token bucket does not keep")
	case c.Rate > 10_000_000:
		return fmt.Errorf("--rate %g is above the supported 10,000,000 req/s", c.Rate)
	case c.Conns < 1:
		return fmt.Errorf("--conns must be at least 1 (got %d)", c.Conns)
	case c.Duration <= 0:
		return fmt.Errorf("--duration must be positive (got %s)", c.Duration)
	case c.Timeout <= 0:
		return fmt.Errorf("--timeout must be positive (got %s)", c.Timeout)
	case c.Drain < 0:
		return fmt.Errorf("--drain must not be negative (got %s)", c.Drain)
	case c.MaxInFlight < 1:
		return fmt.Errorf("--max-inflight must be at least 1 (got %d)", c.MaxInFlight)
	case c.NotifyEvery < 0:
		return fmt.Errorf("--notify-every must not be negative (got %d)", c.NotifyEvery)
	case c.Batch < 0 || c.Batch > 100000:
		return fmt.Errorf("--batch must be between 0 and 100000 (got %d)", c.Batch)
	case c.MaxFrame < 64:
		return fmt.Errorf("--max-frame must be at least 64 bytes (got %d)", c.MaxFrame)
	}
	if c.Params != nil {
		var m wire.Message
		wire.Scan(c.Params, &m)
		t := firstByte(c.Params)
		if m.Problems.Has(wire.ProblemInvalidJSON) || (t != '[' && t != '{') {
			return fmt.Errorf("--params must be a JSON array or object (got %.40q)", c.Params)
		}
		// Newline framing cannot carry a line break inside a frame, so
		// pretty-printed params are compacted once here.
		var compact bytes.Buffer
		if err := json.Compact(&compact, c.Params); err != nil {
			return fmt.Errorf("--params: %w", err)
		}
		c.Params = compact.Bytes()
	}
	if err := c.validateCalls(); err != nil {
		return err
	}
	if c.NotifyEvery > 0 && !c.single {
		return errors.New("--notify-every applies to --method; in a mix, give the call notify: true")
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
	return nil
}

// Single reports whether the run is the one call of the flags (Method),
// not a mix.
func (c *Config) Single() bool { return c.single }

// batches reports whether any call is sent as batches.
func (c *Config) batches() bool {
	for _, call := range c.Calls {
		if call.Batch > 1 {
			return true
		}
	}
	return c.Batch > 1
}

// validateProfile checks what the profile forbids or needs.
func (c *Config) validateProfile() error {
	p := c.Profile
	name := p.Name()
	switch {
	case c.batches() && !p.AllowsBatch():
		return fmt.Errorf("--batch: the %s profile does not allow JSON-RPC batches", name)
	case !p.AllowsIDFormat(c.IDFormat):
		return fmt.Errorf("--id-format string: the %s profile sends integer ids only", name)
	case name == profile.LSP && !c.Target.IsStream():
		return fmt.Errorf("the lsp profile needs a stream target (stdio, tcp+lsp://, unix+lsp://), not %s", c.Target.Scheme)
	case name == profile.MCP && c.HTTP2:
		return errors.New("--http2: the mcp profile speaks Streamable HTTP over HTTP/1.1")
	case len(c.Steps) > 0 && !c.Target.IsStream():
		return errors.New("opening steps (--open) need a stream target")
	}
	return nil
}

func firstByte(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
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
}
