package engine

import (
	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/stats"
)

// expectFailed records a broken expectation with the frame and what failed.
func (j *judge) expectFailed(method uint16, frame []byte, why string) {
	j.rec.Record(stats.Sample{Kind: stats.Violation, Rule: check.ExpectationFailed, Method: method})
	if j.submitted[check.ExpectationFailed] < 2*stats.MaxSamplesPerRule {
		j.submitted[check.ExpectationFailed]++
		j.r.agg.KeepSample(check.ExpectationFailed, int(method), frame, why)
	}
}
