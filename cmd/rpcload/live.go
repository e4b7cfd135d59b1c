package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/cmd/internal/cli"
	"github.com/rpcload/rpcload/internal/engine"
	"github.com/rpcload/rpcload/internal/live"
	"github.com/rpcload/rpcload/internal/soak"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/workload"
)

// soakInterval is --interval's default in a soak: a day is 8640 points.
const soakInterval = 10 * time.Second

// liveFlags are the flags of what a run shows and writes while it goes on:
// the status line, soak mode with its incremental files, and the
// Prometheus endpoint.
type liveFlags struct {
	soak          bool
	hlog          string
	series        string
	metricsAddr   string
	metricsAny    bool
	metricsLinger time.Duration
}

func (l *liveFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&l.soak, "soak", false, "soak mode: --interval defaults to 10s, every interval is written as it closes (--hlog, --series; by default next to -o), and the report fits growth of the server's RSS and pending requests")
	fs.StringVar(&l.hlog, "hlog", "", "write each interval's latency histograms to this HdrHistogram interval log as the run goes (corrected untagged, service time tagged service)")
	fs.StringVar(&l.series, "series", "", "write each interval's point of the time series to this JSON Lines file as the run goes")
	fs.StringVar(&l.metricsAddr, "metrics-addr", "", "serve the live figures in Prometheus text format on http://ADDR/metrics (e.g. 127.0.0.1:9464)")
	fs.BoolVar(&l.metricsAny, "metrics-any-host", false, "let --metrics-addr listen on a non-loopback address")
	fs.DurationVar(&l.metricsLinger, "metrics-linger", 0, "keep serving --metrics-addr this long after the run, its result written, so the last scrape sees the totals (an interrupt ends it)")
}

// defaults fills in what --soak implies, and checks that --metrics-linger
// has an endpoint to keep. It runs before the engine config is built, so
// --interval is right from the start.
func (l *liveFlags) defaults(fs *pflag.FlagSet, f *runFlags) error {
	switch {
	case l.metricsLinger < 0:
		return usagef("--metrics-linger must not be negative (got %s)", l.metricsLinger)
	case l.metricsLinger > 0 && l.metricsAddr == "":
		return usagef("--metrics-linger keeps the --metrics-addr endpoint up after the run: give --metrics-addr too")
	}
	if !l.soak {
		return nil
	}
	if !fs.Changed("interval") {
		f.interval = soakInterval
	}
	out := outputFile(f.output)
	if out == "" && l.hlog == "" && l.series == "" {
		return usagef("--soak writes its results as the run goes: give -o FILE (the interval log and series go next to it) or --hlog/--series")
	}
	stem := strings.TrimSuffix(out, filepath.Ext(out))
	if l.hlog == "" && out != "" {
		l.hlog = stem + ".hlog"
	}
	if l.series == "" && out != "" {
		l.series = stem + ".series.jsonl"
	}
	return nil
}

// liveRun is what one run shows and writes as it goes.
type liveRun struct {
	flags    *liveFlags
	interval time.Duration
	progress *live.Progress
	metrics  *live.Metrics
	writer   *soak.Writer
	start    time.Time

	mu         sync.Mutex // guards the totals and writeErr
	totals     stats.Requests
	violations uint64
	writeErr   error
	ran        bool // the run ended with a result: its final figures are worth lingering for
}

// startLive opens the files and the metrics endpoint and hooks the run's
// interval callbacks. Errors here are the user's to fix (a path that cannot
// be written, a port in use) and come before any load is sent.
func startLive(cfg *engine.Config, f *runFlags, stderr io.Writer) (*liveRun, error) {
	l := &liveRun{flags: &f.live, interval: cfg.Interval, start: time.Now()}
	if !f.quiet {
		terminal := false
		if file := cli.OSFile(stderr); file != nil && live.IsTerminal(file) {
			terminal = true
			defer func() {
				if w := live.TerminalWidth(file); w > 0 {
					l.progress.SetWidth(w)
				}
			}()
		}
		l.progress = live.NewProgress(stderr, terminal, cfg.Interval, time.Now)
	}
	if f.live.hlog != "" || f.live.series != "" {
		comment := stats.FileRedactor().String(fmt.Sprintf("rpcload %s against %s", version, cfg.Target.URL))
		w, err := soak.NewWriter(f.live.hlog, f.live.series, l.start, comment)
		if err != nil {
			return nil, usagef("%v", err)
		}
		l.writer = w
		cfg.IntervalHists = f.live.hlog != ""
	}
	if f.live.metricsAddr != "" {
		m, err := live.NewMetrics(f.live.metricsAddr, f.live.metricsAny)
		if err != nil {
			l.close()
			return nil, usagef("--metrics-addr: %v", err)
		}
		l.metrics = m
		fmt.Fprintf(stderr, "rpcload: live figures on http://%s/metrics\n", m.Addr())
	}
	if l.progress != nil {
		cfg.OnDrain = func(n int64, wait time.Duration) { l.progress.Note(drainNotice(n, wait)) }
	}
	total := cfg.Duration
	if total == workload.OpenEnded {
		total = 0 // --requests alone: no planned length to show
	}
	cfg.OnInterval = func(iv engine.Interval) { l.observe(iv, total, true) }
	cfg.OnStatus = func(iv engine.Interval) { l.observe(iv, total, false) }
	return l, nil
}

// observe takes one closed interval (closed = true) or a look at the one
// in progress.
func (l *liveRun) observe(iv engine.Interval, total time.Duration, closed bool) {
	p := iv.Point
	l.mu.Lock()
	sum := l.totals
	violations := l.violations
	add := func(q *stats.Requests) {
		q.Sent += p.Sent
		q.Answered += p.Answered
		q.OK += p.OK
		q.RPCErrors += p.RPCErrors
		q.TransportErrors += p.TransportErrors
		q.Timeouts += p.Timeouts
		q.Late += p.Late
		q.Dropped += p.Dropped
		q.Messages += p.Messages
		q.Batches += p.Batches
	}
	add(&sum)
	violations += p.Violations
	if closed {
		l.totals, l.violations = sum, violations
		if l.writer != nil && l.writeErr == nil {
			end := time.Since(l.start)
			var corrected, service *hdr.Histogram
			if iv.Hists != nil {
				corrected, service = iv.Hists.Corrected, iv.Hists.Service
			}
			l.writeErr = l.writer.Interval(p, end-iv.Length, end, corrected, service)
		}
	}
	l.mu.Unlock()
	if l.metrics != nil {
		l.metrics.Update(p, sum, violations, iv.MethodHists)
	}
	if l.progress == nil || (closed && iv.Length < l.interval/10 && p.Sent == 0 && p.Answered == 0) {
		return // the sliver of an interval closed at the end: nothing to show
	}
	per := max(iv.Length.Seconds(), 1e-9)
	unit := ""
	if sum.Batches > 0 {
		unit = stats.RateUnit(sum.Messages, sum.Batches)
	}
	l.progress.Update(live.Snapshot{
		Elapsed: iv.Elapsed, Total: total, TargetRate: p.TargetRate,
		SentPerS: float64(p.Sent) / per, AnsweredPerS: float64(p.Answered) / per,
		MessagesPerS: float64(p.Messages) / per, MessageUnit: unit,
		InFlight: p.InFlight, P50us: p.P50us, P99us: p.P99us,
		Errors: sum.RPCErrors + sum.TransportErrors, Timeouts: sum.Timeouts, Violations: violations,
		OldestPendingUs: p.OldestPendingUs, ChildRSSBytes: p.ChildRSSBytes,
	})
}

// finish ends the status line, closes the files, and adds the soak
// analysis to res. The error is the first write failure of the incremental
// files. The metrics endpoint stays up until linger.
func (l *liveRun) finish(res *stats.Result) error {
	if l.progress != nil {
		l.progress.Done()
	}
	l.ran = res != nil
	err := l.closeFiles()
	if l.flags.soak && res != nil {
		res.Soak = soak.Analyze(res.Series, l.interval, res.Quiet)
		res.Soak.HlogPath, res.Soak.SeriesPath = l.flags.hlog, l.flags.series
	}
	return err
}

// linger keeps the metrics endpoint up for --metrics-linger once the run
// has ended and its result is written (run it deferred), so a scrape after
// the run's last interval sees the totals, then closes it. An interrupt
// ends it: the first one, if the run was not interrupted already (the run's
// exit code stands), else a second, which exits at once (cli.SignalContext).
func (l *liveRun) linger(ctx context.Context, stderr io.Writer) {
	if l.metrics == nil {
		return
	}
	if d := l.flags.metricsLinger; d > 0 && l.ran {
		fmt.Fprintf(stderr, "rpcload: the run's final figures stay on http://%s/metrics for %s (--metrics-linger; interrupt to stop)\n", l.metrics.Addr(), d)
		t := time.NewTimer(d)
		done := ctx.Done()
		if ctx.Err() != nil {
			done = nil // the interrupt that ended the run is not one to end this
		}
		select {
		case <-t.C:
		case <-done:
		}
		t.Stop()
	}
	l.metrics.Close()
	l.metrics = nil
}

// lingerAsync returns a function that starts linger in a goroutine of its
// own and returns what waits for it to end.
func (l *liveRun) lingerAsync(ctx context.Context, stderr io.Writer) func() (wait func()) {
	return func() (wait func()) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			l.linger(ctx, stderr)
		}()
		return func() { <-done }
	}
}

// close closes the files and the metrics endpoint, at once.
func (l *liveRun) close() error {
	err := l.closeFiles()
	if l.metrics != nil {
		l.metrics.Close()
		l.metrics = nil
	}
	return err
}

func (l *liveRun) closeFiles() error {
	var err error
	if l.writer != nil {
		l.mu.Lock()
		err = l.writeErr
		l.mu.Unlock()
		if cerr := l.writer.Close(); err == nil {
			err = cerr
		}
		l.writer = nil
	}
	return err
}

// drainNotice tells that sending has ended and the run waits for replies:
// a long --drain would otherwise look like a run that hangs.
func drainNotice(inFlight int64, wait time.Duration) string {
	return fmt.Sprintf("rpcload: sending ended; waiting up to %s for the replies of %d requests in flight (--drain; interrupt to stop waiting)", wait, inFlight)
}
