package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
	"github.com/rpcload/rpcload/internal/workload"
)

// startServer runs the reference server on loopback for one test.
func startServer(t *testing.T, cfg testsrv.Config) (*testsrv.Server, string, string) {
	t.Helper()
	srv, err := testsrv.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h, tc, err := srv.ListenAndServe(ctx, "127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); srv.Close() })
	return srv, "http://" + h.String() + "/", "tcp://" + tc.String()
}

func target(t testing.TB, url string) transport.Target {
	t.Helper()
	tg, err := transport.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// baseConfig is a short open-loop run: 1000 requests at 5000 req/s.
func baseConfig(tg transport.Target) Config {
	return Config{Target: tg, Conns: 2, MaxFrame: 1 << 20, Plan: workload.Plan{Rate: 5000, Duration: 200 * time.Millisecond, Timeout: 300 * time.Millisecond, Drain: 600 * time.Millisecond, MaxInFlight: 10000, Method: "echo", Params: []byte(`[1,"a"]`)}}
}

func TestFaultFreeRunIsClean(t *testing.T) {
	_, httpURL, tcpURL := startServer(t, testsrv.Config{})
	for _, url := range []string{tcpURL, httpURL} {
		t.Run(url[:4], func(t *testing.T) {
			cfg := baseConfig(target(t, url))
			cfg.NotifyEvery = 10
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			q := res.Requests
			if len(res.Violations) != 0 {
				t.Errorf("violations on a correct server: %v %v", res.Violations, res.ViolationSamples)
			}
			if q.Sent+q.Notifications != 1000 || q.Notifications != 100 {
				t.Errorf("sent %d + %d notifications, want 900 + 100", q.Sent, q.Notifications)
			}
			if q.OK != q.Sent || q.Answered != q.Sent || q.Timeouts+q.Leaked+q.TransportErrors+q.Dropped != 0 {
				t.Errorf("requests = %+v, want every request answered ok", q)
			}
			if res.Latency.Corrected.Count != int64(q.OK) || res.Latency.Service.Count != int64(q.OK) {
				t.Errorf("latency counts %d/%d, want %d", res.Latency.Corrected.Count, res.Latency.Service.Count, q.OK)
			}
			if res.Latency.Corrected.P50us < res.Latency.Service.P50us {
				t.Errorf("corrected p50 %dus < service p50 %dus", res.Latency.Corrected.P50us, res.Latency.Service.P50us)
			}
		})
	}
}

// TestEachFaultUnderItsRule injects one fault at a time and checks that it
// shows up under its own name with exactly the count the server injected.
func TestEachFaultUnderItsRule(t *testing.T) {
	type want func(r *stats.Result, injected uint64) error
	rule := func(name string) want {
		return func(r *stats.Result, n uint64) error {
			if got := r.Violations[name]; got != n {
				return fmt.Errorf("violations[%s] = %d, want %d (all: %v)", name, got, n, r.Violations)
			}
			if len(r.ViolationSamples[name]) == 0 {
				return fmt.Errorf("no sample frame kept for %s", name)
			}
			return nil
		}
	}
	timeouts := func(r *stats.Result, n uint64) error {
		if r.Requests.Timeouts != n {
			return fmt.Errorf("timeouts = %d, want %d", r.Requests.Timeouts, n)
		}
		return nil
	}
	both := func(ws ...want) want {
		return func(r *stats.Result, n uint64) error {
			for _, w := range ws {
				if err := w(r, n); err != nil {
					return err
				}
			}
			return nil
		}
	}
	onlyRules := func(names ...string) want {
		return func(r *stats.Result, n uint64) error {
			for k := range r.Violations {
				found := false
				for _, name := range names {
					found = found || k == name
				}
				if !found {
					return fmt.Errorf("unexpected violation %s=%d", k, r.Violations[k])
				}
			}
			return nil
		}
	}
	tests := []struct {
		fault   testsrv.Fault
		stream  bool // only over TCP
		notify  bool
		timeout time.Duration
		check   want
	}{
		{fault: testsrv.FaultDrop, check: both(timeouts, onlyRules())},
		{fault: testsrv.FaultDuplicate, check: both(rule("duplicate_reply"), onlyRules("duplicate_reply"))},
		{fault: testsrv.FaultUnknownID, check: both(rule("unknown_id"), timeouts, onlyRules("unknown_id"))},
		{fault: testsrv.FaultIDType, check: both(rule("id_type_changed"), onlyRules("id_type_changed"))},
		{fault: testsrv.FaultBoth, check: both(rule("both_result_and_error"), onlyRules("both_result_and_error"))},
		{fault: testsrv.FaultNeither, check: both(rule("no_result_or_error"), onlyRules("no_result_or_error"), func(r *stats.Result, n uint64) error {
			if r.Requests.InvalidReplies != n {
				return fmt.Errorf("invalid replies %d, want %d", r.Requests.InvalidReplies, n)
			}
			return nil
		})},
		{fault: testsrv.FaultBadVersion, check: both(rule("bad_jsonrpc_version"), onlyRules("bad_jsonrpc_version"))},
		{fault: testsrv.FaultGarbage, check: both(rule("invalid_json"), timeouts, onlyRules("invalid_json"))},
		{fault: testsrv.FaultInvalidEnvelope, check: both(rule("invalid_envelope"), timeouts)},
		{fault: testsrv.FaultBadError, check: both(rule("bad_error_object"), onlyRules("bad_error_object"))},
		{fault: testsrv.FaultNullID, check: both(rule("unexpected_null_id"), timeouts, onlyRules("unexpected_null_id"))},
		{fault: testsrv.FaultNotifyReply, notify: true, check: both(rule("reply_to_notification"), onlyRules("reply_to_notification"))},
		{fault: testsrv.FaultDelay, stream: true, timeout: 150 * time.Millisecond, check: both(timeouts, onlyRules(), func(r *stats.Result, n uint64) error {
			if r.Requests.Late != n {
				return fmt.Errorf("late = %d, want %d", r.Requests.Late, n)
			}
			return nil
		})},
		{fault: testsrv.FaultClose, check: func(r *stats.Result, n uint64) error {
			if r.Requests.TransportErrors < n || r.Requests.Leaked != 0 {
				return fmt.Errorf("transport errors %d (want >= %d), leaked %d", r.Requests.TransportErrors, n, r.Requests.Leaked)
			}
			return nil
		}},
	}
	for _, tc := range tests {
		for _, scheme := range []string{"tcp", "http"} {
			if tc.stream && scheme != "tcp" {
				continue
			}
			t.Run(string(tc.fault)+"/"+scheme, func(t *testing.T) {
				t.Parallel()
				srv, httpURL, tcpURL := startServer(t, testsrv.Config{
					Faults: []testsrv.FaultSpec{{Fault: tc.fault, Prob: 0.05}}, Seed: 7, FaultDelay: 400 * time.Millisecond,
				})
				url := tcpURL
				if scheme == "http" {
					url = httpURL
				}
				cfg := baseConfig(target(t, url))
				if tc.notify {
					// Every third message a notification, the last (the
					// 1,000th) a request, on one connection: the
					// notifications' replies all come before the last
					// request's, which ends the run. (With two connections
					// the other's last notification could be answered after
					// it, and its reply went unread on a loaded machine.)
					cfg.NotifyEvery, cfg.Conns = 3, 1
				}
				if tc.timeout > 0 {
					cfg.Timeout = tc.timeout
				}
				res, err := Run(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				n := srv.Injected()[tc.fault]
				if n == 0 {
					t.Fatalf("the server injected no %s fault in %d frames", tc.fault, srv.Requests())
				}
				if err := tc.check(res, n); err != nil {
					t.Errorf("%s over %s (%d injected): %v\nrequests %+v", tc.fault, scheme, n, err, res.Requests)
				}
			})
		}
	}
}

func TestUnreachable(t *testing.T) {
	cfg := baseConfig(target(t, "tcp://127.0.0.1:1"))
	if _, err := Run(context.Background(), cfg); err == nil {
		t.Fatal("run against a closed port succeeded")
	}
}

func TestInterruptKeepsResults(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	cfg := baseConfig(target(t, tcpURL))
	cfg.Duration = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Interval = 50 * time.Millisecond
	cfg.OnInterval = func(iv Interval) {
		if iv.TotalSent > 100 {
			cancel()
		}
	}
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Requests.Sent < 100 || res.Requests.OK != res.Requests.Sent {
		t.Fatalf("interrupted=%v requests=%+v", res.Interrupted, res.Requests)
	}
}

func mustTarget(t testing.TB, url string) transport.Target { return target(t, url) }

// TestLeakedAndDropped covers the verdicts a server that never answers
// produces: with the in-flight cap reached, the rest of the schedule is
// dropped (never queued), and what was sent is leaked when the drain ends
// before the timeout.
func TestLeakedAndDropped(t *testing.T) {
	srv, _, tcpURL := startServer(t, testsrv.Config{Faults: []testsrv.FaultSpec{{Fault: testsrv.FaultDrop, Prob: 1}}})
	cfg := baseConfig(target(t, tcpURL))
	cfg.MaxInFlight, cfg.Timeout, cfg.Drain = 100, time.Minute, 50*time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	q := res.Requests
	if q.Sent != 100 || q.Dropped != 900 || q.Leaked != 100 || q.Timeouts != 0 || q.Answered != 0 {
		t.Fatalf("requests = %+v, want 100 sent and leaked, 900 dropped", q)
	}
	if res.InFlightMax != 100 {
		t.Errorf("in flight max %d, want the cap 100", res.InFlightMax)
	}
	if n := srv.Injected()[testsrv.FaultDrop]; n != 100 {
		t.Errorf("server dropped %d, want 100", n)
	}
	if len(res.Warnings) == 0 {
		t.Error("no warning about dropped ticks")
	}
}

// TestStringIDs runs clean with quoted ids, and an id_type fault is caught
// in that direction too ("7" sent, 7 back).
func TestStringIDs(t *testing.T) {
	srv, _, tcpURL := startServer(t, testsrv.Config{Faults: []testsrv.FaultSpec{{Fault: testsrv.FaultIDType, Prob: 0.1}}, Seed: 3})
	cfg := baseConfig(target(t, tcpURL))
	cfg.IDFormat = wire.IDQuoted
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := srv.Injected()[testsrv.FaultIDType]
	if n == 0 || res.Violations["id_type_changed"] != n || len(res.Violations) != 1 {
		t.Fatalf("violations %v, want only id_type_changed=%d", res.Violations, n)
	}
	if res.Requests.OK != res.Requests.Sent {
		t.Fatalf("requests %+v: a changed id type still answers its request", res.Requests)
	}
}

// TestClosedLoopKeepsConcurrency checks that closed loop never has more
// than --concurrency requests in flight, and uses all of them.
func TestClosedLoopKeepsConcurrency(t *testing.T) {
	_, httpURL, tcpURL := startServer(t, testsrv.Config{})
	for _, url := range []string{tcpURL, httpURL} {
		cfg := baseConfig(target(t, url))
		cfg.Rate, cfg.Concurrency, cfg.Conns, cfg.Method, cfg.Params = 0, 8, 8, "sleep", []byte(`[5]`)
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.InFlightMax != 8 || len(res.Violations) != 0 || res.Requests.OK != res.Requests.Sent || res.Requests.Sent < 80 {
			t.Fatalf("%s: in flight max %d, requests %+v, violations %v", url, res.InFlightMax, res.Requests, res.Violations)
		}
		// Each request sleeps 5 ms on the server: service time cannot be less.
		if res.Latency.Service.MinUs < 5000 {
			t.Fatalf("%s: service min %dus is below the server's 5 ms", url, res.Latency.Service.MinUs)
		}
	}
}

// TestPrettyParamsAreCompacted: a line break inside params would split a
// newline-framed request in two.
func TestPrettyParamsAreCompacted(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	cfg := baseConfig(target(t, tcpURL))
	cfg.Params = []byte("[\n  1,\n  \"a\"\n]")
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) != 0 || res.Requests.OK != res.Requests.Sent || res.Requests.Sent == 0 {
		t.Fatalf("requests %+v violations %v", res.Requests, res.Violations)
	}
}

// TestInterruptCutsSlowHTTPShort: an interrupt must not wait for POSTs in
// progress to reach --timeout; what they were waiting for is leaked.
func TestInterruptCutsSlowHTTPShort(t *testing.T) {
	_, httpURL, _ := startServer(t, testsrv.Config{})
	for _, h2 := range []bool{false, true} {
		cfg := baseConfig(target(t, httpURL))
		cfg.Method, cfg.Params, cfg.HTTP2 = "sleep", []byte(`[30000]`), h2
		cfg.Duration, cfg.Timeout, cfg.Drain = time.Hour, time.Minute, time.Minute
		cfg.Interval, cfg.InterruptDrain = 20*time.Millisecond, 100*time.Millisecond
		ctx, cancel := context.WithCancel(context.Background())
		cfg.OnInterval = func(iv Interval) {
			if iv.TotalSent >= 2 { // both HTTP/1.1 workers are waiting on the server
				cancel()
			}
		}
		start := time.Now()
		res, err := Run(ctx, cfg)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("http2=%v: interrupted run took %s; requests in progress were not cut short", h2, took)
		}
		q := res.Requests
		if !res.Interrupted || q.Leaked == 0 || q.Timeouts != 0 || q.Leaked+q.TransportErrors+q.Answered != q.Sent {
			t.Fatalf("http2=%v: interrupted=%v requests %+v errors %v", h2, res.Interrupted, q, res.TransportErrorSamples)
		}
	}
}
