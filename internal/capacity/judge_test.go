package capacity

import (
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/stats"
)

// TestJudgeBlame: a failed step is the server's only when the load
// generator kept its schedule or provably was not what held it back.
func TestJudgeBlame(t *testing.T) {
	type step struct {
		svc, lag      int64 // p99, µs
		inFlightMax   int64
		cpu, busy     float64
		timeouts      uint64
		violations    map[string]uint64
		dropped       uint64
		achieved      float64 // share of the offered rate
		stoppedEarly  string
		multiplexed   bool
		sharedProcess bool
		baseline      int64 // the unloaded median service time, µs
	}
	tests := []struct {
		name   string
		s      step
		blame  string // "" = pass
		reason string
	}{
		{"fast server", step{svc: 1000, lag: 50, achieved: 1, multiplexed: true}, "", ""},
		{"slow server, generator on time", step{svc: 30000, lag: 50, achieved: 1, multiplexed: true}, BlameServer, "p99 was 30.05ms"},
		{"generator late, server fast", step{svc: 1000, lag: 30000, cpu: 1.0, achieved: 1, multiplexed: true}, BlameLoadGenerator, "fell behind its schedule"},
		{"lag under the limit, but only the lag broke it", step{svc: 15000, lag: 10000, cpu: 0.1, busy: 0.3, achieved: 1, multiplexed: true}, BlameLoadGenerator, "the service time alone was within it"},
		{"the same on a busy machine", step{svc: 15000, lag: 10000, cpu: 0.1, busy: 0.99, achieved: 1, multiplexed: true}, BlameMachine, "something else on this machine took the CPU"},
		{"both slow, generator strained", step{svc: 30000, lag: 30000, cpu: 1.0, achieved: 1, multiplexed: true}, BlameLoadGenerator, "lag p99 30ms"},
		{"late on a machine busy with others", step{svc: 30000, lag: 30000, cpu: 0.1, busy: 0.99, achieved: 1, multiplexed: true}, BlameMachine, "something else on this machine took the CPU"},
		{"http/1.1: late on a machine busy with others", step{svc: 30000, lag: 90000, inFlightMax: 64, cpu: 0.1, busy: 0.99, achieved: 1}, BlameMachine, "something else"},
		{"both slow, generator idle: writes waited on the server", step{svc: 30000, lag: 30000, cpu: 0.1, busy: 0.2, achieved: 1, multiplexed: true}, BlameServer, ""},
		{"machine saturated, generator a big user", step{svc: 30000, lag: 50, cpu: 0.8, busy: 0.97, achieved: 1, multiplexed: true}, BlameMachine, "rpcload itself used 0.80 of 2 cores"},
		{"machine saturated by others, generator small", step{svc: 30000, lag: 50, cpu: 0.1, busy: 0.99, achieved: 1, multiplexed: true}, BlameServer, ""},
		{"embedded server", step{svc: 30000, lag: 50, cpu: 1.9, busy: 0.95, achieved: 1, multiplexed: true, sharedProcess: true}, BlameMachine, "inside rpcload's own process"},
		{"embedded server, idle machine", step{svc: 30000, lag: 50, cpu: 0.3, busy: 0.3, achieved: 1, multiplexed: true, sharedProcess: true}, BlameMachine, "a pause or a busy CPU of one is the other's too"},
		{"errors are the server's even on a saturated machine", step{svc: 1000, lag: 50, cpu: 1.9, busy: 0.99, timeouts: 50, achieved: 1, multiplexed: true}, BlameServer, "50 timeouts"},
		{"violations", step{svc: 1000, lag: 50, violations: map[string]uint64{"unknown_id": 3, "mcp_legacy_code": 9}, achieved: 1, multiplexed: true}, BlameServer, "3 protocol violations"},
		{"dropped at the in-flight cap", step{svc: 1000, lag: 50, dropped: 10, achieved: 0.9, multiplexed: true}, BlameServer, "10 requests not sent"},
		{"achieved low, generator", step{svc: 1000, lag: 50, cpu: 1.0, achieved: 0.9, multiplexed: true}, BlameLoadGenerator, "below 99%"},
		{"http/1.1: every connection waiting on a slow server", step{svc: 30000, lag: 90000, inFlightMax: 64, cpu: 0.1, achieved: 1}, BlameServer, ""},
		{"http/1.1: every connection waiting on a fast server", step{svc: 5000, lag: 90000, inFlightMax: 64, cpu: 0.1, achieved: 1, baseline: 2400}, BlameConnections, "raise --conns"},
		{"http/1.1: every connection waiting on a server that queues", step{svc: 5000, lag: 90000, inFlightMax: 64, cpu: 0.1, achieved: 1, baseline: 500}, BlameServer, ""},
		{"stopped early", step{svc: 900000, lag: 50, achieved: 1, multiplexed: true, stoppedEarly: "the backlog kept growing"}, BlameServer, "stopped early"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testConfig(t)
			c.Multiplexed, c.SharedProcess, c.Conns = tt.s.multiplexed, tt.s.sharedProcess, 64
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			const sent = 10000
			q := stats.Requests{Sent: sent, Messages: sent, Timeouts: tt.s.timeouts, Dropped: tt.s.dropped}
			q.OK = sent - q.Timeouts
			q.Answered = q.OK
			res := &stats.Result{DurationS: 10, Rate: stats.Rate{Target: 1000, Achieved: 1000 * tt.s.achieved}, Requests: q,
				InFlightMax: tt.s.inFlightMax, Violations: tt.s.violations,
				Latency: stats.LatencySet{Corrected: latency(tt.s.svc + tt.s.lag), Service: latency(tt.s.svc), Lag: latency(tt.s.lag)}}
			st := c.Judge(Outcome{Step: Step{Phase: PhaseGrow, Rate: 1000}, Result: res, StoppedEarly: tt.s.stoppedEarly, ClientCPU: tt.s.cpu, MachineBusy: tt.s.busy, BaselineServiceUs: tt.s.baseline})
			if st.Pass != (tt.blame == "") || st.Blame != tt.blame {
				t.Fatalf("pass %v blame %q, want %q; reasons %q", st.Pass, st.Blame, tt.blame, st.Reasons)
			}
			if all := strings.Join(st.Reasons, "; "); !strings.Contains(all, tt.reason) {
				t.Errorf("reasons %q lack %q", all, tt.reason)
			}
			if len(st.SLO) != 1 || st.Latency.P99us != tt.s.svc+tt.s.lag {
				t.Errorf("SLO verdicts %v, latency %+v", st.SLO, st.Latency)
			}
		})
	}
}
