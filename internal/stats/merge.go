package stats

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// mergedTransportErrorSamples bounds the distinct transport error messages a
// merged result keeps: the engine keeps five per run, and a merge keeps no
// more than one run would.
const mergedTransportErrorSamples = 5

// NotConcurrentWarning begins the warning Merge adds when its parts did not
// all send at the same time; callers that merge sequential runs on purpose
// (rounds) leave it out by this prefix.
const NotConcurrentWarning = "the parts did not all send at the same time"

// Merge combines the results of runs that loaded their targets at the same
// time, typically the shards of one run on several machines (--shard i/n),
// into the result one generator sending all of their load would have
// written. paths name the parts (their files) in messages and in the merged
// result's MergedFrom; it must be as long as parts.
//
// Counts add. Latency histograms merge exactly (each part carries its HDR
// histogram), so every overall and per-method percentile is what a single
// generator would have measured; percentiles are never averaged. The
// sending phase runs from the earliest part's start to the latest part's
// end, by the wall clock, and the achieved rate is over that span. The time
// series is put on one wall-clock grid (see mergeSeries). Samples, error
// messages and warnings are united without duplicates, bounded as a single
// run bounds them. The parts' API coverage adds up per method (see
// mergeAPICoverage). The parts' thresholds, soak, rounds and diff sections
// are dropped: they judge one part, and thresholds are evaluated again on
// the merge by whoever asks for them. A merge that lacks shards of its run
// is Partial, naming them (worked out again from the parts, so merging the
// missing shard into a partial merge completes it).
//
// Merge refuses parts of another schema, results of shards of different
// counts (1/3 with 1/4) or the same shard twice, and histograms it cannot
// merge exactly (missing, undecodable, or outside rpcload's range).
func Merge(parts []*Result, paths []string) (*Result, error) {
	if len(parts) == 0 {
		return nil, errors.New("stats: nothing to merge: no result given")
	}
	if len(paths) != len(parts) {
		return nil, fmt.Errorf("stats: merge got %d results but %d names for them", len(parts), len(paths))
	}
	starts, err := partStarts(parts, paths)
	if err != nil {
		return nil, err
	}
	var partial *Partial
	leaves, warnings, err := mergedParts(parts, paths, &partial)
	if err != nil {
		return nil, err
	}

	origin := slices.MinFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	offsets := make([]float64, len(parts)) // seconds from the earliest start to each part's
	for i, t := range starts {
		offsets[i] = t.Sub(origin).Seconds()
	}
	out := &Result{
		Schema: Schema, Tool: "rpcload", StartedAt: origin.UTC().Format(time.RFC3339Nano),
		Settings:         map[string]any{},
		Violations:       map[string]uint64{},
		ViolationSamples: map[string][]FrameSample{},
		ErrorCodes:       map[string]uint64{},
		ServerMethods:    map[string]uint64{},
		Methods:          map[string]MethodResult{},
		Warnings:         []string{},
		MergedFrom:       leaves,
		Partial:          partial,
	}
	maps.Copy(out.Settings, parts[0].Settings)
	delete(out.Settings, "shard") // the merge is the whole run, no shard of it

	var targets []string
	latestStart, earliestEnd := 0.0, math.Inf(1)
	total := newLatencyHists()
	perMethod := map[string]*latencyHists{}
	for i, p := range parts {
		path := paths[i]
		if !slices.Contains(targets, p.Target) {
			targets = append(targets, p.Target)
		}
		end := offsets[i] + p.DurationS
		out.DurationS = max(out.DurationS, end)
		latestStart, earliestEnd = max(latestStart, offsets[i]), min(earliestEnd, end)
		out.DrainS = max(out.DrainS, p.DrainS)
		out.Rate.Target += p.Rate.Target
		// Shards run at the same time, so their peaks may coincide: the sum
		// is an upper bound of the in-flight maximum, not the maximum.
		out.InFlightMax += p.InFlightMax
		addRequests(&out.Requests, p.Requests)
		addCounts(out.Violations, p.Violations)
		addCounts(out.ErrorCodes, p.ErrorCodes)
		addCounts(out.ServerMethods, p.ServerMethods)
		out.ClampedValues += p.ClampedValues
		out.Connections.Opened += p.Connections.Opened
		out.Connections.Lost += p.Connections.Lost
		out.Interrupted = out.Interrupted || p.Interrupted
		if err := total.add(p.Latency, path, "latency"); err != nil {
			return nil, err
		}
		if err := mergeMethods(out, perMethod, p, path); err != nil {
			return nil, err
		}
		mergeProfile(out, p, &warnings)
		mergeIDReuse(out, p)
		mergeChild(out, p, path)
	}
	if out.Latency, err = total.summarize(); err != nil {
		return nil, err
	}
	for name, h := range perMethod {
		m := out.Methods[name]
		if m.Latency, err = h.summarize(); err != nil {
			return nil, err
		}
		out.Methods[name] = m
	}
	out.SetAchieved()

	out.Target = targets[0]
	if len(targets) > 1 {
		out.Target = "several targets: " + strings.Join(targets, ", ")
		warnings = append(warnings, fmt.Sprintf("the parts loaded different targets (%s): the merged figures mix their servers", strings.Join(targets, ", ")))
	}
	if len(parts) > 1 && latestStart > earliestEnd {
		warnings = append(warnings, fmt.Sprintf(NotConcurrentWarning+" (one started %.3fs after another had stopped): the merged rate is over the whole span and understates each part's", latestStart-earliestEnd))
	}

	out.API = mergeAPICoverage(parts)
	mergeSamples(out, parts, warnings)
	if out.Series, err = mergeSeries(parts, paths, offsets); err != nil {
		return nil, err
	}
	return out, nil
}

// partStarts checks that every part can be merged at all and returns when
// each started.
func partStarts(parts []*Result, paths []string) ([]time.Time, error) {
	starts := make([]time.Time, len(parts))
	for i, p := range parts {
		if p == nil {
			return nil, fmt.Errorf("stats: %s: no result", paths[i])
		}
		if p.Schema != Schema {
			return nil, fmt.Errorf("stats: %s has schema %q; this rpcload merges %q", paths[i], p.Schema, Schema)
		}
		t, err := time.Parse(time.RFC3339Nano, p.StartedAt)
		if err != nil {
			return nil, fmt.Errorf("stats: %s: started_at %q is not an RFC 3339 time", paths[i], p.StartedAt)
		}
		starts[i] = t
		if bad(p.DurationS) || bad(p.DrainS) {
			return nil, fmt.Errorf("stats: %s: duration_s %g and drain_s %g must be between 0 and %g", paths[i], p.DurationS, p.DrainS, float64(maxFigure))
		}
		if bad(p.Rate.Target) {
			return nil, fmt.Errorf("stats: %s: rate.target %g must be between 0 and %g", paths[i], p.Rate.Target, float64(maxFigure))
		}
	}
	return starts, nil
}

// mergeMethods adds part p's per-method counts to out and its per-method
// histograms to perMethod, starting both for a method seen first.
func mergeMethods(out *Result, perMethod map[string]*latencyHists, p *Result, path string) error {
	for _, name := range SortedKeys(p.Methods) {
		pm := p.Methods[name]
		m, ok := out.Methods[name]
		if !ok {
			m = MethodResult{Violations: map[string]uint64{}, ErrorCodes: map[string]uint64{}}
			perMethod[name] = newLatencyHists()
		}
		addRequests(&m.Requests, pm.Requests)
		addCounts(m.Violations, pm.Violations)
		addCounts(m.ErrorCodes, pm.ErrorCodes)
		out.Methods[name] = m
		if err := perMethod[name].add(pm.Latency, path, fmt.Sprintf("methods[%q].latency", name)); err != nil {
			return err
		}
	}
	return nil
}

// mergeSamples unites the parts' samples, error messages and warnings (the
// merge's own warnings last), bounded as one run bounds them.
func mergeSamples(out *Result, parts []*Result, warnings []string) {
	out.ViolationSamples = mergeViolationSamples(parts)
	out.ErrorMessages = mergeErrorMessages(parts)
	out.TransportErrorSamples = unite(mergedTransportErrorSamples, func(yield func(string)) {
		for _, p := range parts {
			for _, s := range p.TransportErrorSamples {
				yield(s)
			}
		}
	})
	out.Warnings = unite(math.MaxInt, func(yield func(string)) {
		for _, p := range parts {
			for _, w := range p.Warnings {
				yield(w)
			}
		}
		for _, w := range warnings {
			yield(w)
		}
	})
}

// maxFigure bounds the durations (seconds) and rates (per second) a part
// may state, far above any real run's, so that sums stay finite and the
// merged result can be written as JSON.
const maxFigure = 1e12

// bad reports whether a duration or rate read from a file is unusable.
func bad(x float64) bool { return !(x >= 0 && x <= maxFigure) }

// mergedParts lists what went into the merge, a merged part standing for its
// own parts, and checks that the shards among them belong together. A shard
// given twice is an error rather than a warning: its load would count twice,
// and nothing in the merged result could show it afterwards. A missing
// shard is a warning, and makes the merge partial: the merge of the
// shards that ran is still exact, it just covers less of the load.
func mergedParts(parts []*Result, paths []string, partial **Partial) ([]MergedPart, []string, error) {
	var leaves []MergedPart
	var from []string // the file each leaf came in, for messages
	seen := map[string]bool{}
	for i, p := range parts {
		clean := filepath.Clean(paths[i])
		if seen[clean] {
			return nil, nil, fmt.Errorf("stats: %s is given twice; its load would count twice", paths[i])
		}
		seen[clean] = true
		if len(p.MergedFrom) > 0 {
			for _, mp := range p.MergedFrom {
				if mp.Shard != nil {
					s := *mp.Shard
					mp.Shard = &s
				}
				leaves = append(leaves, mp)
				from = append(from, fmt.Sprintf("%s (merged into %s)", mp.Path, paths[i]))
			}
			continue
		}
		leaf := MergedPart{Path: paths[i], Target: p.Target, StartedAt: p.StartedAt}
		if p.Shard != nil {
			s := *p.Shard
			leaf.Shard = &s
		}
		leaves = append(leaves, leaf)
		from = append(from, paths[i])
	}
	first := -1 // the first leaf that is a shard
	whole := -1 // the first leaf that is not
	byIndex := map[int]int{}
	for i, l := range leaves {
		if l.Shard == nil {
			if whole < 0 {
				whole = i
			}
			continue
		}
		s := *l.Shard
		if s.Count < 1 || s.Index < 1 || s.Index > s.Count {
			return nil, nil, fmt.Errorf("stats: %s says it is shard %d/%d, which no run can be", from[i], s.Index, s.Count)
		}
		if first < 0 {
			first = i
		}
		if c := leaves[first].Shard.Count; s.Count != c {
			return nil, nil, fmt.Errorf("stats: %s is shard %d/%d but %s is shard %d/%d: they are not shards of one run",
				from[first], leaves[first].Shard.Index, c, from[i], s.Index, s.Count)
		}
		if j, dup := byIndex[s.Index]; dup {
			return nil, nil, fmt.Errorf("stats: %s and %s are both shard %d/%d; its load would count twice", from[j], from[i], s.Index, s.Count)
		}
		byIndex[s.Index] = i
	}
	if first < 0 {
		return leaves, nil, nil
	}
	if whole >= 0 {
		return nil, nil, fmt.Errorf("stats: %s is shard %d/%d but %s is not a shard: merge the shards of one run",
			from[first], leaves[first].Shard.Index, leaves[first].Shard.Count, from[whole])
	}
	var missing []string
	count := leaves[first].Shard.Count
	for i := 1; i <= count; i++ {
		if _, ok := byIndex[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, count))
		}
	}
	var warnings []string
	if len(missing) > 0 {
		warnings = append(warnings, fmt.Sprintf("shards %s are missing: the merge covers %d of the run's %d shards", strings.Join(missing, ", "), count-len(missing), count))
		*partial = &Partial{Missing: missing}
	}
	return leaves, warnings, nil
}

func addRequests(dst *Requests, src Requests) {
	dst.Sent += src.Sent
	dst.Notifications += src.Notifications
	dst.Answered += src.Answered
	dst.OK += src.OK
	dst.RPCErrors += src.RPCErrors
	dst.InvalidReplies += src.InvalidReplies
	dst.TransportErrors += src.TransportErrors
	dst.Timeouts += src.Timeouts
	dst.Late += src.Late
	dst.Leaked += src.Leaked
	dst.Dropped += src.Dropped
	dst.ServerMessages += src.ServerMessages
	dst.Messages += src.Messages
	dst.Batches += src.Batches
}

func addCounts[N int64 | uint64](dst, src map[string]N) {
	for k, n := range src {
		dst[k] += n
	}
}

// latencyHists accumulates the three histograms of a LatencySet.
type latencyHists struct{ corrected, service, lag *hdr.Histogram }

func newLatencyHists() *latencyHists {
	return &latencyHists{corrected: newHist(), service: newHist(), lag: newHist()}
}

// add merges the histograms a part carries; where names the set in the
// part's file, for messages.
func (h *latencyHists) add(s LatencySet, path, where string) error {
	for _, x := range []struct {
		name string
		l    Latency
		into *hdr.Histogram
	}{{"corrected", s.Corrected, h.corrected}, {"service", s.Service, h.service}, {"lag", s.Lag, h.lag}} {
		if err := mergeHDR(x.into, x.l, path, where+"."+x.name); err != nil {
			return err
		}
	}
	return nil
}

func (h *latencyHists) summarize() (LatencySet, error) {
	var s LatencySet
	var err error
	if s.Corrected, err = summarize(h.corrected); err != nil {
		return s, err
	}
	if s.Service, err = summarize(h.service); err != nil {
		return s, err
	}
	s.Lag, err = summarize(h.lag)
	return s, err
}

// mergeHDR decodes the histogram l carries and adds it to into.
func mergeHDR(into *hdr.Histogram, l Latency, path, where string) error {
	if l.HDR == "" {
		if l.Count > 0 {
			return fmt.Errorf("stats: %s: %s counts %d values but carries no histogram (hdr): it was written by an older rpcload, and percentiles cannot be merged without it", path, where, l.Count)
		}
		return nil
	}
	h, err := decodeHDR(l.HDR)
	if err != nil {
		return fmt.Errorf("stats: %s: %s.hdr does not decode: %v", path, where, err)
	}
	if h.TotalCount() != l.Count {
		return fmt.Errorf("stats: %s: %s.hdr holds %d values but its count says %d", path, where, h.TotalCount(), l.Count)
	}
	if dropped := into.Merge(h); dropped > 0 {
		return fmt.Errorf("stats: %s: %s.hdr holds %d values outside rpcload's range (%d µs to %d µs)", path, where, dropped, histLowest, histHighest)
	}
	return nil
}

// decodeHDR is hdr.Decode that turns a panic of the decoder on a damaged
// histogram into an error: result files come from other machines.
func decodeHDR(s string) (h *hdr.Histogram, err error) {
	defer func() {
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("damaged histogram (%v)", r)
		}
	}()
	return hdr.Decode([]byte(s))
}

// mergeProfile adds p's profile counters to out's; the first part's profile
// names the merge's.
func mergeProfile(out, p *Result, warnings *[]string) {
	if p.Profile == nil {
		return
	}
	if out.Profile == nil {
		cp := *p.Profile
		cp.Tools = slices.Clone(cp.Tools)
		out.Profile = &cp
		return
	}
	o := out.Profile
	if p.Profile.Name != o.Name || p.Profile.Era != o.Era || p.Profile.Version != o.Version {
		w := fmt.Sprintf("the parts spoke different profiles (%s %s %s and %s %s %s)", o.Name, o.Era, o.Version, p.Profile.Name, p.Profile.Era, p.Profile.Version)
		if !slices.Contains(*warnings, w) {
			*warnings = append(*warnings, w)
		}
	}
	o.Handshakes += p.Profile.Handshakes
	o.ServerRequestsAnswered += p.Profile.ServerRequestsAnswered
	o.CancelsSent += p.Profile.CancelsSent
}

func mergeIDReuse(out, p *Result) {
	if p.IDReuse == nil {
		return
	}
	if out.IDReuse == nil {
		out.IDReuse = &IDReuseReport{ErrorCodes: map[string]int64{}}
	}
	o, q := out.IDReuse, p.IDReuse
	o.Probes += q.Probes
	o.NoIDInFlight += q.NoIDInFlight
	o.BothAnswered += q.BothAnswered
	o.OneReply += q.OneReply
	o.NoReply += q.NoReply
	addCounts(o.ErrorCodes, q.ErrorCodes)
}

// mergeChild unites the child-process reports: every part started its own
// server, so restarts add and each exit is listed with the part it ended.
// The stderr tail shown is the last part's that has one.
func mergeChild(out, p *Result, path string) {
	if p.Child == nil {
		return
	}
	if out.Child == nil {
		out.Child = &ChildReport{Command: p.Child.Command, Exits: []string{}, StderrTail: []string{}}
	}
	o := out.Child
	o.Restarts += p.Child.Restarts
	for _, e := range p.Child.Exits {
		o.Exits = append(o.Exits, filepath.Base(path)+": "+e)
	}
	if o.StderrPath == "" {
		o.StderrPath = p.Child.StderrPath
	}
	if len(p.Child.StderrTail) > 0 {
		o.StderrTail = slices.Clone(p.Child.StderrTail)
	}
}

// mergeViolationSamples unites the parts' examples, at most
// MaxSamplesPerRule per rule and method as the aggregator keeps them.
func mergeViolationSamples(parts []*Result) map[string][]FrameSample {
	out := map[string][]FrameSample{}
	perMethod := map[[2]string]int{}
	seen := map[FrameSample]bool{}
	for _, p := range parts {
		for _, rule := range SortedKeys(p.ViolationSamples) {
			for _, s := range p.ViolationSamples[rule] {
				key := [2]string{rule, s.Method}
				if seen[s] || perMethod[key] >= MaxSamplesPerRule {
					continue
				}
				seen[s] = true
				perMethod[key]++
				out[rule] = append(out[rule], s)
			}
		}
	}
	return out
}

// mergeErrorMessages unites the parts' error messages, bounded as the
// aggregator bounds them: MaxMessagesPerCode distinct ones per code, for at
// most maxMessageCodes codes.
func mergeErrorMessages(parts []*Result) map[string][]string {
	var out map[string][]string
	for _, p := range parts {
		for _, code := range SortedKeys(p.ErrorMessages) {
			if _, ok := out[code]; !ok && len(out) >= maxMessageCodes {
				continue
			}
			if out == nil {
				out = map[string][]string{}
			}
			out[code] = unite(MaxMessagesPerCode, func(yield func(string)) {
				for _, m := range out[code] {
					yield(m)
				}
				for _, m := range p.ErrorMessages[code] {
					yield(m)
				}
			})
		}
	}
	return out
}

// unite returns the distinct strings seq yields, in order, at most limit.
func unite(limit int, seq func(yield func(string))) []string {
	out := []string{}
	seen := map[string]bool{}
	seq(func(s string) {
		if len(out) < limit && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	})
	return out
}

// mergeSeries puts the parts' series on one wall-clock grid. Its origin is
// the earliest part's start and its step the coarsest of the parts'
// intervals (each part's median point spacing), so a part that ticked more
// often has several points in one bucket. Each point lands in the bucket
// holding the middle of its interval, which tolerates parts that started up
// to half a step apart. In a bucket, counts add; gauges add across parts
// (each part measured its own share of the load: in flight, child memory,
// timed-out requests, target rate) but within one part the larger is kept,
// as when the aggregator halves its series; the oldest pending age is the
// maximum. The per-interval p50 and p99 are the largest of the parts':
// percentiles cannot be merged from points, and the largest bounds the true
// one from above (a quantile of a mixture never exceeds the largest of its
// parts'), except that each part's p99 rounds its rank to a whole reply, so
// in an interval of few replies the true p99 can be one reply further up.
// The overall percentiles, from the merged histograms, are exact. Buckets
// no part covered are zero points, so the grid stays regular. Each merged
// point ends at its bucket's end, the last at the latest end of its points.
func mergeSeries(parts []*Result, paths []string, offsets []float64) ([]Point, error) {
	step, span := 0.0, 0.0
	for i, p := range parts {
		prev := 0.0
		for j, pt := range p.Series {
			if bad(pt.T) || pt.T < prev {
				return nil, fmt.Errorf("stats: %s: series point %d has t_s %g after %g: times must be in order, from 0 to %g", paths[i], j, pt.T, prev, float64(maxFigure))
			}
			if bad(pt.TargetRate) {
				return nil, fmt.Errorf("stats: %s: series point %d has target_rate %g: it must be between 0 and %g", paths[i], j, pt.TargetRate, float64(maxFigure))
			}
			prev = pt.T
			span = max(span, offsets[i]+pt.T)
		}
		step = max(step, spacing(p.Series))
	}
	switch {
	case !slices.ContainsFunc(parts, func(p *Result) bool { return len(p.Series) > 0 }):
		return []Point{}, nil
	case step <= 0: // every interval was empty: the runs ended as they began
		step = max(span, 1)
	}
	// Parts whose start times lie far apart would make a grid of millions
	// of empty buckets: the step doubles until the series is no longer than
	// one run's can be.
	for span/step > MaxSeriesPoints {
		step *= 2
	}
	buckets := int(span/step) + 1
	merged := make([]Point, buckets)
	ends := make([]float64, buckets)
	last := 0
	for i, p := range parts {
		own := map[int]Point{} // this part's points, combined per bucket
		prev := 0.0
		for _, pt := range p.Series {
			k := min(int((offsets[i]+(prev+pt.T)/2)/step), buckets-1)
			prev = pt.T
			ends[k] = max(ends[k], offsets[i]+pt.T)
			if q, ok := own[k]; ok {
				pt = combineWithin(q, pt)
			}
			own[k] = pt
		}
		for k, pt := range own {
			merged[k] = combineAcross(merged[k], pt)
			last = max(last, k)
		}
	}
	merged = merged[:last+1]
	for k := range merged {
		merged[k].T = float64(k+1) * step
	}
	merged[last].T = ends[last]
	return merged, nil
}

// spacing is a series' typical interval: the median length of its points'
// intervals, leaving out the last, which the end of the run cuts short.
func spacing(s []Point) float64 {
	if len(s) == 0 {
		return 0
	}
	lengths := []float64{s[0].T}
	for j := 1; j < len(s)-1; j++ {
		lengths = append(lengths, s[j].T-s[j-1].T)
	}
	slices.Sort(lengths)
	return lengths[len(lengths)/2]
}

// addPointCounts adds the counted fields of q to p.
func addPointCounts(p, q Point) Point {
	p.Sent += q.Sent
	p.Answered += q.Answered
	p.OK += q.OK
	p.RPCErrors += q.RPCErrors
	p.TransportErrors += q.TransportErrors
	p.Timeouts += q.Timeouts
	p.Dropped += q.Dropped
	p.Violations += q.Violations
	p.Late += q.Late
	p.Messages += q.Messages
	p.Batches += q.Batches
	return p
}

// combineWithin merges two points of one part that fall in one bucket; q is
// the later.
func combineWithin(p, q Point) Point {
	p = addPointCounts(p, q)
	p.T = q.T
	p.InFlight = max(p.InFlight, q.InFlight)
	p.InFlightMax = max(p.InFlightMax, q.InFlightMax)
	p.ChildRSSBytes = max(p.ChildRSSBytes, q.ChildRSSBytes)
	p.ChildThreads = max(p.ChildThreads, q.ChildThreads)
	p.ChildOpenFDs = max(p.ChildOpenFDs, q.ChildOpenFDs)
	p.Server = maxGauges(p.Server, q.Server)
	p.ServerReadFailures += q.ServerReadFailures
	p.OldestPendingUs = max(p.OldestPendingUs, q.OldestPendingUs)
	p.TimedOutUnanswered = max(p.TimedOutUnanswered, q.TimedOutUnanswered)
	p.TargetRate = q.TargetRate // the schedule's rate at the bucket's end
	p.P50us = max(p.P50us, q.P50us)
	p.P99us = max(p.P99us, q.P99us)
	return p
}

// maxGauges is the larger of each server gauge in a and b, in a new map: a
// gauge either lacks (not read then) is the other's.
func maxGauges(a, b map[string]float64) map[string]float64 {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	m := make(map[string]float64, max(len(a), len(b)))
	maps.Copy(m, a)
	for k, v := range b {
		if old, ok := m[k]; !ok || v > old {
			m[k] = v
		}
	}
	return m
}

// combineAcross adds one part's point for a bucket to the other parts'.
func combineAcross(p, q Point) Point {
	p = addPointCounts(p, q)
	p.InFlight += q.InFlight
	p.InFlightMax += q.InFlightMax // the parts' peaks need not coincide: a bound
	p.ChildRSSBytes += q.ChildRSSBytes
	p.ChildThreads += q.ChildThreads
	p.ChildOpenFDs += q.ChildOpenFDs
	// The parts watched one server (its endpoint, its pid): its gauges do
	// not add up across them.
	p.Server = maxGauges(p.Server, q.Server)
	p.ServerReadFailures += q.ServerReadFailures
	p.TimedOutUnanswered += q.TimedOutUnanswered
	p.TargetRate += q.TargetRate
	p.OldestPendingUs = max(p.OldestPendingUs, q.OldestPendingUs)
	p.P50us = max(p.P50us, q.P50us)
	p.P99us = max(p.P99us, q.P99us)
	return p
}
