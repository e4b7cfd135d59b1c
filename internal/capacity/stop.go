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
// warm-up, the requests in flight and the age of the oldest of them both
// rose, and that age was past the SLO's latency limit: such a step can
// only fail, and each further second of it is only more load on a server
// already behind.
type Stop struct {
	warmup  time.Duration
	limitUs int64
	rising  int // intervals in a row that met the rule
	last    struct{ inFlight, oldestUs int64 }
	seen    bool
}

// NewStop is the stop rule of a step whose warm-up lasts warmup, under an
// SLO whose tightest latency limit is limitUs.
func NewStop(warmup time.Duration, limitUs float64) *Stop {
	return &Stop{warmup: warmup, limitUs: int64(limitUs)}
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
	if inFlight > prev.inFlight && oldestUs > prev.oldestUs && oldestUs > s.limitUs {
		s.rising++
	} else {
		s.rising = 0
	}
	if s.rising < growthPoints {
		return ""
	}
	return fmt.Sprintf("the backlog kept growing: %d requests in flight, the oldest waiting %s, both up %d intervals in a row",
		inFlight, fmtUs(oldestUs), growthPoints)
}
