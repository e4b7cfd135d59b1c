package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The request every tool sends: the reference server's echo, whose reply
// repeats the params.
const (
	echoMethod = "echo"
	echoParams = `[1,"a"]`
	echoBody   = `{"jsonrpc":"2.0","id":1,"method":"echo","params":[1,"a"]}`
)

// openLoopRate is comparison 2's rate: a small fraction of what one core
// of the reference server answers over HTTP (tens of thousands per second
// on the machine the goals were set on), so latency is the server's and
// not a queue's.
const openLoopRate = 2000

// stall test: rate, and the stall's length and start (from the server's
// start; the load starts a few tens of milliseconds after it), full and
// --quick.
const stallRate = 1000

// stallConns is the stall test's HTTP connections: few enough that the
// requests caught on the wire by the stall are fewer than the top 0.1% of
// the run, so the service-time percentiles show what coordinated omission
// hides, and enough to clear the backlog quickly after the stall.
const stallConns = 8

func (s *suite) stallTimes() (length, at time.Duration) {
	if s.opt.quick {
		return 500 * time.Millisecond, time.Second
	}
	return time.Second, 3 * time.Second
}

// memory test: requests in flight, and how long the server holds each
// reply.
var memoryLevels = []int{1000, 10000, 100000}

const memoryHoldMS = 1000

// ---- 1. HTTP/1.1 closed loop

func (s *suite) compareHTTPClosed(ctx context.Context) error {
	const n, conns = 1, 50
	sec := s.section(n)
	sec.Title = "HTTP/1.1 closed loop, 50 connections"
	d := s.dur.httpClosed
	sec.Intro = fmt.Sprintf("Each tool keeps 50 requests in flight on 50 keep-alive connections for %s and reports replies per second. "+
		"rpcload checks every reply and records its latency in HDR histograms; the others count responses. "+
		"%s is each tool's whole-process CPU time (user + system) per reply; %s is the reference server's during the same run "+
		"(from /proc, 10 ms resolution).", d, cpuMetric, serverCPUMetric)
	url := "http://" + s.httpAddr + "/"
	script, err := s.wrkScript()
	if err != nil {
		return err
	}
	targets, err := s.vegetaTargets(url)
	if err != nil {
		return err
	}
	cas := "http, 50 conns"
	type runner struct {
		tool string
		fn   func() (map[string]float64, error)
	}
	runners := []runner{{"rpcload", func() (map[string]float64, error) {
		res, co, err := s.rpcloadRun(ctx, d+30*time.Second, url, "--concurrency", fmt.Sprint(conns), "--conns", fmt.Sprint(conns),
			"--duration", secs(d), "--method", echoMethod, "--params", echoParams)
		if err != nil {
			return nil, err
		}
		if a := anomalies(res); a != "" {
			sec.note("rpcload: %s", a)
		}
		return map[string]float64{"req/s": answeredPerSec(res), cpuMetric: cpuPerReq(co, float64(res.Requests.Answered))}, nil
	}}}
	if s.have("wrk") {
		runners = append(runners, runner{"wrk", func() (map[string]float64, error) {
			r, co, err := s.runWrk(ctx, url, script, conns, d)
			return map[string]float64{"req/s": r.ReqPerS, cpuMetric: cpuPerReq(co, float64(r.Requests))}, err
		}})
	}
	if s.have("vegeta") {
		runners = append(runners, runner{"vegeta", func() (map[string]float64, error) {
			bin, co, err := s.vegetaAttack(ctx, targets, d, "-rate", "0", "-max-workers", fmt.Sprint(conns))
			if err != nil {
				return nil, err
			}
			rep, err := s.vegetaReport(ctx, bin)
			if err != nil {
				return nil, err
			}
			if rep.Success < 1 {
				sec.note("vegeta: success ratio %.4f, errors %v", rep.Success, rep.Errors)
			}
			return map[string]float64{"req/s": rep.Throughput, cpuMetric: cpuPerReq(co, float64(rep.Requests))}, nil
		}})
	}
	if s.have("hey") {
		runners = append(runners, runner{"hey", func() (map[string]float64, error) {
			co, err := s.run(ctx, cmdSpec{
				Argv: []string{s.tools["hey"].Path, "-z", secs(d), "-c", fmt.Sprint(conns), "-m", "POST", "-T", "application/json", "-d", echoBody, url},
				CPU:  s.loadCPU, Timeout: d + 60*time.Second,
			})
			if err != nil {
				return nil, err
			}
			r, err := parseHey(co.Stdout)
			if err != nil {
				return nil, err
			}
			if r.Other > 0 || r.Errors {
				sec.note("hey: %d responses other than 200, errors reported: %v", r.Other, r.Errors)
			}
			return map[string]float64{"req/s": r.ReqPerS, cpuMetric: cpuPerReq(co, float64(r.OK+r.Other))}, nil
		}})
	}
	for round := 1; round <= s.opt.rounds; round++ {
		for _, r := range runners {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.measure(sec, n, cas, r.tool, round, s.withServerCPU(d, r.fn))
		}
	}
	rows := s.store.ratios(n, "req/s", "rpcload")
	sec.Tables = append(sec.Tables, namedTable{"Ratios (rpcload / other)", ratiosTable(append(rows, s.store.ratios(n, cpuMetric, "rpcload")...))})
	for _, rg := range httpClosedGoals {
		s.addGoal(s.judgeRatio(n, cas, rg))
	}
	return nil
}

// ratioGoal is a goal on rpcload's figure over another tool's in the same
// round (the median of the per-round ratios), at most or at least a bound.
type ratioGoal struct {
	name, target string
	tool, metric string
	bound        float64
	atMost       bool   // pass when the ratio is <= bound (else >= bound)
	info         string // another metric whose ratio the note shows, "" for none
}

// httpClosedGoals are comparison 1's goals. rpcload's own cost is its CPU
// time per reply; the rate is shared by every tool's round trip through
// the same server, and is shown beside it.
var httpClosedGoals = []ratioGoal{
	{"HTTP closed loop: rpcload vs wrk", ">= 0.8x wrk's req/s", "wrk", "req/s", 0.8, false, ""},
	{"HTTP closed loop: rpcload vs wrk, CPU per reply", "<= wrk's CPU per reply", "wrk", cpuMetric, 1, true, ""},
	{"HTTP closed loop: rpcload vs vegeta", "CPU per reply <= 0.5x vegeta's", "vegeta", cpuMetric, 0.5, true, "req/s"},
	{"HTTP closed loop: rpcload vs hey", ">= 1.5x hey's req/s", "hey", "req/s", 1.5, false, ""},
}

// judgeRatio judges rg on case cas of comparison n.
func (s *suite) judgeRatio(n int, cas string, rg ratioGoal) goal {
	g := goal{Comparison: n, Name: rg.name, Target: rg.target}
	ratio := func(metric string) float64 {
		return pairedRatio(s.store.values(seriesKey{n, cas, "rpcload", metric}), s.store.values(seriesKey{n, cas, rg.tool, metric}))
	}
	r := ratio(rg.metric)
	if math.IsNaN(r) {
		g.Verdict, g.Measured = "SKIP", "not measured"
		if t := s.tools[rg.tool]; t != nil && t.Path == "" {
			g.Note = t.Note
		}
		return g
	}
	g.Measured = fmtRatio(r)
	if rg.atMost {
		g.Verdict = verdict(r <= rg.bound)
	} else {
		g.Verdict = verdict(r >= rg.bound)
	}
	var notes []string
	if rg.info != "" {
		notes = append(notes, fmt.Sprintf("%s %s %s's", rg.info, fmtRatio(ratio(rg.info)), rg.tool))
	}
	if nz := s.noisy(seriesKey{n, cas, "rpcload", rg.metric}, seriesKey{n, cas, rg.tool, rg.metric}); nz != "" {
		notes = append(notes, nz)
	}
	g.Note = strings.Join(notes, "; ")
	return g
}

// ---- 2. HTTP/1.1 open loop

func (s *suite) compareOpenLoop(ctx context.Context) error {
	const n = 2
	sec := s.section(n)
	sec.Title = fmt.Sprintf("HTTP/1.1 open loop at %d req/s", openLoopRate)
	d := s.dur.openLoop
	sec.Intro = fmt.Sprintf("A fixed schedule of %d requests per second for %s, far below what the server answers, from each tool that can send on a schedule "+
		"independent of the replies. Latency percentiles in milliseconds; rpcload's are measured from each request's intended send time "+
		"(corrected), vegeta's from when it sent. wrk and hey have no open-loop mode (hey -q paces each worker, which waits for its reply "+
		"first, so a slow reply delays the schedule), so they are not in this comparison.", openLoopRate, d)
	url := "http://" + s.httpAddr + "/"
	targets, err := s.vegetaTargets(url)
	if err != nil {
		return err
	}
	cas := fmt.Sprintf("http, %d req/s", openLoopRate)
	rpc := func() (map[string]float64, error) {
		res, _, err := s.rpcloadRun(ctx, d+30*time.Second, url, "--rate", fmt.Sprint(openLoopRate), "--duration", secs(d),
			"--method", echoMethod, "--params", echoParams)
		if err != nil {
			return nil, err
		}
		if a := anomalies(res); a != "" {
			sec.note("rpcload: %s", a)
		}
		l := res.Latency.Corrected
		return map[string]float64{
			"achieved req/s": res.Rate.Achieved, "p50 ms": float64(l.P50us) / 1e3,
			"p99 ms": float64(l.P99us) / 1e3, "p99.9 ms": float64(l.P999us) / 1e3,
		}, nil
	}
	veg := func() (map[string]float64, error) {
		bin, _, err := s.vegetaAttack(ctx, targets, d, "-rate", fmt.Sprintf("%d/1s", openLoopRate))
		if err != nil {
			return nil, err
		}
		rep, err := s.vegetaReport(ctx, bin)
		if err != nil {
			return nil, err
		}
		co, err := s.run(ctx, cmdSpec{Argv: []string{s.tools["vegeta"].Path, "encode", "-to", "json", bin}, CPU: -1, Timeout: time.Minute})
		if err != nil {
			return nil, err
		}
		lat, failed, err := parseVegetaLatencies(co.Stdout)
		if err != nil {
			return nil, err
		}
		if failed > 0 {
			sec.note("vegeta: %d requests failed", failed)
		}
		sortDurations(lat)
		ms := func(q float64) float64 { return float64(quantileOf(lat, q)) / 1e6 }
		return map[string]float64{"achieved req/s": rep.Rate, "p50 ms": ms(0.5), "p99 ms": ms(0.99), "p99.9 ms": ms(0.999)}, nil
	}
	for round := 1; round <= s.opt.rounds; round++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.measure(sec, n, cas, "rpcload", round, rpc)
		if s.have("vegeta") {
			s.measure(sec, n, cas, "vegeta", round, veg)
		}
	}
	if s.have("vegeta") {
		var rows []ratioRow
		for _, m := range []string{"p50 ms", "p99 ms", "p99.9 ms"} {
			rows = append(rows, s.store.ratios(n, m, "rpcload")...)
		}
		sec.Tables = append(sec.Tables, namedTable{"Latency ratios (rpcload / vegeta)", ratiosTable(rows)})
	}
	ach := median(s.store.values(seriesKey{n, cas, "rpcload", "achieved req/s"}))
	g := goal{Comparison: n, Name: "open loop: rpcload's achieved rate", Target: fmt.Sprintf("within 0.5%% of %d req/s", openLoopRate)}
	if math.IsNaN(ach) {
		g.Verdict, g.Measured = "SKIP", "not measured"
	} else {
		off := (ach - openLoopRate) / openLoopRate
		g.Measured = fmt.Sprintf("%s req/s (%+.3f%%)", fmtNum(ach), 100*off)
		g.Verdict = verdict(math.Abs(off) <= 0.005)
		g.Note = s.noisy(seriesKey{n, cas, "rpcload", "achieved req/s"}, seriesKey{n, cas, "rpcload", "p50 ms"})
	}
	s.addGoal(g)
	return nil
}

// ---- 3. Multiplexed

// muxCell is one setting of comparison 3.
type muxCell struct{ inflight, conns int }

var muxCells = []muxCell{{1, 1}, {64, 1}, {64, 4}, {1024, 1}, {1024, 4}}

func muxCase(transport string, c muxCell) string {
	return fmt.Sprintf("%s, %d in flight, %d conn%s", transport, c.inflight, c.conns, plural(c.conns))
}

func wrkCase(n int) string {
	return fmt.Sprintf("http (wrk), %d in flight, %d conn%s", n, n, plural(n))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// minclientRun runs this binary's minclient mode pinned to the load core.
func (s *suite) minclientRun(ctx context.Context, url string, c muxCell, d time.Duration) (map[string]float64, error) {
	co, err := s.run(ctx, cmdSpec{
		Argv: []string{s.self, "minclient", "--url", url, "--inflight", fmt.Sprint(c.inflight), "--conns", fmt.Sprint(c.conns),
			"--duration", secs(d), "--method", echoMethod, "--params", echoParams},
		CPU: s.loadCPU, Timeout: d + 30*time.Second,
	})
	if err != nil {
		return nil, err
	}
	var r struct {
		Replies   uint64  `json:"replies"`
		ReqPerS   float64 `json:"req_per_s"`
		Unmatched uint64  `json:"unmatched"`
	}
	if err := json.Unmarshal([]byte(co.Stdout), &r); err != nil {
		return nil, fmt.Errorf("minclient output: %w", err)
	}
	if r.Unmatched > 0 {
		return nil, fmt.Errorf("minclient: %d replies matched no request", r.Unmatched)
	}
	return map[string]float64{"req/s": r.ReqPerS, cpuMetric: cpuPerReq(co, float64(r.Replies))}, nil
}

func (s *suite) compareMux(ctx context.Context) error {
	const n = 3
	sec := s.section(n)
	sec.Title = "Multiplexed: TCP and WebSocket, 1, 64 and 1024 in flight"
	d := s.dur.mux
	sec.Intro = fmt.Sprintf("Closed loop for %s per cell. rpcload (every check and histogram on) against the minimal client of bench/minclient "+
		"(pipelines requests, matches replies by id in a map, nothing else), on newline-delimited TCP and on WebSocket; "+
		"and wrk over HTTP/1.1 with as many connections as requests in flight, since HTTP/1.1 has one request in flight per connection "+
		"(wrk takes whole seconds only, so it runs %s). %s is each load tool's whole-process CPU time (user + system) per reply, "+
		"which a busy machine moves far less than the rate; %s is the reference server's, read from /proc around the run "+
		"(10 ms resolution): a load tool that costs more per reply than the server is what sets the pace on a machine whose two cores "+
		"are free.", d, (d+time.Second-1)/time.Second*time.Second, cpuMetric, serverCPUMetric)
	urls := map[string]string{"tcp": "tcp://" + s.tcpAddr, "ws": "ws://" + s.httpAddr + "/ws"}
	script, err := s.wrkScript()
	if err != nil {
		return err
	}
	httpURL := "http://" + s.httpAddr + "/"
	for round := 1; round <= s.opt.rounds; round++ {
		for _, tr := range []string{"tcp", "ws"} {
			for _, c := range muxCells {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				cas := muxCase(tr, c)
				s.measure(sec, n, cas, "rpcload", round, s.withServerCPU(d, func() (map[string]float64, error) {
					res, co, err := s.rpcloadRun(ctx, d+30*time.Second, urls[tr], "--concurrency", fmt.Sprint(c.inflight),
						"--conns", fmt.Sprint(c.conns), "--duration", secs(d), "--method", echoMethod, "--params", echoParams)
					if err != nil {
						return nil, err
					}
					if a := anomalies(res); a != "" {
						sec.note("rpcload %s: %s", cas, a)
					}
					return map[string]float64{"req/s": answeredPerSec(res), cpuMetric: cpuPerReq(co, float64(res.Requests.Answered))}, nil
				}))
				s.measure(sec, n, cas, "minclient", round, s.withServerCPU(d, func() (map[string]float64, error) {
					return s.minclientRun(ctx, urls[tr], c, d)
				}))
			}
		}
		if s.have("wrk") {
			for _, k := range []int{1, 64, 1024} {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				wd := (d + time.Second - 1) / time.Second * time.Second
				s.measure(sec, n, wrkCase(k), "wrk", round, s.withServerCPU(wd, func() (map[string]float64, error) {
					r, co, err := s.runWrk(ctx, httpURL, script, k, d)
					return map[string]float64{"req/s": r.ReqPerS, cpuMetric: cpuPerReq(co, float64(r.Requests))}, err
				}))
			}
		}
	}
	rows := s.store.ratios(n, "req/s", "rpcload")
	sec.Tables = append(sec.Tables, namedTable{"Ratios (rpcload / minimal client)", ratiosTable(append(rows, s.store.ratios(n, cpuMetric, "rpcload")...))})
	if s.have("wrk") {
		// rpcload over TCP with its best connection count against wrk's
		// HTTP at the same number of requests in flight.
		var wr []ratioRow
		for _, c := range []muxCell{{1, 1}, {64, 4}, {1024, 4}} {
			a := s.store.values(seriesKey{n, muxCase("tcp", c), "rpcload", "req/s"})
			m := s.store.values(seriesKey{n, muxCase("tcp", c), "minclient", "req/s"})
			b := s.store.values(seriesKey{n, wrkCase(c.inflight), "wrk", "req/s"})
			wr = append(wr,
				ratioRow{Case: muxCase("tcp", c) + " vs " + wrkCase(c.inflight), Metric: "req/s", A: "rpcload", B: "wrk",
					Paired: pairedRatio(a, b), OfMedians: median(a) / median(b)},
				ratioRow{Case: muxCase("tcp", c) + " vs " + wrkCase(c.inflight), Metric: "req/s", A: "minclient", B: "wrk",
					Paired: pairedRatio(m, b), OfMedians: median(m) / median(b)})
		}
		sec.Tables = append(sec.Tables, namedTable{"Multiplexed TCP against wrk over HTTP", ratiosTable(wr)})
	}
	for _, c := range []muxCell{{1024, 1}, {1024, 4}} {
		cas := muxCase("tcp", c)
		g := goal{Comparison: n, Name: "multiplexed " + cas, Target: ">= 0.8x the minimal client's req/s"}
		r := pairedRatio(s.store.values(seriesKey{n, cas, "rpcload", "req/s"}), s.store.values(seriesKey{n, cas, "minclient", "req/s"}))
		if math.IsNaN(r) {
			g.Verdict, g.Measured = "SKIP", "not measured"
		} else {
			g.Measured, g.Verdict = fmtRatio(r), verdict(r >= 0.8)
			notes := []string{fmt.Sprintf("CPU per reply %s the minimal client's",
				fmtRatio(pairedRatio(s.store.values(seriesKey{n, cas, "rpcload", cpuMetric}), s.store.values(seriesKey{n, cas, "minclient", cpuMetric}))))}
			if nz := s.noisy(seriesKey{n, cas, "rpcload", "req/s"}, seriesKey{n, cas, "minclient", "req/s"}); nz != "" {
				notes = append(notes, nz)
			}
			g.Note = strings.Join(notes, "; ")
		}
		s.addGoal(g)
	}
	return nil
}

// ---- 4. Coordinated omission

func (s *suite) compareStall(ctx context.Context) error {
	const n = 4
	sec := s.section(n)
	stall, at := s.stallTimes()
	d := s.dur.stallRun
	sec.Title = "Coordinated omission: a server stall with a known answer"
	sec.Intro = fmt.Sprintf("A fresh reference server (HTTP) is started with --stall %s@%s: it writes no reply for %s, starting %s after it started, "+
		"and answers whatever arrived in that window when it ends. rpcload sends %d req/s for %s on %d HTTP/1.1 connections. "+
		"Every request scheduled inside the stall waits for the rest of it, so the corrected distribution is known exactly: "+
		"with N requests, K = rate x stall of them stalled, the k-th (k = 0..K-1) waits stall - phase - k/rate + base, "+
		"everything else waits base (the server's ordinary reply time, taken as the run's median service time). "+
		"The value at quantile q is that of rank round(q N): p99 = stall - 0.01 N/rate, p99.9 = stall - 0.001 N/rate, max = stall (minus the phase, "+
		"which is unknown in [0, 1/rate) and taken as its middle, and plus base). "+
		"The model leaves out the time to clear the backlog after the stall (K requests over %d connections), which adds at most "+
		"K / (the server's rate) to the later stalled requests, a fraction of a percent here. "+
		"Service time (reply minus actual write) hides the stall: only the %d requests already on the wire when it began see it; "+
		"the rest waited in rpcload for a free connection, not on the wire.",
		stall, at, stall, at, stallRate, d, stallConns, stallConns, stallConns)
	for round := 1; round <= s.opt.rounds; round++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.measure(sec, n, "stall", "rpcload", round, func() (map[string]float64, error) {
			srv, addrs, err := s.startServer(ctx, []string{"--http", "127.0.0.1:0", "--stall", secs(stall) + "@" + secs(at)})
			if err != nil {
				return nil, err
			}
			defer s.stopDaemon(srv)
			res, _, err := s.rpcloadRun(ctx, d+60*time.Second, "http://"+addrs["http"]+"/", "--rate", fmt.Sprint(stallRate),
				"--conns", fmt.Sprint(stallConns), "--duration", secs(d), "--timeout", "30s", "--method", echoMethod, "--params", echoParams)
			if err != nil {
				return nil, err
			}
			if a := anomalies(res); a != "" {
				sec.note("rpcload: %s", a)
			}
			c, sv := res.Latency.Corrected, res.Latency.Service
			// The server's ordinary reply time: the median service time,
			// which unlike the corrected median no hiccup of the load
			// generator's schedule can move.
			base := time.Duration(sv.P50us) * time.Microsecond
			want := expectedStall(stallRate, int64(res.Requests.Answered), stall, base)
			ms := func(us int64) float64 { return float64(us) / 1e3 }
			if float64(c.MaxUs) < 0.5*float64(stall.Microseconds()) {
				sec.note("round %d: the stall did not fall inside the sending phase (max %.1f ms)", round, ms(c.MaxUs))
			}
			return map[string]float64{
				"corrected p99 ms": ms(c.P99us), "corrected p99.9 ms": ms(c.P999us), "corrected max ms": ms(c.MaxUs),
				"service p99 ms": ms(sv.P99us), "service p99.9 ms": ms(sv.P999us), "service max ms": ms(sv.MaxUs),
				"computed p99 ms": float64(want.P99) / 1e6, "computed p99.9 ms": float64(want.P999) / 1e6, "computed max ms": float64(want.Max) / 1e6,
				"requests": float64(res.Requests.Answered), "base ms": float64(base) / 1e6,
			}, nil
		})
	}
	v := func(m string) []float64 { return s.store.values(seriesKey{n, "stall", "rpcload", m}) }
	t := table{Head: []string{"figure", "computed", "rpcload corrected", "corrected / computed", "rpcload service time"}}
	for _, q := range []string{"p99", "p99.9", "max"} {
		got, want := v("corrected "+q+" ms"), v("computed "+q+" ms")
		r := pairedRatio(got, want)
		t.Rows = append(t.Rows, []string{q, fmtNum(median(want)) + " ms", fmtNum(median(got)) + " ms", fmtRatio(r), fmtNum(median(v("service "+q+" ms"))) + " ms"})
		g := goal{Comparison: n, Name: "stall test: corrected " + q, Target: "within 5% of the computed " + fmtNum(median(want)) + " ms"}
		if math.IsNaN(r) {
			g.Verdict, g.Measured = "SKIP", "not measured"
		} else {
			g.Measured = fmt.Sprintf("%s ms (%+.2f%%)", fmtNum(median(got)), 100*(r-1))
			g.Verdict = verdict(within(r, 1, 0.05))
			var rounds []string
			for i := 0; i < len(got) && i < len(want); i++ {
				rounds = append(rounds, fmt.Sprintf("%+.1f%%", 100*(got[i]/want[i]-1)))
			}
			g.Note = "rounds: " + strings.Join(rounds, ", ")
			if nz := s.noisy(seriesKey{n, "stall", "rpcload", "corrected " + q + " ms"}); nz != "" {
				g.Note += "; " + nz
			}
		}
		s.addGoal(g)
	}
	sec.Tables = append(sec.Tables, namedTable{"Corrected latency against the computed answer (medians over rounds)", t})
	return nil
}

// ---- 5. Memory

func (s *suite) compareMemory(ctx context.Context) error {
	const n = 5
	sec := s.section(n)
	d := s.dur.memory
	sec.Title = "Memory per request in flight"
	sec.Intro = fmt.Sprintf("Closed loop over TCP (4 connections) against the reference server's sleep method, which holds each reply %d ms, "+
		"so exactly N requests are in flight for %s. Peak RSS is the rpcload process's (getrusage of the real binary). "+
		"Heap is read in process (bench heapprobe: rpcload's engine, the same code, with runtime.GC then the live heap, several times "+
		"once the first replies have come back, keeping the largest); heap per request in flight is (heap at N - heap at 1) / (N - 1), "+
		"so fixed costs (histograms, the 4 connections' buffers) are not counted against requests.", memoryHoldMS, d)
	url := "tcp://" + s.tcpAddr
	params := fmt.Sprintf(`{"ms":%d}`, memoryHoldMS)
	for round := 1; round <= s.opt.rounds; round++ {
		for _, level := range append([]int{1}, memoryLevels...) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			cas := fmt.Sprintf("%d in flight", level)
			if level > 1 {
				s.measure(sec, n, cas, "rpcload", round, func() (map[string]float64, error) {
					res, co, err := s.rpcloadRun(ctx, d+90*time.Second, url, "--concurrency", fmt.Sprint(level), "--conns", "4",
						"--duration", secs(d), "--timeout", "60s", "--method", "sleep", "--params", params)
					if err != nil {
						return nil, err
					}
					if a := anomalies(res); a != "" {
						sec.note("rpcload %s: %s", cas, a)
					}
					return map[string]float64{"peak RSS MiB": float64(co.MaxRSSKiB) / 1024, "in flight max": float64(res.InFlightMax)}, nil
				})
			}
			s.measure(sec, n, cas, "heapprobe", round, func() (map[string]float64, error) {
				co, err := s.run(ctx, cmdSpec{
					Argv: []string{s.self, "heapprobe", "--url", url, "--inflight", fmt.Sprint(level), "--hold-ms", fmt.Sprint(memoryHoldMS),
						"--duration", secs(d)},
					CPU: s.loadCPU, Timeout: d + 90*time.Second,
				})
				if err != nil {
					return nil, err
				}
				var hp heapReport
				if err := json.Unmarshal([]byte(co.Stdout), &hp); err != nil {
					return nil, fmt.Errorf("heapprobe output: %w", err)
				}
				if hp.Anomalies != "" {
					sec.note("heapprobe %s: %s", cas, hp.Anomalies)
				}
				return map[string]float64{"live heap MiB": float64(hp.HeapPeak) / (1 << 20), "in flight max": float64(hp.InFlightMax)}, nil
			})
		}
	}
	base := s.store.values(seriesKey{n, "1 in flight", "heapprobe", "live heap MiB"})
	t := table{Head: []string{"in flight", "peak RSS (rpcload)", "live heap (engine)", "heap per request in flight"}}
	for _, level := range memoryLevels {
		cas := fmt.Sprintf("%d in flight", level)
		h := s.store.values(seriesKey{n, cas, "heapprobe", "live heap MiB"})
		per := make([]float64, len(h))
		for i := range h {
			per[i] = math.NaN()
			if i < len(base) {
				per[i] = (h[i] - base[i]) * (1 << 20) / float64(level-1)
			}
			s.store.add(sample{Comparison: n, Case: cas, Tool: "heapprobe", Metric: "heap B per in flight", Round: i + 1, Value: per[i]})
		}
		rss := median(s.store.values(seriesKey{n, cas, "rpcload", "peak RSS MiB"}))
		t.Rows = append(t.Rows, []string{cas, fmtNum(rss) + " MiB", fmtNum(median(h)) + " MiB", fmtNum(median(per)) + " B"})
		g := goal{Comparison: n, Name: fmt.Sprintf("heap per request in flight at %s", groupThousands(fmt.Sprint(level))), Target: "<= 256 B"}
		if p := median(per); math.IsNaN(p) {
			g.Verdict, g.Measured = "SKIP", "not measured"
		} else {
			g.Measured, g.Verdict = fmtNum(p)+" B", verdict(p <= 256)
			g.Note = s.noisy(seriesKey{n, cas, "heapprobe", "heap B per in flight"})
		}
		s.addGoal(g)
		if level == 100000 {
			g = goal{Comparison: n, Name: "peak RSS at 100,000 in flight", Target: "< 128 MiB"}
			if math.IsNaN(rss) {
				g.Verdict, g.Measured = "SKIP", "not measured"
			} else {
				g.Measured, g.Verdict = fmtNum(rss)+" MiB", verdict(rss < 128)
			}
			s.addGoal(g)
		}
	}
	sec.Tables = append(sec.Tables, namedTable{"Memory (medians over rounds)", t})
	// Where the heap goes at 100,000 in flight: a separate, profiled run
	// (its sampling costs time, so its readings are not among the above).
	if ctx.Err() == nil {
		prof := filepath.Join(s.outDir, "profiles", "heap-100k.pprof")
		if err := os.MkdirAll(filepath.Dir(prof), 0o755); err != nil {
			return err
		}
		_, err := s.run(ctx, cmdSpec{
			Argv: []string{s.self, "heapprobe", "--url", url, "--inflight", "100000", "--hold-ms", fmt.Sprint(memoryHoldMS),
				"--duration", secs(d + 2*time.Second), "--heapprofile", prof},
			CPU: s.loadCPU, Timeout: d + 90*time.Second,
		})
		if err != nil {
			sec.note("heap profile: %s", firstLine(err.Error()))
			return nil
		}
		co, err := s.run(ctx, cmdSpec{Argv: []string{"go", "tool", "pprof", "-sample_index=inuse_space", "-top", "-nodecount=20", prof}, CPU: -1, Timeout: time.Minute})
		if err != nil {
			sec.note("heap profile: %s", firstLine(err.Error()))
			return nil
		}
		sec.Pre = append(sec.Pre, namedText{"Live heap at 100,000 in flight, by allocation site (bench/.out/profiles/heap-100k.pprof)", trimPprof(co.Stdout)})
	}
	return nil
}

// ---- 6. Resolution

func (s *suite) compareResolution(ctx context.Context) error {
	const n = 6
	sec := s.section(n)
	d := s.dur.resolution
	sec.Title = "Resolution: a 1 ms busy-wait"
	sec.Intro = fmt.Sprintf("The reference server's spin method busy-waits the given microseconds before it replies (CPU time, not a timer). "+
		"rpcload keeps one request in flight on one TCP connection for %s; its median latency should be 1 ms plus the round trip. "+
		"To tell the round trip and the server's own overhead from rpcload's timing, the same runs are made with spin of 1 us "+
		"(the server's busy-wait path with next to no wait) and with echo (answered at once), and the minimal client runs them too: "+
		"it times each round trip with nothing between the socket and the clock.", d)
	url := "tcp://" + s.tcpAddr
	cases := []struct{ name, method, params string }{
		{"spin 1000 us", "spin", `{"us":1000}`},
		{"spin 1 us", "spin", `{"us":1}`},
		{"echo", echoMethod, echoParams},
	}
	for round := 1; round <= s.opt.rounds; round++ {
		for _, c := range cases {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.measure(sec, n, c.name, "rpcload", round, func() (map[string]float64, error) {
				res, _, err := s.rpcloadRun(ctx, d+30*time.Second, url, "--concurrency", "1", "--conns", "1", "--duration", secs(d),
					"--method", c.method, "--params", c.params)
				if err != nil {
					return nil, err
				}
				if a := anomalies(res); a != "" {
					sec.note("rpcload %s: %s", c.name, a)
				}
				l := res.Latency.Corrected
				return map[string]float64{
					"p50 ms": float64(l.P50us) / 1e3, "p99 ms": float64(l.P99us) / 1e3, "mean ms": l.MeanUs / 1e3,
					"service p50 ms": float64(res.Latency.Service.P50us) / 1e3,
				}, nil
			})
			s.measure(sec, n, c.name, "minclient", round, func() (map[string]float64, error) {
				co, err := s.run(ctx, cmdSpec{
					Argv: []string{s.self, "minclient", "--url", url, "--inflight", "1", "--conns", "1", "--duration", secs(d),
						"--method", c.method, "--params", c.params, "--timed"},
					CPU: s.loadCPU, Timeout: d + 30*time.Second,
				})
				if err != nil {
					return nil, err
				}
				var r struct {
					ReqPerS float64 `json:"req_per_s"`
					P50     int64   `json:"p50_ns"`
				}
				if err := json.Unmarshal([]byte(co.Stdout), &r); err != nil {
					return nil, fmt.Errorf("minclient output: %w", err)
				}
				return map[string]float64{"mean ms": 1e3 / r.ReqPerS, "p50 ms": float64(r.P50) / 1e6}, nil
			})
		}
	}
	s.addGoal(s.resolutionGoal(n))
	return nil
}

// resolutionSlackUS is how far rpcload's p50 of the 1 ms busy-wait may be
// from the minimal client's, in microseconds: what rpcload's own timing
// adds, the round trip and the server being the same for both.
const resolutionSlackUS = 5

// resolutionGoal compares rpcload's p50 of the 1 ms busy-wait with the
// minimal client's, round by round (the median of the differences).
func (s *suite) resolutionGoal(n int) goal {
	vals := func(cas, tool string) []float64 { return s.store.values(seriesKey{n, cas, tool, "p50 ms"}) }
	v := func(cas, tool string) float64 { return median(vals(cas, tool)) }
	g := goal{Comparison: n, Name: "resolution: p50 of a 1 ms busy-wait", Target: fmt.Sprintf("within %d us of the minimal client's p50", resolutionSlackUS)}
	rpc, mc := vals("spin 1000 us", "rpcload"), vals("spin 1000 us", "minclient")
	var diffs []float64
	for i := 0; i < len(rpc) && i < len(mc); i++ {
		diffs = append(diffs, 1000*(rpc[i]-mc[i])) // NaN where a round is missing
	}
	diff := median(diffs)
	if math.IsNaN(diff) {
		g.Verdict, g.Measured = "SKIP", "not measured"
		return g
	}
	g.Measured = fmt.Sprintf("%.3f ms, %+.0f us from the minimal client's %.3f ms", v("spin 1000 us", "rpcload"), diff, v("spin 1000 us", "minclient"))
	g.Verdict = verdict(math.Abs(diff) <= resolutionSlackUS)
	g.Note = fmt.Sprintf("rpcload's p50 of spin 1 us %.3f ms, of echo %.3f ms", v("spin 1 us", "rpcload"), v("echo", "rpcload"))
	return g
}
