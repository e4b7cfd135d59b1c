package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/engine"
	"github.com/rpcload/rpcload/internal/procstat"
	"github.com/rpcload/rpcload/internal/srvgauge"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/workload"
)

// soakQuiet is --soak-quiet's default: long enough for a backlog to drain
// and goroutines to end, short beside a soak of hours. A soak shorter than
// it (a try, a test) gets a quiet phase as long as its load.
const soakQuiet = 30 * time.Second

// serverFlags are the flags of what a run reads of the server itself (its
// Prometheus endpoints, its process) and of a soak's quiet phase.
type serverFlags struct {
	quiet    time.Duration
	quietSet bool // --soak-quiet was given: no shortening to the load's length
	metrics  []string
	gauges   []string
	pid      int

	sels []srvgauge.Selector // gauges, parsed by check
}

func (s *serverFlags) register(fs *pflag.FlagSet) {
	fs.DurationVar(&s.quiet, "soak-quiet", soakQuiet, "with --soak: after the load, go on sampling this long with nothing sent, to tell a leak (stays up) from a backlog or cache (comes back down); 0 turns it off; a shorter load gets a quiet phase as long as itself")
	fs.StringArrayVar(&s.metrics, "server-metrics", nil, "read the server's own gauges from this Prometheus text endpoint every interval, e.g. http://127.0.0.1:9100/metrics (repeatable: replicas add up); "+
		strings.Join(srvgauge.DefaultGauges, ", ")+" where present")
	fs.StringArrayVar(&s.gauges, "server-metric", nil, `also read this gauge of the --server-metrics endpoints: NAME or NAME{label="value",other!="value"} (repeatable)`)
	fs.IntVar(&s.pid, "server-pid", 0, "read the resident memory, threads and open files of this local server process every interval (/proc; Linux)")
}

// check validates the flags before anything starts: the endpoints'
// URLs, the gauges' selectors, that the process exists.
func (s *serverFlags) check(fs *pflag.FlagSet, soak bool) error {
	s.quietSet = fs.Changed("soak-quiet")
	switch {
	case s.quiet < 0:
		return usagef("--soak-quiet must not be negative (got %s)", s.quiet)
	case fs.Changed("soak-quiet") && !soak:
		return usagef("--soak-quiet is the quiet phase at the end of a soak: give --soak too")
	case len(s.gauges) > 0 && len(s.metrics) == 0:
		return usagef("--server-metric names a gauge of a Prometheus endpoint: give --server-metrics URL too")
	case fs.Changed("server-pid") && s.pid <= 0:
		return usagef("--server-pid must be a process id (got %d)", s.pid)
	}
	for _, u := range s.metrics {
		if _, err := srvgauge.CheckURL(u); err != nil {
			return usagef("%v", err)
		}
	}
	s.sels = s.sels[:0]
	for _, g := range s.gauges {
		sel, err := srvgauge.ParseSelector(g)
		if err != nil {
			return usagef("--server-metric: %v", err)
		}
		s.sels = append(s.sels, sel)
	}
	if s.pid > 0 {
		if !procstat.Supported {
			return usagef("--server-pid reads /proc, which this system does not have (Linux only)")
		}
		if _, err := procstat.Read(s.pid); err != nil {
			return usagef("--server-pid %d: %v", s.pid, err)
		}
	}
	return nil
}

// serverRun reads the server's gauges during one run.
type serverRun struct {
	sampler *srvgauge.Sampler
	noted   sync.Once
}

// start hooks the reading of the server's gauges and the quiet phase into
// cfg. A first read checks the sources: one that fails is said at once,
// and the run goes on (the server may expose its metrics only later).
func (s *serverFlags) start(cfg *engine.Config, f *runFlags, lv *liveRun, stderr io.Writer) (*serverRun, error) {
	note := func(line string) { fmt.Fprintln(stderr, line) }
	if lv.progress != nil {
		note = lv.progress.Note
	}
	if f.live.soak && s.quiet > 0 {
		cfg.Quiet = s.quiet
		if !s.quietSet && cfg.Duration != workload.OpenEnded {
			cfg.Quiet = min(cfg.Quiet, cfg.Duration)
		}
		cfg.OnQuiet = func(d time.Duration) {
			note(fmt.Sprintf("rpcload: the load has ended; sampling the server %s more with nothing sent (--soak-quiet), to tell a leak from a backlog (interrupt to stop)", d))
		}
	}
	if len(s.metrics) == 0 && s.pid == 0 {
		return nil, nil
	}
	sm, err := srvgauge.New(srvgauge.Config{URLs: s.metrics, Gauges: s.sels, PID: s.pid, TLS: cfg.TLS.Config(""),
		Timeout: min(srvgauge.MaxTimeout, cfg.Interval/2)})
	if err != nil {
		return nil, usagef("%v", err)
	}
	sr := &serverRun{sampler: sm}
	if _, failed := sm.Read(context.Background()); failed > 0 {
		sr.noteFailure(note)
	}
	cfg.ReadServer = func(ctx context.Context) (map[string]float64, uint64) {
		v, failed := sm.Read(ctx)
		if failed > 0 {
			sr.noteFailure(note)
		}
		return v, failed
	}
	return sr, nil
}

// noteFailure says, once, that reading the server failed: the report
// counts every failure.
func (sr *serverRun) noteFailure(note func(string)) {
	sr.noted.Do(func() {
		errs := sr.sampler.Report().Errors
		msg := "reading its gauges failed"
		if len(errs) > 0 {
			msg = errs[len(errs)-1]
		}
		note(fmt.Sprintf("rpcload: reading the server's gauges: %s (counted in the report; the run goes on)", stats.OneLine(msg, 300)))
	})
}

// finish puts what was read, and what failed, into res.
func (sr *serverRun) finish(res *stats.Result) {
	if sr == nil || res == nil {
		return
	}
	res.ServerGauges = sr.sampler.Report()
}
