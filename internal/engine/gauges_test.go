package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// TestIntervalGauges: each interval carries the schedule's rate, the age of
// the oldest request in flight, the requests that timed out and have had no
// reply since, late replies, and (asked for) its histograms.
func TestIntervalGauges(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	cfg := baseConfig(target(t, tcpURL))
	// Every reply comes 250 ms after its request, past the 120 ms timeout.
	cfg.Method, cfg.Params = "sleep", []byte(`[250]`)
	cfg.Rate, cfg.Duration, cfg.Timeout, cfg.Drain = 200, 400*time.Millisecond, 120*time.Millisecond, time.Second
	cfg.Interval = 50 * time.Millisecond
	cfg.IntervalHists = true
	var mu sync.Mutex
	var points []stats.Point
	var histCount int64
	cfg.OnInterval = func(iv Interval) {
		mu.Lock()
		defer mu.Unlock()
		points = append(points, iv.Point)
		if iv.Hists == nil {
			t.Error("no histograms though asked for")
			return
		}
		if iv.Hists.Corrected.TotalCount() != iv.Hists.Service.TotalCount() || uint64(iv.Hists.Corrected.TotalCount()) != iv.Point.Answered {
			t.Errorf("interval at %.3fs: %d corrected, %d service values for %d answered", iv.Point.T,
				iv.Hists.Corrected.TotalCount(), iv.Hists.Service.TotalCount(), iv.Point.Answered)
		}
		histCount += iv.Hists.Corrected.TotalCount()
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var maxOldest, maxUnanswered int64
	var late uint64
	sawRate := false
	for _, p := range points {
		maxOldest = max(maxOldest, p.OldestPendingUs)
		maxUnanswered = max(maxUnanswered, p.TimedOutUnanswered)
		late += p.Late
		if p.T < 0.35 && p.TargetRate != 200 {
			t.Errorf("interval ending %.3fs: target rate %g, want 200", p.T, p.TargetRate)
		}
		sawRate = sawRate || p.TargetRate == 200
	}
	if !sawRate {
		t.Error("no interval carried the target rate")
	}
	// Requests time out at 120 ms, so none in flight is older than that
	// plus a sweep and an interval of slack.
	if maxOldest < 40_000 || maxOldest > 400_000 {
		t.Errorf("oldest pending peaked at %d µs, want between 40 ms and 400 ms", maxOldest)
	}
	if maxUnanswered == 0 {
		t.Error("timed-out requests without a reply were never seen")
	}
	if late == 0 || late != res.Requests.Late {
		t.Errorf("late replies: %d over the intervals, %d in the result", late, res.Requests.Late)
	}
	if last := points[len(points)-1]; last.TimedOutUnanswered != 0 {
		t.Errorf("after the drain %d timed-out requests still await a late reply", last.TimedOutUnanswered)
	}
	if histCount != int64(res.Requests.Answered) {
		t.Errorf("interval histograms hold %d values, the run answered %d", histCount, res.Requests.Answered)
	}
}

// TestErrorMessagesInResult: the messages of error replies are kept per code.
func TestErrorMessagesInResult(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	cfg := baseConfig(target(t, tcpURL))
	cfg.Method, cfg.Params = "no_such_method", nil
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	msgs := res.ErrorMessages["-32601"]
	if res.ErrorCodes["-32601"] == 0 || len(msgs) == 0 || msgs[0] == "" {
		t.Fatalf("codes %v, messages %q", res.ErrorCodes, res.ErrorMessages)
	}
}

// TestStatusBetweenIntervals: with intervals longer than a second, OnStatus
// sees the interval in progress once a second, and what it saw is still
// counted in the interval when it closes.
func TestStatusBetweenIntervals(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	cfg := baseConfig(target(t, tcpURL))
	cfg.Rate, cfg.Duration, cfg.Interval = 500, 2500*time.Millisecond, 10*time.Second
	var mu sync.Mutex
	var peeks []Interval
	var closed []stats.Point
	cfg.OnStatus = func(iv Interval) { mu.Lock(); peeks = append(peeks, iv); mu.Unlock() }
	cfg.OnInterval = func(iv Interval) { mu.Lock(); closed = append(closed, iv.Point); mu.Unlock() }
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(peeks) < 2 || len(closed) != 1 {
		t.Fatalf("%d looks at the interval in progress, %d intervals closed; want 2 or more and 1", len(peeks), len(closed))
	}
	for i, p := range peeks {
		if i > 0 && p.Point.Sent < peeks[i-1].Point.Sent {
			t.Errorf("look %d counts %d sent, fewer than the look before (%d)", i, p.Point.Sent, peeks[i-1].Point.Sent)
		}
		if p.Hists != nil || p.Length > cfg.Interval {
			t.Errorf("look %d: length %s, hists %v", i, p.Length, p.Hists)
		}
	}
	if last := peeks[len(peeks)-1].Point.Sent; last == 0 || closed[0].Sent < last || closed[0].Sent != res.Requests.Sent {
		t.Errorf("the last look counted %d sent, the closed interval %d, the run %d", last, closed[0].Sent, res.Requests.Sent)
	}
}

// TestIntervalGaugesEveryTransport: the gauges a soak watches for leaks
// (the age of the oldest request in flight, the requests timed out and
// never answered) are read from every transport's pending tables, HTTP's
// and MCP Streamable HTTP's as well as the streams'. Every request sleeps
// 250 ms on the server and times out at 120 ms, so some interval ends with
// one in flight and some timed-out request goes unanswered for a while.
// Over HTTP a timed-out request is given up with its POST, so it stays
// unanswered to the end.
func TestIntervalGaugesEveryTransport(t *testing.T) {
	_, httpURL, tcpURL := startServer(t, testsrv.Config{})
	_, mcp := listenProfile(t, testsrv.Config{Profile: testsrv.ProfileMCP, MCPEra: testsrv.MCPModern}, testsrv.Addrs{HTTP: "127.0.0.1:0"})
	tests := []struct {
		name, url string
		http2     bool
		mcp       bool
		// stays: the last interval still counts every timeout as unanswered.
		stays bool
	}{
		{"tcp", tcpURL, false, false, false},
		{"http", httpURL, false, false, true},
		{"http2", httpURL, true, false, true},
		{"mcp over http", "http://" + mcp.HTTP + testsrv.MCPPath, false, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(target(t, tc.url))
			cfg.Method, cfg.Params, cfg.HTTP2 = "sleep", []byte(`[250]`), tc.http2
			if tc.mcp {
				cfg.Profile = mcpProfile(t, "modern")
				cfg.Method, cfg.Params = "tools/call", []byte(`{"name":"sleep","arguments":{"ms":250}}`)
			}
			cfg.Rate, cfg.Duration, cfg.Timeout, cfg.Drain = 100, 400*time.Millisecond, 120*time.Millisecond, time.Second
			cfg.Conns, cfg.Interval = 64, 50*time.Millisecond
			var mu sync.Mutex
			var points []stats.Point
			cfg.OnInterval = func(iv Interval) { mu.Lock(); points = append(points, iv.Point); mu.Unlock() }
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			var maxOldest, maxUnanswered int64
			for _, p := range points {
				maxOldest = max(maxOldest, p.OldestPendingUs)
				maxUnanswered = max(maxUnanswered, p.TimedOutUnanswered)
			}
			if res.Requests.Timeouts == 0 {
				t.Fatalf("requests %+v: none timed out", res.Requests)
			}
			if maxOldest == 0 {
				t.Error("no interval saw a request in flight: oldest_pending_us was always 0")
			}
			if maxUnanswered == 0 {
				t.Error("timed_out_unanswered was always 0")
			}
			last := points[len(points)-1].TimedOutUnanswered
			if want := map[bool]int64{true: int64(res.Requests.Timeouts)}[tc.stays]; last != want {
				t.Errorf("the last interval counts %d timed out and unanswered, want %d", last, want)
			}
		})
	}
}
