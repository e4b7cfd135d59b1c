package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/canonjson"
	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/workload"
)

// randParams draws its params from the seeded stream, so a target that got
// other params than its peer would echo something else.
type randParams struct{}

func (randParams) Append(dst []byte, r *rand.Rand, seq uint64) ([]byte, bool) {
	return fmt.Appendf(dst, `{"n":%d,"seq":%d,"s":"\u00e9"}`, r.Uint64(), seq), true
}

// clockAt is a fixed clock for get_time.
func clockAt(h int) func() time.Time {
	return func() time.Time { return time.Date(2026, 1, 2, h, 0, 0, 0, time.UTC) }
}

// diffMix is echo with generated params (alone and in batches of 3),
// get_time (which the two servers answer differently) and a notification.
func diffMix(t *testing.T, url string) Config {
	cfg := baseConfig(target(t, url))
	cfg.Method, cfg.Params = "", nil
	cfg.Seed = 42
	cfg.Calls = []workload.Call{
		{Name: "echo", Method: "echo", Params: randParams{}, Weight: 2},
		{Name: "time", Method: "get_time"},
		{Name: "echo3", Method: "echo", Params: randParams{}, Batch: 3},
		{Name: "note", Method: "echo", Params: workload.StaticParams(`[1]`), Notify: true},
	}
	return cfg
}

// expectedElements counts, per call name, the elements the first n calls
// of cfg's mix hold, as the run's pick chooses them.
func expectedElements(t *testing.T, cfg Config, n uint64) map[string]uint64 {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r := newExchangeRun(&cfg)
	if err := r.prepareCalls(); err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{}
	for seq := uint64(1); seq <= n; seq++ {
		c := r.calls[pick(r, seq)]
		want[c.Name] += uint64(c.weight)
	}
	return want
}

func TestDiffTwoServers(t *testing.T) {
	_, _, tcpA := startServer(t, testsrv.Config{Now: clockAt(10)})
	_, httpB, _ := startServer(t, testsrv.Config{Now: clockAt(11)})
	const calls = 200
	want := expectedElements(t, diffMix(t, tcpA), calls)
	compared := want["echo"] + want["echo3"] + want["time"]
	if want["time"] == 0 || want["echo3"] == 0 || want["note"] == 0 {
		t.Fatalf("the seed picks no call of some kind: %v", want)
	}
	result := func(t *testing.T, ignore ...string) *stats.Result {
		t.Helper()
		paths, err := canonjson.ParsePaths(ignore)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Diff(context.Background(), diffMix(t, tcpA), target(t, httpB), DiffOptions{Requests: calls, Ignore: paths})
		if err != nil {
			t.Fatal(err)
		}
		d := res.Diff
		if d == nil {
			t.Fatal("no diff report")
		}
		if d.Compared != compared || d.Skipped != want["note"] || d.Unanswered != 0 {
			t.Errorf("compared %d, skipped %d, unanswered %d; want %d, %d, 0", d.Compared, d.Skipped, d.Unanswered, compared, want["note"])
		}
		for _, name := range []string{"echo", "echo3", "time"} {
			if got := d.Methods[name].Compared; got != want[name] {
				t.Errorf("%s: compared %d, want %d", name, got, want[name])
			}
		}
		// A's side of the result: every request answered, as a run counts it.
		q := res.Requests
		if q.Sent != compared || q.OK != compared || q.Timeouts+q.TransportErrors+q.Leaked != 0 || res.Latency.Corrected.Count != int64(compared) {
			t.Errorf("requests = %+v, latency count %d; want %d sent and ok", q, res.Latency.Corrected.Count, compared)
		}
		if res.Target != tcpA+" vs "+httpB || res.Tool != "rpcload" {
			t.Errorf("tool %q target %q", res.Tool, res.Target)
		}
		return res
	}

	t.Run("get_time differs", func(t *testing.T) {
		res := result(t)
		d := res.Diff
		if d.Mismatches != want["time"] || d.Methods["time"].Mismatches != want["time"] {
			t.Errorf("mismatches %d (time: %d), want %d, all of get_time", d.Mismatches, d.Methods["time"].Mismatches, want["time"])
		}
		if d.Methods["echo"].Mismatches+d.Methods["echo3"].Mismatches != 0 {
			t.Errorf("echo differs between two copies of one server: %+v", d.Methods)
		}
		if got := res.Violations["result_mismatch"]; got != want["time"] || len(res.Violations) != 1 {
			t.Errorf("violations = %v, want result_mismatch = %d", res.Violations, want["time"])
		}
		if len(d.Samples) != DefaultDiffSamples {
			t.Fatalf("%d samples, want %d", len(d.Samples), DefaultDiffSamples)
		}
		for i, s := range d.Samples {
			// A is a stream: the request went out with a control id.
			if s.Method != "time" || !slices.Equal(s.Paths, []string{"$.result"}) || !strings.Contains(s.A, `"id":"rpcload-`) {
				t.Errorf("sample %d = %+v", i, s)
			}
			if !strings.Contains(s.A, `"10:00"`) || !strings.Contains(s.B, `"11:00"`) || !strings.Contains(s.Request, `"method":"get_time"`) {
				t.Errorf("sample %d: request %s, A %s, B %s", i, s.Request, s.A, s.B)
			}
			if i > 0 && s.Seq <= d.Samples[i-1].Seq {
				t.Errorf("samples not in call order: %d after %d", s.Seq, d.Samples[i-1].Seq)
			}
		}
		if len(res.ViolationSamples["result_mismatch"]) == 0 {
			t.Error("no violation sample for result_mismatch")
		}
	})
	t.Run("ignored", func(t *testing.T) {
		res := result(t, "$.result")
		if d := res.Diff; d.Mismatches != 0 || len(d.Samples) != 0 || len(res.Violations) != 0 || !slices.Equal(d.IgnorePaths, []string{"$.result"}) {
			t.Errorf("with $.result ignored: mismatches %d, samples %d, violations %v, ignore %v", d.Mismatches, len(d.Samples), res.Violations, d.IgnorePaths)
		}
	})
}

func TestDiffOneSidedReplies(t *testing.T) {
	_, _, tcpA := startServer(t, testsrv.Config{})
	_, _, tcpB := startServer(t, testsrv.Config{Faults: []testsrv.FaultSpec{{Fault: testsrv.FaultDrop, Prob: 1}}})
	cfg := baseConfig(target(t, tcpA))
	cfg.Timeout = 100 * time.Millisecond
	res, err := Diff(context.Background(), cfg, target(t, tcpB), DiffOptions{Requests: 8, Workers: 4, Samples: 2})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Diff
	if d.Compared != 8 || d.Mismatches != 8 || res.Requests.OK != 8 || res.Violations["result_mismatch"] != 8 {
		t.Errorf("compared %d, mismatches %d, A ok %d, violations %v; want 8 each", d.Compared, d.Mismatches, res.Requests.OK, res.Violations)
	}
	if len(d.Samples) != 2 || d.Samples[0].Seq != 1 || d.Samples[1].Seq != 2 {
		t.Fatalf("samples = %+v, want calls 1 and 2", d.Samples)
	}
	if s := d.Samples[0]; !strings.HasPrefix(s.B, "(no reply: ") || !slices.Equal(s.Paths, []string{"$"}) {
		t.Errorf("sample = %+v, want B without a reply, differing at $", s)
	}
}

func TestDiffRateAndDuration(t *testing.T) {
	_, _, tcpA := startServer(t, testsrv.Config{})
	_, httpB, _ := startServer(t, testsrv.Config{})
	cfg := baseConfig(target(t, tcpA))
	cfg.Duration = 50 * time.Millisecond
	// 1000 calls per second for 50 ms: exactly 50, the last due at 49 ms.
	res, err := Diff(context.Background(), cfg, target(t, httpB), DiffOptions{Rate: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Diff; d.Compared != 50 || d.Mismatches != 0 {
		t.Errorf("compared %d, mismatches %d; want 50, 0", d.Compared, d.Mismatches)
	}
	if res.DurationS < 0.049 || res.Rate.Target != 1000 {
		t.Errorf("sending took %.3f s at target rate %g; want at least 0.049 s at 1000", res.DurationS, res.Rate.Target)
	}
}

func TestDiffUnreachable(t *testing.T) {
	_, _, tcpA := startServer(t, testsrv.Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "tcp://" + ln.Addr().String()
	ln.Close()
	_, err = Diff(context.Background(), baseConfig(target(t, tcpA)), target(t, closed), DiffOptions{Requests: 1})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), closed) {
		t.Errorf("err = %v, want ErrUnreachable naming %s", err, closed)
	}
}

// cancelAt cancels the run's context when the params of call at are drawn.
type cancelAt struct {
	at     uint64
	cancel context.CancelFunc
}

func (c cancelAt) Append(dst []byte, _ *rand.Rand, seq uint64) ([]byte, bool) {
	if seq == c.at {
		c.cancel()
	}
	return fmt.Appendf(dst, "[%d]", seq), true
}

func TestDiffInterrupted(t *testing.T) {
	_, _, tcpA := startServer(t, testsrv.Config{})
	_, _, tcpB := startServer(t, testsrv.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := baseConfig(target(t, tcpA))
	cfg.Method, cfg.Params = "", nil
	cfg.Calls = []workload.Call{{Method: "echo", Params: cancelAt{at: 5, cancel: cancel}}}
	const workers = 2
	res, err := Diff(ctx, cfg, target(t, tcpB), DiffOptions{Requests: 1000, Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	// Calls drawn before the interrupt finish; no other starts.
	d := res.Diff
	if !res.Interrupted || d.Compared < 4 || d.Compared > 5+workers || res.Requests.Sent != d.Compared || d.Mismatches != 0 {
		t.Errorf("interrupted %v, compared %d, sent %d, mismatches %d; want true, 4..%d compared and sent, 0", res.Interrupted, d.Compared, res.Requests.Sent, d.Mismatches, 5+workers)
	}
}

func TestPacer(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		rate     float64
		limit    uint64
		duration time.Duration
		want     int
		last     time.Duration // intended time of the last call, after start
	}{
		{"rate for a duration", 1000, 0, 50 * time.Millisecond, 50, 49 * time.Millisecond},
		{"rate and a count", 100, 7, time.Millisecond, 7, 60 * time.Millisecond},
		{"a count without a rate", 0, 3, time.Hour, 3, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &pacer{start: start, rate: tt.rate, limit: tt.limit, duration: tt.duration, pick: func(uint64) uint16 { return 0 }}
			n := 0
			var last time.Time
			for range 100000 {
				seq, _, intended, ok := p.next()
				if !ok {
					break
				}
				n++
				if seq != uint64(n) {
					t.Fatalf("call %d has sequence number %d", n, seq)
				}
				last = intended
			}
			if n != tt.want {
				t.Errorf("%d calls, want %d", n, tt.want)
			}
			if tt.last >= 0 && last.Sub(start) != tt.last {
				t.Errorf("last call intended at %s, want %s", last.Sub(start), tt.last)
			}
		})
	}
}
