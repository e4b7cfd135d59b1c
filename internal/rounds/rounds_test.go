package rounds

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
)

// synthetic is a result with the given figures: answered/s over a 10 s
// run, corrected p50 and p99, and an error rate in failed requests per
// 1000 sent.
func synthetic(answeredPS float64, p50, p99 int64, failedPer1000 uint64) *stats.Result {
	r := &stats.Result{DurationS: 10}
	r.Requests.Sent = 1000
	r.Requests.Answered = uint64(answeredPS * 10)
	r.Requests.RPCErrors = failedPer1000
	r.Latency.Corrected.P50us, r.Latency.Corrected.P95us, r.Latency.Corrected.P99us = p50, (p50+p99)/2, p99
	return r
}

// fakeClock advances one second per reading.
func fakeClock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

type call struct{ target, round int }

// table answers runOne from per-target, per-round figures.
type table struct {
	rate  [][]float64 // [target][round-1]
	p50   [][]int64
	calls []call
}

func (tb *table) run(_ context.Context, target, round int) (*stats.Result, error) {
	tb.calls = append(tb.calls, call{target, round})
	p50 := int64(100)
	if tb.p50 != nil {
		p50 = tb.p50[target][round-1]
	}
	return synthetic(tb.rate[target][round-1], p50, 2*p50, 0), nil
}

func TestOrderAlternates(t *testing.T) {
	tb := &table{rate: [][]float64{{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}}}
	rep, results, err := Run(context.Background(), []string{"a", "b", "c"}, 4, tb.run, fakeClock())
	if err != nil {
		t.Fatal(err)
	}
	want := []call{{0, 1}, {1, 1}, {2, 1}, {2, 2}, {1, 2}, {0, 2}, {0, 3}, {1, 3}, {2, 3}, {2, 4}, {1, 4}, {0, 4}}
	if !slices.Equal(tb.calls, want) {
		t.Fatalf("runs = %v, want %v", tb.calls, want)
	}
	if len(results) != len(want) || len(rep.Runs) != len(want) {
		t.Fatalf("%d results, %d runs reported, want %d", len(results), len(rep.Runs), len(want))
	}
	for i, r := range rep.Runs {
		if r.Target != want[i].target || r.Round != want[i].round {
			t.Errorf("run %d reported as target %d round %d, want %v", i, r.Target, r.Round, want[i])
		}
		if r.WallS != 1 {
			t.Errorf("run %d: wall %v s, want 1 (one tick of the fake clock)", i, r.WallS)
		}
	}
	if rep.Runs[0].StartedAt != "2026-01-02T03:04:06Z" {
		t.Errorf("first run started at %s", rep.Runs[0].StartedAt)
	}
	if rep.Completed != 4 || rep.Interrupted {
		t.Errorf("completed %d, interrupted %v; want 4, false", rep.Completed, rep.Interrupted)
	}
	// Targets B and C, five figures each.
	if len(rep.Ratios) != 10 || rep.Ratios[0].Target != 1 || rep.Ratios[5].Target != 2 {
		t.Errorf("ratios = %+v", rep.Ratios)
	}
}

func TestRatiosAndNoiseRule(t *testing.T) {
	tests := []struct {
		name       string
		a, b       []float64 // answered/s per round
		median     float64
		min, max   float64
		mad        float64
		baseSpread float64
		within     bool
		verdict    string
	}{
		{
			name: "a real difference", a: []float64{1000, 1000, 1000, 1000, 1000, 1000}, b: []float64{1250, 1300, 1310, 1330, 1350, 1400},
			median: 1.32, min: 1.25, max: 1.40, mad: 0.025, baseSpread: 0, within: false,
			verdict: "B answers 1.32x A's rate (median of 6 rounds, range 1.25x-1.40x): a real difference",
		},
		{
			name: "range includes 1", a: []float64{1000, 1000, 1000, 1000}, b: []float64{980, 1050, 1100, 1010},
			median: 1.03, min: 0.98, max: 1.10, mad: 0.035, baseSpread: 0, within: true,
			verdict: "within the noise: B answers 1.03x A's rate (median of 4 rounds, range 0.98x-1.10x; A's own rounds vary by 0%)",
		},
		{
			// Every round B is ahead, by about 5%, but A alone varies by
			// 20% from round to round.
			name: "smaller than the base's own spread", a: []float64{900, 1000, 1100}, b: []float64{945, 1050, 1155},
			median: 1.05, min: 1.05, max: 1.05, mad: 0, baseSpread: 0.2, within: true,
			verdict: "within the noise: B answers 1.05x A's rate (median of 3 rounds, range 1.05x-1.05x; A's own rounds vary by 20%)",
		},
		{
			name: "larger than the base's own spread", a: []float64{990, 1000, 1010}, b: []float64{1188, 1200, 1212},
			median: 1.2, min: 1.2, max: 1.2, mad: 0, baseSpread: 0.02, within: false,
			verdict: "B answers 1.20x A's rate (median of 3 rounds, range 1.20x-1.20x): a real difference",
		},
		{
			// Every round B is behind by a hair and A never varies: a
			// difference the measurement cannot resolve.
			name: "below the smallest effect", a: []float64{2000, 2000, 2000}, b: []float64{1999, 1998, 1999},
			median: 0.9995, min: 0.999, max: 0.9995, mad: 0, baseSpread: 0, within: true,
			verdict: "within the noise: B answers 1.00x A's rate (median of 3 rounds, range 1.00x-1.00x; A's own rounds vary by 0%)",
		},
		{
			name: "two rounds", a: []float64{1000, 1000}, b: []float64{2000, 2000},
			median: 2, min: 2, max: 2, within: false,
			verdict: "B answers 2.00x A's rate (2 rounds): too few rounds to judge the noise (3 or more needed)",
		},
		{
			name: "a zero base gives no ratio", a: []float64{0, 1000, 1000, 1000}, b: []float64{10, 500, 500, 500},
			median: 0.5, min: 0.5, max: 0.5, within: false,
			verdict: "B answers 0.50x A's rate (median of 3 rounds, range 0.50x-0.50x; in 1 round A's answered/s was zero and B's not, which gives no ratio): a real difference",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &table{rate: [][]float64{tt.a, tt.b}}
			rep, _, err := Run(context.Background(), []string{"a", "b"}, len(tt.a), tb.run, fakeClock())
			if err != nil {
				t.Fatal(err)
			}
			rr := rep.Ratios[0]
			if rr.Figure != "answered_per_s" {
				t.Fatalf("first ratio is %s", rr.Figure)
			}
			near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
			if !near(rr.Median, tt.median) || !near(rr.Min, tt.min) || !near(rr.Max, tt.max) || !near(rr.MAD, tt.mad) || !near(rr.BaseSpread, tt.baseSpread) {
				t.Errorf("median %v range %v-%v MAD %v base spread %v; want %v %v-%v %v %v",
					rr.Median, rr.Min, rr.Max, rr.MAD, rr.BaseSpread, tt.median, tt.min, tt.max, tt.mad, tt.baseSpread)
			}
			if rr.WithinNoise != tt.within {
				t.Errorf("within the noise = %v, want %v", rr.WithinNoise, tt.within)
			}
			if rr.Verdict != tt.verdict {
				t.Errorf("verdict\n got %q\nwant %q", rr.Verdict, tt.verdict)
			}
		})
	}
}

func TestLatencyAndErrorFigures(t *testing.T) {
	// B's p50 is half of A's in every round; neither has errors.
	tb := &table{rate: [][]float64{{1, 1, 1}, {1, 1, 1}}, p50: [][]int64{{200, 210, 190}, {100, 105, 95}}}
	rep, _, err := Run(context.Background(), []string{"a", "b"}, 3, tb.run, fakeClock())
	if err != nil {
		t.Fatal(err)
	}
	byFigure := map[string]stats.RoundsRatio{}
	for _, rr := range rep.Ratios {
		byFigure[rr.Figure] = rr
	}
	if rr := byFigure["p50"]; rr.Median != 0.5 || rr.WithinNoise || !strings.HasPrefix(rr.Verdict, "B's p50 latency is 0.50x A's (median of 3 rounds") {
		t.Errorf("p50 ratio = %+v", rr)
	}
	if rr := byFigure["error_rate"]; rr.Median != 1 || !rr.WithinNoise || rr.Verdict != "neither A nor B had errors (3 rounds)" {
		t.Errorf("error rate ratio = %+v", rr)
	}
}

func TestInterruptStopsAfterTheCurrentRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls []call
	runOne := func(ctx context.Context, target, round int) (*stats.Result, error) {
		calls = append(calls, call{target, round})
		r := synthetic(1000, 100, 200, 0)
		if round == 2 && target == 1 {
			// The signal arrives during this run, which the engine cuts
			// short and marks.
			cancel()
			r.Interrupted = ctx.Err() != nil
		}
		return r, nil
	}
	rep, results, err := Run(ctx, []string{"a", "b"}, 6, runOne, fakeClock())
	if err != nil {
		t.Fatal(err)
	}
	// Round 2 runs B first; A of round 2 never starts.
	if want := []call{{0, 1}, {1, 1}, {1, 2}}; !slices.Equal(calls, want) {
		t.Fatalf("runs = %v, want %v", calls, want)
	}
	if !rep.Interrupted || rep.Completed != 1 || len(rep.Runs) != 3 || len(results) != 3 || !rep.Runs[2].Interrupted {
		t.Fatalf("interrupted %v, completed %d, runs %+v, %d results", rep.Interrupted, rep.Completed, rep.Runs, len(results))
	}
	// The one complete round gives the ratios; the cut-short run does not.
	if rr := rep.Ratios[0]; rr.Rounds != 1 || !strings.Contains(rr.Verdict, "too few rounds") {
		t.Errorf("ratio after the interrupt = %+v", rr)
	}
}

func TestRunErrors(t *testing.T) {
	unreachable := errors.New("target unreachable")
	n := 0
	runOne := func(_ context.Context, target, round int) (*stats.Result, error) {
		n++
		if round == 2 && target == 0 {
			return nil, unreachable
		}
		return synthetic(1000, 100, 200, 0), nil
	}
	rep, results, err := Run(context.Background(), []string{"tcp://a", "tcp://b"}, 3, runOne, fakeClock())
	if !errors.Is(err, unreachable) || !strings.Contains(err.Error(), "round 2, target A (tcp://a)") {
		t.Fatalf("err = %v", err)
	}
	if n != 4 || len(rep.Runs) != 3 || len(results) != 3 || rep.Completed != 1 {
		t.Errorf("%d runs tried, %d reported, %d results, %d complete; want 4, 3, 3, 1", n, len(rep.Runs), len(results), rep.Completed)
	}
	for _, tt := range []struct {
		targets []string
		rounds  int
		want    string
	}{{[]string{"a"}, 3, "at least two targets"}, {[]string{"a", "b"}, 0, "at least 1"}} {
		if _, _, err := Run(context.Background(), tt.targets, tt.rounds, runOne, fakeClock()); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Run(%v, %d) err = %v, want %q", tt.targets, tt.rounds, err, tt.want)
		}
	}
}

func TestFigures(t *testing.T) {
	r := &stats.Result{DurationS: 2}
	r.Requests = stats.Requests{Sent: 200, Answered: 190, OK: 180, RPCErrors: 5, InvalidReplies: 5, Timeouts: 6, TransportErrors: 3, Leaked: 1}
	r.Latency.Corrected.P50us, r.Latency.Corrected.P95us, r.Latency.Corrected.P99us = 120, 500, 900
	f := Figures(r)
	if f.AnsweredPS != 95 || f.P50us != 120 || f.P95us != 500 || f.P99us != 900 || f.ErrorRate != 20.0/200 {
		t.Errorf("figures = %+v", f)
	}
}

func TestWrite(t *testing.T) {
	tb := &table{rate: [][]float64{{1000, 1000, 1000}, {1300, 1320, 1350}}}
	rep, _, err := Run(context.Background(), []string{"tcp://127.0.0.1:1", "http://127.0.0.1:2/"}, 3, tb.run, fakeClock())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, rep); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"A  tcp://127.0.0.1:1", "B  http://127.0.0.1:2/", "3 of 3 rounds complete",
		"1.32x", "real difference", "B answers 1.32x A's rate (median of 3 rounds, range 1.30x-1.35x): a real difference",
		"p50    p95    p99",                      // every latency table has p95 (issue 15, item 13)
		"error rate       —            —      —", // no errors on either side: no ratio, not 1.00x (issue 15, item 23)
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestLabel(t *testing.T) {
	for i, want := range map[int]string{0: "A", 1: "B", 25: "Z", 26: "T27"} {
		if got := Label(i); got != want {
			t.Errorf("Label(%d) = %s, want %s", i, got, want)
		}
	}
}
