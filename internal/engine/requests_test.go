package engine

import (
	"context"
	"testing"

	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/workload"
)

// TestRequestsEndsTheRun: with Requests (--requests N) and no duration of
// its own, a run sends exactly its messages of the first N, in open and
// closed loop, over a stream and HTTP, in batches and as a shard, and ends
// when their replies are in: every one answered, none dropped or leaked.
func TestRequestsEndsTheRun(t *testing.T) {
	_, httpURL, tcpURL := startServer(t, testsrv.Config{})
	tests := []struct {
		name     string
		url      string
		rate     float64
		conc     int
		batch    int
		shard    workload.Shard
		requests uint64
		messages uint64 // this instance's
	}{
		{"open tcp", tcpURL, 2000, 0, 0, workload.Shard{}, 57, 57},
		{"open http", httpURL, 2000, 0, 0, workload.Shard{}, 57, 57},
		{"closed tcp", tcpURL, 0, 8, 0, workload.Shard{}, 57, 57},
		{"closed http", httpURL, 0, 8, 0, workload.Shard{}, 57, 57},
		{"closed tcp batches", tcpURL, 0, 10, 5, workload.Shard{}, 23, 23},
		{"open tcp shard 2/3", tcpURL, 3000, 0, 0, workload.Shard{Index: 2, Count: 3}, 10, 3},
		{"closed tcp shard 3/3", tcpURL, 0, 9, 0, workload.Shard{Index: 3, Count: 3}, 10, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := baseConfig(target(t, tt.url))
			cfg.Rate, cfg.Concurrency, cfg.Batch, cfg.Shard = tt.rate, tt.conc, tt.batch, tt.shard
			cfg.Requests, cfg.Duration = tt.requests, workload.OpenEnded
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			q := res.Requests
			perMessage := uint64(max(1, tt.batch))
			if q.Messages != tt.messages || q.Sent != tt.messages*perMessage {
				t.Errorf("messages %d, requests sent %d; want %d, %d", q.Messages, q.Sent, tt.messages, tt.messages*perMessage)
			}
			if q.Answered != q.Sent || q.OK != q.Sent || q.Dropped+q.Leaked+q.Timeouts+q.TransportErrors != 0 || len(res.Violations) != 0 {
				t.Errorf("requests %+v, violations %v; want every one answered ok", q, res.Violations)
			}
			if res.Interrupted {
				t.Error("the run reports itself interrupted")
			}
		})
	}
}
