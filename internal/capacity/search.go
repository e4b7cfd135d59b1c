package capacity

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
)

// The phases of a search.
const (
	PhaseGrow    = "grow"
	PhaseBisect  = "bisect"
	PhaseConfirm = "confirm"
)

// LimitedBy values besides the blames: the search reached --max-rate, or
// was interrupted.
const (
	LimitedByMaxRate     = "max_rate"
	LimitedByInterrupted = "interrupted"
)

// Step is one run the search asks for: an open loop at Rate for Warmup
// (not recorded) and then Duration (measured).
type Step struct {
	Phase    string
	Rate     float64
	Duration time.Duration
	Warmup   time.Duration
}

// Runner runs one step. An error means the search cannot go on (the
// target went away); an interrupted run comes back as a Result with
// Interrupted set.
type Runner func(ctx context.Context, s Step) (Outcome, error)

// search is the state of one search.
type search struct {
	c      *Config
	run    Runner
	onStep func(stats.CapacityStep)
	rep    *stats.CapacityReport
	body   *stats.Result // the result the report travels in
	good   float64       // highest rate that met the SLO (0: none yet)
	bad    float64       // lowest rate whose failure was the server's (0: none yet)
	// goodResult is the result of the step at good, the body when no
	// confirming run passes.
	goodResult *stats.Result
	baseline   int64 // the first passing step's median service time, µs
}

// Search finds the highest rate that meets c's SLO, running each step
// through run and telling onStep (if not nil) each judged step. It
// returns the report and the result it belongs in: the passing confirming
// run's, else the step at the answer's, else the last step's. An error
// from run ends the search; what was found so far comes with it.
func Search(ctx context.Context, c Config, run Runner, onStep func(stats.CapacityStep)) (*stats.CapacityReport, *stats.Result, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	s := &search{c: &c, run: run, onStep: onStep, rep: &stats.CapacityReport{
		SLO: c.Conditions(), LatencyLimitUs: int64(c.LatencyLimitUs()), StartRate: c.StartRate, MaxRate: c.MaxRate,
		Growth: c.Growth, Precision: c.Precision, StepS: c.Step.Seconds(), WarmupS: c.Warmup.Seconds(), ConfirmS: c.Confirm.Seconds(),
	}}
	err := s.find(ctx)
	s.finish()
	return s.rep, s.body, err
}

// find runs the growing steps, the bisection and the confirmation.
func (s *search) find(ctx context.Context) error {
	c := s.c
	rate := c.StartRate
	for {
		if c.MaxRate > 0 {
			rate = min(rate, c.MaxRate)
		}
		st, stop, err := s.step(ctx, PhaseGrow, rate, c.Step)
		if err != nil || stop {
			return err
		}
		if !st.Pass {
			break
		}
		if c.MaxRate > 0 && rate >= c.MaxRate {
			s.rep.LimitedBy = LimitedByMaxRate
			return s.confirm(ctx)
		}
		rate *= c.Growth
	}
	if s.rep.LimitedBy != "" || s.good == 0 {
		return s.confirm(ctx)
	}
	for (s.bad-s.good)/s.good > c.Precision {
		st, stop, err := s.step(ctx, PhaseBisect, midpoint(s.good, s.bad), c.Step)
		if err != nil || stop {
			return err
		}
		if !st.Pass && s.rep.LimitedBy != "" {
			break // not the server's failure: the bisection cannot narrow it
		}
	}
	return s.confirm(ctx)
}

// confirm runs the answer again for the confirming length; when that
// fails because of the server, the answer is lowered by the precision and
// confirmed again, a few times at most.
func (s *search) confirm(ctx context.Context) error {
	c := s.c
	if s.good == 0 || c.Confirm == 0 {
		return nil
	}
	for range c.ConfirmTries {
		at := s.good
		st, stop, err := s.step(ctx, PhaseConfirm, at, c.Confirm)
		if err != nil || stop {
			return err
		}
		if st.Pass {
			s.rep.Confirmed = true
			return nil
		}
		if st.Blame != BlameServer {
			return nil
		}
		s.good = at * (1 - c.Precision)
		s.goodResult = nil
	}
	return nil
}

// step runs and judges one step, and moves the bounds: a pass raises good,
// the server's failure lowers bad, any other failure ends the search
// (LimitedBy). stop is true when the search must end now (interrupted).
func (s *search) step(ctx context.Context, phase string, rate float64, d time.Duration) (stats.CapacityStep, bool, error) {
	o, err := s.run(ctx, Step{Phase: phase, Rate: rate, Duration: d, Warmup: s.c.Warmup})
	if o.Result == nil {
		if err == nil {
			err = fmt.Errorf("capacity step at %.4g/s gave no result", rate)
		}
		return stats.CapacityStep{}, true, err
	}
	o.Step = Step{Phase: phase, Rate: rate, Duration: d, Warmup: s.c.Warmup}
	if s.rep.Unit == "" {
		s.rep.Unit = stats.RateUnit(o.Result.Requests.Messages, o.Result.Requests.Batches)
	}
	s.body = o.Result
	if o.Result.Interrupted {
		s.rep.LimitedBy = LimitedByInterrupted
		return stats.CapacityStep{}, true, err
	}
	o.BaselineServiceUs = s.baseline
	st := s.c.Judge(o)
	if st.Pass && s.baseline == 0 {
		s.baseline = max(st.ServiceP50us, 1)
	}
	s.rep.Steps = append(s.rep.Steps, st)
	if s.onStep != nil {
		s.onStep(st)
	}
	switch {
	case st.Pass:
		if rate > s.good || phase == PhaseConfirm {
			s.good, s.goodResult = rate, o.Result
		}
	case st.Blame == BlameServer:
		if s.bad == 0 || rate < s.bad {
			s.bad = rate
		}
	default:
		s.rep.LimitedBy = st.Blame
	}
	return st, err != nil, err
}

// midpoint is a rate between good and bad: their mean, rounded to three
// significant digits when that keeps it strictly between them, so the
// answer reads 2,100 rather than 2,093.75.
func midpoint(good, bad float64) float64 {
	mid := (good + bad) / 2
	scale := math.Pow(10, math.Floor(math.Log10(mid))-2)
	if r := math.Round(mid/scale) * scale; r > good && r < bad {
		return r
	}
	return mid
}

// finish sets the answer, the body and the verdict.
func (s *search) finish() {
	r := s.rep
	r.Rate = s.good
	switch {
	case r.Confirmed:
		// The body is the confirming run's, the last one.
	case s.goodResult != nil:
		s.body = s.goodResult
	}
	if r.LimitedBy == "" && s.bad > 0 {
		r.LimitedBy = BlameServer
	}
	r.Verdict = s.verdict()
}

// verdict says the answer in one sentence.
func (s *search) verdict() string {
	r := s.rep
	slo := strings.Join(r.SLO, ", ")
	unit := r.Unit
	if unit == "" {
		unit = "req/s"
	}
	rate := func(v float64) string { return stats.FormatRate(v) + " " + unit }
	var last stats.CapacityStep
	if n := len(r.Steps); n > 0 {
		last = r.Steps[n-1]
	}
	lastFail := ""
	for i := len(r.Steps) - 1; i >= 0; i-- {
		if !r.Steps[i].Pass {
			lastFail = strings.Join(r.Steps[i].Reasons, "; ")
			break
		}
	}
	if r.Rate == 0 {
		switch {
		case r.LimitedBy == LimitedByInterrupted:
			return "interrupted before any step met the SLO"
		case len(r.Steps) == 0:
			return "no step ran"
		case last.Blame == BlameServer:
			return fmt.Sprintf("breaks the SLO (%s) already at the start rate, %s: %s", slo, rate(last.Offered), lastFail)
		}
		return fmt.Sprintf("no answer: already at the start rate, %s, %s", rate(last.Offered), lastFail)
	}
	claim := fmt.Sprintf("sustains %s with %s", rate(r.Rate), slo)
	if r.LimitedBy != BlameServer {
		claim = fmt.Sprintf("sustains at least %s with %s", rate(r.Rate), slo)
	}
	if r.Confirmed {
		c := last
		claim += fmt.Sprintf(" (confirmed %s: p99 %s)", time.Duration(c.DurationS*float64(time.Second)).Round(100*time.Millisecond), fmtUs(c.Latency.P99us))
	} else if s.c.Confirm > 0 && r.LimitedBy != LimitedByInterrupted {
		claim += " (not confirmed: the confirming runs failed)"
	}
	switch r.LimitedBy {
	case BlameServer:
		return claim + fmt.Sprintf("; at %s the server broke it", rate(s.bad))
	case LimitedByMaxRate:
		return claim + ": the search stopped at --max-rate"
	case LimitedByInterrupted:
		return claim + "; the search was interrupted"
	}
	return claim + "; above it the limit was not the server: " + lastFail
}
