package hostile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/engine"
	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/report"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
	"github.com/rpcload/rpcload/internal/workload"
)

// TestMain turns the test binary into a hostile child process when
// ChildEnv is set: the stdio cases run it as their server.
func TestMain(m *testing.M) {
	if v := os.Getenv(ChildEnv); v != "" {
		mode, cl, err := ChildArgs(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		// Whatever the mode ignores, the process does not outlive this.
		time.AfterFunc(ChildLifetime+5*time.Second, func() { os.Exit(3) })
		ServeChild(mode, cl, os.Stdin, os.Stdout, os.Stderr, ChildLifetime)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The limits every chaos run is given; the heap bound is derived from them.
const (
	chaosMaxFrame = 1 << 20
	chaosTimeout  = 300 * time.Millisecond
	chaosDuration = 300 * time.Millisecond
	chaosGrace    = 200 * time.Millisecond
	chaosConns    = 2
	// hardDeadline is the test's own limit on one run, far above what the
	// configured timeouts allow (duration + drain + a child's 2 graces and
	// the redials): past it the run hangs.
	hardDeadline = 20 * time.Second
)

// heapBound is the most heap one run may add above what the process held
// before it. Each connection may hold a reply buffer of --max-frame (and a
// reader's skip buffer of as much again), the hostile server in the same
// process a few 64 KiB buffers per connection; the rest (pending tables,
// recorders, histograms, goroutines) is a fixed cost measured at about
// 10 MiB. The factor 2 is the garbage a GOGC=100 heap holds between
// collections.
func heapBound(conns int) uint64 {
	return 2 * (uint64(conns)*4*chaosMaxFrame + 24<<20)
}

// heapSampler records the peak of the live-and-unswept heap while it runs.
type heapSampler struct {
	stop chan struct{}
	done chan struct{}
	peak uint64
	base uint64
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func readHeap(s []metrics.Sample) uint64 {
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapSampler() *heapSampler {
	runtime.GC()
	s := []metrics.Sample{{Name: heapMetric}}
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{}), base: readHeap(s)}
	h.peak = h.base
	go func() {
		defer close(h.done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			if v := readHeap(s); v > h.peak {
				h.peak = v
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// growth stops the sampler and returns the peak heap above the base.
func (h *heapSampler) growth() uint64 {
	close(h.stop)
	<-h.done
	return h.peak - h.base
}

// want names the counter a mode must show in the result: a request
// counter ("timeouts", "transport_errors", "ok", "server_messages") or a
// rule ("frame_too_large", "duplicate_reply"). Several alternatives are
// separated by "|".
func wantLoad(m Mode, t Transport) string {
	switch m {
	case HugeReply, HugeLength:
		return "frame_too_large"
	case EndlessLine:
		if t == TCPLSP || t == StdioCL || t == HTTP {
			// The header that never ends loses the framing: the connection
			// is given up.
			return "transport_errors"
		}
		return "frame_too_large"
	case KeepAlives, Slowloris:
		return "timeouts"
	case Fragments, StderrFlood, IgnoreTerm:
		return "ok"
	case Flood:
		return "server_messages"
	case NeverRead:
		return "timeouts|transport_errors"
	case Reset, CloseStdout:
		return "transport_errors"
	case Twice:
		if t == MCP {
			// The exchange ends with the first response; the second one
			// on the same SSE stream is never read.
			return "ok"
		}
		return "duplicate_reply"
	}
	return ""
}

// counter returns a named figure of r.
func counter(r *stats.Result, name string) uint64 {
	q := r.Requests
	switch name {
	case "timeouts":
		return q.Timeouts
	case "transport_errors":
		return q.TransportErrors
	case "ok":
		return q.OK
	case "server_messages":
		return q.ServerMessages
	}
	return r.Violations[name]
}

// chaosCase is one mode over one transport.
type chaosCase struct {
	mode Mode
	tr   Transport
}

func (c chaosCase) String() string { return string(c.mode) + "/" + string(c.tr) }

// cases is the table of modes × transports: every pair that applies.
func cases() []chaosCase {
	var cs []chaosCase
	for _, m := range Modes {
		for _, t := range Transports {
			if Applies(m, t) {
				cs = append(cs, chaosCase{m, t})
			}
		}
	}
	return cs
}

// full reports whether the whole table runs (RPCLOAD_CHAOS=full). By
// default rpcload meets every case of the table (each takes under a second)
// and rpcfuzz, slower per case, one transport per mode: the quick set that
// runs under -race in CI.
func full() bool { return os.Getenv("RPCLOAD_CHAOS") == "full" }

// fuzzQuick is the transport rpcfuzz meets each mode over by default.
func fuzzQuick(c chaosCase) bool {
	if full() {
		return true
	}
	want := TCP
	switch c.mode {
	case HugeLength:
		want = HTTP
	case KeepAlives:
		want = MCP
	case Fragments:
		want = WS
	case StderrFlood, IgnoreTerm, CloseStdout:
		want = Stdio
	}
	return c.tr == want
}

// knownFuzzSlow are the cases where rpcfuzz runs past the bound of
// docs/fuzzing.md ("Limits"): they are measured, then skipped rather than
// failed. None is left: the canary's selection, the wind-down of the last
// finding and a child's exit status are bounded by --timeout.
var knownFuzzSlow = map[chaosCase]string{}

// target starts the server of c (or describes its child process) and
// returns the target and the environment a child needs.
func target(t *testing.T, c chaosCase) (transport.Target, []string) {
	t.Helper()
	if c.tr == Stdio || c.tr == StdioCL {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		f, v := transport.Newline, string(c.mode)
		if c.tr == StdioCL {
			f, v = transport.ContentLength, v+",cl"
		}
		tg, err := transport.CommandTarget([]string{exe}, f)
		if err != nil {
			t.Fatal(err)
		}
		return tg, []string{ChildEnv + "=" + v}
	}
	s, err := Start(c.mode, c.tr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	tg, err := transport.ParseTarget(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return tg, nil
}

// within runs f and fails the test, naming the case and dumping the
// goroutines, if it has not returned by the hard deadline.
func within(t *testing.T, c chaosCase, what string, f func()) time.Duration {
	t.Helper()
	done := make(chan struct{})
	start := time.Now()
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return time.Since(start)
	case <-time.After(hardDeadline):
		var b bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&b, 1)
		t.Fatalf("%s: %s hung: no result after %s\n%s", c, what, hardDeadline, b.String())
		return 0
	}
}

// loadConfig is the rpcload run of a case: short, with a small --max-frame
// and --timeout, so every limit is reached in well under a second.
func loadConfig(c chaosCase, tg transport.Target, env []string) engine.Config {
	cfg := engine.Config{Target: tg, Conns: chaosConns, MaxFrame: chaosMaxFrame, Interval: 100 * time.Millisecond, Child: transport.ChildOptions{Grace: chaosGrace, Env: env}, Plan: workload.Plan{Rate: 200, Duration: chaosDuration, Timeout: chaosTimeout, Drain: chaosTimeout, MaxInFlight: 10_000, Method: "echo", IDFormat: wire.IDInt}}
	switch c.tr {
	case Stdio, StdioCL:
		cfg.Conns = 1
		cfg.Restart = c.mode == Reset // a child that exits at once, again and again
		// A race-enabled child takes a good part of a second to start,
		// and over 1 s beside six CPU burners (../shared/tools/busy 6):
		// then every request timed out before the child even read it,
		// and the reset it was to count never came in time.
		cfg.Timeout, cfg.Drain = 3*time.Second, 3*time.Second
	case MCP:
		cfg.Method = "ping"
		cfg.Profile, _ = profile.New(profile.MCP, profile.Options{MCPEra: "legacy"})
		// A reply past --max-frame is read up to the limit before it is
		// frame_too_large: with -race on a loaded machine, longer than
		// the 300 ms timeout, and the request was a timeout instead.
		cfg.Timeout, cfg.Drain = 2*time.Second, 2*time.Second
	}
	if c.mode == NeverRead {
		// Requests big and fast enough to fill the socket buffers, so the
		// writer meets its deadline.
		cfg.Rate = 2000
		cfg.Params = []byte(`{"pad":"` + strings.Repeat("x", 16<<10) + `"}`)
	}
	return cfg
}

var (
	outcomesMu sync.Mutex
	outcomes   = map[string]string{}
)

func record(key, line string) {
	outcomesMu.Lock()
	outcomes[key] = line
	outcomesMu.Unlock()
}

// TestChaosLoad runs rpcload's engine against every hostile server: no
// panic, no hang past the timeouts, the heap bounded by the limits, the
// problem counted under its name, and the result and reports written.
func TestChaosLoad(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.String(), func(t *testing.T) {
			tg, env := target(t, c)
			cfg := loadConfig(c, tg, env)
			var res *stats.Result
			var err error
			heap := startHeapSampler()
			elapsed := within(t, c, "rpcload", func() { res, err = engine.Run(context.Background(), cfg) })
			grew := heap.growth()
			if err != nil {
				t.Fatalf("%s: rpcload: %v", c, err)
			}
			// duration + drain + shutdown (a child: stdin closed, SIGTERM
			// and SIGKILL after a grace each) + slack for a loaded machine
			// (never-read over WebSocket took 4.9 s of a 4 s bound with
			// -race beside six CPU burners; a hang has no bound at all).
			if limit := cfg.Duration + cfg.Drain + 2*chaosGrace + 5*time.Second; elapsed > limit {
				t.Errorf("%s: the run took %s, over the %s its timeouts allow", c, elapsed, limit)
			}
			if bound := heapBound(cfg.Conns); grew > bound {
				t.Errorf("%s: peak heap grew by %d MiB, over the %d MiB the limits allow", c, grew>>20, bound>>20)
			}
			want := wantLoad(c.mode, c.tr)
			counted := ""
			for _, name := range strings.Split(want, "|") {
				if n := counter(res, name); n > 0 {
					counted = fmt.Sprintf("%s=%d", name, n)
				}
			}
			if counted == "" {
				t.Errorf("%s: nothing counted as %s: requests %+v, violations %v, errors %v", c, want, res.Requests, res.Violations, res.TransportErrorSamples)
			}
			checkChild(t, c, res)
			writeResults(t, res)
			t.Logf("%s: %s in %s, heap +%.1f MiB; requests %+v violations %v", c, counted, elapsed.Round(time.Millisecond), float64(grew)/(1<<20), res.Requests, res.Violations)
			record("load "+c.String(), fmt.Sprintf("| %s | %s | rpcload | %s | %s | %.1f |", c.mode, c.tr, counted, elapsed.Round(10*time.Millisecond), float64(grew)/(1<<20)))
		})
	}
}

// checkChild checks what a child-process mode must leave in the result.
func checkChild(t *testing.T, c chaosCase, res *stats.Result) {
	t.Helper()
	switch c.mode {
	case IgnoreTerm:
		if res.Child == nil || len(res.Child.Exits) == 0 || !strings.Contains(strings.Join(res.Child.Exits, ";"), "SIGKILL") {
			t.Errorf("%s: the child that ignores SIGTERM was not killed with SIGKILL: %+v", c, res.Child)
		}
	case StderrFlood:
		if res.Child == nil || len(res.Child.StderrTail) == 0 {
			t.Errorf("%s: no stderr tail kept: %+v", c, res.Child)
			return
		}
		total := 0
		for _, l := range res.Child.StderrTail {
			total += len(l)
		}
		if total > 64<<10 {
			t.Errorf("%s: the stderr tail holds %d bytes", c, total)
		}
	}
}

// writeResults writes the result file, the text report and the HTML report
// as rpcload does, and reads the result file back.
func writeResults(t *testing.T, res *stats.Result) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	if err := stats.WriteJSONFile(path, res); err != nil {
		t.Fatalf("writing the result: %v", err)
	}
	back, err := stats.ReadJSONFile(path)
	if err != nil {
		t.Fatalf("reading the result back: %v", err)
	}
	if back.Requests != res.Requests {
		t.Errorf("the result file says %+v, the run %+v", back.Requests, res.Requests)
	}
	var text, html bytes.Buffer
	if err := stats.WriteText(&text, res); err != nil || text.Len() == 0 {
		t.Errorf("text report: %v (%d bytes)", err, text.Len())
	}
	if err := report.WriteHTML(&html, []report.Input{{Name: "chaos", Result: res}}); err != nil || html.Len() == 0 {
		t.Errorf("HTML report: %v (%d bytes)", err, html.Len())
	}
}

// TestChaosFuzz runs rpcfuzz's engine against every hostile server: no
// panic, no hang, the heap bounded, summary.json written, and the problem
// named in the summary.
func TestChaosFuzz(t *testing.T) {
	for _, c := range cases() {
		if !fuzzQuick(c) {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			tg, env := target(t, c)
			out := t.TempDir()
			cfg := fuzz.Config{
				Target: tg, Workers: 1, Duration: 500 * time.Millisecond, Seed: 1, Timeout: chaosTimeout,
				MaxReply: chaosMaxFrame, OutDir: out, MinimizeBudget: 10, MinimizeTime: 300 * time.Millisecond,
				MaxFindings: 5, Child: transport.ChildOptions{Grace: chaosGrace, Env: env},
			}
			if c.tr == MCP {
				cfg.Profile, cfg.ProfileOptions = profile.MCP, profile.Options{MCPEra: "legacy"}
			}
			var sum *fuzz.Summary
			var err error
			heap := startHeapSampler()
			elapsed := within(t, c, "rpcfuzz", func() { sum, err = fuzz.Run(context.Background(), cfg) })
			grew := heap.growth()
			if err != nil {
				t.Logf("%s: rpcfuzz: %v", c, err)
				record("fuzz "+c.String(), fmt.Sprintf("| %s | %s | rpcfuzz | error: %s | %s | %.1f |", c.mode, c.tr, oneLine(err.Error()), elapsed.Round(10*time.Millisecond), float64(grew)/(1<<20)))
				return
			}
			// The bound of docs/fuzzing.md (fuzz.EndBound): --duration,
			// the canary's selection before it, the wind-down of the
			// finding in progress after it; then a child's restarts and
			// shutdown, and slack for a loaded machine.
			limit := fuzz.EndBound(cfg.Duration, cfg.Timeout) + 4*chaosGrace + 1500*time.Millisecond
			if elapsed > limit {
				if why, ok := knownFuzzSlow[c]; ok {
					t.Skipf("%s: %s (took %s)", c, why, elapsed.Round(time.Millisecond))
				}
				t.Errorf("%s: rpcfuzz took %s, over the %s its limits allow", c, elapsed.Round(time.Millisecond), limit)
			}
			if bound := heapBound(cfg.Workers + 1); grew > bound {
				t.Errorf("%s: peak heap grew by %d MiB, over the %d MiB the limits allow", c, grew>>20, bound>>20)
			}
			if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
				t.Errorf("%s: no summary.json: %v", c, err)
			}
			var named []string
			for rule, n := range sum.FindingsByRule {
				named = append(named, fmt.Sprintf("%s=%d", rule, n))
			}
			sort.Strings(named)
			got := strings.Join(named, ",")
			if got == "" && len(sum.Warnings) > 0 {
				got = "warning: " + oneLine(sum.Warnings[0])
			}
			if got == "" {
				got = "nothing"
				switch c.mode {
				case Flood, Fragments, StderrFlood, IgnoreTerm:
					// Not against the protocol: nothing to find.
				default:
					t.Errorf("%s: rpcfuzz named nothing: %+v", c, sum)
				}
			}
			t.Logf("%s: %s in %s (%d execs), heap +%.1f MiB, stopped %q, warnings %v", c, got, elapsed.Round(time.Millisecond), sum.Execs, float64(grew)/(1<<20), sum.Stopped, sum.Warnings)
			record("fuzz "+c.String(), fmt.Sprintf("| %s | %s | rpcfuzz | %s | %s | %.1f |", c.mode, c.tr, got, elapsed.Round(10*time.Millisecond), float64(grew)/(1<<20)))
		})
	}
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}

// TestZZChaosTable prints the table of outcomes (with -v) for the report
// and docs/reliability.md; it runs after the chaos tests, in file order.
func TestZZChaosTable(t *testing.T) {
	outcomesMu.Lock()
	defer outcomesMu.Unlock()
	if len(outcomes) == 0 {
		t.Skip("no chaos case ran")
	}
	keys := make([]string, 0, len(outcomes))
	for k := range outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("| mode | transport | tool | counted as | time | peak heap growth (MiB) |\n|---|---|---|---|---|---|\n")
	for _, k := range keys {
		b.WriteString(outcomes[k] + "\n")
	}
	t.Log("\n" + b.String())
}
