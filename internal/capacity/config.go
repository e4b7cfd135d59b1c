// Package capacity finds the highest rate a server sustains under a
// service-level objective: open-loop steps at rising rates until one
// breaks the SLO, a bisection between the last good rate and the first bad
// one, and a confirming run. It judges each step (whose failure it was:
// the server's, the load generator's, the machine's), ends a step early
// once its backlog can only grow, and leaves running a step to its caller
// (rpcload capacity runs the engine), so the search itself is tested
// without a server.
package capacity

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/rpcload/rpcload/internal/threshold"
)

// Config is what a search looks for and how.
type Config struct {
	// SLO holds the conditions every step must meet (thresholds such as
	// p99<20ms); at least one must bound a latency (LatencyBound).
	SLO []threshold.Threshold
	// MaxErrorRate bounds the step's error rate (threshold error_rate),
	// as a fraction.
	MaxErrorRate float64
	StartRate    float64       // the first step's rate, per second
	MaxRate      float64       // the search offers no more than this (0: no bound)
	Growth       float64       // factor between growing steps (> 1)
	Precision    float64       // the bisection stops at (bad − good) / good ≤ Precision
	Step         time.Duration // measured length of a step
	Warmup       time.Duration // warm-up before each step's measured part (not recorded)
	Confirm      time.Duration // measured length of the confirming run
	// ConfirmTries bounds how many times the answer is lowered by
	// Precision when its confirming run fails.
	ConfirmTries int
	// Conns is the number of connections a step uses and Multiplexed
	// whether each carries many requests at once (streams, HTTP/2): with
	// one request per connection (HTTP/1.1), a load generator whose every
	// connection is waiting cannot keep its schedule.
	Conns       int
	Multiplexed bool
	// SharedProcess says the server runs inside rpcload's own process
	// (the embedded server): its CPU time is the load generator's too.
	SharedProcess bool
	// CPUs is how many CPUs the machine has (runtime.NumCPU).
	CPUs int
}

// Defaults of the search.
const (
	DefaultStartRate    = 100
	DefaultGrowth       = 2
	DefaultPrecision    = 0.05
	DefaultConfirmTries = 3
)

// Validate checks c and fills in its defaults. Errors name the setting as
// rpcload capacity's flags do.
func (c *Config) Validate() error {
	if c.Growth == 0 {
		c.Growth = DefaultGrowth
	}
	if c.Precision == 0 {
		c.Precision = DefaultPrecision
	}
	if c.StartRate == 0 {
		c.StartRate = DefaultStartRate
	}
	if c.ConfirmTries == 0 {
		c.ConfirmTries = DefaultConfirmTries
	}
	if c.CPUs < 1 {
		c.CPUs = 1
	}
	if c.Conns < 1 {
		c.Conns = 1
	}
	switch {
	case len(c.SLO) == 0:
		return errors.New("--slo is required: a latency bound such as 'p99<20ms'")
	case c.LatencyLimitUs() == 0:
		return fmt.Errorf("--slo needs a latency bound such as 'p99<20ms' (an upper bound on p50, p90, p95, p99, p99.9, mean or max); got %s", c.sloList())
	case !(c.MaxErrorRate >= 0 && c.MaxErrorRate < 1):
		return fmt.Errorf("--max-error-rate must be a fraction from 0 up to 1, e.g. 0.1%% (got %g)", c.MaxErrorRate)
	case !(c.StartRate > 0) || math.IsInf(c.StartRate, 1):
		return fmt.Errorf("--start-rate must be positive (got %g)", c.StartRate)
	case c.MaxRate != 0 && !(c.MaxRate >= c.StartRate):
		return fmt.Errorf("--max-rate (%g) must not be below --start-rate (%g)", c.MaxRate, c.StartRate)
	case !(c.Growth > 1) || c.Growth > 100:
		return fmt.Errorf("--growth must be above 1 and at most 100 (got %g)", c.Growth)
	case !(c.Precision > 0 && c.Precision < 1):
		return fmt.Errorf("--precision must be between 0 and 1, e.g. 5%% (got %g)", c.Precision)
	case c.Step <= 0:
		return fmt.Errorf("--step-duration must be positive (got %s)", c.Step)
	case c.Warmup < 0:
		return fmt.Errorf("--warmup must not be negative (got %s)", c.Warmup)
	case c.Confirm < 0:
		return fmt.Errorf("--confirm-duration must not be negative (got %s)", c.Confirm)
	case c.ConfirmTries < 1:
		return fmt.Errorf("confirm tries must be at least 1 (got %d)", c.ConfirmTries)
	}
	return nil
}

// LatencyLimitUs is the tightest latency bound of the SLO in
// microseconds, 0 when it has none: the stop rule and the lag check
// measure against it.
func (c *Config) LatencyLimitUs() float64 {
	var limit float64
	for _, t := range c.SLO {
		if l, ok := t.LatencyBound(); ok && (limit == 0 || l < limit) {
			limit = l
		}
	}
	return limit
}

// Conditions are the SLO's expressions as written, the error-rate bound
// last, as the report lists them.
func (c *Config) Conditions() []string {
	var out []string
	for _, t := range c.SLO {
		out = append(out, t.String())
	}
	return append(out, "error_rate<="+strconv.FormatFloat(c.MaxErrorRate*100, 'g', 6, 64)+"%")
}

func (c *Config) sloList() string {
	s := ""
	for i, t := range c.SLO {
		if i > 0 {
			s += ", "
		}
		s += strconv.Quote(t.String())
	}
	return s
}
