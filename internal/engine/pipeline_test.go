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

// TestPosterDeadline: an HTTP/1.1 worker sets its connection's deadline
// --timeout and 1/64 of it ahead and keeps it while each request still
// gets its --timeout under it; a reply that comes after --timeout is given
// up as late (and the connection with it), as its own deadline would have.
func TestPosterDeadline(t *testing.T) {
	_, httpURL, _ := startServer(t, testsrv.Config{})
	const timeout = int64(64 * time.Second)
	tests := []struct {
		name      string
		sent      int64 // run clock, after a first POST sent at 0
		wantUntil int64
		now       int64 // when the reply is read, for late
		wantLate  bool
	}{
		{name: "within the slack: the deadline holds", sent: int64(time.Second) - 1, wantUntil: timeout + timeout/64, now: int64(2 * time.Second)},
		{name: "past the slack: a new deadline", sent: int64(time.Second) + 1, wantUntil: int64(time.Second) + 1 + timeout + timeout/64, now: int64(time.Second) + 1 + timeout},
		{name: "a reply after --timeout is late", sent: 5, wantUntil: timeout + timeout/64, now: 6 + timeout, wantLate: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &run{cfg: &Config{Target: mustTarget(t, httpURL), MaxFrame: 1 << 20, Plan: workload.Plan{Timeout: time.Duration(timeout)}}, base: time.Now()}
			p := &poster{d: newHTTPDriver(r)}
			defer p.close()
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`)
			if _, err := p.post(body, nil, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := p.post(body, nil, tc.sent); err != nil {
				t.Fatal(err)
			}
			if p.until != tc.wantUntil {
				t.Errorf("deadline at %d, want %d", p.until, tc.wantUntil)
			}
			if late := p.late(tc.sent, tc.now); late != tc.wantLate || late != (p.conn == nil) {
				t.Errorf("late = %v (connection closed: %v), want %v", late, p.conn == nil, tc.wantLate)
			}
		})
	}
}
