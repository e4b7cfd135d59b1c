package stats

import (
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcload/rpcload/internal/check"
)

// Histogram bounds: microsecond resolution, three significant digits, up to
// one hour. Longer values are clamped to the top and counted in Clamped.
const (
	histLowest  = 1
	histHighest = 3_600_000_000
	histDigits  = 3
)

func newHist() *hdr.Histogram { return hdr.New(histLowest, histHighest, histDigits) }

// MaxSamplesPerRule is how many example frames are kept per rule and method.
const MaxSamplesPerRule = 5

// Violation samples keep at most this many bytes of a frame.
const maxSampleBytes = 2048

// FrameSample is one example of a broken rule.
type FrameSample struct {
	Method string `json:"method"`
	Frame  string `json:"frame"`
	Note   string `json:"note,omitempty"`
}

type methodStats struct {
	corrected, service, lag *hdr.Histogram
	counts                  [numKinds]uint64
	rules                   [check.NumRules]uint64
	codes                   map[int64]uint64
}

func newMethodStats() *methodStats {
	return &methodStats{corrected: newHist(), service: newHist(), lag: newHist(), codes: map[int64]uint64{}}
}

// Point is one interval of the time series.
type Point struct {
	T    float64 `json:"t_s"`  // end of the interval, seconds since the run started
	Sent uint64  `json:"sent"` // requests and notifications written, each element of a batch counted
	// Messages is the messages written (a request, a notification or a
	// batch each), Batches those of them that were batches.
	Messages        uint64 `json:"messages"`
	Batches         uint64 `json:"batches"`
	Answered        uint64 `json:"answered"`
	OK              uint64 `json:"ok"`
	RPCErrors       uint64 `json:"rpc_errors"`
	TransportErrors uint64 `json:"transport_errors"`
	Timeouts        uint64 `json:"timeouts"`
	Dropped         uint64 `json:"dropped"`
	Violations      uint64 `json:"violations"`
	Late            uint64 `json:"late"`
	InFlight        int64  `json:"inflight"` // at the interval's end
	// InFlightMax is the most requests in flight at once during the
	// interval (0 in files of older versions, which did not record it).
	InFlightMax int64 `json:"inflight_max"`
	// OldestPendingUs is the age, at the interval's end, of the oldest
	// request still waiting for its reply (0 when none is).
	OldestPendingUs int64 `json:"oldest_pending_us"`
	// TimedOutUnanswered counts requests that timed out and have had no
	// late reply since, at the interval's end: the leak suspects of a soak.
	TimedOutUnanswered int64   `json:"timed_out_unanswered"`
	TargetRate         float64 `json:"target_rate"`               // the schedule's rate at the interval's end (0 in closed loop)
	ChildRSSBytes      int64   `json:"child_rss_bytes,omitempty"` // resident memory of the server's child processes, when rpcload started them
	P50us              int64   `json:"p50_us"`
	P99us              int64   `json:"p99_us"`
	// ChildThreads and ChildOpenFDs are the threads and open file
	// descriptors of the server's child processes (Linux), as RSS is.
	ChildThreads int64 `json:"child_threads,omitempty"`
	ChildOpenFDs int64 `json:"child_open_fds,omitempty"`
	// Server holds the server's own gauges read at the interval's end
	// (--server-metrics, --server-metric, --server-pid), by name. A gauge
	// missing from a point was not read for it: its source failed then.
	Server map[string]float64 `json:"server,omitempty"`
	// ServerReadFailures counts the reads of the server's gauges (a
	// scrape, a look at /proc) that failed at this interval's end.
	ServerReadFailures uint64 `json:"server_read_failures,omitempty"`
}

// Aggregator merges every Recorder of a run.
type Aggregator struct {
	flushMu sync.Mutex // serialises Flush callers (one swap at a time per recorder)

	mu        sync.Mutex // guards everything below
	methods   []string
	per       []*methodStats // one per method, plus one for "no method known"
	total     *methodStats   // counters only; totalHists adds up the histograms
	clamped   uint64
	interval  [numKinds]uint64
	ivRules   uint64
	ivHist    *hdr.Histogram // corrected latency of this interval's replies
	ivSvc     *hdr.Histogram // service time of this interval's replies
	series    []Point
	recs      []*Recorder
	spares    []*batch
	samples   map[check.Rule][]FrameSample
	srvMeth   map[string]uint64 // requests and notifications from the server, by method
	perMethod map[[2]int]int    // samples kept per (rule, method)
	errMsgs   map[int64][]string
	seriesCap int              // MaxSeriesPoints; tests lower it
	warm      [numKinds]uint64 // samples of the warm-up (Sample.Warmup), by kind
}

// NewAggregator returns an Aggregator for a run that calls these methods.
func NewAggregator(methods []string) *Aggregator {
	a := &Aggregator{
		methods:   append([]string(nil), methods...),
		total:     &methodStats{codes: map[int64]uint64{}},
		ivHist:    newHist(),
		ivSvc:     newHist(),
		samples:   map[check.Rule][]FrameSample{},
		srvMeth:   map[string]uint64{},
		perMethod: map[[2]int]int{},
		errMsgs:   map[int64][]string{},
		seriesCap: MaxSeriesPoints,
	}
	for range len(methods) + 1 {
		a.per = append(a.per, newMethodStats())
	}
	return a
}

// NewRecorder returns a Recorder for one goroutine.
func (a *Aggregator) NewRecorder() *Recorder {
	r := &Recorder{agg: a}
	r.cur.Store(new(batch))
	a.mu.Lock()
	a.recs = append(a.recs, r)
	a.spares = append(a.spares, new(batch))
	a.mu.Unlock()
	return r
}

// WarmupRequests counts the samples of the warm-up (Sample.Warmup) as a
// result counts the run's: what the warm-up sent and how it ended.
func (a *Aggregator) WarmupRequests() Requests {
	a.Flush()
	a.mu.Lock()
	defer a.mu.Unlock()
	q, _, _ := counts(&methodStats{counts: a.warm})
	return q
}

// AddServerMethods adds counts of messages the server sent, by method.
func (a *Aggregator) AddServerMethods(m map[string]uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, n := range m {
		a.srvMeth[k] += n
	}
}

// KeepSample stores frame as an example of rule for the method, if fewer
// than MaxSamplesPerRule are kept already. It is the slow path: call it only
// when a rule is broken. It copies frame.
func (a *Aggregator) KeepSample(rule check.Rule, method int, frame []byte, note string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := [2]int{int(rule), method}
	if a.perMethod[key] >= MaxSamplesPerRule {
		return
	}
	a.perMethod[key]++
	f := frame
	if len(f) > maxSampleBytes {
		f = f[:maxSampleBytes]
		note += " (frame cut to 2048 bytes)"
	}
	a.samples[rule] = append(a.samples[rule], FrameSample{Method: a.methodName(method), Frame: string(f), Note: note})
}

// MaxMessagesPerCode is how many distinct error messages are kept per error
// code; at most maxMessageCodes codes keep messages.
const (
	MaxMessagesPerCode = 3
	maxMessageCodes    = 32
	maxMessageBytes    = 512
)

// KeepErrorMessage stores msg as an example of what the server says with
// error code, unless enough distinct messages are kept already. It is the
// slow path: callers offer only the first few per code.
func (a *Aggregator) KeepErrorMessage(code int64, msg string) {
	if len(msg) > maxMessageBytes {
		msg = msg[:maxMessageBytes] + " (cut to 512 bytes)"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	kept, ok := a.errMsgs[code]
	if !ok && len(a.errMsgs) >= maxMessageCodes || len(kept) >= MaxMessagesPerCode {
		return
	}
	for _, k := range kept {
		if k == msg {
			return
		}
	}
	a.errMsgs[code] = append(kept, msg)
}

// UnmatchedMethod is the method name under which replies that matched no
// request (unknown ids, duplicates, late replies) are counted.
const UnmatchedMethod = "(unmatched)"

func (a *Aggregator) methodName(i int) string {
	if i >= 0 && i < len(a.methods) {
		return a.methods[i]
	}
	return UnmatchedMethod
}

// Flush merges every recorder's pending samples. Call it before reading
// results, and from the interval ticker.
func (a *Aggregator) Flush() {
	a.flushMu.Lock()
	defer a.flushMu.Unlock()
	a.mu.Lock()
	recs := a.recs[:len(a.recs):len(a.recs)]
	spares := a.spares
	a.mu.Unlock()
	// Swap without holding mu: an owner mid-merge needs it to finish.
	olds := make([]*batch, len(recs))
	for i, r := range recs {
		olds[i] = r.swap(spares[i])
	}
	a.mu.Lock()
	for i, b := range olds {
		a.mergeLocked(b)
		b.n = 0
		a.spares[i] = b
	}
	a.mu.Unlock()
}

func (a *Aggregator) mergeLocked(b *batch) {
	for i := range b.n {
		s := &b.s[i]
		a.interval[s.Kind]++
		if s.Warmup {
			// The series shows the warm-up; the run's figures leave it out.
			a.warm[s.Kind]++
			if s.Kind == OK || s.Kind == RPCError || s.Kind == InvalidReply {
				a.record(a.ivHist, s.A)
				a.record(a.ivSvc, s.B)
			}
			continue
		}
		m := int(s.Method)
		if m >= len(a.per) {
			m = len(a.per) - 1
		}
		// The totals' histograms are the per-method ones added up, once,
		// in Fill: recording each value twice more here cost a third of
		// the merge.
		if s.Kind == OK || s.Kind == RPCError || s.Kind == InvalidReply {
			a.reply(a.per[m], s)
			continue
		}
		a.clamped += a.add(a.per[m], s)
		a.count(a.total, s)
		if s.Kind == Violation {
			a.ivRules++
		}
	}
}

// reply merges reply sample s of method ms, as add, count and the
// interval's histograms would one after the other (nearly every sample is
// one): each of its two values is converted to microseconds once for the
// two histograms it goes into, and its clamping is counted once.
func (a *Aggregator) reply(ms *methodStats, s *Sample) {
	ca, ka := micros(s.A)
	cb, kb := micros(s.B)
	_ = ms.corrected.RecordValue(ca)
	_ = ms.service.RecordValue(cb)
	_ = a.ivHist.RecordValue(ca)
	_ = a.ivSvc.RecordValue(cb)
	a.clamped += ka + kb
	ms.counts[s.Kind]++
	a.total.counts[s.Kind]++
	if s.Kind == RPCError {
		ms.codes[s.Code]++
		a.total.codes[s.Code]++
	}
}

// add counts s, a sample other than a reply's (those go through reply),
// into ms and returns how many of its values were clamped.
func (a *Aggregator) add(ms *methodStats, s *Sample) (clamped uint64) {
	ms.counts[s.Kind]++
	switch s.Kind {
	case Sent:
		clamped += a.record(ms.lag, s.A)
	case Violation:
		ms.rules[s.Rule]++
	}
	return clamped
}

// count counts s into ms's counters only, leaving its histograms alone.
func (a *Aggregator) count(ms *methodStats, s *Sample) {
	ms.counts[s.Kind]++
	switch s.Kind {
	case RPCError:
		ms.codes[s.Code]++
	case Violation:
		ms.rules[s.Rule]++
	}
}

// totalHists returns the run's total histograms: the per-method ones added
// up. HDR addition is exact (bucket by bucket), so they equal what
// recording every value into them directly would have given.
func (a *Aggregator) totalHists() *methodStats {
	t := &methodStats{corrected: newHist(), service: newHist(), lag: newHist(), counts: a.total.counts, rules: a.total.rules, codes: a.total.codes}
	for _, ms := range a.per {
		t.corrected.Merge(ms.corrected)
		t.service.Merge(ms.service)
		t.lag.Merge(ms.lag)
	}
	return t
}

// MethodHistsFunc calls visit with the run's latency histograms so far
// (microseconds; corrected latency and service time), method by method.
type MethodHistsFunc func(visit func(method string, corrected, service *hdr.Histogram))

// MethodHists calls visit with each method's cumulative latency histograms,
// for the methods the result's Methods will hold (those with a sample),
// in the order of the run's methods. It reads what has been merged (the
// samples up to the last Flush or full buffer) and records nothing, so
// the hot path is untouched. visit runs under the aggregator's lock: it
// must not keep the histograms or call the Aggregator.
func (a *Aggregator) MethodHists(visit func(method string, corrected, service *hdr.Histogram)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, ms := range a.per {
		if ms.counts != ([numKinds]uint64{}) {
			visit(a.methodName(i), ms.corrected, ms.service)
		}
	}
}

// record stores a duration in nanoseconds as whole microseconds (rounded to
// nearest); negative durations (a clock step) count as zero. It returns 1 if
// the value was clamped to the top, else 0.
func (a *Aggregator) record(h *hdr.Histogram, ns int64) uint64 {
	us, clamped := micros(ns)
	_ = h.RecordValue(us)
	return clamped
}

// micros is a duration in nanoseconds as the whole microseconds record
// stores, and 1 if it was clamped to the top, else 0.
func micros(ns int64) (us int64, clamped uint64) {
	if ns > 0 {
		us = ns/1000 + (ns%1000+500)/1000 // not (ns+500)/1000: that overflows near MaxInt64
	}
	if us > histHighest {
		return histHighest, 1
	}
	return us, 0
}

// Tick closes the current interval at t seconds since the run's start with
// the given in-flight gauge, and appends it to the time series.
func (a *Aggregator) Tick(t float64, inflight int64) Point {
	return a.TickWith(t, Gauges{InFlight: inflight}, nil)
}

// Gauges are the figures of an interval that are read at its end rather
// than counted during it.
type Gauges struct {
	InFlight           int64
	InFlightMax        int64   // the most in flight during the interval; below InFlight (0: not kept) counts as InFlight
	ChildRSS           int64   // bytes; 0 = unknown
	OldestPendingUs    int64   // age of the oldest request in flight
	TimedOutUnanswered int64   // timed out, and no late reply since
	TargetRate         float64 // the schedule's rate now (0 in closed loop)
	// The children's threads and open files (0: unknown), and the
	// server's own gauges (Point.Server) with the reads that failed.
	ChildThreads, ChildOpenFDs int64
	Server                     map[string]float64
	ServerReadFailures         uint64
}

// IntervalHists receives the closing interval's histograms (microseconds)
// from TickWith: corrected latency and service time of the replies.
type IntervalHists struct {
	Corrected, Service *hdr.Histogram
}

// NewIntervalHists returns histograms TickWith can copy an interval into;
// reuse them across intervals so a long run allocates nothing per tick.
func NewIntervalHists() *IntervalHists {
	return &IntervalHists{Corrected: newHist(), Service: newHist()}
}

// MaxSeriesPoints bounds the time series kept in memory: past it, adjacent
// points are merged in pairs (counts add; gauges and percentiles keep the
// larger, an upper bound), so an hours-long soak keeps a fixed footprint.
// The full-resolution series of a soak goes to its series file instead.
const MaxSeriesPoints = 4096

// TickWith closes the current interval at t seconds since the run's start,
// with the gauges read now, appends it to the time series and returns it.
// If into is not nil, the interval's histograms are copied into it first.
func (a *Aggregator) TickWith(t float64, g Gauges, into *IntervalHists) Point {
	a.Flush()
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.pointLocked(t, g)
	if into != nil {
		into.Corrected.Reset()
		into.Corrected.Merge(a.ivHist)
		into.Service.Reset()
		into.Service.Merge(a.ivSvc)
	}
	a.series = append(a.series, p)
	if len(a.series) > a.seriesCap {
		a.series = halveSeries(a.series)
	}
	a.interval = [numKinds]uint64{}
	a.ivRules = 0
	a.ivHist.Reset()
	a.ivSvc.Reset()
	return p
}

// Peek returns the interval in progress as a point ending at t, without
// closing it: for a status line refreshed more often than the series.
func (a *Aggregator) Peek(t float64, g Gauges) Point {
	a.Flush()
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pointLocked(t, g)
}

func (a *Aggregator) pointLocked(t float64, g Gauges) Point {
	iv := &a.interval
	return Point{
		T: t, Sent: iv[Sent] + iv[NotifySent], Messages: iv[MessageSent], Batches: iv[BatchSent], Answered: iv[OK] + iv[RPCError] + iv[InvalidReply], OK: iv[OK], RPCErrors: iv[RPCError],
		TransportErrors: iv[TransportError], Timeouts: iv[Timeout], Dropped: iv[Dropped], Late: iv[Late],
		Violations: a.ivRules, InFlight: g.InFlight, InFlightMax: max(g.InFlightMax, g.InFlight), ChildRSSBytes: g.ChildRSS,
		ChildThreads: g.ChildThreads, ChildOpenFDs: g.ChildOpenFDs, Server: g.Server, ServerReadFailures: g.ServerReadFailures,
		OldestPendingUs: g.OldestPendingUs, TimedOutUnanswered: g.TimedOutUnanswered, TargetRate: g.TargetRate,
		P50us: a.ivHist.ValueAtQuantile(50), P99us: a.ivHist.ValueAtQuantile(99),
	}
}

// halveSeries merges adjacent points in place: each merged point ends where
// the later of its pair ends, so the intervals still tile the run.
func halveSeries(s []Point) []Point {
	n := 0
	for i := 0; i < len(s); i += 2 {
		p := s[i]
		if i+1 < len(s) {
			p = combineWithin(p, s[i+1])
		}
		s[n] = p
		n++
	}
	clear(s[n:])
	return s[:n]
}
