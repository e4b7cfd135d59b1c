package threshold

import "strings"

// LatencyBound reports whether t is an upper bound on a corrected-latency
// figure with a number limit (p99<20ms, p99.9{method=get}<=1s), and that
// limit in microseconds: the kind of condition a latency SLO is made of.
func (t Threshold) LatencyBound() (limitUs float64, ok bool) {
	i, known := figureIndex[t.left.figure]
	if !known || figureDefs[i].kind != kindDuration || t.right.figure != "" || strings.Contains(t.left.figure, "_") {
		return 0, false
	}
	if t.op != opLT && t.op != opLE {
		return 0, false
	}
	return t.scaledLiteral(kindDuration), true
}

// Service is t with its corrected-latency figure replaced by the same
// statistic of service latency (p99 → service_p99), which leaves out the
// load generator's lag: when t fails and Service passes, the generator's
// lateness, not the server, broke the bound. ok is false when t is not a
// LatencyBound.
func (t Threshold) Service() (s Threshold, ok bool) {
	if _, ok := t.LatencyBound(); !ok {
		return t, false
	}
	s = t
	s.left.figure = "service_" + t.left.figure
	s.src = ""
	return s, true
}
