package engine

import (
	"context"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/workload"
)

// TestHTTPPipeline runs --pipeline 4 against the reference server, which
// counts the requests that reach a connection before it answers the first
// of them. Requests wait 5 ms each at the server, so the open loop's ticks
// queue while the worker waits for a response and the next write takes
// four: the server must see four at once. Every request ends exactly once:
// answered, or lost with a connection the server closed mid-pipeline.
func TestHTTPPipeline(t *testing.T) {
	tests := []struct {
		name      string
		pipeline  int
		faults    []testsrv.FaultSpec
		wantDepth int64 // the server saw this many pipelined at once
	}{
		{name: "written ahead, answered in order", pipeline: 4, wantDepth: 4},
		{name: "one at a time without it", pipeline: 1, wantDepth: 1},
		{name: "the server closes a connection mid-pipeline", pipeline: 4,
			faults: []testsrv.FaultSpec{{Fault: testsrv.FaultClose, Prob: 0.05}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, httpURL, _ := startServer(t, testsrv.Config{Faults: tc.faults, Seed: 3, TrackPipelining: true})
			cfg := baseConfig(target(t, httpURL))
			cfg.Conns, cfg.Pipeline = 1, tc.pipeline
			cfg.Rate, cfg.Requests, cfg.Duration = 2000, 120, workload.OpenEnded
			cfg.Method, cfg.Params = "sleep", []byte(`{"ms":5}`)
			cfg.Timeout, cfg.Drain = 5*time.Second, 5*time.Second
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			q := res.Requests
			if q.Sent != 120 || q.Sent != q.OK+q.TransportErrors || q.Timeouts+q.Leaked+q.Dropped+q.InvalidReplies != 0 {
				t.Errorf("requests %+v: want 120 sent, each answered ok or lost with its connection", q)
			}
			closed := srv.Injected()[testsrv.FaultClose]
			if answered := srv.Requests() - closed; q.OK != answered {
				t.Errorf("%d answered ok, but the server answered %d (%d handled, %d closed instead)", q.OK, answered, srv.Requests(), closed)
			}
			if tc.faults == nil && q.OK != 120 {
				t.Errorf("requests %+v: want every request answered ok", q)
			}
			if tc.faults != nil && (closed == 0 || q.TransportErrors < closed) {
				t.Errorf("%d transport errors for %d connections closed: want each close's request and those behind it", q.TransportErrors, closed)
			}
			if d := srv.PipelineDepth(); tc.wantDepth > 0 && d != tc.wantDepth || d > int64(tc.pipeline) {
				t.Errorf("the server saw %d requests pipelined at most, want %d (--pipeline %d)", d, tc.wantDepth, tc.pipeline)
			}
			t.Logf("requests %+v, closed %d, depth %d", q, closed, srv.PipelineDepth())
		})
	}
}
