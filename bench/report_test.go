package main

import (
	"github.com/rpcload/rpcload/internal/golden"

	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestMarkdownGolden pins the whole report of a suite with every part
// filled, byte for byte (the elapsed time, which the clock decides, is
// masked).
func TestMarkdownGolden(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "bench"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, analysisFile), []byte("The server is the limit.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &suite{
		opt:     options{quick: true, rounds: 2, only: map[int]bool{1: true, 3: true, 7: true}},
		root:    root,
		srvCPU:  0,
		loadCPU: 1,
		rpcload: filepath.Join(root, "no-such-binary"),
		tools: map[string]*tool{
			"wrk":    {Name: "wrk", Path: "/usr/bin/wrk", Version: "4.1.0", Note: "Debian package"},
			"vegeta": {Name: "vegeta", Note: "go install failed"},
		},
		started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		machine: machineInfo{cpuModel: "Test CPU", cpus: 2, memory: "8 GiB", kernel: "6.1", os: "Debian", goVersion: "go1.26", loadStart: "0.1 0.2 0.3", loadEnd: "1.0 1.1 1.2"},
		goals:   []goal{{Comparison: 7, Name: "rpcfuzz execs/s, tcp, 8 workers", Target: ">= 5,000 execs/s", Measured: "2,655 execs/s", Verdict: "FAIL", Note: "time: wait 86.0%"}, {Comparison: 3, Name: "pipelined", Target: ">= 1x", Measured: "1.2x", Verdict: "PASS"}, {Comparison: 1, Name: "http", Target: ">= 0.9x", Measured: "0.8x", Verdict: "FAIL", Note: "noisy"}},
		sections: map[int]*section{
			1: {Title: "HTTP", Intro: "rpcload against wrk.", ran: true,
				Tables:   []namedTable{{Name: "Extra", Table: table{Head: []string{"a", "b"}, Rows: [][]string{{"1", "2"}}}}},
				Pre:      []namedText{{Name: "Profile", Text: "flat 10%"}},
				Notes:    []string{"a note"},
				Commands: []string{"rpcload run --target http://127.0.0.1:1", "wrk -t1 http://127.0.0.1:1"}},
			2: {Title: "not run"},
			3: {Title: "TCP", Intro: "pipelined.", ran: true},
			7: {Title: "rpcfuzz", Intro: "execs/s.", ran: true,
				Tables: []namedTable{{Name: "Where the time went", Table: fuzzSplitTable(map[string][]fuzzTimeSplit{
					"tcp, 8 workers": {{BusyS: 24, Shares: map[string]float64{"send": 0.03, "wait": 0.86, "judge": 0.04, "other": 0.07}}}})}},
				Commands: []string{"taskset -c 1 rpcfuzz run tcp://127.0.0.1:1 --out bench/.out/fuzz/tcp-1 --duration 3s --seed 1 --workers 8 --slow-min 1h -q"}},
		},
		profiles: []profileReport{
			{Load: "TCP, 1024 in flight", Side: "reference server", Command: "bench profile-server", Report: profReport{ReqPerS: 123456, AllocsPerReq: 0.01, BytesPerReq: 1.5},
				CPUTop: "top", CPUCum: "cum", SpaceTop: "space", ObjectsTop: "objects"},
			{Load: "HTTP", Side: "rpcload (engine in process)", Command: "bench profile-client", Err: "it broke"},
		},
		micro:    []goBench{{Pkg: "internal/wire", Name: "BenchmarkScan", Iters: 1000, Metrics: []benchMetric{{100, "ns/op"}, {5, "MB/s"}, {0, "B/op"}, {0, "allocs/op"}}}},
		microCmd: "go test -bench . ./internal/wire",
		microErr: "exit status 1",
		notes:    []string{"the whole run note"},
	}
	for r := 1; r <= 2; r++ {
		s.store.add(sample{Comparison: 1, Case: "http, 64 conns", Tool: "rpcload", Metric: "req/s", Round: r, Value: float64(1000 * r)})
		s.store.add(sample{Comparison: 1, Case: "http, 64 conns", Tool: "wrk", Metric: "req/s", Round: r, Value: float64(1100 * r)})
		s.store.add(sample{Comparison: 7, Case: "tcp, 8 workers", Tool: "rpcfuzz", Metric: "execs/s", Round: r, Value: float64(2600 + 100*r)})
	}
	got := regexp.MustCompile(`; [0-9hms.]+ in all\)`).ReplaceAll([]byte(s.markdown()), []byte("; ELAPSED in all)"))
	golden.Check(t, "report.golden.md", got)
}
