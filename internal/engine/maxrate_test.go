package engine

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/testsrv"
)

// serverArrivals records when each request reached an HTTP server.
type serverArrivals struct {
	mu    sync.Mutex
	times []time.Time
}

func (a *serverArrivals) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.times = append(a.times, time.Now())
		a.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// rate is events per second from the first to the last.
func (a *serverArrivals) rate() (float64, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.times)
	if n < 2 {
		return 0, n
	}
	return float64(n-1) / a.times[n-1].Sub(a.times[0]).Seconds(), n
}

// TestMaxRateClosedLoop: --max-rate caps a closed loop of 64 workers
// within 2% over 10 s, over HTTP (timed where the requests arrive) and
// over TCP (the run's own count of messages written over its sending
// phase, which runs from the first message to the last). The cap is far
// below what the reference server answers, so the 64 workers always have
// a request ready and only the cap sets the pace; the latency measured
// leaves out the wait for a token.
func TestMaxRateClosedLoop(t *testing.T) {
	const maxRate = 200.0
	for _, tc := range []struct {
		name  string
		http  bool
		conns int
	}{
		{"http", true, 64},
		{"tcp", false, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var arr serverArrivals
			url := ""
			if tc.http {
				srv, err := testsrv.New(testsrv.Config{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { srv.Close() })
				ts := httptest.NewServer(arr.wrap(srv.Handler()))
				t.Cleanup(ts.Close)
				url = ts.URL + "/"
			} else {
				_, _, url = startServer(t, testsrv.Config{})
			}
			cfg := baseConfig(target(t, url))
			cfg.Rate, cfg.Concurrency, cfg.Conns, cfg.MaxRate = 0, 64, tc.conns, maxRate
			cfg.Duration, cfg.Timeout, cfg.Drain = 10*time.Second, 5*time.Second, 5*time.Second
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			q := res.Requests
			if q.OK != q.Sent || len(res.Violations) != 0 {
				t.Fatalf("requests %+v, violations %v: want every request answered ok", q, res.Violations)
			}
			got, n := res.Rate.Achieved, int(q.Sent)
			if tc.http {
				got, n = arr.rate()
				if n != int(q.Sent) {
					t.Errorf("the server saw %d requests, the run sent %d", n, q.Sent)
				}
			}
			t.Logf("%d requests at %.2f/s", n, got)
			if math.Abs(got-maxRate)/maxRate > 0.02 {
				t.Errorf("%d requests at %.1f/s, want %.0f/s within 2%%", n, got, maxRate)
			}
			if p50 := time.Duration(res.Latency.Corrected.P50us) * time.Microsecond; p50 > 100*time.Millisecond {
				t.Errorf("corrected latency p50 %s: the wait for a token counted as latency", p50)
			}
		})
	}
}

// TestMaxRateRefusedInOpenLoop: an open loop keeps its schedule; a cap on
// it is refused, saying why, as is a cap that is no rate.
func TestMaxRateRefusedInOpenLoop(t *testing.T) {
	for _, tc := range []struct {
		name   string
		adjust func(*Config)
		want   string
	}{
		{"with --rate", func(c *Config) { c.MaxRate = 100 }, "--max-rate caps a closed loop"},
		{"negative", func(c *Config) { c.Rate, c.Concurrency, c.MaxRate = 0, 4, -1 }, "--max-rate must be a number of messages per second, 0 or more (got -1)"},
		{"not a number", func(c *Config) { c.Rate, c.Concurrency, c.MaxRate = 0, 4, math.NaN() }, "--max-rate must be a number"},
		{"infinite", func(c *Config) { c.Rate, c.Concurrency, c.MaxRate = 0, 4, math.Inf(1) }, "--max-rate must be a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(target(t, "tcp://127.0.0.1:1"))
			tc.adjust(&cfg)
			if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error with %q", err, tc.want)
			}
		})
	}
}
