// Package rounds compares servers by running the same load against each of
// them in turn, several rounds over, and judging the ratios of their figures
// against the noise the rounds themselves show.
//
// One round runs every target once. Within a round the targets take turns
// in an order that alternates: targets in the order given in odd rounds
// (A B C), reversed in even rounds (C B A). With two targets the runs go
// A B B A A B ..., so a drift over time (a machine warming up, a cache
// filling, a neighbour's load) weighs on both targets alike instead of
// always favouring the one that runs first.
//
// Per run it records answered requests per second, corrected p50 and p99
// latency and the error rate. For every target but the first and every
// figure, each complete round gives a ratio to the first target's figure of
// the same round; the ratios' median, range (min..max) and median absolute
// deviation summarise them. The noise rule: with at least MinRounds ratios,
// the difference is within the noise when the ratios' range includes 1.0
// (some round went the other way, or had none), when |median - 1| is
// smaller than the first target's own relative spread over the same rounds,
// (max - min) / median of its figure (the rounds disagree with themselves
// by more than the targets disagree with each other), or when |median - 1|
// is below MinEffect (a difference the measurement cannot resolve: a rate
// an open loop fixes, latencies a histogram bucket apart). Otherwise it is a
// real difference. With fewer ratios the noise cannot be judged, and the
// verdict says so.
package rounds

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
)

// MinRounds is the fewest ratios the noise rule judges: with two, a range
// says nothing about how the next round would fall.
const MinRounds = 3

// MinEffect is the smallest relative difference the noise rule calls real:
// 1%, ten times the resolution of the latency histograms (three
// significant digits).
const MinEffect = 0.01

// OrderDescription says how Order arranges a round, for reports.
const OrderDescription = "alternating: the targets in the order given in odd rounds, reversed in even rounds"

// Order returns the targets' indexes in the order they run in round (1-based).
func Order(targets, round int) []int {
	order := make([]int, targets)
	for i := range order {
		order[i] = i
	}
	if round%2 == 0 {
		slices.Reverse(order)
	}
	return order
}

// Label names target i in reports and verdicts: A, B, C ... (T27 and on
// past Z).
func Label(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprintf("T%d", i+1)
}

// RunFunc runs one target (an index into the targets) in one round
// (1-based) and returns its result; a run that ctx cut short returns its
// result marked interrupted. An error means the run did not happen.
type RunFunc func(ctx context.Context, target, round int) (*stats.Result, error)

// Run runs every target once per round for rounds rounds, in the order
// Order gives, and judges the ratios. It returns the report, every run's
// result in the order they ran, and an error if a run failed (the report
// then holds what was measured before). When ctx is cancelled, the run in
// progress finishes (cut short, as the engine does on an interrupt) and no
// other starts: the report is marked interrupted. clock stamps the runs.
func Run(ctx context.Context, targets []string, rounds int, runOne RunFunc, clock func() time.Time) (*stats.RoundsReport, []*stats.Result, error) {
	switch {
	case len(targets) < 2:
		return nil, nil, fmt.Errorf("rounds need at least two targets (got %d)", len(targets))
	case rounds < 1:
		return nil, nil, fmt.Errorf("rounds must be at least 1 (got %d)", rounds)
	}
	rep := &stats.RoundsReport{Targets: append([]string(nil), targets...), Rounds: rounds, Order: OrderDescription,
		Runs: []stats.RoundRun{}, Ratios: []stats.RoundsRatio{}}
	var results []*stats.Result
	var err error
rounds:
	for round := 1; round <= rounds; round++ {
		for _, target := range Order(len(targets), round) {
			if ctx.Err() != nil {
				rep.Interrupted = true
				break rounds
			}
			started := clock()
			res, runErr := runOne(ctx, target, round)
			if runErr != nil {
				err = fmt.Errorf("round %d, target %s (%s): %w", round, Label(target), targets[target], runErr)
				break rounds
			}
			run := Figures(res)
			run.Round, run.Target = round, target
			run.StartedAt = started.UTC().Format(time.RFC3339Nano)
			run.WallS = clock().Sub(started).Seconds()
			rep.Runs = append(rep.Runs, run)
			results = append(results, res)
			if res.Interrupted || ctx.Err() != nil {
				rep.Interrupted = true
				break rounds
			}
		}
	}
	judge(rep)
	return rep, results, err
}

// Figures reads the figures a round compares off one run's result.
func Figures(res *stats.Result) stats.RoundRun {
	q := res.Requests
	run := stats.RoundRun{Interrupted: res.Interrupted, P50us: res.Latency.Corrected.P50us, P95us: res.Latency.Corrected.P95us, P99us: res.Latency.Corrected.P99us}
	if res.DurationS > 0 {
		run.AnsweredPS = float64(q.Answered) / res.DurationS
	}
	if q.Sent > 0 {
		// The failures rpcload compare counts in its error rate.
		failed := q.RPCErrors + q.InvalidReplies + q.TransportErrors + q.Timeouts + q.Leaked
		run.ErrorRate = float64(failed) / float64(q.Sent)
	}
	return run
}

// figure is one compared figure: how to read it, and how a verdict says it.
type figure struct {
	name  string
	value func(r stats.RoundRun) float64
	// say phrases "<target> ... <ratio> <base>'s ..." for a verdict.
	say func(target, base, ratio string) string
}

var figures = []figure{
	{"answered_per_s", func(r stats.RoundRun) float64 { return r.AnsweredPS },
		func(t, b, x string) string { return fmt.Sprintf("%s answers %s %s's rate", t, x, b) }},
	{"p50", func(r stats.RoundRun) float64 { return float64(r.P50us) },
		func(t, b, x string) string { return fmt.Sprintf("%s's p50 latency is %s %s's", t, x, b) }},
	{"p95", func(r stats.RoundRun) float64 { return float64(r.P95us) },
		func(t, b, x string) string { return fmt.Sprintf("%s's p95 latency is %s %s's", t, x, b) }},
	{"p99", func(r stats.RoundRun) float64 { return float64(r.P99us) },
		func(t, b, x string) string { return fmt.Sprintf("%s's p99 latency is %s %s's", t, x, b) }},
	{"error_rate", func(r stats.RoundRun) float64 { return r.ErrorRate },
		func(t, b, x string) string { return fmt.Sprintf("%s's error rate is %s %s's", t, x, b) }},
}

// judge fills rep.Completed and rep.Ratios from rep.Runs.
func judge(rep *stats.RoundsReport) {
	n := len(rep.Targets)
	// byRound holds each round's runs by target; a round is complete when
	// every target finished its run.
	byRound := map[int][]*stats.RoundRun{}
	for i := range rep.Runs {
		r := &rep.Runs[i]
		if byRound[r.Round] == nil {
			byRound[r.Round] = make([]*stats.RoundRun, n)
		}
		if !r.Interrupted {
			byRound[r.Round][r.Target] = r
		}
	}
	var complete [][]*stats.RoundRun
	for round := 1; round <= rep.Rounds; round++ {
		runs := byRound[round]
		if runs != nil && !slices.Contains(runs, nil) {
			complete = append(complete, runs)
		}
	}
	rep.Completed = len(complete)
	for target := 1; target < n; target++ {
		for _, f := range figures {
			rep.Ratios = append(rep.Ratios, judgeFigure(f, target, complete))
		}
	}
}

// judgeFigure applies the noise rule to one figure of one target.
func judgeFigure(f figure, target int, complete [][]*stats.RoundRun) stats.RoundsRatio {
	rr := stats.RoundsRatio{Target: target, Figure: f.name}
	var ratios, bases []float64
	bothZero, overZero := 0, 0
	for _, runs := range complete {
		base, v := f.value(*runs[0]), f.value(*runs[target])
		switch {
		case base > 0:
			ratios = append(ratios, v/base)
		case v == 0 && f.name == "error_rate":
			ratios = append(ratios, 1) // neither had errors: the same
			bothZero++
		default:
			overZero++ // no ratio to a zero
			continue
		}
		bases = append(bases, base)
	}
	t, b := Label(target), Label(0)
	rr.Rounds = len(ratios)
	unrated := ""
	if overZero > 0 {
		unrated = fmt.Sprintf("; in %s %s's %s was zero and %s's not, which gives no ratio", roundsText(overZero), b, figureText(f.name), t)
	}
	switch {
	case len(complete) == 0:
		rr.Verdict = fmt.Sprintf("%s: no complete round to compare %s with %s", figureText(f.name), t, b)
		return rr
	case len(ratios) == 0:
		rr.Verdict = fmt.Sprintf("%s: no ratio of %s to %s, whose figure was zero in every complete round", figureText(f.name), t, b)
		return rr
	case bothZero == len(ratios):
		rr.Median, rr.Min, rr.Max, rr.WithinNoise, rr.BothZero = 1, 1, 1, true, true
		rr.Verdict = fmt.Sprintf("neither %s nor %s had errors (%s)", b, t, roundsText(len(ratios)))
		return rr
	}
	rr.Median = median(ratios)
	rr.Min, rr.Max = slices.Min(ratios), slices.Max(ratios)
	dev := make([]float64, len(ratios))
	for i, r := range ratios {
		dev[i] = math.Abs(r - rr.Median)
	}
	rr.MAD = median(dev)
	if m := median(bases); m > 0 {
		rr.BaseSpread = (slices.Max(bases) - slices.Min(bases)) / m
	}
	claim := f.say(t, b, ratioText(rr.Median))
	if len(ratios) < MinRounds {
		rr.Verdict = fmt.Sprintf("%s (%s%s): too few rounds to judge the noise (%d or more needed)", claim, roundsText(len(ratios)), unrated, MinRounds)
		return rr
	}
	rangeText := fmt.Sprintf("median of %s, range %s-%s", roundsText(len(ratios)), ratioText(rr.Min), ratioText(rr.Max))
	effect := math.Abs(rr.Median - 1)
	rr.WithinNoise = (rr.Min <= 1 && 1 <= rr.Max) || effect < rr.BaseSpread || effect < MinEffect
	if rr.WithinNoise {
		rr.Verdict = fmt.Sprintf("within the noise: %s (%s; %s's own rounds vary by %.0f%%%s)", claim, rangeText, b, 100*rr.BaseSpread, unrated)
	} else {
		rr.Verdict = fmt.Sprintf("%s (%s%s): a real difference", claim, rangeText, unrated)
	}
	return rr
}

func figureText(name string) string {
	switch name {
	case "answered_per_s":
		return "answered/s"
	case "error_rate":
		return "error rate"
	}
	return name
}

func roundsText(n int) string {
	if n == 1 {
		return "1 round"
	}
	return fmt.Sprintf("%d rounds", n)
}

func ratioText(x float64) string { return fmt.Sprintf("%.2fx", x) }

// median of xs (not empty); xs is left as it was.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}
