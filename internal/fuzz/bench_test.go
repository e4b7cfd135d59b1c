package fuzz

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/mutate"
)

// BenchmarkBlackBox is the whole loop against the reference server over
// loopback, benchWorkers workers: pick, mutate, send, judge, keep what is new; the
// metric is inputs per second.
func BenchmarkBlackBox(b *testing.B) {
	for _, over := range []string{"tcp", "http"} {
		b.Run(over, func(b *testing.B) {
			cfg := Config{Target: refServer(b, over), Workers: benchWorkers, Execs: uint64(b.N), Seed: 1, OutDir: b.TempDir(),
				Timeout: 2 * time.Second, Now: fixedClock}
			b.ResetTimer()
			s, err := Run(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(s.Execs)/b.Elapsed().Seconds(), "execs/s")
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
// without mutation or finding handling.
func BenchmarkExchange(b *testing.B) {
	call := mutate.Case{Frames: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1,"a"]}`)}}
	for _, over := range []string{"tcp", "http"} {
		b.Run(over, func(b *testing.B) {
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
