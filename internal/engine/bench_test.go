package engine

import (
	"bufio"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/proccpu"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/wire"
	"github.com/rpcload/rpcload/internal/workload"
	"github.com/rpcload/rpcload/internal/workload/scenario"
)

// requestPath runs everything rpcload does per request on one goroutine:
// register, encode, scan the reply, resolve, judge, record.
type requestPath struct {
	r     *run
	tb    *pending.Table
	o     outgoing
	j     judge
	wrec  *stats.Recorder
	cc    connCounters
	g     *paramGen
	buf   []byte
	ids   []uint64
	reply []byte
	seq   uint64
}

func newRequestPath() *requestPath { return newRequestPathProfile(profile.JSONRPC, "") }

// newRequestPathProfile is newRequestPath under a profile (and MCP era),
// whose rules then judge every reply.
func newRequestPathProfile(name profile.Name, era string) *requestPath {
	params := workload.StaticParams(`[1,"a"]`)
	if name == profile.MCP {
		params = workload.StaticParams(`{"name":"echo","arguments":{"a":1}}`) // MCP params are objects
	}
	return newRequestPathCalls(name, era, workload.Call{Name: "echo", Method: "echo", Params: params})
}

// newRequestPathCalls is the request path of a mix.
func newRequestPathCalls(name profile.Name, era string, calls ...workload.Call) *requestPath {
	prof, _ := profile.New(name, profile.Options{MCPEra: era})
	cfg := &Config{Profile: prof, Plan: workload.Plan{Rate: 1, Duration: time.Second, IDFormat: wire.IDInt, Timeout: time.Second, MaxInFlight: 1024, Calls: calls}}
	if err := cfg.Plan.Validate(true); err != nil {
		panic(err)
	}
	names := []string{}
	for _, c := range cfg.Calls {
		names = append(names, c.Name)
	}
	r := &run{cfg: cfg, agg: stats.NewAggregator(names), prof: prof, era: prof.Era(), unmatched: uint16(len(calls)), pickPCG: rand.NewPCG(0, 0)}
	r.pickRand = rand.New(r.pickPCG)
	if r.era == profile.EraAuto {
		r.era = profile.EraModern
	}
	if err := r.prepareCalls(); err != nil {
		panic(err)
	}
	p := &requestPath{r: r, tb: pending.NewAt(1024, 1), wrec: r.agg.NewRecorder(), g: r.newParamGen(), buf: make([]byte, 0, 256), ids: make([]uint64, 0, 16), reply: make([]byte, 0, 256)}
	p.j = judge{r: r, rec: r.agg.NewRecorder(), sent: &p.cc}
	return p
}

// pick is the call the dispatcher of r picks for sequence number seq.
func pick(r *run, seq uint64) uint16 { return r.cfg.Pick(r.pickPCG, r.pickRand, seq) }

// once sends one call through encodeTick and judges the reply a correct
// server would send (its result: the params).
func (p *requestPath) once(now int64) {
	p.seq++
	t := tick{seq: p.seq, intended: now, call: pick(p.r, p.seq)}
	p.r.inflight.Add(int64(p.r.calls[t.call].weight))
	p.buf, p.ids, _ = p.r.encodeTick(&p.o, p.tb, p.wrec, &p.cc, p.g, nil, p.buf, p.ids[:0], t)
	var m wire.Message
	wire.Scan(p.buf, &m)
	p.reply = append(p.reply[:0], `{"jsonrpc":"2.0","id":`...)
	p.reply = append(p.reply, m.ID...)
	p.reply = append(p.reply, `,"result":`...)
	if m.Params != nil {
		p.reply = append(p.reply, m.Params...)
	} else {
		p.reply = append(p.reply, "null"...)
	}
	p.reply = append(p.reply, '}')
	p.j.frame(p.tb, p.reply, now+1000)
}

// TestRequestPathAllocatesNothing proves the per-request hot path (encode,
// pending add and resolve, frame scan, judging, histogram record via the
// recorder) allocates nothing once warm.
func TestRequestPathAllocatesNothing(t *testing.T) {
	for _, tc := range []struct {
		name profile.Name
		era  string
	}{{profile.JSONRPC, ""}, {profile.MCP, "modern"}, {profile.LSP, ""}, {profile.Eth, ""}} {
		t.Run(string(tc.name), func(t *testing.T) { testRequestPathAllocatesNothing(t, newRequestPathProfile(tc.name, tc.era)) })
	}
}

func testRequestPathAllocatesNothing(t *testing.T, p *requestPath) {
	for i := range 2000 { // warm up: buffers and histograms exist
		p.once(int64(i))
	}
	allocs := testing.AllocsPerRun(5000, func() { p.once(1) })
	if allocs != 0 {
		t.Fatalf("request path allocates %v per request, want 0", allocs)
	}
	res := &stats.Result{}
	if err := p.r.agg.Fill(res); err != nil {
		t.Fatal(err)
	}
	if res.Requests.OK != 7001 || len(res.Violations) != 0 { // AllocsPerRun runs once more to warm up
		t.Fatalf("ok=%d violations=%v, want 7001 and none", res.Requests.OK, res.Violations)
	}
}

func BenchmarkRequestPath(b *testing.B) { benchRequestPath(b, newRequestPath()) }

// BenchmarkRequestPathBatch64 is the request path as a stream writer and
// reader run it: 64 ticks encoded, stamped with one clock read and
// registered at once, then their 64 replies judged with the time of the
// one read that brought them and settled together. ns/op is per request.
func BenchmarkRequestPathBatch64(b *testing.B) {
	p := newRequestPath()
	p.j.hold = true
	const n = 64
	replies := make([][]byte, n)
	var m wire.Message
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%n != 0 {
			continue
		}
		p.o.begin(p.tb, n)
		for k := range replies {
			p.seq++
			t := tick{seq: p.seq, intended: int64(i), call: pick(p.r, p.seq)}
			p.r.inflight.Add(1)
			p.buf = p.r.prepare(&p.o, nil, p.wrec, &p.cc, p.g, p.buf, t)
			wire.Scan(p.buf, &m)
			replies[k] = append(replies[k][:0], `{"jsonrpc":"2.0","id":`...)
			replies[k] = append(replies[k], m.ID...)
			replies[k] = append(replies[k], `,"result":`...)
			replies[k] = append(replies[k], m.Params...)
			replies[k] = append(replies[k], '}')
		}
		now := p.r.now()
		p.r.commit(&p.o, p.wrec, p.g, nil, now)
		for _, reply := range replies {
			p.j.frame(p.tb, reply, now+1000)
		}
		p.j.settle() // the reader settles before it waits for the next read
	}
}

// BenchmarkRequestPathMCP is the request path with the MCP rules (modern
// era) judging every reply.
func BenchmarkRequestPathMCP(b *testing.B) {
	benchRequestPath(b, newRequestPathProfile(profile.MCP, "modern"))
}

func benchRequestPath(b *testing.B, p *requestPath) {
	b.ReportAllocs()
	var now int64
	for b.Loop() {
		now++
		p.once(now)
	}
}

// BenchmarkTCPClosedLoop1024 measures end-to-end throughput over TCP to the
// embedded server (in the same process, so both share the 2 cores) with
// 1024 requests in flight on 4 connections.
func BenchmarkTCPClosedLoop1024(b *testing.B) {
	benchThroughput(b, func(cfg *Config) {})
}

// BenchmarkHTTPClosedLoop50 is the same over HTTP/1.1 with 50 connections.
func BenchmarkHTTPClosedLoop50(b *testing.B) {
	benchThroughput(b, func(cfg *Config) { cfg.Concurrency, cfg.Conns = 50, 50 })
}

func benchThroughput(b *testing.B, adjust func(*Config)) {
	srv, err := testsrv.New(testsrv.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, tc, err := srv.ListenAndServe(ctx, "127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	url := "tcp://" + tc.String()
	if b.Name() == "BenchmarkHTTPClosedLoop50" {
		url = "http://" + h.String() + "/"
	}
	var rate float64
	var cpu time.Duration
	var replies uint64
	for b.Loop() {
		cfg := Config{Target: mustTarget(b, url), Conns: 4, MaxFrame: 1 << 20, Plan: workload.Plan{Concurrency: 1024, Duration: 2 * time.Second, Timeout: 10 * time.Second, Drain: 10 * time.Second, MaxInFlight: 100000, Method: "get_time"}}
		adjust(&cfg)
		before, _ := proccpu.Self()
		res, err := Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		after, _ := proccpu.Self()
		cpu += after - before
		replies += res.Requests.OK
		if len(res.Violations) != 0 || res.Requests.OK != res.Requests.Sent {
			b.Fatalf("unclean run: %+v %v", res.Requests, res.Violations)
		}
		rate = res.Rate.Achieved
	}
	b.ReportMetric(rate, "req/s")
	// CPU per reply, the server's included (it runs in this process): far
	// steadier than the rate on a shared machine, and what a change to the
	// client moves.
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(replies, 1)), "cpu-us/reply")
}

// BenchmarkInflightHeap100k measures the heap rpcload holds per request in
// flight: a TCP server that reads and never answers holds 100,000 requests
// open, and the heap is read (after GC) at 10,000 and at 100,000 in flight.
// The difference divided by 90,000 is the marginal cost of one more request
// in flight; the server runs in this process but keeps nothing per request.
func BenchmarkInflightHeap100k(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, bufio.NewReader(c))
		}
	}()
	var perReq float64
	for b.Loop() {
		var heapAt10k, heapAt100k uint64
		measure := func() uint64 {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return m.HeapAlloc
		}
		ctx, cancel := context.WithCancel(context.Background())
		cfg := Config{Target: mustTarget(b, "tcp://"+ln.Addr().String()), Conns: 4, MaxFrame: 1 << 20, Interval: 10 * time.Millisecond, InterruptDrain: time.Millisecond, Plan: workload.Plan{Rate: 200000, Duration: time.Hour, Timeout: time.Hour, Drain: 0, MaxInFlight: 100000, Method: "echo", Params: []byte(`[1,"a"]`)}}
		cfg.OnInterval = func(iv Interval) {
			switch {
			case heapAt10k == 0 && iv.InFlight >= 10000:
				heapAt10k = measure()
			case heapAt100k == 0 && iv.InFlight >= 100000:
				heapAt100k = measure()
				cancel()
			}
		}
		if _, err := Run(ctx, cfg); err != nil {
			b.Fatal(err)
		}
		cancel()
		if heapAt10k == 0 || heapAt100k == 0 {
			b.Fatal("never reached 100,000 in flight")
		}
		perReq = float64(int64(heapAt100k)-int64(heapAt10k)) / 90000
	}
	b.ReportMetric(perReq, "heap-bytes/inflight")
}

// BenchmarkGenerateEthereumMix measures what the generator does per request
// for the mix of scenarios/ethereum.yaml (pick the call, generate its params
// from templates and the address feeder, encode, register the id), on one
// goroutine: requests/s per core. The table entry is forgotten at once, as
// a reply would resolve it.
func BenchmarkGenerateEthereumMix(b *testing.B) {
	sc, err := scenario.Load("../../scenarios/ethereum.yaml", func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	var calls []workload.Call
	for _, c := range sc.Mix {
		ec := workload.Call{Name: c.Name, Method: c.Method, Weight: c.Weight, Batch: c.Batch, Notify: c.Notify}
		if c.Params != nil {
			ec.Params = c.Params
		}
		calls = append(calls, ec)
	}
	p := newRequestPathCalls(profile.Eth, "", calls...)
	p.r.cfg.Seed = 1
	b.ReportAllocs()
	for b.Loop() {
		p.seq++
		t := tick{seq: p.seq, call: pick(p.r, p.seq)}
		p.buf, p.ids, _ = p.r.encodeTick(&p.o, p.tb, p.wrec, &p.cc, p.g, nil, p.buf, p.ids[:0], t)
		for _, id := range p.ids {
			p.tb.Forget(id)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
