package malformed

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/fuzz"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/workload"
)

func tcpTarget(t *testing.T) transport.Target {
	t.Helper()
	tg, err := transport.ParseTarget("tcp://127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestTakes: the share of calls taken is the fraction, and which are
// taken depends on the seed and the sequence number alone.
func TestTakes(t *testing.T) {
	for _, frac := range []float64{0.01, 0.05, 0.5, 1} {
		a, err := New(Config{Fraction: frac, Seed: 7, Target: tcpTarget(t)})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := New(Config{Fraction: frac, Seed: 7, Target: tcpTarget(t)})
		c, _ := New(Config{Fraction: frac, Seed: 8, Target: tcpTarget(t)})
		const n = 200000
		taken, same := 0, true
		differs := false
		for seq := uint64(1); seq <= n; seq++ {
			if a.Takes(seq, 0) {
				taken++
			}
			same = same && a.Takes(seq, 0) == b.Takes(seq, 0)
			differs = differs || a.Takes(seq, 0) != c.Takes(seq, 0)
		}
		share := float64(taken) / n
		if math.Abs(share-frac) > 4*math.Sqrt(frac*(1-frac)/n)+1e-9 {
			t.Errorf("fraction %g: took %g of the calls", frac, share)
		}
		if !same || (frac < 1) != differs {
			t.Errorf("fraction %g: same seed same draws %v, another seed differs %v", frac, same, differs)
		}
	}
}

// TestSend: a call is mutated the same way for the same seed, queued up to
// the queue's size and dropped past it, and nothing is queued after Close.
func TestSend(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","id":3,"method":"echo","params":[1,"a"]}`)
	a, _ := New(Config{Fraction: 0.5, Seed: 1, Target: tcpTarget(t), Queue: 2, MaxFrame: 1 << 20})
	b, _ := New(Config{Fraction: 0.5, Seed: 1, Target: tcpTarget(t), Queue: 2, MaxFrame: 1 << 20})
	a.Send(3, 0, frame)
	b.Send(3, 0, frame)
	ca, cb := <-a.Feed(), <-b.Feed()
	if len(ca.Frames) == 0 || !bytes.Equal(bytes.Join(ca.Frames, nil), bytes.Join(cb.Frames, nil)) || !bytes.Equal(ca.Wire, cb.Wire) {
		t.Errorf("the same call mutated two ways: %q / %q", ca.Frames, cb.Frames)
	}
	for seq := uint64(10); seq < 15; seq++ {
		a.Send(seq, 0, frame)
	}
	a.Close()
	a.Close()
	a.Send(99, 0, frame)
	queued := 0
	for range a.Feed() {
		queued++
	}
	if queued != 2 || a.taken.Load() != 3 || a.dropped.Load() != 3 {
		t.Errorf("queued %d after close, taken %d, dropped %d; want 2, 3, 3", queued, a.taken.Load(), a.dropped.Load())
	}
}

func TestNewRefuses(t *testing.T) {
	stdio, err := transport.CommandTarget([]string{"server"}, transport.Newline)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Fraction: 0, Target: tcpTarget(t)}, "above 0"},
		{Config{Fraction: 0, Target: tcpTarget(t), Calls: []workload.Call{{Name: "m", Method: "m", Mutate: &workload.Mutation{Fraction: 0.1, Ops: []string{"nope"}}}}}, `call "m": mutate.ops: unknown mutation op "nope"`},
		{Config{Fraction: 1.5, Target: tcpTarget(t)}, "at most 1"},
		{Config{Fraction: 0.1, Target: stdio}, "needs a network target"},
		{Config{Fraction: 0.1, Target: tcpTarget(t), Ops: []string{"no_such_op"}}, `unknown mutation op "no_such_op"`},
	} {
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

// TestReport: the fuzz run's summary becomes the result's section.
func TestReport(t *testing.T) {
	d, _ := New(Config{Fraction: 0.05, Seed: 9, Target: tcpTarget(t), Ops: []string{"ndjson_newline"}})
	d.taken.Store(40)
	d.dropped.Store(2)
	sum := &fuzz.Summary{Execs: 40, Unconfirmed: 1, ParseErrorIDs: 5, Hits: map[string]uint64{"wrong_error_code": 6},
		Findings: []fuzz.Finding{{ID: "wrong_error_code-1", Rule: "wrong_error_code", Severity: "failure", Dir: "out/wrong_error_code-1"},
			{ID: "slow_input-2", Rule: "slow_input", Severity: "warning", Dir: "out/slow_input-2"}},
		Latency: &stats.Result{Requests: stats.Requests{Sent: 40, OK: 30, InvalidReplies: 10}}}
	r := d.Report(sum, "out")
	if r.Queued != 40 || r.Dropped != 2 || r.Inputs != 40 || r.ParseErrorIDs != 5 || r.Rules["wrong_error_code"] != 6 ||
		r.Failures != 1 || len(r.Findings) != 2 || r.Requests.InvalidReplies != 10 || r.OutDir != "out" || r.Unconfirmed != 1 {
		t.Errorf("report %+v", r)
	}
	if r := d.Report(nil, "out"); r.Queued != 40 || r.Inputs != 0 || len(r.Rules) != 0 {
		t.Errorf("report without a summary %+v", r)
	}
}

// TestCallRules: a raw call is always taken and sent as it is; a call
// with its own mutate uses its fraction; the others the run's.
func TestCallRules(t *testing.T) {
	raw := []byte(`{"jsonrpc":"2.0","id":1,"method":`)
	calls := []workload.Call{
		{Name: "plain", Method: "echo"},
		{Name: "raw", Raw: raw},
		{Name: "all", Method: "echo", Mutate: &workload.Mutation{Fraction: 1}},
	}
	d, err := New(Config{Fraction: 0, Seed: 3, Calls: calls, Target: tcpTarget(t), MaxFrame: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq < 1000; seq++ {
		if d.Takes(seq, 0) || !d.Takes(seq, 1) || !d.Takes(seq, 2) {
			t.Fatalf("seq %d: plain %v raw %v all %v", seq, d.Takes(seq, 0), d.Takes(seq, 1), d.Takes(seq, 2))
		}
	}
	d.Send(5, 1, raw)
	if c := <-d.Feed(); len(c.Frames) != 1 || !bytes.Equal(c.Frames[0], raw) || c.Wire != nil {
		t.Errorf("the raw call went out as %q (wire %q)", c.Frames, c.Wire)
	}
}
