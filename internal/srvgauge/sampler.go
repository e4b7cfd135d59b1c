package srvgauge

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/rpcload/rpcload/internal/procstat"
	"github.com/rpcload/rpcload/internal/stats"
)

// DefaultGauges are read from every endpoint that exposes them: the
// process's resident memory, goroutines, heap in use and open files, as
// the Prometheus Go client and most process exporters name them.
var DefaultGauges = []string{"process_resident_memory_bytes", "go_goroutines", "go_memstats_heap_inuse_bytes", "process_open_fds"}

// The gauges of --server-pid, read from /proc.
const (
	PIDRSS     = "proc_rss_bytes"
	PIDThreads = "proc_threads"
	PIDOpenFDs = "proc_open_fds"
)

// MaxTimeout bounds a read: a server too busy to answer its metrics within
// it is counted as a failed read for the interval, not waited for.
const MaxTimeout = 2 * time.Second

// maxErrorsKept is how many distinct failure messages the report keeps.
const maxErrorsKept = 5

// Config is what to read.
type Config struct {
	URLs []string // Prometheus text endpoints, http:// or https://
	// Gauges are read besides DefaultGauges; unlike those, one that no
	// endpoint exposes is reported as missing.
	Gauges  []Selector
	PID     int           // a local process to read from /proc (0: none)
	TLS     *tls.Config   // for https endpoints (nil: the system's roots)
	Timeout time.Duration // per read; 0 or over MaxTimeout is MaxTimeout
}

// Sampler reads the server's gauges. Read may be called from one
// goroutine at a time; Report from any.
type Sampler struct {
	urls    []string
	sources []string
	sels    []Selector
	asked   map[string]bool // the names of Config.Gauges
	pid     int
	client  *http.Client
	timeout time.Duration
	limit   int // the largest exposition read (MaxExposition; tests lower it)

	mu       sync.Mutex // guards the figures below
	reads    uint64
	failures uint64
	errs     []string
	seen     map[string]bool
}

// New checks cfg and returns its Sampler. Nothing is read yet: a server
// that is not up yet is a failed read later, not an error now.
func New(cfg Config) (*Sampler, error) {
	if len(cfg.URLs) == 0 && cfg.PID == 0 {
		return nil, errors.New("srvgauge: nothing to read: no endpoint and no pid")
	}
	s := &Sampler{pid: cfg.PID, asked: map[string]bool{}, seen: map[string]bool{}, timeout: cfg.Timeout, limit: MaxExposition}
	if s.timeout <= 0 || s.timeout > MaxTimeout {
		s.timeout = MaxTimeout
	}
	for _, raw := range cfg.URLs {
		u, err := CheckURL(raw)
		if err != nil {
			return nil, err
		}
		s.urls = append(s.urls, raw)
		s.sources = append(s.sources, u.Redacted())
	}
	if cfg.PID != 0 {
		if cfg.PID < 0 {
			return nil, fmt.Errorf("--server-pid %d: not a process id", cfg.PID)
		}
		if !procstat.Supported {
			return nil, errors.New("--server-pid reads /proc, which this system does not have (Linux only)")
		}
		s.sources = append(s.sources, fmt.Sprintf("pid %d", cfg.PID))
	}
	for _, name := range DefaultGauges {
		s.sels = append(s.sels, Selector{Name: name})
	}
	for _, sel := range cfg.Gauges {
		k := sel.String()
		s.asked[k] = true
		if !slices.ContainsFunc(s.sels, func(o Selector) bool { return o.String() == k }) {
			s.sels = append(s.sels, sel)
		}
	}
	if len(cfg.Gauges) > 0 && len(cfg.URLs) == 0 {
		return nil, errors.New("--server-metric names a gauge of a Prometheus endpoint: give --server-metrics URL too")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.TLS
	tr.MaxIdleConnsPerHost = 1
	s.client = &http.Client{Transport: tr, Timeout: s.timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("the endpoint redirects: give the URL it redirects to")
		}}
	return s, nil
}

// CheckURL accepts an http:// or https:// URL with a host.
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("--server-metrics %q: %v", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("--server-metrics %q: want an http:// or https:// URL of a Prometheus endpoint, e.g. http://127.0.0.1:9100/metrics", raw)
	case u.Host == "":
		return nil, fmt.Errorf("--server-metrics %q: the URL has no host", raw)
	}
	return u, nil
}

// Read reads every source once, at most the timeout long, the endpoints
// at the same time. The gauges of the endpoints add up (several endpoints
// are replicas of one service); when any endpoint failed, none of their
// gauges is in the reading, so a sum never drops for a missing replica.
// failed is how many sources failed.
func (s *Sampler) Read(ctx context.Context) (values map[string]float64, failed uint64) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	type scraped struct {
		vals map[string]float64
		err  error
	}
	got := make([]scraped, len(s.urls))
	var wg sync.WaitGroup
	for i, u := range s.urls {
		wg.Go(func() { got[i].vals, got[i].err = s.scrapeOne(ctx, u) })
	}
	var pidErr error
	var pst procstat.Stat
	if s.pid != 0 {
		pst, pidErr = procstat.Read(s.pid)
	}
	wg.Wait()

	values = map[string]float64{}
	var errs []string
	for i, g := range got {
		if g.err != nil {
			failed++
			errs = append(errs, fmt.Sprintf("%s: %v", s.sources[i], g.err))
			continue
		}
		for k, v := range g.vals {
			values[k] += v
		}
	}
	if failed > 0 {
		clear(values)
	}
	if s.pid != 0 {
		if pidErr != nil {
			failed++
			errs = append(errs, pidErr.Error())
		} else {
			values[PIDRSS], values[PIDThreads], values[PIDOpenFDs] = float64(pst.RSSBytes), float64(pst.Threads), float64(pst.OpenFDs)
		}
	}
	s.note(values, failed, errs)
	return values, failed
}

// scrapeOne reads one endpoint's gauges.
func (s *Sampler) scrapeOne(ctx context.Context, u string) (map[string]float64, error) {
	fams, err := scrape(ctx, s.client, u, s.limit)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no exposition within %s", s.timeout)
		}
		return nil, err
	}
	vals := map[string]float64{}
	for _, sel := range s.sels {
		v, found, err := Value(fams, sel)
		if err != nil {
			return nil, err
		}
		if found {
			vals[sel.String()] = v
		}
	}
	return vals, nil
}

func (s *Sampler) note(values map[string]float64, failed uint64, errs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads += uint64(len(s.sources))
	s.failures += failed
	for k := range values {
		s.seen[k] = true
	}
	for _, e := range errs {
		if len(s.errs) < maxErrorsKept && !slices.Contains(s.errs, e) {
			s.errs = append(s.errs, e)
		}
	}
}

// Report says what was read, from where, and what failed.
func (s *Sampler) Report() *stats.ServerGauges {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &stats.ServerGauges{Sources: slices.Clone(s.sources), Reads: s.reads, Failures: s.failures, Errors: slices.Clone(s.errs)}
	for k := range s.seen {
		r.Gauges = append(r.Gauges, k)
	}
	slices.Sort(r.Gauges)
	for k := range s.asked {
		if !s.seen[k] {
			r.Missing = append(r.Missing, k)
		}
	}
	slices.Sort(r.Missing)
	return r
}
