package capacity

import (
	"fmt"
	"time"
)

// growthPoints is how many intervals in a row the backlog must have grown
// for the stop rule to end a step: one slow interval (a pause of the
// server's collector) is no backlog.
const growthPoints = 3

// Stop is the stop rule of one step: it ends a step whose backlog keeps
// growing, so an overloaded step does not flood the server for its whole
// length. A step ends when, for growthPoints intervals in a row after the
// warm-up, the requests in flight rose and either the age of the oldest
// of them rose too, past the SLO's latency limit, or they were more than
// the step's rate times that limit (by Little's law, their mean wait is
// then past it; over HTTP/1.1 this also sees the requests queued for a
// free connection, which have no age yet). Such a step can only fail, and
// each further second of it is only more load on a server already behind.
type Stop struct {
	warmup  time.Duration
	limitUs int64
	// little is the most requests in flight whose mean wait is within the
	// limit at the step's rate.
	little float64
	rising int // intervals in a row that met the rule
	last   struct{ inFlight, oldestUs int64 }
	seen   bool
}

// NewStop is the stop rule of a step at rate (per second) whose warm-up
// lasts warmup, under an SLO whose tightest latency limit is limitUs.
func NewStop(warmup time.Duration, limitUs, rate float64) *Stop {
	return &Stop{warmup: warmup, limitUs: int64(limitUs), little: rate*limitUs/1e6 + 1}
}

// Observe takes the gauges at the end of an interval (elapsed since the
// step started, requests in flight, age of the oldest of them) and returns
// why the step should stop now, or "".
func (s *Stop) Observe(elapsed time.Duration, inFlight, oldestUs int64) string {
	prev, seen := s.last, s.seen
	s.last.inFlight, s.last.oldestUs, s.seen = inFlight, oldestUs, true
	if elapsed <= s.warmup || !seen {
		s.rising = 0
		return ""
	}
	aging := oldestUs > prev.oldestUs && oldestUs > s.limitUs
	if inFlight > prev.inFlight && (aging || float64(inFlight) > s.little) {
		s.rising++
	} else {
		s.rising = 0
	}
	if s.rising < growthPoints {
		return ""
	}
	return fmt.Sprintf("the backlog kept growing: %d requests in flight (up %d intervals in a row), the oldest waiting %s",
		inFlight, growthPoints, fmtUs(oldestUs))
}
