package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/bench/minclient"
	"github.com/rpcload/rpcload/internal/engine"
	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/workload"
)

// runMode runs one of the binary's internal modes. Each prints one JSON
// object on stdout (profserver: the "serving" lines first) for the suite.
func runMode(ctx context.Context, mode string, args []string, stdout, stderr io.Writer) error {
	switch mode {
	case "minclient":
		return modeMinclient(ctx, args, stdout, stderr)
	case "heapprobe":
		return modeHeapProbe(ctx, args, stdout, stderr)
	case "profclient":
		return modeProfClient(ctx, args, stdout, stderr)
	case "profserver":
		return modeProfServer(ctx, args, stdout, stderr)
	}
	return fmt.Errorf("unknown mode %q (modes: minclient, heapprobe, profclient, profserver)", mode)
}

func newModeFlags(name string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parseMode(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return nil
}

func modeMinclient(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newModeFlags("minclient", stderr)
	var c minclient.Config
	fs.StringVar(&c.URL, "url", "", "tcp://host:port or ws://host:port/path")
	fs.IntVar(&c.InFlight, "inflight", 1, "requests in flight")
	fs.IntVar(&c.Conns, "conns", 1, "connections")
	fs.DurationVar(&c.Duration, "duration", 2*time.Second, "how long to send")
	fs.StringVar(&c.Method, "method", "echo", "method")
	fs.StringVar(&c.Params, "params", "", "raw JSON params")
	fs.BoolVar(&c.Timed, "timed", false, "time each round trip (1 in flight, 1 connection) and report the median")
	if err := parseMode(fs, args); err != nil {
		return err
	}
	res, err := minclient.Run(ctx, c)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(res)
}

// heapReport is what heapprobe prints.
type heapReport struct {
	InFlight    int    `json:"inflight"`
	InFlightMax int64  `json:"inflight_max"`
	HeapBase    uint64 `json:"heap_base"` // live heap before the run started
	HeapPeak    uint64 `json:"heap_peak"` // largest live heap seen at full load
	Readings    int    `json:"readings"`
	Answered    uint64 `json:"answered"`
	Anomalies   string `json:"anomalies,omitempty"`
}

// liveHeap is the heap still reachable: a collection first, so garbage
// does not count.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// engineConfig is what `rpcload run URL --concurrency N --conns C
// --method M --params P --duration D` hands the engine, with the CLI's
// defaults (max in flight 100,000, 16 MiB frames).
func engineConfig(url string, concurrency, conns int, d time.Duration, method, params string) (engine.Config, error) {
	t, err := transport.ParseTarget(url)
	if err != nil {
		return engine.Config{}, err
	}
	c := engine.Config{Target: t, Conns: conns, MaxFrame: 16 << 20, Interval: time.Second, Plan: workload.Plan{Concurrency: concurrency, Duration: d, Timeout: 60 * time.Second, Drain: 60 * time.Second, MaxInFlight: max(100000, concurrency), Method: method}}
	if params != "" {
		c.Params = []byte(params)
	}
	return c, nil
}

func modeHeapProbe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newModeFlags("heapprobe", stderr)
	url := fs.String("url", "", "tcp://host:port of a server with the sleep method")
	n := fs.Int("inflight", 1000, "requests in flight")
	hold := fs.Int("hold-ms", 1000, "how long the server holds each reply")
	d := fs.Duration("duration", 3*time.Second, "sending phase")
	heapProfile := fs.String("heapprofile", "", "also write a heap profile (live objects) at the last reading to this file")
	if err := parseMode(fs, args); err != nil {
		return err
	}
	if *heapProfile != "" {
		// Fine-grained sampling, set before the engine allocates anything;
		// the records live outside the heap, so the readings stay valid.
		runtime.MemProfileRate = 512
	}
	// Four connections at every level, the baseline of 1 in flight too, so
	// the connections' buffers cancel out of the difference.
	cfg, err := engineConfig(*url, *n, 4, *d, "sleep", fmt.Sprintf(`{"ms":%d}`, *hold))
	if err != nil {
		return err
	}
	cfg.Interval = 250 * time.Millisecond
	rep := heapReport{InFlight: *n, HeapBase: liveHeap()}
	var mu sync.Mutex
	var profErr error // written by the interval callback, read after Run
	// Read the heap once a whole wave of replies has come back, so the
	// tables have churned, and while all N are in flight.
	settled := time.Duration(*hold)*time.Millisecond + 250*time.Millisecond
	cfg.OnInterval = func(iv engine.Interval) {
		if iv.Elapsed < settled || iv.Elapsed > *d || iv.InFlight < int64(*n)*99/100 {
			return
		}
		h := liveHeap()
		mu.Lock()
		rep.HeapPeak = max(rep.HeapPeak, h)
		rep.Readings++
		mu.Unlock()
		if *heapProfile != "" {
			profErr = writeHeapProfile(*heapProfile)
		}
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	res, err := engine.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if profErr != nil {
		return profErr
	}
	rep.InFlightMax, rep.Answered = res.InFlightMax, res.Requests.Answered
	rep.Anomalies = anomalies(res)
	if rep.Readings == 0 {
		return fmt.Errorf("no heap reading at %d in flight (in flight max %d): lengthen --duration", *n, res.InFlightMax)
	}
	return json.NewEncoder(stdout).Encode(rep)
}

// writeHeapProfile writes the live heap's profile (after a collection).
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	err = pprof.Lookup("heap").WriteTo(f, 0)
	return errors.Join(err, f.Close())
}

// allocCounts reads the process's allocation counters.
func allocCounts() (mallocs, bytes uint64) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs, m.TotalAlloc
}

// profReport is what profclient and profserver print.
type profReport struct {
	Requests      uint64  `json:"requests"` // answered (client) or frames handled (server)
	ReqPerS       float64 `json:"req_per_s"`
	AllocsPerReq  float64 `json:"allocs_per_req"`
	BytesPerReq   float64 `json:"bytes_per_req"`
	CPUProfile    string  `json:"cpu_profile"`
	AllocsProfile string  `json:"allocs_profile"`
}

// defaultMemProfileRate samples an allocation every 4 KiB on average (the
// runtime's default, 512 KiB, misses most small per-request allocations).
const defaultMemProfileRate = 4096

// startProfiles starts the CPU profile and the allocation sampling at
// rate bytes.
func startProfiles(cpuPath string, rate int) (func(allocsPath string) error, error) {
	runtime.MemProfileRate = rate
	f, err := os.Create(cpuPath)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func(allocsPath string) error {
		pprof.StopCPUProfile()
		err := f.Close()
		a, aerr := os.Create(allocsPath)
		if aerr != nil {
			return errors.Join(err, aerr)
		}
		// The profile holds what the last completed collection published:
		// one more takes in the allocations made since.
		runtime.GC()
		werr := pprof.Lookup("allocs").WriteTo(a, 0)
		return errors.Join(err, werr, a.Close())
	}, nil
}

func modeProfClient(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newModeFlags("profclient", stderr)
	url := fs.String("url", "", "target URL")
	conc := fs.Int("concurrency", 1024, "requests in flight")
	conns := fs.Int("conns", 4, "connections")
	d := fs.Duration("duration", 5*time.Second, "sending phase")
	cpu := fs.String("cpuprofile", "", "CPU profile file")
	allocs := fs.String("allocsprofile", "", "allocation profile file")
	rate := fs.Int("memprofilerate", defaultMemProfileRate, "sample an allocation every this many bytes (1: every allocation)")
	if err := parseMode(fs, args); err != nil {
		return err
	}
	if *cpu == "" || *allocs == "" {
		return errors.New("--cpuprofile and --allocsprofile are required")
	}
	cfg, err := engineConfig(*url, *conc, *conns, *d, echoMethod, echoParams)
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	stop, err := startProfiles(*cpu, *rate)
	if err != nil {
		return err
	}
	m0, b0 := allocCounts()
	res, err := engine.Run(ctx, cfg)
	m1, b1 := allocCounts()
	if perr := stop(*allocs); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	n := res.Requests.Answered
	rep := profReport{Requests: n, ReqPerS: answeredPerSec(res), CPUProfile: *cpu, AllocsProfile: *allocs}
	if n > 0 {
		rep.AllocsPerReq, rep.BytesPerReq = float64(m1-m0)/float64(n), float64(b1-b0)/float64(n)
	}
	return json.NewEncoder(stdout).Encode(rep)
}

// modeProfServer serves the reference server in this process, as `rpcload
// serve` does (same package, same defaults), under the CPU profiler, until
// SIGTERM or SIGINT; then it writes the profiles and its report.
func modeProfServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newModeFlags("profserver", stderr)
	httpAddr := fs.String("http", "", "HTTP and WebSocket address")
	tcpAddr := fs.String("tcp", "", "TCP address")
	cpu := fs.String("cpuprofile", "", "CPU profile file")
	allocs := fs.String("allocsprofile", "", "allocation profile file")
	report := fs.String("report", "", "write the JSON report here at exit")
	if err := parseMode(fs, args); err != nil {
		return err
	}
	if *cpu == "" || *allocs == "" || *report == "" {
		return errors.New("--cpuprofile, --allocsprofile and --report are required")
	}
	srv, err := testsrv.New(testsrv.Config{Seed: 1})
	if err != nil {
		return err
	}
	bound, err := srv.Listen(ctx, testsrv.Addrs{HTTP: *httpAddr, TCP: *tcpAddr})
	if err != nil {
		return err
	}
	stop, err := startProfiles(*cpu, defaultMemProfileRate)
	if err != nil {
		srv.Close()
		return err
	}
	m0, b0 := allocCounts()
	t0 := time.Now()
	var lines []string
	if bound.HTTP != "" {
		lines = append(lines, "serving JSON-RPC over HTTP on http://"+bound.HTTP+"/")
	}
	if bound.TCP != "" {
		lines = append(lines, "serving JSON-RPC over TCP on tcp://"+bound.TCP)
	}
	fmt.Fprintln(stdout, strings.Join(lines, "\n"))
	<-ctx.Done()
	elapsed := time.Since(t0)
	m1, b1 := allocCounts()
	n := srv.Requests()
	srv.Close()
	if err := stop(*allocs); err != nil {
		return err
	}
	rep := profReport{Requests: n, ReqPerS: float64(n) / elapsed.Seconds(), CPUProfile: *cpu, AllocsProfile: *allocs}
	if n > 0 {
		rep.AllocsPerReq, rep.BytesPerReq = float64(m1-m0)/float64(n), float64(b1-b0)/float64(n)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	return writeFileAtomic(*report, b)
}
