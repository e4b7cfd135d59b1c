package fuzz

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/apispec"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/proccpu"
	"github.com/rpcload/rpcload/internal/transport"
)

// BenchmarkBlackBox is the whole loop against the reference server over
// loopback, benchWorkers workers: pick, mutate, send, judge, keep what is new; the
// metric is inputs per second. One op is one input, so allocs/op and B/op
// are per input; they and cpu-µs/exec (the process's CPU time, where the
// platform tells it) count the reference server too, which runs in the
// test's process. On a shared machine cpu-µs/exec is the steadier number:
// other processes lower execs/s far more than they raise it.
func BenchmarkBlackBox(b *testing.B) { benchBlackBox(b, benchWorkers) }

// BenchmarkBlackBoxSerial is BenchmarkBlackBox with one worker: the
// inputs are the same in every run (one seed, a fixed clock), where
// benchWorkers workers sharing a corpus draw a different mix each time, a
// mix whose cost per input varies by half. Its cpu-µs/exec and allocs/op
// are the numbers to compare two versions of the engine by; its execs/s is
// mostly the reference server's slow methods, waited for one at a time.
func BenchmarkBlackBoxSerial(b *testing.B) { benchBlackBox(b, 1) }

// benchBlackBox runs the whole loop with the given workers, b.N inputs,
// over TCP and HTTP.
func benchBlackBox(b *testing.B, workers int) {
	for _, over := range []string{"tcp", "http"} {
		b.Run(over, func(b *testing.B) {
			b.ReportAllocs()
			cfg := Config{Target: refServer(b, over), Workers: workers, Execs: uint64(b.N), Seed: 1, OutDir: b.TempDir(),
				Timeout: 2 * time.Second, Now: fixedClock}
			cpu0, cpuOK := proccpu.Self()
			b.ResetTimer()
			s, err := Run(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(s.Execs)/b.Elapsed().Seconds(), "execs/s")
			if cpu1, _ := proccpu.Self(); cpuOK && s.Execs > 0 {
				b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(s.Execs), "cpu-µs/exec")
			}
			// TestReferenceServerClean asserts that the server breaks nothing;
			// here a finding only tells the time went to minimizing.
			for _, f := range s.Findings {
				b.Logf("finding %s: %s", f.ID, f.Note)
			}
		})
	}
}

// BenchmarkExchange is the transport and oracle path alone: one small seed
// call per input, sent and judged, on as many connections as GOMAXPROCS,
// without mutation or finding handling. allocs/op is per exchange, the
// reference server's included.
func BenchmarkExchange(b *testing.B) {
	call := mutate.Case{Frames: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1,"a"]}`)}}
	for _, over := range []string{"tcp", "http"} {
		b.Run(over, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			cfg := Config{Target: refServer(b, over), Execs: 1, OutDir: b.TempDir(), Timeout: 2 * time.Second, Now: fixedClock}
			if err := cfg.fill(); err != nil {
				b.Fatal(err)
			}
			r, err := newRun(ctx, &cfg, nil)
			if err != nil {
				b.Fatal(err)
			}
			var id atomic.Int32
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				w := r.newWorker(int(id.Add(1)))
				defer w.closeConn()
				for pb.Next() {
					if res := w.exec(ctx, call, false); res.v.rules != 0 || res.o.end != endNone {
						b.Errorf("%s: %s", res.o.end, res.v.note)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "execs/s")
		})
	}
}

// benchWorkers keeps the reference server's slow methods (convert answers
// after 100 ms, lookup_weather after 300 ms; both are in the corpus) from
// idling the machine.
const benchWorkers = 16

// BenchmarkRestarts fuzzes a child process that ends its session on every
// parse error (this test binary, "parsedie"): most of its time is
// restarting the child and handling its crash. One op is one input;
// execs/s is the figure of issue 16's item 6 (14 inputs in 60 s against
// such a server), restarts/op how many inputs cost a restart. Run it with
// a count of inputs, e.g. -benchtime=500x.
func BenchmarkRestarts(b *testing.B) {
	tg, err := transport.CommandTarget([]string{os.Args[0], "-test.run=^$"}, transport.Newline)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Target: tg, Child: transport.ChildOptions{Env: []string{childEnv + "=parsedie"}, Grace: time.Second},
		Execs: uint64(b.N), Seed: 1, OutDir: b.TempDir(), Timeout: time.Second}
	b.ResetTimer()
	s, err := Run(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(s.Execs)/b.Elapsed().Seconds(), "execs/s")
	b.ReportMetric(float64(s.Restarts)/float64(max(s.Execs, 1)), "restarts/op")
	b.Logf("%d execs in %.1fs, %d restarts, %d checks, findings %v, stopped %q", s.Execs, b.Elapsed().Seconds(), s.Restarts, s.Checks, s.FindingsByRule, s.Stopped)
}

// benchAPIDoc is the reference server's fast methods (its document also
// has convert and lookup_weather, which take 100 and 300 ms by design: a
// run with them measures the server's sleeps, not the fuzzer).
const benchAPIDoc = `{"methods": [
 {"name": "get_time", "params": [], "x-additionalProperties": false, "result": {"name": "t", "schema": {"type": "string", "pattern": "^[0-9]{2}:[0-9]{2}$"}}},
 {"name": "add", "x-additionalProperties": false, "params": [{"name": "a", "required": true, "schema": {"type": "number"}},
   {"name": "b", "required": true, "schema": {"type": "number"}}], "result": {"name": "s", "schema": {"type": "number"}}},
 {"name": "eth_blockNumber", "params": [], "x-additionalProperties": false, "result": {"name": "b", "schema": {"type": "string", "pattern": "^0x[0-9a-f]+$"}}},
 {"name": "eth_chainId", "params": [], "x-additionalProperties": false, "result": {"name": "c", "schema": {"type": "string", "pattern": "^0x[0-9a-f]+$"}}}]}`

// BenchmarkAPI is API-aware fuzzing against the reference server over TCP
// with benchWorkers workers (issue 18's speed goal: at least 5,000 calls a
// second): every input a fresh call of one of the server's fast methods
// (share 1), params valid or invalid by the schema, every reply judged by
// the API's oracles; and half of them so, the rest mutations (share 0.5).
// calls/s counts the calls the oracles judged (summary.json's api), one op
// is one input.
func BenchmarkAPI(b *testing.B) {
	api, err := apispec.FromOpenRPC([]byte(benchAPIDoc))
	if err != nil {
		b.Fatal(err)
	}
	for _, share := range []float64{1, 0.5} {
		b.Run(fmt.Sprintf("share-%g", share), func(b *testing.B) {
			b.ReportAllocs()
			cfg := Config{Target: refServer(b, "tcp"), Workers: benchWorkers, Execs: uint64(b.N), Seed: 1, OutDir: b.TempDir(),
				Timeout: 2 * time.Second, Now: fixedClock, API: api, APIShare: share, SlowFloor: time.Hour}
			b.ResetTimer()
			s, err := Run(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			var calls uint64
			for _, m := range s.API.Methods {
				calls += m.CallsValid + m.CallsInvalid + m.CallsUnjudged
			}
			b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "calls/s")
			b.ReportMetric(float64(s.Execs)/b.Elapsed().Seconds(), "execs/s")
			for _, f := range s.Findings {
				b.Logf("finding %s: %s", f.ID, f.Note)
			}
		})
	}
}
