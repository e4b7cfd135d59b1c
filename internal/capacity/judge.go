package capacity

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/threshold"
)

// Outcome is one step as its runner saw it.
type Outcome struct {
	Step   Step
	Result *stats.Result
	// StoppedEarly says why the stop rule ended the step ("" = it ran to
	// its end).
	StoppedEarly string
	// ClientCPU is the CPU time of rpcload's own process per second of
	// the step, in cores; MachineBusy the busy share of the machine's CPU
	// time (0..1), -1 when unknown.
	ClientCPU, MachineBusy float64
	// BaselineServiceUs is the median service time of the search's first
	// passing step (0: none yet): the server unloaded, against which a
	// step tells a server that queues from one that merely has too few
	// connections to it.
	BaselineServiceUs int64
}

// The blames of a failed step.
const (
	BlameServer        = "server"
	BlameLoadGenerator = "load_generator"
	BlameMachine       = "machine"
	BlameConnections   = "connections"
)

// Thresholds of the blame. A machine is saturated when its CPUs were busy
// at least machineBusy of the time; the load generator is strained when it
// used a whole core (its dispatcher is one thread) or the machine was
// saturated; it shares the machine with the server enough to be one cause
// of the saturation when it used at least generatorShare of the CPUs.
const (
	machineBusy    = 0.9
	strainedCores  = 0.9
	generatorShare = 0.25
	achievedShare  = 0.99
	// queueSlackUs keeps a fast server's jitter (a median of 50 µs that
	// becomes 150 µs) from reading as queueing.
	queueSlackUs = 200
)

// Judge makes the step's line of the report: its figures, whether it met
// the SLO, and if not why and whose failure it was. The rules are in
// docs/capacity.md; the guiding one is that the server is blamed only when
// the load generator kept its schedule, or provably was not what held the
// step back.
func (c *Config) Judge(o Outcome) stats.CapacityStep {
	res := o.Result
	q := res.Requests
	st := stats.CapacityStep{
		Phase: o.Step.Phase, Offered: o.Step.Rate, Achieved: res.Rate.Achieved, DurationS: res.DurationS,
		Sent: q.Sent, Answered: q.Answered, Errors: q.RPCErrors + q.InvalidReplies + q.TransportErrors + q.Timeouts + q.Leaked,
		Violations: stats.FailingViolations(res.Violations), Dropped: q.Dropped, Latency: res.Latency.Corrected,
		ServiceP50us: res.Latency.Service.P50us, ServiceP99us: res.Latency.Service.P99us, LagP99us: res.Latency.Lag.P99us, InFlightMax: res.InFlightMax,
		StoppedEarly: o.StoppedEarly, ClientCPU: o.ClientCPU, MachineBusy: o.MachineBusy,
	}
	stopped := o.StoppedEarly != ""
	if stopped {
		// Ending the step left its backlog unanswered and its queue
		// unsent: that is the stop's doing, counted under it, not as
		// errors or drops of the server.
		st.Errors -= q.Leaked
		st.Dropped = 0
	}
	if q.Sent > 0 {
		st.ErrorRate = float64(st.Errors) / float64(q.Sent)
	}
	var hard, soft []string // the server's own failures; failures of latency or pace
	// serviceFails: a latency bound broken by the service time alone;
	// lagged: one broken only with the lag added (corrected latency is
	// lag plus service time, request by request), the load generator's
	// share of it.
	serviceFails, lagged := false, false
	for _, t := range c.SLO {
		v := t.Eval(res)
		st.SLO = append(st.SLO, v)
		if v.Pass {
			continue
		}
		svc, isLatency := t.Service()
		switch {
		case !isLatency:
			hard = append(hard, v.Detail)
		case !svc.Eval(res).Pass:
			serviceFails = true
			soft = append(soft, v.Detail)
		default:
			lagged = true
			soft = append(soft, v.Detail+" (the service time alone was within it)")
		}
	}
	if st.ErrorRate > c.MaxErrorRate {
		parts := q
		if stopped {
			parts.Leaked = 0
		}
		hard = append(hard, fmt.Sprintf("error rate %s above %s (%s)", percent(st.ErrorRate), percent(c.MaxErrorRate), errorParts(parts)))
	}
	if st.Violations > 0 {
		hard = append(hard, fmt.Sprintf("%d protocol violations (%s)", st.Violations, ruleList(res.Violations)))
	}
	if res.EndedEarly != "" {
		hard = append(hard, res.EndedEarly)
	}
	if st.Dropped > 0 {
		hard = append(hard, fmt.Sprintf("%d requests not sent: %d were already in flight (--max-inflight)", q.Dropped, res.InFlightMax))
	}
	achievedLow := st.Achieved < achievedShare*st.Offered && q.Dropped == 0 && !stopped
	if achievedLow {
		soft = append(soft, fmt.Sprintf("achieved %.1f/s, below %.0f%% of %.1f/s", st.Achieved, achievedShare*100, st.Offered))
	}
	if stopped {
		why := "stopped early: " + o.StoppedEarly
		if q.Leaked+q.Dropped > 0 {
			why += fmt.Sprintf(" (so %d requests were left unanswered and %d not sent)", q.Leaked, q.Dropped)
		}
		soft = append(soft, why)
		if float64(st.ServiceP99us) > c.LatencyLimitUs() {
			serviceFails = true
		}
	}
	st.Reasons = append(hard, soft...)
	st.Pass = len(st.Reasons) == 0
	if !st.Pass {
		queueing := o.BaselineServiceUs > 0 && st.ServiceP50us > 2*o.BaselineServiceUs+queueSlackUs
		st.Blame = c.blame(&st, len(hard) > 0, serviceFails || queueing, achievedLow || lagged && !serviceFails)
		st.Reasons = append(st.Reasons, c.blameReason(&st))
	}
	return st
}

// blame decides whose failure a failed step was. behind: rpcload did not
// keep its schedule in a way that broke the step (it sent less than
// offered, or only the lag pushed a latency past its bound).
func (c *Config) blame(st *stats.CapacityStep, hard, serviceFails, behind bool) string {
	known := st.MachineBusy >= 0
	saturated := known && st.MachineBusy >= machineBusy
	switch {
	case hard:
		// Errors, violations and a backlog at the in-flight cap are in the
		// server's replies, whoever else was short of CPU.
		return BlameServer
	case c.SharedProcess:
		// The server's pauses and CPU are rpcload's own: no slowness of
		// the pair can be laid on the server alone.
		return BlameMachine
	case saturated && st.ClientCPU >= generatorShare*float64(c.CPUs):
		return BlameMachine
	}
	late := float64(st.LagP99us) > c.LatencyLimitUs() || behind
	if !late {
		return BlameServer // the load generator kept its schedule
	}
	allBusy := !c.Multiplexed && st.InFlightMax >= int64(c.Conns)
	strained := saturated || st.ClientCPU >= strainedCores
	switch {
	case saturated:
		// Late on a machine with no CPU to spare: whatever else waited,
		// rpcload did, so its own clocks are not to be trusted.
		return BlameMachine
	case allBusy && serviceFails:
		// Every connection waited on a server slower than the SLO, or
		// one whose median service time rose well past its unloaded one:
		// it queues, and more connections would only queue more.
		return BlameServer
	case allBusy:
		return BlameConnections
	case serviceFails && !strained:
		return BlameServer // the writes waited on a server that did not read
	}
	return BlameLoadGenerator
}

// blameReason says in words why the blame fell where it did.
func (c *Config) blameReason(st *stats.CapacityStep) string {
	lag := fmtUs(st.LagP99us)
	switch st.Blame {
	case BlameMachine:
		if st.ClientCPU < generatorShare*float64(c.CPUs) && !c.SharedProcess {
			return fmt.Sprintf("the machine: its CPUs were %s busy, and rpcload fell behind its schedule (lag p99 %s) though it used only %.2f cores: something else on this machine took the CPU", percent(st.MachineBusy), lag, st.ClientCPU)
		}
		if c.SharedProcess {
			return fmt.Sprintf("the load generator or the machine: the server runs inside rpcload's own process, so a pause or a busy CPU of one is the other's too (%.2f cores used, the machine's CPUs %s busy)", st.ClientCPU, percent(max(st.MachineBusy, 0)))
		}
		return fmt.Sprintf("the machine: its CPUs were %s busy and rpcload itself used %.2f of %d cores; run it on another machine", percent(st.MachineBusy), st.ClientCPU, c.CPUs)
	case BlameConnections:
		return fmt.Sprintf("the connections: all %d were waiting for replies, so requests waited to be sent (lag p99 %s) though the server answered each within the SLO; raise --conns", c.Conns, lag)
	case BlameLoadGenerator:
		return fmt.Sprintf("the load generator, not the server: it fell behind its schedule (lag p99 %s, %.2f cores used)", lag, st.ClientCPU)
	}
	return "the server"
}

func ruleList(v map[string]uint64) string {
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", name, v[name])
	}
	return b.String()
}

func errorParts(q stats.Requests) string {
	parts := []struct {
		name string
		n    uint64
	}{{"rpc errors", q.RPCErrors}, {"invalid replies", q.InvalidReplies}, {"transport errors", q.TransportErrors}, {"timeouts", q.Timeouts}, {"leaked", q.Leaked}}
	var out []string
	for _, p := range parts {
		if p.n > 0 {
			out = append(out, fmt.Sprintf("%d %s", p.n, p.name))
		}
	}
	return strings.Join(out, ", ")
}

// percent writes a fraction as the threshold verdicts do ("0.1%").
func percent(f float64) string { s, _ := threshold.FormatValue("error_rate", f); return s }

// fmtUs writes microseconds as the threshold verdicts do ("14.2ms").
func fmtUs(us int64) string { s, _ := threshold.FormatValue("p99", float64(us)); return s }
