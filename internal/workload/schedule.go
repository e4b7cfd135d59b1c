package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Stage is one step of a load shape: over Duration the target (Rate for
// open loop, Concurrency for closed loop) moves linearly from where the
// previous stage ended (or Plan.StartRate / StartConcurrency) to the
// stage's own value, as k6's ramping executors do. A stage whose value
// equals the previous one holds the load steady.
type Stage struct {
	Duration    time.Duration
	Rate        float64
	Concurrency int
}

// validateStages checks the stages and derives the run's duration and mode
// from them.
func (c *Plan) validateStages() error {
	if len(c.Stages) == 0 {
		return nil
	}
	var total time.Duration
	anyRate, anyConc := c.StartRate > 0, c.StartConcurrency > 0
	for _, s := range c.Stages {
		anyRate = anyRate || s.Rate > 0
		anyConc = anyConc || s.Concurrency > 0
	}
	if !anyRate && !anyConc {
		return errors.New("every stage has rate 0 and concurrency 0: nothing would be sent")
	}
	openLoop := anyRate
	for i, s := range c.Stages {
		switch {
		case s.Duration <= 0:
			return fmt.Errorf("stage %d: duration must be positive", i+1)
		case s.Rate < 0 || s.Concurrency < 0 || math.IsNaN(s.Rate):
			return fmt.Errorf("stage %d: rate and concurrency must not be negative", i+1)
		case anyRate && anyConc:
			return fmt.Errorf("stage %d: stages are all rate (open loop) or all concurrency (closed loop), not both", i+1)
		case s.Rate > 10_000_000:
			return fmt.Errorf("stage %d: rate %g is above the supported 10,000,000 req/s", i+1, s.Rate)
		}
		total += s.Duration
	}
	if c.Rate > 0 || c.Concurrency > 0 {
		return fmt.Errorf("give stages or a steady %s/%s, not both", c.Name(keyRate), c.Name(keyConcurrency))
	}
	c.Duration = total
	if openLoop {
		c.stagedOpen = true
		return nil
	}
	peak := c.StartConcurrency
	for _, s := range c.Stages {
		peak = max(peak, s.Concurrency)
	}
	c.Concurrency = peak // sizes the token pool; the controller follows the stages
	c.stagedClosed = true
	return nil
}

// cutStages ends p's stages at d, the last one at the load it had reached
// by then, so that the load follows the same course up to d. It reports
// false, changing nothing, when the stages end before d.
func (p *Plan) cutStages(d time.Duration) bool {
	prevRate, prevConc := p.StartRate, float64(p.StartConcurrency)
	var elapsed time.Duration
	for i, st := range p.Stages {
		if elapsed+st.Duration >= d {
			if rem := d - elapsed; rem < st.Duration {
				x := rem.Seconds() / st.Duration.Seconds()
				st.Rate = prevRate + (st.Rate-prevRate)*x
				st.Concurrency = int(math.Round(prevConc + (float64(st.Concurrency)-prevConc)*x))
				st.Duration = rem
			}
			p.Stages = append(p.Stages[:i:i], st)
			return true
		}
		elapsed += st.Duration
		prevRate, prevConc = st.Rate, float64(st.Concurrency)
	}
	return false
}

// segment is a piece of the open-loop schedule on which the rate is linear:
// rate(start+x) = a + b·x for x in [0, dur), and the cumulative arrivals
// before it are cum.
type segment struct {
	start, dur float64 // seconds
	a, b       float64 // requests/s, requests/s²
	cum        float64
}

// Schedule maps "the n-th arrival" to its intended time: the time t at which
// the integral of the rate reaches s_n. s_n = n-1 for uniform arrivals
// (first at 0, then every 1/rate), or a sum of Exp(1) draws for Poisson
// arrivals, which makes inter-arrival times exponential at the current rate.
type Schedule struct {
	segs    []segment
	end     float64 // seconds
	total   float64 // arrivals in the whole schedule (for the target rate)
	poisson *rand.Rand
	s       float64 // the integral value of the next arrival
	step    float64 // evenly spaced: how far s moves per arrival (n for shard i/n)
}

// NewSchedule returns the open-loop schedule of p (which Validate has
// checked), from its first arrival.
func NewSchedule(c *Plan) *Schedule {
	sc := &Schedule{step: 1}
	// Evenly spaced arrivals of shard i/n are the whole run's arrivals
	// i-1, i-1+n, ...: the schedule follows the whole run's rate and steps
	// n at a time, so every shard computes its instants exactly as one
	// instance would. Poisson shards draw their own arrivals at 1/n of it.
	mult := 1.0
	if c.Shard.Sharded() && !c.Poisson {
		mult = float64(c.Shard.Count)
		sc.s, sc.step = float64(c.Shard.Index-1), mult
	}
	if len(c.Stages) == 0 {
		d := c.Duration.Seconds()
		sc.segs = []segment{{dur: d, a: c.Rate * mult}}
		sc.end, sc.total = d, c.Rate*mult*d
	} else {
		prev, t, cum := c.StartRate*mult, 0.0, 0.0
		for _, st := range c.Stages {
			d := st.Duration.Seconds()
			rate := st.Rate * mult
			seg := segment{start: t, dur: d, a: prev, b: (rate - prev) / d, cum: cum}
			sc.segs = append(sc.segs, seg)
			cum += (prev + rate) / 2 * d
			t += d
			prev = rate
		}
		sc.end, sc.total = t, cum
	}
	sc.total /= mult
	if c.Poisson {
		// Shards draw independent arrivals: the sum of n Poisson
		// processes at rate R/n is one at rate R.
		sc.poisson = rand.New(rand.NewPCG(c.Seed, 0x5851f42d4c957f2d+uint64(c.Shard.Index)))
		sc.s = sc.poisson.ExpFloat64()
	}
	return sc
}

// Next returns the intended time of the next arrival, in nanoseconds from
// the start, or false when the schedule has ended.
func (sc *Schedule) Next() (int64, bool) {
	t, ok := sc.at(sc.s)
	if !ok {
		return 0, false
	}
	if sc.poisson != nil {
		sc.s += sc.poisson.ExpFloat64()
	} else {
		sc.s += sc.step
	}
	return int64(t * 1e9), true
}

// at inverts the cumulative rate: the time at which s arrivals are due.
func (sc *Schedule) at(s float64) (float64, bool) {
	for _, g := range sc.segs {
		inSeg := (2*g.a + g.b*g.dur) / 2 * g.dur // arrivals within the segment
		if s >= g.cum+inSeg {
			continue
		}
		u := s - g.cum
		var x float64
		switch {
		case u <= 0:
		case g.b == 0:
			x = u / g.a
		default:
			// (b/2)x² + a·x = u, in the form that stays exact as b → 0.
			x = 2 * u / (g.a + math.Sqrt(math.Max(0, g.a*g.a+2*g.b*u)))
		}
		if x >= g.dur {
			continue // rounding at the segment's end
		}
		return g.start + x, true
	}
	return 0, false
}

// RateAt is the rate the schedule asks of this instance at t seconds (0
// past its end).
func (sc *Schedule) RateAt(t float64) float64 {
	for _, g := range sc.segs {
		if t >= g.start && t < g.start+g.dur {
			return (g.a + g.b*(t-g.start)) / sc.step
		}
	}
	return 0
}

// TargetRate is the average rate the schedule asks for.
func (sc *Schedule) TargetRate() float64 {
	if sc.end <= 0 {
		return 0
	}
	return sc.total / sc.end
}

// ConcurrencyAt is the closed-loop target of p's stages at elapsed time t.
func ConcurrencyAt(c *Plan, t time.Duration) int {
	prev := float64(c.StartConcurrency)
	for _, st := range c.Stages {
		if t < st.Duration {
			x := t.Seconds() / st.Duration.Seconds()
			return int(math.Round(prev + (float64(st.Concurrency)-prev)*x))
		}
		t -= st.Duration
		prev = float64(st.Concurrency)
	}
	return int(prev)
}
