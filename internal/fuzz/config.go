package fuzz

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/rpcload/rpcload/internal/apispec"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
)

// Defaults of Config's zero fields.
const (
	DefaultTimeout = time.Second
	// DefaultWorkers is 8: over TCP to the reference server 2, 4 and 8
	// workers sent 2.9k, 6.0k and 10.6k inputs/s. More than one worker makes
	// the order of inputs, and so a seed's run, depend on timing: --seed
	// repeats a run only with one worker.
	DefaultWorkers        = 8
	DefaultSlowFactor     = 20
	DefaultSlowFloor      = 100 * time.Millisecond
	DefaultCanaryEvery    = 100
	DefaultMaxRestarts    = 5
	DefaultMaxFrame       = 1 << 20
	DefaultMaxReply       = 16 << 20
	DefaultMinimizeBudget = 2000
	DefaultMinimizeTime   = 30 * time.Second
	DefaultMaxCorpus      = 2048
	DefaultMaxCorpusBytes = 64 << 20
	DefaultMaxFindings    = 100
	DefaultMaxTuples      = 1 << 16
	DefaultInterval       = time.Second
)

// ErrUnreachable wraps the failure to reach the target before fuzzing
// started: nothing was sent, so nothing was found.
var ErrUnreachable = errors.New("target unreachable")

// Config describes one fuzzing run. Run fills in the defaults of zero
// fields (see the Default constants).
type Config struct {
	// Target is where inputs go: an http(s) URL (one POST per frame), a
	// stream (tcp, unix, ws, with their framing), or a child process
	// (transport.CommandTarget), restarted after each crash.
	Target transport.Target
	// Profile is "jsonrpc" (or ""), "mcp", "lsp" or "eth": each new
	// stream connection runs its handshake, and the seeds are its corpus.
	Profile profile.Name
	// ProfileOptions configure the profile (MCP era, LSP workspace). With
	// the lsp profile and a Workspace, every stream connection opens the
	// workspace's documents after the handshake (textDocument/didOpen: up
	// to 8 files of a known language, 64 KiB each; apilsp.go).
	ProfileOptions profile.Options
	// Header holds extra HTTP request headers (http and ws targets).
	Header http.Header
	// TLS is how https and wss targets are verified (--insecure, --ca-cert)
	// and the client certificate they are shown; summary.json says when
	// verification was off.
	TLS   transport.TLS
	Child transport.ChildOptions // child process (or ServerCommand's process): stderr file, grace, env
	// ServerCommand, when set, is the server of a network Target (http,
	// ws, tcp, unix) as a command (argv, no shell) that rpcfuzz starts
	// before the first input, waiting until Target's address accepts a
	// connection, and starts again after it crashed (it exited, or its
	// address stopped accepting connections). A crash is then the
	// process's exit, with its status and output tail as a child's, and is
	// confirmed and minimized against a fresh process while the other
	// workers wait. The process is ended when Run returns.
	ServerCommand []string
	// ServerStart bounds the wait for ServerCommand's address to accept a
	// connection (default DefaultServerStart).
	ServerStart time.Duration

	Workers  int           // connections fuzzed in parallel (default 1 for a child process, else DefaultWorkers)
	Duration time.Duration // stop after this long (0: no time limit, Execs must be set)
	Execs    uint64        // stop after this many inputs (0: no limit, Duration must be set)
	Seed     uint64        // every random choice derives from it; printed so a run can be repeated
	// MaxRate caps the exchanges of all workers together at this many a
	// second (0: no cap): every input sent, and every canary, confirmation
	// and minimization attempt, counts once, however many frames it holds.
	MaxRate float64

	Timeout     time.Duration // how long one input may wait for its replies (a request with an id left unanswered is a hang)
	SlowFactor  float64       // an input answered more than this times the median latency is slow_input
	SlowFloor   time.Duration // ... and slower than this, so that scheduler noise on a fast server is not slow
	CanaryEvery int           // a known-good request after every this many inputs per worker (negative: never)
	MaxRestarts int           // more child processes than this in a row that cannot start, die in the handshake or on a known-good request stop the run (inputs that kill one are findings: the run goes on)
	MaxFrame    int           // no input frame is longer than this
	MaxReply    int           // a reply frame longer than this is skipped (and judged frame_too_large)

	// Baseline holds the ids of accepted findings (see ReadBaseline): they
	// are counted, not written, and do not make the run fail.
	Baseline map[string]bool
	// OutDir receives one directory per finding, summary.json and
	// latency.json. It is created if needed.
	OutDir string

	MinimizeBudget int           // requests one finding's minimization may send
	MinimizeTime   time.Duration // and how long it may take
	MaxCorpus      int           // inputs kept in the working corpus (seeds included)
	MaxCorpusBytes int           // and their total size
	MaxFindings    int           // distinct findings written; further ones are counted in Summary.FindingsDropped
	StopAfter      int           // stop the run once this many failures (not warnings) are written; 0: never
	MaxTuples      int           // distinct feedback tuples remembered

	// Seeds replace the shipped corpus (corpus.Seeds(Profile)) when not
	// empty; tests use them.
	Seeds []mutate.Case

	// API is what is known of the target's methods (OpenRPC, --method
	// seeds); Discover adds what the target says of itself: MCP's
	// tools/list, prompts/list and resources/list for the mcp profile, the
	// requests an LSP server's capabilities announce (about the
	// workspace's documents) for the lsp profile, else rpc.discover. With
	// an API, a share of the inputs (APIShare, default DefaultAPIShare) are
	// fresh calls of its methods with params valid or invalid by its
	// schemas (with the lsp and mcp profiles now and then in a sequence of
	// the session: after a didChange of the document, followed by the
	// call's cancellation), a valid call of each method joins the corpus,
	// and the replies are held to the schemas (api.go, apilsp.go).
	API      *apispec.API
	Discover bool
	APIShare float64
	// Idempotent names methods (or "tool NAME") whose equal calls must get
	// equal results, besides those the API declares.
	Idempotent []string
	// InvalidParamsCodes are the error codes a call with params its schema
	// rejects may be refused with (default -32602).
	InvalidParamsCodes []int64

	// Feed, when set, is where the workers take their inputs instead of
	// mutating the corpus: inputs made elsewhere (rpcload's malformed
	// traffic under load) judged as any other. The run ends when Feed is
	// closed (or at Duration or Execs, if set).
	Feed <-chan mutate.Case
	// KeepUnconfirmed writes a failure that did not happen again when
	// its input was sent alone, as found (not minimized, marked so),
	// instead of dropping it: under load, what other connections were
	// doing may have been part of the cause.
	KeepUnconfirmed bool

	// Interval is how often OnStatus is called and the latency series gets
	// a point.
	Interval time.Duration
	// OnStatus, if set, is called every Interval from one goroutine.
	OnStatus func(Status)
	// Log, if set, receives one line per finding as it is written.
	Log io.Writer
	// Now is the clock (time.Now when nil); tests inject one.
	Now func() time.Time

	// sent, if set, is called as each exchange gets its MaxRate token,
	// with the tokens the bucket still holds then (a whole one means the
	// workers were slower than the cap): tests time the cap with it.
	sent func(tokensLeft float64)
}

// Status is what the live status line shows.
type Status struct {
	Elapsed   time.Duration
	Execs     uint64
	ExecsPerS float64 // over the last interval
	Tuples    int
	Corpus    int
	Findings  int // distinct findings, baselined ones included
	Restarts  int64
}

// fill validates c and fills in its defaults.
func (c *Config) fill() error {
	if c.Target.Scheme == "" {
		return errors.New("fuzz: no target")
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
		if c.Target.Scheme == transport.Stdio {
			c.Workers = 1
		}
	}
	setDefault(&c.Timeout, DefaultTimeout)
	setDefault(&c.SlowFactor, DefaultSlowFactor)
	setDefault(&c.SlowFloor, DefaultSlowFloor)
	setDefault(&c.CanaryEvery, DefaultCanaryEvery)
	setDefault(&c.MaxRestarts, DefaultMaxRestarts)
	setDefault(&c.MaxFrame, DefaultMaxFrame)
	setDefault(&c.MaxReply, DefaultMaxReply)
	setDefault(&c.MinimizeBudget, DefaultMinimizeBudget)
	setDefault(&c.MinimizeTime, DefaultMinimizeTime)
	setDefault(&c.MaxCorpus, DefaultMaxCorpus)
	setDefault(&c.MaxCorpusBytes, DefaultMaxCorpusBytes)
	setDefault(&c.MaxFindings, DefaultMaxFindings)
	setDefault(&c.MaxTuples, DefaultMaxTuples)
	setDefault(&c.Interval, DefaultInterval)
	setDefault(&c.ServerStart, DefaultServerStart)
	setDefault(&c.APIShare, DefaultAPIShare)
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Profile == "" {
		c.Profile = profile.JSONRPC
	}
	switch {
	case c.Workers < 1 || c.Workers > 1024:
		return fmt.Errorf("--workers must be between 1 and 1024 (got %d)", c.Workers)
	case c.Duration < 0:
		return fmt.Errorf("--duration must not be negative (got %s)", c.Duration)
	case !(c.MaxRate >= 0) || math.IsInf(c.MaxRate, 1):
		return fmt.Errorf("--max-rate must be a number of inputs per second, 0 or more (got %g)", c.MaxRate)
	case c.Duration == 0 && c.Execs == 0 && c.Feed == nil:
		return errors.New("give --duration or --execs (or both): a fuzzing run needs a bound")
	case c.Timeout < 0:
		return fmt.Errorf("--timeout must be positive (got %s)", c.Timeout)
	case c.SlowFactor < 1:
		return fmt.Errorf("--slow-factor must be at least 1 (got %g)", c.SlowFactor)
	case c.MaxRestarts < 0:
		return fmt.Errorf("--max-restarts must not be negative (got %d)", c.MaxRestarts)
	case c.MaxFrame < 64:
		return fmt.Errorf("--max-frame must be at least 64 bytes (got %d)", c.MaxFrame)
	case !(c.APIShare >= 0 && c.APIShare <= 1):
		return fmt.Errorf("--api-share must be between 0 and 1 (got %g)", c.APIShare)
	case c.StopAfter < 0:
		return fmt.Errorf("--stop-after must not be negative (got %d)", c.StopAfter)
	case c.MinimizeBudget < 0:
		return fmt.Errorf("--minimize-budget must not be negative (got %d)", c.MinimizeBudget)
	case c.MaxCorpus < 1, c.MaxCorpusBytes < 1, c.MaxFindings < 1, c.MaxTuples < 1, c.Interval < 0:
		return errors.New("fuzz: corpus, findings, tuple and interval bounds must be positive")
	case c.OutDir == "":
		return errors.New("--out is required: findings and summary.json go there")
	case len(c.ServerCommand) > 0 && c.Target.Scheme == transport.Stdio:
		return errors.New("a server command needs a network target (http, ws, tcp, unix): a command alone is a child process on stdio")
	case c.ServerStart < 0:
		return fmt.Errorf("--server-start must not be negative (got %s)", c.ServerStart)
	}
	if c.MaxReply < c.MaxFrame {
		c.MaxReply = c.MaxFrame
	}
	return nil
}

// setDefault sets *v to d when it is zero.
func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}
