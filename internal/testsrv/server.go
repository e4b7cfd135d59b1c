package testsrv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for zero Config fields.
const (
	DefaultFaultDelay = 50 * time.Millisecond
	DefaultMaxFrame   = 16 << 20
)

// Stall is a full stop of the server: from At after the server started, for
// For, no reply is written. Requests that arrive or complete inside the window
// are computed normally and delivered right after it ends. For == 0 is off.
type Stall struct{ At, For time.Duration }

// Config configures a Server. The zero value is a correct, fault-free server.
type Config struct {
	Faults     []FaultSpec      // faults to inject, tried in this order per frame
	Seed       uint64           // fault decisions on connection n use PCG(Seed+n), so one connection replays exactly
	FaultDelay time.Duration    // extra delay of FaultDelay; default DefaultFaultDelay
	MaxFrame   int              // largest accepted request frame/body in bytes; default DefaultMaxFrame
	Stall      Stall            // optional full stop, relative to New
	Now        func() time.Time // clock for get_time, eth_blockNumber and the stall window; default time.Now
	// Shuffle, when positive, holds each reply on a stream connection for
	// a random time below it, as a server that answers every message on
	// a goroutine of its own does: replies come in any order, which
	// JSON-RPC allows (a batch's array stays one reply).
	Shuffle time.Duration
	// ServiceTime, when positive, makes the server one virtual worker
	// that takes ServiceTime per request: request k is answered at
	// max(arrival_k, done_{k-1}) + ServiceTime, whatever the transport or
	// connection, so the server sustains exactly 1/ServiceTime requests a
	// second and queues past that (a known capacity, for rpcload
	// capacity). Waiting is on timers, so the CPU stays free.
	ServiceTime time.Duration
	// TrackPipelining makes the HTTP listener count the requests that
	// reach each connection ahead of their responses (PipelineDepth), to
	// show that a client pipelines. Off, it costs nothing.
	TrackPipelining bool
	// ParseErrorID, when set, is the id every frame that is not JSON is
	// answered with instead of null (a JSON number such as 0): the bug of
	// a server that reuses the last id it read. ParseErrorIDs counts those
	// replies. (JSON with invalid UTF-8, also answered -32700, keeps id
	// null: whether it is JSON at all is a question clients answer both
	// ways.)
	ParseErrorID []byte

	// Protocol modes (mcp.go, lsp.go): Profile "" or ProfileJSONRPC is the
	// plain server above; ProfileMCP and ProfileLSP make every stream
	// connection (and /mcp on HTTP) speak that protocol instead.
	Profile        Profile
	MCPEra         MCPEra      // which MCP eras ProfileMCP speaks; "" is MCPDual
	MCPResponse    MCPResponse // how /mcp answers requests; "" is MCPResponseAuto
	ServerMessages bool        // MCP: send the client one request and one notification per session (see MCPStats)

	// Soak modes (soak.go): memory kept for good per request (Leak), a
	// bounded cache that fills and holds (Cache), and the process's own
	// gauges for Prometheus on GET MetricsPath of the HTTP listener
	// (Metrics).
	Leak    Leak
	Cache   Cache
	Metrics bool
}

// ErrConfig is wrapped by New's errors for invalid Config values.
var ErrConfig = errors.New("testsrv: invalid config")

// Server is the reference JSON-RPC 2.0 server. Create it with New; serve it
// with Listen (or ListenAndServe), or on your own listeners and streams with
// ServeStream, ServeTCP, ServeStdio, Handler and WSHandler; stop it with
// Close.
type Server struct {
	cfg         Config
	specs       []fspec
	now         func() time.Time
	start       time.Time // Config.Now at New: origin of Stall and eth_blockNumber
	stallOn     bool
	notifyFault bool // notify_reply is configured, so notifications are computed

	requests   atomic.Uint64
	injected   [numFIDs]atomic.Uint64
	unknownSeq atomic.Uint64 // numbers the ids invented by unknown_id
	connSeq    atomic.Uint64 // connection index for per-connection PRNG seeds
	pipeDepth  atomic.Int64  // PipelineDepth

	proto protoState // MCP and LSP counters and sessions (mcpshared.go)

	parseErrIDs atomic.Uint64 // parse errors answered with Config.ParseErrorID

	soak    soakState    // Config.Leak and Config.Cache
	metrics http.Handler // Config.Metrics

	workerMu   sync.Mutex // guards workerDone
	workerDone time.Time  // when the virtual worker of ServiceTime is next free

	sharedMu  sync.Mutex // guards sharedRng
	sharedRng *rand.Rand // decisions for HTTP requests without ConnContext state

	done      chan struct{} // closed by Close; everything that waits selects on it
	closeOnce sync.Once

	// mu guards the fields below. wg.Add is only called under mu while
	// !closed, so no Add can race with Close's Wait.
	mu        sync.RWMutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[*streamConn]struct{}
	httpSrvs  []*http.Server
	stops     []func() bool // context.AfterFunc registrations of ListenAndServe
	wg        sync.WaitGroup
}

// New validates cfg and returns a server that is not yet serving.
func New(cfg Config) (*Server, error) {
	specs, err := compileFaults(cfg.Faults)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.FaultDelay < 0:
		return nil, fmt.Errorf("%w: negative FaultDelay %v", ErrConfig, cfg.FaultDelay)
	case cfg.MaxFrame < 0:
		return nil, fmt.Errorf("%w: negative MaxFrame %d", ErrConfig, cfg.MaxFrame)
	case cfg.Shuffle < 0:
		return nil, fmt.Errorf("%w: negative Shuffle %v", ErrConfig, cfg.Shuffle)
	case cfg.Stall.At < 0 || cfg.Stall.For < 0:
		return nil, fmt.Errorf("%w: negative Stall %+v", ErrConfig, cfg.Stall)
	}
	if err := checkProtoConfig(&cfg); err != nil {
		return nil, err
	}
	if err := checkSoakConfig(&cfg); err != nil {
		return nil, err
	}
	if cfg.FaultDelay == 0 {
		cfg.FaultDelay = DefaultFaultDelay
	}
	if cfg.MaxFrame == 0 {
		cfg.MaxFrame = DefaultMaxFrame
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{
		cfg:       cfg,
		specs:     specs,
		now:       cfg.Now,
		start:     cfg.Now(),
		stallOn:   cfg.Stall.For > 0,
		sharedRng: newRand(cfg.Seed),
		done:      make(chan struct{}),
		listeners: map[net.Listener]struct{}{},
		conns:     map[*streamConn]struct{}{},
	}
	for _, sp := range specs {
		s.notifyFault = s.notifyFault || sp.id.answersNotifications()
	}
	s.proto.init()
	if cfg.Metrics {
		s.metrics = s.metricsHandler()
	}
	return s, nil
}

// newRand is the PRNG of one connection (or of the shared HTTP fallback).
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// nextRand returns the PRNG of the next connection: Seed + its index.
func (s *Server) nextRand() *rand.Rand {
	return newRand(s.cfg.Seed + s.connSeq.Add(1) - 1)
}

// Injected returns how many times each fault was actually put on the wire
// (dropped, sent, closed), keyed by every fault name; tests compare a load
// tester's counts with these exactly.
func (s *Server) Injected() map[Fault]uint64 {
	m := make(map[Fault]uint64, len(allFaults))
	for i, f := range allFaults {
		m[f] = s.injected[i+1].Load()
	}
	return m
}

func (s *Server) count(f fid) {
	if f != fNone {
		s.injected[f].Add(1)
	}
}

// Requests returns the number of frames handled (requests, notifications and
// batches each count once; invalid frames count too).
func (s *Server) Requests() uint64 { return s.requests.Load() }

// Start returns the server's start time by Config.Now: the origin of Stall
// and of eth_blockNumber.
func (s *Server) Start() time.Time { return s.start }

// deliverAfter returns how long to hold a reply whose method needs d more
// before it may be written, taking the stall window into account.
func (s *Server) deliverAfter(d time.Duration) time.Duration {
	if !s.stallOn {
		return d
	}
	return stallWait(s.start, s.cfg.Stall, s.now(), d)
}

// ParseErrorIDs counts the parse errors answered with Config.ParseErrorID
// instead of id null.
func (s *Server) ParseErrorIDs() uint64 { return s.parseErrIDs.Load() }

// queued is how long the frame of p, arriving now, waits for the virtual
// worker of Config.ServiceTime and is served by it (0 without one).
func (s *Server) queued(p *proc) time.Duration {
	if s.cfg.ServiceTime <= 0 {
		return 0
	}
	n := p.requests()
	now := time.Now()
	s.workerMu.Lock()
	defer s.workerMu.Unlock()
	start := s.workerDone
	if start.Before(now) {
		start = now
	}
	s.workerDone = start.Add(time.Duration(max(n, 1)) * s.cfg.ServiceTime)
	return s.workerDone.Sub(now)
}

// stallWait is the stall arithmetic: a reply due at now+d inside the window
// [start+At, start+At+For) is held until the window ends.
func stallWait(start time.Time, st Stall, now time.Time, d time.Duration) time.Duration {
	if st.For <= 0 {
		return d
	}
	from := start.Add(st.At)
	to := from.Add(st.For)
	if due := now.Add(d); !due.Before(from) && due.Before(to) {
		return to.Sub(now)
	}
	return d
}

// enter registers one unit of work (a connection, an HTTP request) unless the
// server is closed; the caller must call s.wg.Done when it finishes.
func (s *Server) enter() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

// Close stops the listeners and HTTP servers it serves (removing socket
// files), closes active connections (TCP, Unix, WebSocket, stdio), stops
// pending timers, unblocks held HTTP requests and waits for every goroutine
// the server started (but not for a stdio Read it cannot interrupt). It is idempotent and always returns nil
// (the error is for io.Closer).
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		close(s.done)
		lns := s.listeners
		conns := s.conns
		srvs := s.httpSrvs
		stops := s.stops
		s.listeners, s.conns, s.httpSrvs, s.stops = nil, nil, nil, nil
		s.mu.Unlock()
		for _, stop := range stops {
			stop()
		}
		for _, srv := range srvs {
			_ = srv.Close() // its listener is closed below as well; errors are moot
		}
		for ln := range lns {
			_ = ln.Close()
		}
		for c := range conns {
			c.teardown()
		}
		s.wg.Wait()
	})
	return nil
}
