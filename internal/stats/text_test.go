package stats

import (
	"github.com/rpcload/rpcload/internal/golden"

	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/check"
)

// sampleResult is a filled Result with something in every section of the
// text report.
func sampleResult(t *testing.T) *Result {
	t.Helper()
	agg := NewAggregator([]string{"eth_call", "eth_blockNumber"})
	rec := agg.NewRecorder()
	for i := int64(1); i <= 10; i++ {
		rec.Record(Sample{Kind: Sent, Method: 0, A: 10_000})
		rec.Record(Sample{Kind: OK, Method: 0, A: i * ms, B: i * ms})
	}
	rec.Record(Sample{Kind: Sent, Method: 1})
	rec.Record(Sample{Kind: RPCError, Method: 1, Code: -32601, A: 2 * ms, B: 2 * ms})
	rec.Record(Sample{Kind: NotifySent, Method: 1})
	rec.Record(Sample{Kind: Timeout, Method: 0})
	rec.Record(Sample{Kind: ServerMessage, Method: 2})
	for range 3 {
		rec.Record(Sample{Kind: Violation, Method: 2, Rule: check.UnknownID})
	}
	agg.KeepSample(check.UnknownID, 2, []byte("{\"id\":99,\n\"result\":1}"), "")
	r := fill(t, agg)
	r.Target = "http://127.0.0.1:8545"
	r.DurationS, r.DrainS = 10, 0.5
	r.Rate = Rate{Target: 100, Achieved: 99}
	r.InFlightMax = 7
	r.Warnings = []string{"the generator fell behind"}
	r.TransportErrorSamples = []string{"dial tcp: refused"}
	return r
}

// TestTextRateUnits: the rate line names what it counts. The schedule
// counts messages, a batch being one; with batches the requests they carry
// get a rate of their own, and the requests line says how many messages
// and batches carried them.
func TestTextRateUnits(t *testing.T) {
	tests := []struct {
		name               string
		target             float64
		q                  Requests
		wantRate, wantSent string
	}{
		{"no batches", 100, Requests{Sent: 990, Messages: 990},
			"rate        target 100.0 req/s, achieved 99.0 req/s (99.00%)\n", "requests    sent 990\n"},
		{"batches of 5", 100, Requests{Sent: 4950, Messages: 990, Batches: 990},
			"rate        target 100.0 batches/s, achieved 99.0 batches/s (99.00%), 495.0 req/s\n",
			"requests    sent 4950 in 990 messages, 990 of them batches\n"},
		{"a mix, closed loop", 0, Requests{Sent: 2000, Notifications: 970, Messages: 990, Batches: 495},
			"rate        achieved 99.0 msg/s, 297.0 req/s\n",
			"requests    sent 2000 (+970 notifications) in 990 messages, 495 of them batches\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{DurationS: 10, Requests: tc.q, Rate: Rate{Target: tc.target}}
			r.SetAchieved()
			var b bytes.Buffer
			if err := WriteText(&b, r); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{tc.wantRate, tc.wantSent} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("report lacks %q\n%s", want, b.String())
				}
			}
		})
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, sampleResult(t)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"target      http://127.0.0.1:8545\n",
		"mode        open loop, sending 10.00s, drain 0.50s\n",
		"rate        target 100.0 req/s, achieved 99.0 req/s (99.00%)\n",
		"in flight   max 7\n",
		"requests    sent 11 (+1 notifications)\n",
		"  answered 11: ok 10, rpc errors 1, invalid replies 0\n",
		"  transport errors 0, timeouts 1, late 0, leaked 0, dropped 0\n",
		"  messages sent by the server 1\n",
		"error codes\n  -32601   1\n",
		"  unknown_id               3\n",
		"    e.g. {\"id\":99,·\"result\":1}\n", // control characters never break the line
		"transport errors seen\n  dial tcp: refused\n",
		"per method (corrected latency)\n",
		"  eth_blockNumber          answered 1, p50 2.00ms, p99 2.00ms\n",
		"\nWARNING: the generator fell behind\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q\n%s", want, out)
		}
	}
	// The latency table: a header and one row per histogram, with counts.
	for _, row := range []string{"count", "corrected  11", "service  11", "lag  11"} {
		if !strings.Contains(strings.Join(strings.Fields(out), "  "), row) {
			t.Errorf("latency table lacks %q\n%s", row, out)
		}
	}
	// Unmatched replies have violations but no latency of their own.
	if strings.Contains(out, "  "+UnmatchedMethod) {
		t.Errorf("per-method section lists %s\n%s", UnmatchedMethod, out)
	}
	if strings.Contains(out, "(interrupted)") || strings.Contains(out, "violations  none") {
		t.Errorf("report says interrupted or no violations\n%s", out)
	}
}

// TestWriteTextGolden pins the whole report of a result with every section
// filled, byte for byte.
func TestWriteTextGolden(t *testing.T) {
	r := sampleResult(t)
	r.Profile = &ProfileReport{Name: "mcp", Era: "modern", Version: "2026-07-28", Handshakes: 4, ServerRequestsAnswered: 2, CancelsSent: 1}
	r.IDReuse = &IDReuseReport{Probes: 5, NoIDInFlight: 1, BothAnswered: 1, OneReply: 2, NoReply: 1, ErrorCodes: map[string]int64{"-32600": 2}}
	r.Connections = Connections{Opened: 3, Lost: 1}
	r.Child = &ChildReport{Command: "./server --stdio", Restarts: 1, Exits: []string{"exit status 2 at 3.1s"}, StderrPath: "stderr.log", StderrTail: []string{"panic: boom"}}
	r.Soak = &SoakReport{IntervalS: 10, Points: 60, WarmupPoints: 6, Verdict: "no growth",
		ChildRSS: &Growth{PerHour: 1 << 20, R2: 0.5, First: 10 << 20, Last: 11 << 20}, InFlight: &Growth{PerHour: 0.5, R2: 0.1, First: 3, Last: 3.5},
		OldestPending: &Growth{PerHour: 100, R2: 0.2, First: 1000, Last: 1100}, TimedOutUnanswered: &Growth{}, HlogPath: "run.hlog", SeriesPath: "run.series"}
	r.Shard = &ShardInfo{Index: 2, Count: 3}
	r.MergedFrom = []MergedPart{{Path: "a.json", Target: "tcp://127.0.0.1:1", StartedAt: "2026-01-02T03:04:05Z"}}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.golden.txt", b.Bytes())
}

func TestWriteTextEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, &Result{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"closed loop", "achieved 0.0 req/s", "violations  none", "corrected", "0µs"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("empty report lacks %q\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "per method") || strings.Contains(b.String(), "NaN") {
		t.Errorf("empty report has a per-method section or NaN\n%s", b.String())
	}
	b.Reset()
	if err := WriteText(&b, &Result{Interrupted: true, Rate: Rate{Target: 5}}); err != nil || !strings.Contains(b.String(), "(interrupted)") {
		t.Errorf("interrupted run: %v\n%s", err, b.String())
	}
}

// failWriter accepts n bytes, then fails every write.
type failWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) <= f.n {
		f.n -= len(p)
		return len(p), nil
	}
	k := f.n
	f.n = 0
	return k, errDiskFull
}

// TestWriteTextWriteError fails the writer at every byte offset of the
// report: whichever write fails, its error must come back (reporters never
// swallow write errors).
func TestWriteTextWriteError(t *testing.T) {
	r := sampleResult(t)
	var full bytes.Buffer
	if err := WriteText(&full, r); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < full.Len(); n++ {
		if err := WriteText(&failWriter{n: n}, r); !errors.Is(err, errDiskFull) {
			t.Fatalf("writer failing after %d of %d bytes: WriteText returned %v", n, full.Len(), err)
		}
	}
	if err := WriteText(&failWriter{n: full.Len()}, r); err != nil {
		t.Errorf("writer with room for the whole report: %v", err)
	}
}

func TestOneLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 10, "abc"},
		{"a\nb\tc\x7f", 10, "a·b·c·"},
		{"abcdef", 3, "abc…"},
		// A cut inside a multi-byte character backs off to its start, so
		// the report stays valid UTF-8.
		{"aéé", 2, "a…"},
		{"aéé", 3, "aé…"},
	} {
		got := OneLine(tc.in, tc.n)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("OneLine(%q, %d) = %q; want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestUs(t *testing.T) {
	for v, want := range map[int64]string{0: "0µs", 999: "999µs", 1000: "1.00ms", 1_500: "1.50ms", 999_000: "999.00ms", 1_000_000: "1.000s", 3_600_000_000: "3600.000s"} {
		if got := FormatMicros(v); got != want {
			t.Errorf("FormatMicros(%d) = %q; want %q", v, got, want)
		}
	}
}

func TestUsUnits(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{{0, "0µs"}, {999, "999µs"}, {1000, "1.00ms"}, {999_994, "999.99ms"}, {999_999, "1.000s"}, {2_500_000, "2.500s"}} {
		if got := FormatMicros(tc.in); got != tc.want {
			t.Errorf("FormatMicros(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
