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
		"  eth_blockNumber         1  2.00ms  2.00ms   2.00ms   2.00ms   2.00ms   2.00ms\n",
		"\nWARNING: the generator fell behind\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q\n%s", want, out)
		}
	}
	// The latency table: a header and one row per histogram, with counts.
	for _, row := range []string{"count  p50  p90  p95  p99  p99.9  max", "corrected  11", "service  11", "lag  11"} {
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
	for _, want := range []string{"closed loop", "achieved 0.0 req/s", "violations  none", "corrected", NoValue} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("empty report lacks %q\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "per method") || strings.Contains(b.String(), "NaN") || strings.Contains(b.String(), "0µs") {
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

// TestWriteTextLatencyTables: each column of a latency table is in one
// unit (the main table mixes a lag in µs with latencies in seconds), an
// empty histogram shows NoValue, not 0µs, and the columns stay aligned
// whatever the length of the method names; the lists of error codes and
// violations stay aligned with long names too.
func TestWriteTextLatencyTables(t *testing.T) {
	lat := func(n int64, p50, p99, maxUs int64) Latency {
		return Latency{Count: n, P50us: p50, P90us: p99, P95us: p99, P99us: p99, P999us: maxUs, MaxUs: maxUs}
	}
	long := "a_method_with_a_rather_long_name_indeed_that_goes_on_and_on"
	r := &Result{
		Latency: LatencySet{Corrected: lat(100, 1_500_000, 2_500_000, 3_000_000), Service: lat(100, 800, 950, 120_000), Lag: lat(100, 150, 700_000, 900_000)},
		Methods: map[string]MethodResult{
			"short":  {Requests: Requests{Answered: 99}, Latency: LatencySet{Corrected: lat(99, 900, 1200, 1500)}},
			long:     {Requests: Requests{Answered: 1}, Latency: LatencySet{Corrected: lat(1, 1_500_000, 2_500_000, 3_000_000)}},
			"silent": {Requests: Requests{Sent: 5, Timeouts: 5}},
		},
		ErrorCodes: map[string]uint64{"-32601": 3, "-2147483648": 1},
		Violations: map[string]uint64{"unknown_id": 1, "a_rule_from_a_newer_rpcload_with_a_long_name": 2},
	}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	tables := map[string][]string{} // the lines of each table, header first
	var cur string
	for line := range strings.Lines(out) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "latency "), strings.HasPrefix(line, "per method"),
			strings.HasPrefix(line, "error codes"), strings.HasPrefix(line, "violations"):
			cur = strings.Fields(line)[0]
		case line == "":
			cur = ""
		case cur != "" && !strings.HasPrefix(line, "    e.g."):
			tables[cur] = append(tables[cur], line)
		}
	}
	for _, name := range []string{"latency", "per"} {
		rows := tables[name]
		if len(rows) < 3 {
			t.Fatalf("%s table: %d lines\n%s", name, len(rows), out)
		}
		// Aligned: every line of the table ends in the same column, and
		// each column's cells end at the header's.
		for _, row := range rows {
			if utf8.RuneCountInString(row) != utf8.RuneCountInString(rows[0]) {
				t.Errorf("%s table: line %q is %d wide, the header %d\n%s", name, row, utf8.RuneCountInString(row), utf8.RuneCountInString(rows[0]), out)
			}
		}
		// One unit per column (the name and count columns aside).
		heads := strings.Fields(rows[0])
		for c := 1; c < len(heads); c++ {
			units := map[string]bool{}
			for _, row := range rows[1:] {
				f := strings.Fields(row)
				cell := f[len(f)-len(heads)+c]
				if cell == NoValue {
					continue
				}
				units[strings.TrimLeft(cell, "0123456789.")] = true
			}
			if len(units) > 1 {
				t.Errorf("%s table, column %s: units %v\n%s", name, heads[c], units, out)
			}
		}
	}
	silent := ""
	for _, row := range tables["per"] {
		if strings.HasPrefix(strings.TrimSpace(row), "silent") {
			silent = row
		}
	}
	if f := strings.Fields(silent); len(f) != 8 || f[1] != "0" || f[2] != NoValue || f[7] != NoValue {
		t.Errorf("a method without replies: %q, want its count 0 and %s for every figure\n%s", silent, NoValue, out)
	}
	for _, name := range []string{"error", "violations"} {
		col := -1
		for _, row := range tables[name] {
			f := strings.Fields(row)
			at := strings.LastIndex(row, " "+f[1]) // the count's column
			if col >= 0 && at != col {
				t.Errorf("%s list: counts not aligned\n%s", name, out)
			}
			col = at
		}
	}
}
