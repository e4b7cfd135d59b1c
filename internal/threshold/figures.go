// Package threshold reads CI gate expressions such as `p99<50ms` or
// `error_rate<0.1%`, judges a run's result against them and writes the
// verdicts, with the protocol rules, as JUnit XML for CI servers.
package threshold

import (
	"fmt"
	"strings"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/stats"
)

// Figure describes one measurable figure a threshold can name.
type Figure struct {
	Name      string // as written in an expression, e.g. "p99" or "error_rate"
	Unit      string // "duration", "fraction", "per second" or "count": what the right-hand side is written in
	PerMethod bool   // whether {method=NAME} applies to it
	Meaning   string // one line, for tables in help and docs
}

// kind is the dimension of a figure; a limit must have the same one.
type kind uint8

const (
	kindDuration kind = iota // microseconds, written with a time unit
	kindFraction             // 0..1, written as a plain number or with %
	kindRate                 // per second, a plain number
	kindCount                // a plain number
	kindNumber               // a plain number, of any magnitude (a growth per request)
)

func (k kind) String() string {
	return [...]string{"duration", "fraction", "per second", "count", "number"}[k]
}

// phrase names a kind in messages ("p99 is a duration").
func (k kind) phrase() string {
	return [...]string{"a duration", "a fraction", "a rate per second", "a count", "a number"}[k]
}

// scope is the part of a result one operand looks at: the whole run, or one
// method of it.
type scope struct {
	res        *stats.Result
	method     string // "" = all methods
	requests   stats.Requests
	violations map[string]uint64
	latency    stats.LatencySet
	rule       string // violations{rule=...}; "" = every rule but the warnings
	gauge      string // server.NAME.*: the gauge
	fate       string // server.NAME.per_request{fate=...}; "" = every request
}

// figureDef is a Figure with what it takes to measure it. value returns the
// figure, or why it cannot be measured (a non-empty reason).
type figureDef struct {
	Figure
	kind  kind
	value func(s *scope) (float64, string)
}

var (
	figureDefs []figureDef
	// figureIndex maps every name an expression may use, aliases included,
	// to its definition's index in figureDefs.
	figureIndex = map[string]int{}
)

func init() {
	histograms := []struct {
		prefix, meaning, empty string
		pick                   func(l *stats.LatencySet) *stats.Latency
	}{
		{"", "corrected latency (reply time − intended send time)", "no replies",
			func(l *stats.LatencySet) *stats.Latency { return &l.Corrected }},
		{"service_", "service latency (reply time − actual write)", "no replies",
			func(l *stats.LatencySet) *stats.Latency { return &l.Service }},
		{"lag_", "lag (actual write − intended send time)", "no requests sent",
			func(l *stats.LatencySet) *stats.Latency { return &l.Lag }},
	}
	stat := []struct {
		name, alias, what string
		get               func(l *stats.Latency) float64
	}{
		{"p50", "", "50th percentile (median)", func(l *stats.Latency) float64 { return float64(l.P50us) }},
		{"p90", "", "90th percentile", func(l *stats.Latency) float64 { return float64(l.P90us) }},
		{"p95", "", "95th percentile", func(l *stats.Latency) float64 { return float64(l.P95us) }},
		{"p99", "", "99th percentile", func(l *stats.Latency) float64 { return float64(l.P99us) }},
		{"p99.9", "p999", "99.9th percentile", func(l *stats.Latency) float64 { return float64(l.P999us) }},
		{"min", "", "smallest", func(l *stats.Latency) float64 { return float64(l.MinUs) }},
		{"mean", "", "mean", func(l *stats.Latency) float64 { return l.MeanUs }},
		{"max", "", "largest", func(l *stats.Latency) float64 { return float64(l.MaxUs) }},
	}
	for _, h := range histograms {
		for _, st := range stat {
			meaning := h.meaning + ", " + st.what
			if st.alias != "" {
				meaning += " (alias " + h.prefix + st.alias + ")"
			}
			value := func(s *scope) (float64, string) {
				l := h.pick(&s.latency)
				if l.Count == 0 {
					if s.method != "" {
						return 0, s.method + " had " + h.empty
					}
					return 0, "the run had " + h.empty
				}
				return st.get(l), ""
			}
			add(figureDef{Figure{h.prefix + st.name, "", true, meaning}, kindDuration, value})
			if st.alias != "" {
				figureIndex[h.prefix+st.alias] = len(figureDefs) - 1
			}
		}
	}

	perSecond := func(n func(q *stats.Requests) uint64) func(s *scope) (float64, string) {
		return func(s *scope) (float64, string) {
			if s.res.DurationS <= 0 {
				return 0, "the result has no sending time (duration_s is 0)"
			}
			return float64(n(&s.requests)) / s.res.DurationS, ""
		}
	}
	answered := func(q *stats.Requests) uint64 { return q.Answered }
	add(figureDef{Figure{"rps", "", true, "requests answered per second of sending"}, kindRate, perSecond(answered)})
	add(figureDef{Figure{"answered_rate", "", true, "the same as rps"}, kindRate, perSecond(answered)})
	add(figureDef{Figure{"achieved_rate", "", true, "messages written per second of sending (a batch is one message)"}, kindRate,
		func(s *scope) (float64, string) {
			if s.method == "" {
				return s.res.Rate.Achieved, ""
			}
			return perSecond(func(q *stats.Requests) uint64 { return q.Messages })(s)
		}})
	add(figureDef{Figure{"target", "", false, "the target rate of an open-loop run, per second"}, kindRate,
		func(s *scope) (float64, string) {
			if s.res.Rate.Target <= 0 {
				return 0, "the run had no target rate (closed loop)"
			}
			return s.res.Rate.Target, ""
		}})

	ofSent := func(bad func(q *stats.Requests) uint64) func(s *scope) (float64, string) {
		return func(s *scope) (float64, string) {
			if s.requests.Sent == 0 {
				if s.method != "" {
					return 0, "no requests of " + s.method + " were sent"
				}
				return 0, "no requests were sent"
			}
			return float64(bad(&s.requests)) / float64(s.requests.Sent), ""
		}
	}
	add(figureDef{Figure{"error_rate", "", true,
		"(rpc errors + invalid replies + transport errors + timeouts + leaked) / sent"}, kindFraction,
		ofSent(func(q *stats.Requests) uint64 {
			return q.RPCErrors + q.InvalidReplies + q.TransportErrors + q.Timeouts + q.Leaked
		})})
	add(figureDef{Figure{"rpc_error_rate", "", true, "JSON-RPC error replies / sent"}, kindFraction,
		ofSent(func(q *stats.Requests) uint64 { return q.RPCErrors })})

	counts := []struct {
		name, meaning string
		get           func(q *stats.Requests) uint64
	}{
		{"sent", "requests sent (notifications not included)", func(q *stats.Requests) uint64 { return q.Sent }},
		{"answered", "requests answered: ok + rpc_errors + invalid_replies", func(q *stats.Requests) uint64 { return q.Answered }},
		{"ok", "requests answered with a result", func(q *stats.Requests) uint64 { return q.OK }},
		{"rpc_errors", "requests answered with a JSON-RPC error", func(q *stats.Requests) uint64 { return q.RPCErrors }},
		{"invalid_replies", "requests answered with neither a valid result nor a valid error", func(q *stats.Requests) uint64 { return q.InvalidReplies }},
		{"transport_errors", "requests lost below JSON-RPC (failed write, broken connection)", func(q *stats.Requests) uint64 { return q.TransportErrors }},
		{"timeouts", "requests not answered within --timeout", func(q *stats.Requests) uint64 { return q.Timeouts }},
		{"late", "replies that came after their request timed out", func(q *stats.Requests) uint64 { return q.Late }},
		{"leaked", "requests still unanswered when the drain ended", func(q *stats.Requests) uint64 { return q.Leaked }},
		{"dropped", "open-loop ticks not sent because --max-inflight was reached", func(q *stats.Requests) uint64 { return q.Dropped }},
	}
	for _, c := range counts {
		add(figureDef{Figure{c.name, "", true, c.meaning}, kindCount, func(s *scope) (float64, string) {
			return float64(c.get(&s.requests)), ""
		}})
	}
	add(figureDef{Figure{"violations", "", true,
		"replies that broke a rule, warnings excluded; {rule=NAME} counts that rule alone"}, kindCount,
		func(s *scope) (float64, string) { return float64(violationCount(s.violations, s.rule)), "" }})
	add(figureDef{Figure{"inflight_max", "", false, "most requests in flight at once"}, kindCount,
		func(s *scope) (float64, string) { return float64(s.res.InFlightMax), "" }})
	add(figureDef{Figure{"capacity", "", false, "rpcload capacity: the highest offered rate that met the SLO, per second (0: none did)"}, kindRate,
		func(s *scope) (float64, string) {
			if s.res.Capacity == nil {
				return 0, "the result is not a capacity search (rpcload capacity)"
			}
			return s.res.Capacity.Rate, ""
		}})
}

func add(d figureDef) {
	d.Unit = d.kind.String()
	figureDefs = append(figureDefs, d)
	figureIndex[d.Name] = len(figureDefs) - 1
}

// violationCount counts broken rules: one rule if named (a warning too,
// since the user asked for it), else every rule but the warnings, as the
// exit code does (stats.FailingViolations).
func violationCount(v map[string]uint64, rule string) uint64 {
	if rule != "" {
		return v[rule]
	}
	return stats.FailingViolations(v)
}

// figureSummary is the list of figures for an error message, with the
// latency variants folded.
func figureSummary() string {
	var names []string
	for _, d := range figureDefs {
		if d.kind == kindDuration && strings.Contains(d.Name, "_") {
			continue
		}
		names = append(names, d.Name)
	}
	return strings.Join(names, " ") + " (and service_* and lag_* of the latencies)"
}

// ruleNames lists check's rules in their order.
func ruleNames() []string {
	names := make([]string, 0, check.NumRules)
	for r := range check.NumRules {
		names = append(names, r.String())
	}
	return names
}

// methodList names a result's methods for a message, a few at most.
func methodList(r *stats.Result) string {
	names := stats.SortedKeys(r.Methods)
	if len(names) == 0 {
		return "it has none"
	}
	const most = 8
	more := ""
	if len(names) > most {
		more = fmt.Sprintf(" and %d more", len(names)-most)
		names = names[:most]
	}
	return "it has " + strings.Join(names, ", ") + more
}
