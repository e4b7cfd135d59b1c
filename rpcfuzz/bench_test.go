package rpcfuzz

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/fuzztarget"
	"github.com/rpcload/rpcload/internal/proccpu"
)

// benchInputs are pseudo-random choice streams of the lengths Go's fuzzer
// starts from.
func benchInputs(n int) [][]byte {
	r := rand.New(rand.NewPCG(7, 7))
	out := make([][]byte, n)
	for i := range out {
		b := make([]byte, 4+r.IntN(28))
		for k := range b {
			b[k] = byte(r.Uint32())
		}
		out[i] = b
	}
	return out
}

// BenchmarkExec measures the cost of one input (expansion, the call,
// judging) against cheap targets, in execs per second of wall time and of
// the process's CPU time (the cost per core, whatever else the machine
// runs). The choice streams are 4 to 32 pseudo-random bytes, the lengths
// most of Go's fuzz corpus has.
func BenchmarkExec(b *testing.B) {
	fixed := []byte(`{"jsonrpc":"2.0","id":1,"result":"ok"}`)
	srv := fuzztarget.New(0)
	ok := []byte(`{"jsonrpc":"2.0","id":1,"result":[1]}`)
	literal := [][]byte{Literal([]byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`))}
	for _, bc := range []struct {
		name   string
		target Target
		inputs [][]byte // nil: choice streams
	}{
		// The floor: one small literal call, answered right.
		{"literal_call", Func(func([]byte) []byte { return ok }), literal},
		{"func_fixed", Func(func([]byte) []byte { return fixed }), nil},
		{"func_fuzztarget", Func(func(req []byte) []byte { return srv.Handle(context.Background(), req) }), nil},
		{"handler_fuzztarget", Handler(srv.HTTPHandler()), nil},
		{"stream_fuzztarget", Stream(srv.ServeStream), nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h, err := newHarness(bc.target, Options{Methods: []string{"echo", "add"}})
			if err != nil {
				b.Fatal(err)
			}
			inputs := bc.inputs
			if inputs == nil {
				inputs = benchInputs(4096)
			}
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			i := 0
			for b.Loop() {
				h.run(inputs[i%len(inputs)])
				i++
			}
			// Wall time counts what other processes took from this one;
			// the process's CPU time (GC workers included) is the cost
			// per core.
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "execs/s")
			b.ReportMetric(float64(i)/(cpuTime(b)-cpu0).Seconds(), "execs/cpu-s")
		})
	}
}

// cpuTime is the process's CPU time so far (proccpu.Self); a benchmark on a
// platform that does not tell it stops.
func cpuTime(b *testing.B) time.Duration {
	d, ok := proccpu.Self()
	if !ok {
		b.Skip("the process's CPU time is not measured on this platform")
	}
	return d
}
