package engine

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/testsrv"
	"github.com/rpcload/rpcload/internal/workload"
)

// TestClosedLoopStreams runs closed loop over TCP, where each connection's
// writer makes its own ticks from its part of the credits: the concurrency
// is held exactly, batches fit their connection's part, a mix with
// notifications and batches comes out clean, and connections the server
// closes are replaced without losing track of a request.
func TestClosedLoopStreams(t *testing.T) {
	tests := []struct {
		name        string
		concurrency int
		conns       int
		faults      []testsrv.FaultSpec
		adjust      func(*Config)
		wantMax     int64 // in flight at the peak; 0: only at most the concurrency
	}{
		{name: "one call", concurrency: 8, conns: 3, wantMax: 8},
		{name: "less than one request per connection", concurrency: 1, conns: 4, wantMax: 1},
		{name: "batches wider than an even part", concurrency: 10, conns: 4, wantMax: 10,
			adjust: func(c *Config) { c.Batch = 5 }},
		{name: "a mix with batches and notifications", concurrency: 6, conns: 2, adjust: func(c *Config) {
			c.Calls = []workload.Call{
				{Name: "echo", Method: "echo", Params: workload.StaticParams(`[1]`), Weight: 2},
				{Name: "batch", Method: "echo", Params: workload.StaticParams(`[2]`), Batch: 3},
				{Name: "note", Method: "echo", Params: workload.StaticParams(`[3]`), Notify: true},
			}
		}},
		{name: "connections the server closes", concurrency: 16, conns: 2,
			faults: []testsrv.FaultSpec{{Fault: testsrv.FaultClose, Prob: 0.002}}},
		// One request per connection: each reader sends its slot's next
		// request itself (credits.handoff).
		{name: "one request per connection", concurrency: 2, conns: 2, wantMax: 2},
		{name: "one request per connection with notifications", concurrency: 1, conns: 1, wantMax: 1, adjust: func(c *Config) {
			c.Calls = []workload.Call{
				{Name: "echo", Method: "echo", Params: workload.StaticParams(`[1]`)},
				{Name: "note", Method: "echo", Params: workload.StaticParams(`[3]`), Notify: true},
			}
		}},
		{name: "one request per connection the server closes", concurrency: 2, conns: 2,
			faults: []testsrv.FaultSpec{{Fault: testsrv.FaultClose, Prob: 0.01}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, tcpURL := startServer(t, testsrv.Config{Faults: tc.faults, Seed: 1})
			cfg := baseConfig(target(t, tcpURL))
			cfg.Rate, cfg.Concurrency, cfg.Conns = 0, tc.concurrency, tc.conns
			cfg.Duration, cfg.Timeout, cfg.Drain = 300*time.Millisecond, 5*time.Second, 5*time.Second
			if tc.adjust != nil {
				tc.adjust(&cfg)
			}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			q := res.Requests
			if q.Sent+q.Notifications < 50 {
				t.Fatalf("only %d requests and %d notifications sent: the writers stalled", q.Sent, q.Notifications)
			}
			if res.InFlightMax > int64(tc.concurrency) || tc.wantMax > 0 && res.InFlightMax != tc.wantMax {
				t.Errorf("in flight at most %d, want %d (concurrency %d)", res.InFlightMax, tc.wantMax, tc.concurrency)
			}
			if q.Sent != q.Answered+q.TransportErrors+q.Timeouts+q.Leaked {
				t.Errorf("requests %+v: not every request ended exactly once", q)
			}
			if tc.faults == nil {
				if len(res.Violations) != 0 || q.OK != q.Sent {
					t.Errorf("requests %+v, violations %v: want every request answered ok", q, res.Violations)
				}
			} else if q.TransportErrors == 0 || res.Connections.Lost == 0 || res.Connections.Opened <= int64(tc.conns) {
				t.Errorf("requests %+v, connections %+v: want lost connections replaced", q, res.Connections)
			}
			if res.Latency.Corrected.MinUs < res.Latency.Service.MinUs || res.Latency.Corrected.P50us < res.Latency.Service.P50us {
				t.Errorf("corrected latency (min %dus, p50 %dus) below service time (min %dus, p50 %dus)",
					res.Latency.Corrected.MinUs, res.Latency.Corrected.P50us, res.Latency.Service.MinUs, res.Latency.Service.P50us)
			}
		})
	}
}

// TestWriterTicksFromCredits: a writer turns the credits in hand into ticks,
// each intended when the last of its credits came back, numbers them from a
// block of the run's count, and keeps what a tick it cannot pay for yet
// needs until more credits come.
func TestWriterTicksFromCredits(t *testing.T) {
	p := newRequestPathCalls(profile.JSONRPC, "",
		workload.Call{Name: "one", Method: "echo", Params: workload.StaticParams(`[1]`)},
		workload.Call{Name: "three", Method: "echo", Params: workload.StaticParams(`[3]`), Batch: 3})
	r := p.r
	r.cfg.Seed = 7
	done := make(chan struct{})
	r.sendDone = done
	pool := newCredits(0, 8, 0)
	w := &streamWriter{d: &streamDriver{r: r}, pool: pool, g: r.newParamGen(), batch: make([]tick, 0, writeCoalesce)}
	w.ticker = newCreditTicker(r, pool, w.g, writeCoalesce)

	// The calls the run's first numbers pick, and what each needs.
	var weights []int
	for k := uint64(1); k <= 6; k++ {
		weights = append(weights, r.calls[pick(r, k)].weight)
	}
	times := []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150, 160, 170, 180}
	need := 0
	for _, n := range weights {
		need += n
	}
	for _, at := range times[:need] {
		pool.give(1, at)
	}
	var got []tick
	for len(got) < len(weights) {
		if !w.fromCredits() {
			t.Fatal("fromCredits ended while sending goes on")
		}
		got = append(got, w.batch...)
	}
	used := 0
	for i, tk := range got {
		want := times[used+weights[i]-1] // credits come back in order: the last is the latest
		used += weights[i]
		if tk.seq != uint64(i+1) || tk.call != pick(r, tk.seq) || tk.intended != want {
			t.Errorf("tick %d = %+v, want seq %d, call %d, intended %d", i, tk, i+1, pick(r, uint64(i+1)), want)
		}
	}
	if n := r.inflight.Load(); n != int64(need) {
		t.Errorf("in flight %d after the ticks, want %d", n, need)
	}
	close(done)
	if w.fromCredits() {
		t.Error("fromCredits made a batch after sending ended")
	}
	if seqs := []uint64{got[0].seq, got[len(got)-1].seq}; !slices.Equal(seqs, []uint64{1, uint64(len(weights))}) {
		t.Errorf("ticks numbered %v, want 1..%d", seqs, len(weights))
	}
}

// TestWriteDeadline: a writer sets its write deadline --timeout ahead and
// reuses it while it is less than 1/64 of the timeout old.
func TestWriteDeadline(t *testing.T) {
	r := &run{cfg: &Config{Plan: workload.Plan{Timeout: 64 * time.Second}}, base: time.Now()}
	w := &streamWriter{d: &streamDriver{r: r}}
	sec := int64(time.Second)
	tests := []struct {
		now      int64
		wantFrom int64 // run-clock time the deadline was computed at
	}{{0, 0}, {sec / 2, 0}, {sec, 0}, {sec + 1, sec + 1}, {2 * sec, sec + 1}, {3 * sec, 3 * sec}}
	for _, tc := range tests {
		got := w.writeDeadline(tc.now)
		if want := r.wallClock(tc.wantFrom).Add(64 * time.Second); !got.Equal(want) {
			t.Errorf("writeDeadline(%v) = %v after the base, want %v", time.Duration(tc.now), got.Sub(r.base), want.Sub(r.base))
		}
	}
}

// TestHTTPPostAllocatesNothing: a POST over a warm HTTP/1.1 connection
// allocates nothing in rpcload (a server that answers without allocating
// either, so every allocation counted is the client's). The errors.As
// target for HTTP error statuses used to escape on every POST.
func TestHTTPPostAllocatesNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	reply := []byte(`{"jsonrpc":"2.0","id":1,"result":[1,"a"]}`)
	clHeader := []byte("content-length: ")
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(reply)) + "\r\n\r\n" + string(reply))
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReaderSize(c, 4096)
		for {
			n := 0
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if len(line) <= 2 {
					break // the blank line that ends the head
				}
				if len(line) > 16 && bytes.EqualFold(line[:16], clHeader) {
					n = 0
					for _, c := range bytes.TrimSpace(line[16:]) {
						n = 10*n + int(c-'0')
					}
				}
			}
			if _, err := br.Discard(n); err != nil {
				return
			}
			if _, err := c.Write(resp); err != nil {
				return
			}
		}
	}()
	r := &run{cfg: &Config{Target: mustTarget(t, "http://"+ln.Addr().String()+"/"), MaxFrame: 1 << 20, Plan: workload.Plan{Timeout: 10 * time.Second}}}
	p := &poster{d: newHTTPDriver(r)}
	defer p.close()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1,"a"]}`)
	var got []byte
	post := func() {
		if got, err = p.post(body, got, r.now()); err != nil {
			t.Fatal(err)
		}
	}
	post() // dials and grows the buffers
	if n := testing.AllocsPerRun(200, post); n != 0 {
		t.Errorf("a POST allocates %v times; want 0", n)
	}
	if !bytes.Equal(got, reply) {
		t.Errorf("reply %q, want %q", got, reply)
	}
}

// TestClosedLoopStages: with concurrency stages the number in flight
// follows the target: the run's peak reaches the top stage and never
// exceeds it, and the early intervals hold fewer in flight than the late.
func TestClosedLoopStages(t *testing.T) {
	_, httpURL, tcpURL := startServer(t, testsrv.Config{})
	for _, url := range []string{tcpURL, httpURL} {
		t.Run(url[:4], func(t *testing.T) {
			cfg := baseConfig(target(t, url))
			cfg.Rate = 0
			cfg.Method, cfg.Params = "sleep", []byte(`{"ms":20}`)
			cfg.StartConcurrency = 2
			if url == httpURL {
				cfg.Conns = 40 // a connection per request in flight
			}
			cfg.Stages = []workload.Stage{{Duration: time.Second, Concurrency: 2}, {Duration: time.Second, Concurrency: 40}}
			cfg.Interval = 100 * time.Millisecond
			cfg.Timeout, cfg.Drain = 5*time.Second, 5*time.Second
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.InFlightMax > 40 || res.InFlightMax < 20 {
				t.Errorf("in flight at most %d, want up to the top stage (40) and not past it", res.InFlightMax)
			}
			// Judged by the series' own times, not by counting points: on
			// a machine six burners keep busy, intervals stretch and a
			// 20 ms sleep takes 250 ms, to both stages alike.
			var early, late uint64
			for _, p := range res.Series {
				switch {
				case p.T <= 1:
					early += p.Sent
				case p.T <= 2:
					late += p.Sent
				}
			}
			if early == 0 || late < 3*early {
				t.Errorf("sent %d in the first second (2 in flight) and %d in the second (ramping to 40): no ramp\n%+v", early, late, res.Series)
			}
		})
	}
}
