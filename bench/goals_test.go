package main

import (
	"strings"
	"testing"
)

// storeOf fills a store with one series per key, round by round (NaN: the
// round is missing).
func storeOf(series map[seriesKey][]float64) store {
	var st store
	for k, vs := range series {
		for i, v := range vs {
			if v == v { // not NaN
				st.add(sample{Comparison: k.Comparison, Case: k.Case, Tool: k.Tool, Metric: k.Metric, Round: i + 1, Value: v})
			}
		}
	}
	return st
}

func TestJudgeRatio(t *testing.T) {
	const cas = "http, 50 conns"
	key := func(tool, metric string) seriesKey { return seriesKey{1, cas, tool, metric} }
	goalOf := func(name string) ratioGoal {
		for _, g := range httpClosedGoals {
			if g.name == name {
				return g
			}
		}
		t.Fatalf("no goal %q", name)
		return ratioGoal{}
	}
	for _, tc := range []struct {
		name    string
		goal    string
		series  map[seriesKey][]float64
		tools   map[string]*tool
		verdict string
		meas    string
		note    string
	}{
		{
			name: "vegeta: CPU per reply under half, the rate shown beside it",
			goal: "HTTP closed loop: rpcload vs vegeta",
			series: map[seriesKey][]float64{
				key("rpcload", cpuMetric): {20, 22, 21}, key("vegeta", cpuMetric): {50, 50, 50},
				key("rpcload", "req/s"): {300, 300, 300}, key("vegeta", "req/s"): {200, 200, 200},
			},
			verdict: "PASS", meas: "0.42x", note: "req/s 1.50x vegeta's",
		},
		{
			name: "vegeta: CPU per reply over half fails whatever the rate",
			goal: "HTTP closed loop: rpcload vs vegeta",
			series: map[seriesKey][]float64{
				key("rpcload", cpuMetric): {30, 30, 30}, key("vegeta", cpuMetric): {50, 50, 50},
				key("rpcload", "req/s"): {600, 600, 600}, key("vegeta", "req/s"): {200, 200, 200},
			},
			verdict: "FAIL", meas: "0.60x", note: "req/s 3.00x vegeta's",
		},
		{
			name: "wrk: CPU per reply equal to wrk's passes",
			goal: "HTTP closed loop: rpcload vs wrk, CPU per reply",
			series: map[seriesKey][]float64{
				key("rpcload", cpuMetric): {14, 15}, key("wrk", cpuMetric): {14, 15},
			},
			verdict: "PASS", meas: "1.00x",
		},
		{
			name: "wrk: rate goal, noisy rounds noted",
			goal: "HTTP closed loop: rpcload vs wrk",
			series: map[seriesKey][]float64{
				key("rpcload", "req/s"): {100, 200, 150}, key("wrk", "req/s"): {200, 200, 200},
			},
			verdict: "FAIL", meas: "0.75x", note: "rounds disagree, spread: rpcload req/s 67%",
		},
		{
			name:    "a tool that could not be installed is skipped with why",
			goal:    "HTTP closed loop: rpcload vs hey",
			series:  map[seriesKey][]float64{key("rpcload", "req/s"): {100}},
			tools:   map[string]*tool{"hey": {Name: "hey", Note: "not installed (--no-install)"}},
			verdict: "SKIP", meas: "not measured", note: "not installed (--no-install)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &suite{store: storeOf(tc.series), tools: tc.tools}
			g := s.judgeRatio(1, cas, goalOf(tc.goal))
			if g.Verdict != tc.verdict || g.Measured != tc.meas || g.Note != tc.note || g.Comparison != 1 {
				t.Fatalf("goal = %+v; want verdict %s, measured %q, note %q", g, tc.verdict, tc.meas, tc.note)
			}
		})
	}
}

func TestResolutionGoal(t *testing.T) {
	key := func(cas, tool string) seriesKey { return seriesKey{6, cas, tool, "p50 ms"} }
	others := map[seriesKey][]float64{key("spin 1 us", "rpcload"): {0.036}, key("echo", "rpcload"): {0.031}}
	for _, tc := range []struct {
		name     string
		rpc, min []float64
		verdict  string
		meas     string
	}{
		{"within 5 us: the median of the per-round differences", []float64{1.062, 1.070, 1.060}, []float64{1.059, 1.060, 1.058}, "PASS",
			"1.062 ms, +3 us from the minimal client's 1.059 ms"},
		{"17 us over", []float64{1.076}, []float64{1.059}, "FAIL", "1.076 ms, +17 us from the minimal client's 1.059 ms"},
		{"faster than the minimal client by more than 5 us is suspect too", []float64{1.050}, []float64{1.059}, "FAIL",
			"1.050 ms, -9 us from the minimal client's 1.059 ms"},
		{"a round missing on one side is left out", []float64{nan, 1.061}, []float64{1.001, 1.059}, "PASS",
			"1.061 ms, +2 us from the minimal client's 1.030 ms"},
		{"the minimal client did not run", []float64{1.06}, nil, "SKIP", "not measured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			series := map[seriesKey][]float64{key("spin 1000 us", "rpcload"): tc.rpc, key("spin 1000 us", "minclient"): tc.min}
			for k, v := range others {
				series[k] = v
			}
			s := &suite{store: storeOf(series)}
			g := s.resolutionGoal(6)
			if g.Verdict != tc.verdict || g.Measured != tc.meas || g.Target != "within 5 us of the minimal client's p50" {
				t.Fatalf("goal = %+v; want verdict %s, measured %q", g, tc.verdict, tc.meas)
			}
			if tc.verdict != "SKIP" && g.Note != "rpcload's p50 of spin 1 us 0.036 ms, of echo 0.031 ms" {
				t.Errorf("note = %q", g.Note)
			}
		})
	}
}

// split is a time split with the given shares, the rest in other.
func split(busy float64, shares map[string]float64) fuzzTimeSplit {
	ts := fuzzTimeSplit{BusyS: busy, Shares: map[string]float64{}}
	rest := 1.0
	for p, v := range shares {
		ts.Shares[p] = v
		rest -= v
	}
	ts.Shares["other"] = rest
	return ts
}

func TestFuzzGoal(t *testing.T) {
	tcp, stdio := fuzzTransports[0], fuzzTransports[2]
	if tcp.caseName() != "tcp, 8 workers" || stdio.caseName() != "stdio, 1 worker" || tcp.goal != 5000 || stdio.goal != 1000 || fuzzTransports[1].goal != 0 {
		t.Fatalf("transports = %+v", fuzzTransports)
	}
	for _, tc := range []struct {
		name    string
		ft      fuzzTransport
		execs   []float64
		splits  []fuzzTimeSplit
		verdict string
		meas    string
		note    string
	}{
		{"tcp over the goal, the shares of 5% or more in the note", tcp, []float64{6000, 4000, 5500},
			[]fuzzTimeSplit{split(24, map[string]float64{"wait": 0.8, "send": 0.1}), split(24, map[string]float64{"wait": 0.9, "send": 0.04}), split(24, map[string]float64{"wait": 0.85, "send": 0.05})},
			"PASS", "5,500 execs/s", "time: send 5.0%, wait 85.0%, other 10.0%; rounds disagree, spread: rpcfuzz execs/s 36%"},
		{"stdio under the goal", stdio, []float64{240}, []fuzzTimeSplit{split(3, map[string]float64{"wait": 0.9, "restart": 0.06})},
			"FAIL", "240 execs/s", "time: wait 90.0%, restart 6.0%"},
		{"not run", stdio, nil, nil, "SKIP", "not measured", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &suite{store: storeOf(map[seriesKey][]float64{{7, tc.ft.caseName(), "rpcfuzz", "execs/s"}: tc.execs})}
			g := s.fuzzGoal(7, tc.ft, tc.splits)
			if g.Verdict != tc.verdict || g.Measured != tc.meas || g.Note != tc.note || g.Name != "rpcfuzz execs/s, "+tc.ft.caseName() {
				t.Fatalf("goal = %+v; want verdict %s, measured %q, note %q", g, tc.verdict, tc.meas, tc.note)
			}
		})
	}
}

func TestFuzzSplitTable(t *testing.T) {
	tb := fuzzSplitTable(map[string][]fuzzTimeSplit{
		"stdio, 1 worker": {split(3, map[string]float64{"wait": 0.9})},
		"tcp, 8 workers":  {split(24, map[string]float64{"wait": 0.8, "judge": 0.05}), split(23, map[string]float64{"wait": 0.86, "judge": 0.04})},
	})
	want := []string{
		"case|send|wait|judge|restart|confirm|minimize|canary|other|worker-seconds",
		"tcp, 8 workers|0.0%|83.0%|4.5%|0.0%|0.0%|0.0%|0.0%|12.5%|23.50",
		"stdio, 1 worker|0.0%|90.0%|0.0%|0.0%|0.0%|0.0%|0.0%|10.0%|3",
	}
	got := []string{strings.Join(tb.Head, "|")}
	for _, r := range tb.Rows {
		got = append(got, strings.Join(r, "|"))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestFuzzCommands(t *testing.T) {
	for _, tc := range []struct {
		name    string
		taskset string
		ft      fuzzTransport
		target  string
		want    string
	}{
		{"tcp, pinned", "/usr/bin/taskset", fuzzTransports[0], "tcp://127.0.0.1:4000",
			"taskset -c 1 rpcfuzz run tcp://127.0.0.1:4000 --out bench/.out/fuzz/tcp-1 --duration 5s --seed 1 --workers 8 --slow-min 1h -q"},
		{"http, unpinned", "", fuzzTransports[1], "http://127.0.0.1:4000/",
			"rpcfuzz run http://127.0.0.1:4000/ --out bench/.out/fuzz/tcp-1 --duration 5s --seed 1 --workers 8 --slow-min 1h -q"},
		{"stdio: the child gets one P and the server's core", "/usr/bin/taskset", fuzzTransports[2], "",
			"taskset -c 1 rpcfuzz run --out bench/.out/fuzz/tcp-1 --duration 5s --seed 1 --workers 1 --slow-min 1h -q -- env GOMAXPROCS=1 taskset -c 0 rpcload serve --stdio"},
		{"stdio, unpinned", "", fuzzTransports[2], "",
			"rpcfuzz run --out bench/.out/fuzz/tcp-1 --duration 5s --seed 1 --workers 1 --slow-min 1h -q -- env GOMAXPROCS=1 rpcload serve --stdio"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &suite{root: "/repo", work: "/tmp/w", outDir: "/repo/bench/.out", rpcload: "/tmp/w/rpcload", rpcfuzz: "/tmp/w/rpcfuzz",
				taskset: tc.taskset, srvCPU: 0, loadCPU: 1}
			argv := s.fuzzArgs(tc.ft, tc.target, "/repo/bench/.out/fuzz/tcp-1", 5e9)
			if got := s.display(cmdSpec{Argv: argv, CPU: s.loadCPU}); got != tc.want {
				t.Fatalf("command:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestQuietMachine(t *testing.T) {
	for _, tc := range []struct {
		load, want, not string
	}{
		{"0.21 0.30 0.40", "The 1-minute load average at the start, 0.21, was under 0.5: a quiet machine.", "not a quiet"},
		{"0.50 0.10 0.10", "This was not a quiet machine: the 1-minute load average at the start was 0.50, not under 0.5", "was under"},
		{"4.48 2.45 1.21", "not a quiet machine: the 1-minute load average at the start was 4.48", "was under"},
		{"unknown", "Whether the machine was quiet is not known", "a quiet machine"},
		{"", "Whether the machine was quiet is not known", "a quiet machine"},
	} {
		got := quietMachine(tc.load)
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("quietMachine(%q) = %q; want it to hold %q and not %q", tc.load, got, tc.want, tc.not)
		}
	}
}
