package testsrv

import (
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsPath is where the HTTP listener serves the process's own gauges
// in Prometheus text format, with Config.Metrics (GET only: a POST there
// is JSON-RPC, as on every other path).
const MetricsPath = "/metrics"

// Leak makes the server keep memory for good, for soak tests: every
// Every-th request (counted server-wide, a batch once) parks a goroutine
// until the server closes, on a LeakStack stack it has filled, so the
// leak's pages are really resident. With Thread the goroutine holds its
// OS thread too (runtime.LockOSThread), so the process's thread count
// grows with it.
type Leak struct {
	Every  int
	Thread bool
}

// LeakStack is the stack a leaked goroutine parks on: the leak's size.
// Its bookkeeping (the runtime's g and the channel wait, about 600 bytes
// on Go 1.26) comes on top.
const LeakStack = 4 << 10

// leakFrame is the buffer a leaked goroutine fills on its stack: enough
// that the stack grows from its first 2 KiB to LeakStack, not so much that
// it grows to twice that.
const leakFrame = 2560

// Cache makes the server keep EntryBytes for every request in a cache of
// at most Entries entries, the oldest evicted: memory that fills, then
// holds, for soak tests that must not call it a leak.
type Cache struct {
	Entries    int
	EntryBytes int
}

// soakState is what Leak and Cache keep.
type soakState struct {
	leaked atomic.Int64

	mu      sync.Mutex // guards the cache
	entries [][]byte
	next    int // the oldest entry, once the cache is full
}

// checkSoakConfig validates Leak and Cache.
func checkSoakConfig(cfg *Config) error {
	switch {
	case cfg.Leak.Every < 0:
		return fmt.Errorf("%w: negative Leak.Every %d", ErrConfig, cfg.Leak.Every)
	case cfg.Cache.Entries < 0 || cfg.Cache.EntryBytes < 0:
		return fmt.Errorf("%w: negative Cache %+v", ErrConfig, cfg.Cache)
	case cfg.Cache.Entries > 0 && cfg.Cache.EntryBytes == 0:
		return fmt.Errorf("%w: Cache.Entries without Cache.EntryBytes", ErrConfig)
	}
	return nil
}

// countRequest counts one frame and does what Leak and Cache make a
// request do.
func (s *Server) countRequest() {
	n := s.requests.Add(1)
	if e := s.cfg.Leak.Every; e > 0 && n%uint64(e) == 0 {
		s.soak.leaked.Add(1)
		go parkLeaked(s.done, s.cfg.Leak.Thread)
	}
	if s.cfg.Cache.Entries > 0 {
		s.cacheOne()
	}
}

// leakSink keeps a leaked goroutine's buffer live without letting it
// escape to the heap: the leak must be on the goroutine's stack.
var leakSink atomic.Uint32

// parkLeaked is a leaked goroutine: it fills a buffer on its stack and
// waits for the server to close.
//
//go:noinline
func parkLeaked(done <-chan struct{}, thread bool) {
	if thread {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	}
	var buf [leakFrame]byte
	for i := range buf {
		buf[i] = byte(i)
	}
	<-done
	leakSink.Store(uint32(buf[len(buf)-1]))
}

// cacheOne stores one entry, written through so its pages are resident.
func (s *Server) cacheOne() {
	b := make([]byte, s.cfg.Cache.EntryBytes)
	for i := range b {
		b[i] = byte(i)
	}
	c := &s.soak
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) < s.cfg.Cache.Entries {
		c.entries = append(c.entries, b)
		return
	}
	c.entries[c.next] = b
	c.next = (c.next + 1) % len(c.entries)
}

// Leaked is how many goroutines Leak has parked so far.
func (s *Server) Leaked() int64 { return s.soak.leaked.Load() }

// metricsHandler serves the process's gauges (the Go runtime's and the
// process's, as client_golang's collectors name them) and the server's
// own: its leaked goroutines and cache entries.
func (s *Server) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rpcload_testsrv_leaked_goroutines", Help: "Goroutines parked for good by the leak of soak tests."},
			func() float64 { return float64(s.Leaked()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rpcload_testsrv_cache_entries", Help: "Entries held by the bounded cache of soak tests."},
			func() float64 { s.soak.mu.Lock(); defer s.soak.mu.Unlock(); return float64(len(s.soak.entries)) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rpcload_testsrv_frames_total", Help: "Frames handled (a batch once)."},
			func() float64 { return float64(s.Requests()) }))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
