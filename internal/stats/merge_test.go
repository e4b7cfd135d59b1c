package stats

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcload/rpcload/internal/check"
)

// mergeSeeds is how many random runs the merge property is checked on. Each
// costs a second or two under the race detector (every aggregator fills a
// dozen full-range histograms), so CI checks a few; run
// go test -run TestMergeEqualsOneAggregator -merge.seeds 500 for more.
var mergeSeeds = flag.Uint64("merge.seeds", 8, "random runs TestMergeEqualsOneAggregator checks")

var mergeBase = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// randomSample draws one sample of any kind for the method at index m, with
// durations spread log-uniformly from 1 ns to hours (some past the
// histograms' top, some negative).
func randomSample(rng *rand.Rand, m int) Sample {
	dur := func() int64 {
		switch rng.IntN(20) {
		case 0:
			return -rng.Int64N(1e6)
		case 1:
			return (histHighest + 1 + rng.Int64N(histHighest)) * 1000
		}
		return int64(math.Exp(rng.Float64() * math.Log(1e12)))
	}
	s := Sample{Kind: Kind(rng.IntN(int(numKinds))), Method: uint16(m)}
	switch s.Kind {
	case Sent:
		s.A = dur()
	case OK, RPCError, InvalidReply:
		s.A, s.B = dur(), dur()
		if s.Kind == RPCError {
			s.Code = []int64{-32601, -32000, 3, 42}[rng.IntN(4)]
		}
	case Violation:
		s.Rule = check.Rule(rng.IntN(int(check.NumRules)))
	}
	return s
}

// mergeCase is one random run recorded twice: whole, in one aggregator, and
// split among parts that each covered a window of the run's intervals.
type mergeCase struct {
	single  *Result
	parts   []*Result
	paths   []string
	several [][]int // per interval, the parts that had a point in it
	from    []int   // per part, the first interval it had
}

func newMergeCase(t *testing.T, seed uint64) mergeCase {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x6d65726765))
	names := []string{"a", "b"}
	single := NewAggregator(names)
	singleRec := single.NewRecorder()
	iv := []float64{0.5, 1, 2}[rng.IntN(3)]
	intervals := 2 + rng.IntN(10)
	n := 1 + rng.IntN(4)

	type part struct {
		agg        *Aggregator
		rec        *Recorder
		index      map[string]int // method name -> this part's index
		unmatched  int
		from, to   int // the intervals it covered: [from, to)
		targetRate float64
	}
	parts := make([]*part, n)
	for j := range parts {
		// Each part lists the methods in its own order, with one of its own
		// that is never called: the merge goes by name.
		own := append(slices.Clone(names), fmt.Sprintf("unused%d", j))
		rng.Shuffle(len(own), func(a, b int) { own[a], own[b] = own[b], own[a] })
		p := &part{agg: NewAggregator(own), index: map[string]int{}, unmatched: len(own), targetRate: float64(rng.IntN(1000))}
		for i, name := range own {
			p.index[name] = i
		}
		p.rec = p.agg.NewRecorder()
		// Every window covers the middle interval, so together they cover
		// the run without a gap.
		half := intervals / 2
		p.from = rng.IntN(half + 1)
		p.to = half + 1 + rng.IntN(intervals-half)
		parts[j] = p
	}
	parts[0].from = 0
	parts[n-1].to = intervals

	c := mergeCase{several: make([][]int, intervals)}
	for k := range intervals {
		var active []*part
		for j, p := range parts {
			if p.from <= k && k < p.to {
				active = append(active, p)
				c.several[k] = append(c.several[k], j)
			}
		}
		for range rng.IntN(200) {
			p := active[rng.IntN(len(active))]
			m := rng.IntN(len(names) + 1)
			s := randomSample(rng, m)
			if m == len(names) {
				s.Method = uint16(p.unmatched)
			} else {
				s.Method = uint16(p.index[names[m]])
			}
			p.rec.Record(s)
			s.Method = uint16(m)
			singleRec.Record(s)
		}
		if rng.IntN(3) == 0 {
			p := active[rng.IntN(len(active))]
			srv := map[string]uint64{"notifications/message": uint64(rng.IntN(5)), fmt.Sprint("m", rng.IntN(3)): 1}
			p.agg.AddServerMethods(srv)
			single.AddServerMethods(srv)
		}
		var inflight int64
		for _, p := range active {
			in := rng.Int64N(100)
			inflight += in
			p.agg.Tick(float64(k+1-p.from)*iv, in)
		}
		single.Tick(float64(k+1)*iv, inflight)
	}

	result := func(agg *Aggregator, from, to int, rate float64) *Result {
		r := &Result{
			Tool: "rpcload", Target: "tcp://127.0.0.1:9090",
			StartedAt: mergeBase.Add(time.Duration(float64(from) * iv * float64(time.Second))).Format(time.RFC3339Nano),
			DurationS: float64(to-from) * iv, Settings: map[string]any{"rate": 1.5},
		}
		if err := agg.Fill(r); err != nil {
			t.Fatal(err)
		}
		r.Rate.Target = rate
		r.SetAchieved()
		return r
	}
	var total float64
	for j, p := range parts {
		c.parts = append(c.parts, result(p.agg, p.from, p.to, p.targetRate))
		c.paths = append(c.paths, fmt.Sprintf("part-%d.json", j))
		c.from = append(c.from, p.from)
		total += p.targetRate
	}
	c.single = result(single, 0, intervals, total)
	return c
}

// TestMergeEqualsOneAggregator is the property the merge exists for: samples
// split at random among several aggregators, which started at different
// times on one wall-clock grid, merge into the result of one aggregator that
// saw them all: every count, every histogram value by value, every
// percentile, and the series.
func TestMergeEqualsOneAggregator(t *testing.T) {
	for seed := uint64(1); seed <= *mergeSeeds; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			c := newMergeCase(t, seed)
			got, err := Merge(c.parts, c.paths)
			if err != nil {
				t.Fatal(err)
			}
			want := c.single
			if got.Requests != want.Requests {
				t.Errorf("requests\n got %+v\nwant %+v", got.Requests, want.Requests)
			}
			for _, m := range []struct {
				name      string
				got, want map[string]uint64
			}{{"violations", got.Violations, want.Violations}, {"error codes", got.ErrorCodes, want.ErrorCodes}, {"server methods", got.ServerMethods, want.ServerMethods}} {
				if !reflect.DeepEqual(m.got, m.want) {
					t.Errorf("%s\n got %v\nwant %v", m.name, m.got, m.want)
				}
			}
			if got.ClampedValues != want.ClampedValues {
				t.Errorf("clamped values %d; want %d", got.ClampedValues, want.ClampedValues)
			}
			sameLatencySet(t, "latency", got.Latency, want.Latency)
			if !slices.Equal(SortedKeys(got.Methods), SortedKeys(want.Methods)) {
				t.Fatalf("methods %v; want %v", SortedKeys(got.Methods), SortedKeys(want.Methods))
			}
			for name, w := range want.Methods {
				g := got.Methods[name]
				if g.Requests != w.Requests || !reflect.DeepEqual(g.Violations, w.Violations) || !reflect.DeepEqual(g.ErrorCodes, w.ErrorCodes) {
					t.Errorf("method %s\n got %+v %v %v\nwant %+v %v %v", name, g.Requests, g.Violations, g.ErrorCodes, w.Requests, w.Violations, w.ErrorCodes)
				}
				sameLatencySet(t, "methods."+name, g.Latency, w.Latency)
			}
			if got.StartedAt != want.StartedAt || got.DurationS != want.DurationS || got.Rate != want.Rate {
				t.Errorf("started %s, %gs, rate %+v; want %s, %gs, %+v", got.StartedAt, got.DurationS, got.Rate, want.StartedAt, want.DurationS, want.Rate)
			}
			sameSeries(t, got.Series, want.Series, c)
			if len(got.MergedFrom) != len(c.parts) || got.MergedFrom[0].Path != "part-0.json" {
				t.Errorf("merged_from %+v; want one entry per part", got.MergedFrom)
			}
		})
	}
}

// sameLatencySet compares the three histograms of two sets: the decoded
// counts value by value and every reported figure.
func sameLatencySet(t *testing.T, where string, got, want LatencySet) {
	t.Helper()
	for _, x := range []struct {
		name      string
		got, want Latency
	}{{"corrected", got.Corrected, want.Corrected}, {"service", got.Service, want.Service}, {"lag", got.Lag, want.Lag}} {
		g, w := decoded(t, x.got), decoded(t, x.want)
		if !g.Equals(w) {
			t.Errorf("%s.%s: the merged histogram differs from the single one (%d vs %d values)", where, x.name, g.TotalCount(), w.TotalCount())
		}
		gs, ws := x.got, x.want
		gs.HDR, ws.HDR = "", ""
		if gs != ws {
			t.Errorf("%s.%s\n got %+v\nwant %+v", where, x.name, gs, ws)
		}
	}
}

func decoded(t *testing.T, l Latency) *hdr.Histogram {
	t.Helper()
	h, err := hdr.Decode([]byte(l.HDR))
	if err != nil {
		t.Fatalf("decoding a histogram: %v", err)
	}
	if h.TotalCount() != l.Count {
		t.Fatalf("histogram holds %d values, count says %d", h.TotalCount(), l.Count)
	}
	return h
}

// sameSeries checks the merged series against the single one: counts and
// in-flight gauges equal; the per-interval percentiles equal where one part
// had the interval, and an upper bound where several had it (p99's only
// when the parts' ranks add up to the whole's: see mergeSeries).
func sameSeries(t *testing.T, got, want []Point, c mergeCase) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("series of %d points; want %d", len(got), len(want))
	}
	rank := func(n uint64, q float64) int64 { return max(1, int64(q*float64(n)+0.5)) }
	for k := range want {
		g, w := got[k], want[k]
		gc, wc := g, w
		gc.P50us, gc.P99us, wc.P50us, wc.P99us = 0, 0, 0, 0
		if !reflect.DeepEqual(gc, wc) {
			t.Errorf("point %d\n got %+v\nwant %+v", k, gc, wc)
		}
		if len(c.several[k]) == 1 {
			if g.P50us != w.P50us || g.P99us != w.P99us {
				t.Errorf("point %d of one part: p50 %d p99 %d; want %d %d", k, g.P50us, g.P99us, w.P50us, w.P99us)
			}
			continue
		}
		if g.P50us < w.P50us {
			t.Errorf("point %d: merged p50 %d below the true %d", k, g.P50us, w.P50us)
		}
		// Each part has at least its rank's worth of replies at or below
		// its p99; when those add up to the whole's rank, the largest p99
		// bounds the whole's.
		var ranks int64
		for _, j := range c.several[k] {
			if n := c.parts[j].Series[k-c.from[j]].Answered; n > 0 {
				ranks += rank(n, 0.99)
			}
		}
		if w.Answered > 0 && ranks >= rank(w.Answered, 0.99) && g.P99us < w.P99us {
			t.Errorf("point %d: merged p99 %d below the true %d", k, g.P99us, w.P99us)
		}
	}
}

// baseResult is a small filled result: one method, a few replies, so its
// histograms are real. Tests copy it and change what they test.
func baseResult(t testing.TB) *Result {
	t.Helper()
	agg := NewAggregator([]string{"echo"})
	rec := agg.NewRecorder()
	for i := int64(1); i <= 10; i++ {
		rec.Record(Sample{Kind: Sent, A: i * 1000})
		rec.Record(Sample{Kind: MessageSent})
		rec.Record(Sample{Kind: OK, A: i * ms, B: i * ms / 2})
	}
	agg.Tick(1, 2)
	r := &Result{Tool: "rpcload", Target: "tcp://127.0.0.1:1", StartedAt: mergeBase.Format(time.RFC3339Nano), DurationS: 1,
		Settings: map[string]any{"rate": 10.0, "shard": "1/3"}, Rate: Rate{Target: 10}}
	if err := agg.Fill(r); err != nil {
		t.Fatal(err)
	}
	return r
}

func withShard(r Result, i, n int) *Result {
	r.Shard = &ShardInfo{Index: i, Count: n}
	return &r
}

// TestMergeRefuses: each way parts cannot be merged exactly is an error
// naming the file at fault.
func TestMergeRefuses(t *testing.T) {
	base := baseResult(t)
	edit := func(f func(r *Result)) *Result {
		r := *base
		f(&r)
		return &r
	}
	nested := &Result{Schema: Schema, StartedAt: base.StartedAt, MergedFrom: []MergedPart{
		{Path: "old/part-1.json", Shard: &ShardInfo{Index: 1, Count: 2}}, {Path: "old/part-2.json", Shard: &ShardInfo{Index: 2, Count: 2}},
	}}
	tests := []struct {
		name  string
		parts []*Result
		paths []string
		want  []string
	}{
		{"nothing", nil, nil, []string{"nothing to merge"}},
		{"names missing", []*Result{base, base}, []string{"a.json"}, []string{"2 results", "1 names"}},
		{"nil part", []*Result{base, nil}, []string{"a.json", "b.json"}, []string{"b.json", "no result"}},
		{"schema", []*Result{base, edit(func(r *Result) { r.Schema = "rpcload.result/v0" })}, []string{"a.json", "b.json"},
			[]string{"b.json", "rpcload.result/v0"}},
		{"start time", []*Result{edit(func(r *Result) { r.StartedAt = "yesterday" }), base}, []string{"a.json", "b.json"},
			[]string{"a.json", `"yesterday"`, "RFC 3339"}},
		{"negative duration", []*Result{base, edit(func(r *Result) { r.DurationS = -1 })}, []string{"a.json", "b.json"},
			[]string{"b.json", "duration_s -1"}},
		{"infinite rate", []*Result{base, edit(func(r *Result) { r.Rate.Target = math.Inf(1) })}, []string{"a.json", "b.json"},
			[]string{"b.json", "rate.target +Inf"}},
		{"shard counts differ", []*Result{withShard(*base, 1, 3), withShard(*base, 2, 4)}, []string{"a.json", "b.json"},
			[]string{"a.json is shard 1/3", "b.json is shard 2/4", "not shards of one run"}},
		{"same shard twice", []*Result{withShard(*base, 2, 3), withShard(*base, 1, 3), withShard(*base, 2, 3)}, []string{"a.json", "b.json", "c.json"},
			[]string{"a.json and c.json are both shard 2/3", "twice"}},
		{"same file twice", []*Result{base, base}, []string{"dir/a.json", "dir/../dir/a.json"}, []string{"dir/../dir/a.json is given twice"}},
		{"shard out of range", []*Result{withShard(*base, 4, 3)}, []string{"a.json"}, []string{"a.json", "4/3"}},
		{"shard and whole run", []*Result{base, withShard(*base, 1, 2)}, []string{"a.json", "b.json"},
			[]string{"b.json is shard 1/2", "a.json is not a shard"}},
		{"shard inside a merged part twice", []*Result{nested, withShard(*base, 2, 2)}, []string{"m.json", "b.json"},
			[]string{"old/part-2.json (merged into m.json) and b.json are both shard 2/2"}},
		{"no histogram", []*Result{base, edit(func(r *Result) { r.Latency.Service.HDR = "" })}, []string{"a.json", "b.json"},
			[]string{"b.json", "latency.service", "older rpcload"}},
		{"method without histogram", []*Result{base, edit(func(r *Result) {
			m := r.Methods["echo"]
			m.Latency.Lag.HDR = ""
			r.Methods = map[string]MethodResult{"echo": m}
		})}, []string{"a.json", "b.json"}, []string{"b.json", `methods["echo"].latency.lag`, "older rpcload"}},
		{"damaged histogram", []*Result{base, edit(func(r *Result) { r.Latency.Corrected.HDR = "HISTFAAAAB" })}, []string{"a.json", "b.json"},
			[]string{"b.json", "latency.corrected.hdr does not decode"}},
		{"count disagrees", []*Result{edit(func(r *Result) { r.Latency.Lag.Count++ }), base}, []string{"a.json", "b.json"},
			[]string{"a.json", "latency.lag.hdr holds 10 values but its count says 11"}},
		{"series out of order", []*Result{base, edit(func(r *Result) { r.Series = []Point{{T: 2}, {T: 1}} })}, []string{"a.json", "b.json"},
			[]string{"b.json", "series point 1", "in order"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Merge(tc.parts, tc.paths)
			if err == nil {
				t.Fatalf("Merge succeeded: %+v", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestMergeHistogramRange: a histogram with values past rpcload's top (from
// a foreign or edited file) cannot be merged without losing them.
func TestMergeHistogramRange(t *testing.T) {
	base := baseResult(t)
	wide := hdr.New(1, 100*histHighest, 3)
	_ = wide.RecordValue(50 * histHighest)
	l, err := summarize(wide)
	if err != nil {
		t.Fatal(err)
	}
	other := *base
	other.Latency.Corrected = l
	_, err = Merge([]*Result{base, &other}, []string{"a.json", "b.json"})
	if err == nil || !strings.Contains(err.Error(), "b.json") || !strings.Contains(err.Error(), "outside rpcload's range") {
		t.Errorf("Merge = %v; want an error naming b.json and the range", err)
	}
}

// TestMergeWholeRun: what the merge takes from the parts besides the
// counts: settings, target, shards, samples and messages (united, bounded),
// the sections it drops, and its warnings.
func TestMergeWholeRun(t *testing.T) {
	base := baseResult(t)
	samples := func(method string, frames ...string) []FrameSample {
		var s []FrameSample
		for _, f := range frames {
			s = append(s, FrameSample{Method: method, Frame: f})
		}
		return s
	}
	a := withShard(*base, 1, 3)
	a.InFlightMax, a.DrainS, a.Rate.Target = 7, 0.5, 100
	a.Profile = &ProfileReport{Name: "mcp", Era: "modern", Handshakes: 2, CancelsSent: 1, Tools: []string{"echo"}}
	a.IDReuse = &IDReuseReport{Probes: 3, BothAnswered: 1, ErrorCodes: map[string]int64{"-32600": 2}}
	a.Child = &ChildReport{Command: "srv --stdio", Restarts: 1, Exits: []string{"exit status 1 at 0.5s"}, StderrPath: "a.log"}
	a.Connections = Connections{Opened: 4, Lost: 1}
	a.ViolationSamples = map[string][]FrameSample{"unknown_id": samples("echo", "1", "2", "3", "4")}
	a.ErrorMessages = map[string][]string{"-32000": {"x", "y", "z"}}
	a.TransportErrorSamples = []string{"e1", "e2", "e3", "e4"}
	a.Warnings = []string{"lag"}
	a.Thresholds = []ThresholdVerdict{{Expr: "p99<1ms"}}
	a.Soak = &SoakReport{Verdict: "flat"}

	c := withShard(*base, 3, 3)
	c.Target = "tcp://127.0.0.1:2"
	c.StartedAt = mergeBase.Add(250 * time.Millisecond).Format(time.RFC3339Nano)
	c.InFlightMax, c.DrainS, c.Rate.Target, c.Interrupted = 5, 0.25, 50, true
	c.Profile = &ProfileReport{Name: "mcp", Era: "modern", Handshakes: 3, ServerRequestsAnswered: 4}
	c.IDReuse = &IDReuseReport{Probes: 1, NoReply: 1, ErrorCodes: map[string]int64{"-32600": 1, "1": 1}}
	c.Child = &ChildReport{Command: "srv --stdio", Exits: []string{"signal: killed at 1s"}, StderrTail: []string{"bye"}}
	c.Connections = Connections{Opened: 2}
	c.ViolationSamples = map[string][]FrameSample{"unknown_id": samples("echo", "4", "5", "6"), "late": samples("(unmatched)", "7")}
	c.ErrorMessages = map[string][]string{"-32000": {"z", "w"}, "3": {"three"}}
	for code := range maxMessageCodes {
		c.ErrorMessages[fmt.Sprint(9000+code)] = []string{"many"}
	}
	c.TransportErrorSamples = []string{"e4", "e5", "e6"}
	c.Warnings = []string{"lag", "dropped"}

	got, err := Merge([]*Result{a, c}, []string{"runs/a.json", "runs/c.json"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Requests.Sent != 20 || got.Latency.Corrected.Count != 20 || got.Methods["echo"].Latency.Corrected.Count != 20 {
		t.Errorf("sent %d, corrected count %d, echo's %d; want 20 each", got.Requests.Sent, got.Latency.Corrected.Count, got.Methods["echo"].Latency.Corrected.Count)
	}
	if got.DurationS != 1.25 || got.DrainS != 0.5 || got.Rate.Target != 150 || got.Rate.Achieved != 20/1.25 || got.InFlightMax != 12 || !got.Interrupted {
		t.Errorf("duration %g drain %g rate %+v in flight %d interrupted %v; want 1.25, 0.5, target 150 achieved 16, 12, true",
			got.DurationS, got.DrainS, got.Rate, got.InFlightMax, got.Interrupted)
	}
	if got.StartedAt != a.StartedAt || got.Schema != Schema || got.Tool != "rpcload" {
		t.Errorf("started %s schema %s tool %s", got.StartedAt, got.Schema, got.Tool)
	}
	if _, ok := got.Settings["shard"]; ok || got.Settings["rate"] != 10.0 {
		t.Errorf("settings %v; want the first part's without the shard", got.Settings)
	}
	if _, ok := base.Settings["shard"]; !ok {
		t.Error("Merge changed a part's settings")
	}
	if got.Target != "several targets: tcp://127.0.0.1:1, tcp://127.0.0.1:2" {
		t.Errorf("target %q", got.Target)
	}
	if got.Shard != nil || got.Thresholds != nil || got.Soak != nil || got.Rounds != nil || got.Diff != nil {
		t.Errorf("kept a part's own sections: shard %v thresholds %v soak %v", got.Shard, got.Thresholds, got.Soak)
	}
	wantFrom := []MergedPart{
		{Path: "runs/a.json", Target: a.Target, StartedAt: a.StartedAt, Shard: &ShardInfo{1, 3}},
		{Path: "runs/c.json", Target: c.Target, StartedAt: c.StartedAt, Shard: &ShardInfo{3, 3}},
	}
	if !reflect.DeepEqual(got.MergedFrom, wantFrom) {
		t.Errorf("merged_from %+v; want %+v", got.MergedFrom, wantFrom)
	}
	if got.Partial == nil || !slices.Equal(got.Partial.Missing, []string{"2/3"}) || got.Partial.Text() != "shard 2/3 missing" {
		t.Errorf("partial %+v; want shard 2/3 missing", got.Partial)
	}
	// The missing shard merged into the partial merge completes it.
	b := withShard(*base, 2, 3)
	whole, err := Merge([]*Result{got, b}, []string{"ac.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Partial != nil || len(whole.MergedFrom) != 3 {
		t.Errorf("partial %+v, merged from %d; want a whole merge of 3", whole.Partial, len(whole.MergedFrom))
	}
	if p := got.Profile; p == nil || p.Name != "mcp" || p.Handshakes != 5 || p.CancelsSent != 1 || p.ServerRequestsAnswered != 4 || !slices.Equal(p.Tools, []string{"echo"}) {
		t.Errorf("profile %+v", got.Profile)
	}
	if u := got.IDReuse; u == nil || u.Probes != 4 || u.BothAnswered != 1 || u.NoReply != 1 || !reflect.DeepEqual(u.ErrorCodes, map[string]int64{"-32600": 3, "1": 1}) {
		t.Errorf("id reuse %+v", got.IDReuse)
	}
	if ch := got.Child; ch == nil || ch.Restarts != 1 || ch.StderrPath != "a.log" || !slices.Equal(ch.StderrTail, []string{"bye"}) ||
		!slices.Equal(ch.Exits, []string{"a.json: exit status 1 at 0.5s", "c.json: signal: killed at 1s"}) {
		t.Errorf("child %+v", got.Child)
	}
	if got.Connections != (Connections{Opened: 6, Lost: 1}) {
		t.Errorf("connections %+v", got.Connections)
	}
	if s := got.ViolationSamples["unknown_id"]; !reflect.DeepEqual(s, samples("echo", "1", "2", "3", "4", "5")) {
		t.Errorf("unknown_id samples %+v; want 1..5: united, once each, %d per method", s, MaxSamplesPerRule)
	}
	if s := got.ViolationSamples["late"]; len(s) != 1 {
		t.Errorf("late samples %+v", s)
	}
	wantMsgs := map[string][]string{"-32000": {"x", "y", "z"}, "3": {"three"}}
	for code := range maxMessageCodes - len(wantMsgs) {
		wantMsgs[fmt.Sprint(9000+code)] = []string{"many"}
	}
	if !reflect.DeepEqual(got.ErrorMessages, wantMsgs) {
		t.Errorf("error messages %v; want %v", got.ErrorMessages, wantMsgs)
	}
	if !slices.Equal(got.TransportErrorSamples, []string{"e1", "e2", "e3", "e4", "e5"}) {
		t.Errorf("transport error samples %v", got.TransportErrorSamples)
	}
	for _, w := range []string{"lag", "dropped", "shards 2/3 are missing", "different targets"} {
		if n := len(slices.DeleteFunc(slices.Clone(got.Warnings), func(s string) bool { return !strings.Contains(s, w) })); n != 1 {
			t.Errorf("warnings %q: %q %d times; want once", got.Warnings, w, n)
		}
	}
}

// TestMergeApart: parts whose sending phases did not overlap are merged,
// with a warning that the rate is spread over the gap.
func TestMergeApart(t *testing.T) {
	base := baseResult(t)
	late := *base
	late.StartedAt = mergeBase.Add(10 * time.Second).Format(time.RFC3339Nano)
	got, err := Merge([]*Result{base, &late}, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	if got.DurationS != 11 || !slices.ContainsFunc(got.Warnings, func(w string) bool { return strings.Contains(w, "did not all send at the same time") }) {
		t.Errorf("duration %g warnings %q; want 11 s and a warning", got.DurationS, got.Warnings)
	}
	if len(got.Series) != 11 || got.Series[0].Sent != 10 || got.Series[10].Sent != 10 || !reflect.DeepEqual(got.Series[5], Point{T: 6}) {
		t.Errorf("series %+v; want 11 one-second points, the empty ones zero", got.Series)
	}
}

// TestMergeSeries: the grid of the merged series and how each field of a
// point combines.
func TestMergeSeries(t *testing.T) {
	at := func(d time.Duration) string { return mergeBase.Add(d).Format(time.RFC3339Nano) }
	tests := []struct {
		name   string
		starts []string
		series [][]Point
		want   []Point
	}{
		{
			"one part stays as it was",
			[]string{at(0)},
			[][]Point{{{T: 1, Sent: 1, P99us: 5}, {T: 2, Sent: 2}, {T: 2.01, Sent: 3}}},
			[]Point{{T: 1, Sent: 1, P99us: 5}, {T: 2, Sent: 2}, {T: 2.01, Sent: 3}},
		},
		{
			"starts a little apart land on the same grid",
			[]string{at(0), at(30 * time.Millisecond)},
			[][]Point{
				{{T: 1, Sent: 1, InFlight: 1, InFlightMax: 7, OldestPendingUs: 9, TimedOutUnanswered: 1, ChildRSSBytes: 10, TargetRate: 5, P50us: 1, P99us: 9}, {T: 2, Sent: 2}},
				{{T: 1, Sent: 10, InFlight: 3, InFlightMax: 5, OldestPendingUs: 4, TimedOutUnanswered: 2, ChildRSSBytes: 20, TargetRate: 7, P50us: 3, P99us: 4}, {T: 2, Sent: 20}},
			},
			[]Point{
				{T: 1, Sent: 11, InFlight: 4, InFlightMax: 12, OldestPendingUs: 9, TimedOutUnanswered: 3, ChildRSSBytes: 30, TargetRate: 12, P50us: 3, P99us: 9},
				{T: 2.03, Sent: 22},
			},
		},
		{
			"a finer part is bucketed by the coarsest interval",
			[]string{at(0), at(0)},
			[][]Point{
				{{T: 0.5, Sent: 1, InFlight: 4, InFlightMax: 9, TargetRate: 1, P99us: 7}, {T: 1, Sent: 1, InFlight: 2, InFlightMax: 3, TargetRate: 2, P99us: 3}, {T: 1.5, Sent: 1}, {T: 2, Sent: 1}},
				{{T: 1, Sent: 5, InFlight: 1, InFlightMax: 2, TargetRate: 10, Late: 1}, {T: 2, Sent: 5, Violations: 2}},
			},
			[]Point{{T: 1, Sent: 7, InFlight: 5, InFlightMax: 11, TargetRate: 12, P99us: 7, Late: 1}, {T: 2, Sent: 7, Violations: 2}},
		},
		{
			"a gap between parts is zero points",
			[]string{at(0), at(3 * time.Second)},
			[][]Point{{{T: 1, Sent: 1}}, {{T: 1, Sent: 2}}},
			[]Point{{T: 1, Sent: 1}, {T: 2}, {T: 3}, {T: 4, Sent: 2}},
		},
		{
			"no series",
			[]string{at(0), at(0)},
			[][]Point{nil, nil},
			[]Point{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var parts []*Result
			var paths []string
			for i, s := range tc.series {
				parts = append(parts, &Result{Schema: Schema, StartedAt: tc.starts[i], Series: s})
				paths = append(paths, fmt.Sprintf("p%d.json", i))
			}
			got, err := Merge(parts, paths)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Series, tc.want) {
				t.Errorf("series\n got %+v\nwant %+v", got.Series, tc.want)
			}
		})
	}
}

// TestMergeSeriesBounded: parts started days apart do not make a grid of
// millions of empty points; the step grows instead, and no count is lost.
func TestMergeSeriesBounded(t *testing.T) {
	a := &Result{Schema: Schema, StartedAt: mergeBase.Format(time.RFC3339Nano), Series: []Point{{T: 1, Sent: 1}, {T: 2, Sent: 2}}}
	b := &Result{Schema: Schema, StartedAt: mergeBase.Add(72 * time.Hour).Format(time.RFC3339Nano), Series: []Point{{T: 1, Sent: 4}}}
	got, err := Merge([]*Result{a, b}, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	var sent uint64
	for _, p := range got.Series {
		sent += p.Sent
	}
	if n := len(got.Series); n > MaxSeriesPoints+1 || n < MaxSeriesPoints/2 || sent != 7 {
		t.Errorf("%d points holding %d sent; want at most %d points and 7 sent", n, sent, MaxSeriesPoints+1)
	}
}

func FuzzMerge(f *testing.F) {
	base := baseResult(f)
	seed, err := json.Marshal(base)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, seed)
	f.Add([]byte(`{"schema":"rpcload.result/v1","started_at":"2030-01-01T00:00:00Z","series":[{"t_s":1,"sent":3}],"shard":{"index":1,"count":2}}`),
		[]byte(`{"schema":"rpcload.result/v1","started_at":"2030-01-01T00:00:00.5Z","series":[{"t_s":0.2},{"t_s":9e9}],"shard":{"index":2,"count":2}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var parts []*Result
		for _, data := range [][]byte{a, b} {
			var r Result
			if json.Unmarshal(data, &r) != nil {
				return
			}
			parts = append(parts, &r)
		}
		got, err := Merge(parts, []string{"a.json", "b.json"})
		if err != nil {
			if !strings.Contains(err.Error(), "a.json") && !strings.Contains(err.Error(), "b.json") {
				t.Errorf("error %q names neither file", err)
			}
			return
		}
		if got.Requests.Sent != parts[0].Requests.Sent+parts[1].Requests.Sent {
			t.Errorf("sent %d; want %d + %d", got.Requests.Sent, parts[0].Requests.Sent, parts[1].Requests.Sent)
		}
		if got.Latency.Corrected.Count != parts[0].Latency.Corrected.Count+parts[1].Latency.Corrected.Count {
			t.Errorf("corrected count %d; want %d + %d", got.Latency.Corrected.Count, parts[0].Latency.Corrected.Count, parts[1].Latency.Corrected.Count)
		}
		if len(got.Series) > MaxSeriesPoints+1 {
			t.Errorf("%d series points; the limit is %d", len(got.Series), MaxSeriesPoints)
		}
		for i := 1; i < len(got.Series); i++ {
			if got.Series[i].T <= got.Series[i-1].T {
				t.Errorf("series times not increasing at %d: %g after %g", i, got.Series[i].T, got.Series[i-1].T)
			}
		}
		if _, err := json.Marshal(got); err != nil {
			t.Errorf("the merged result cannot be written: %v", err)
		}
	})
}
