package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const wrkOut = `Running 3s test @ http://127.0.0.1:18080/
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     4.33ms    8.36ms  76.26ms   93.48%
    Req/Sec    20.11k     6.32k   31.32k    70.00%
  61260 requests in 3.09s, 8.70MB read
Requests/sec:  19841.46
Transfer/sec:      2.82MB
`

const wrkErrOut = `  1000 requests in 1.00s, 1MB read
  Socket errors: connect 0, read 2, write 1, timeout 3
  Non-2xx or 3xx responses: 4
Requests/sec:   1000.00
`

func TestParseWrk(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  string
		want wrkResult
		err  bool
	}{
		{"clean", wrkOut, wrkResult{Requests: 61260, ReqPerS: 19841.46}, false},
		{"errors are summed", wrkErrOut, wrkResult{Requests: 1000, ReqPerS: 1000, Errors: 10}, false},
		{"no report", "unable to connect to 127.0.0.1:1 Connection refused\n", wrkResult{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseWrk(tc.out)
			if (err != nil) != tc.err {
				t.Fatalf("error = %v, want error %v", err, tc.err)
			}
			if got != tc.want {
				t.Fatalf("parseWrk = %+v, want %+v", got, tc.want)
			}
		})
	}
}

const heyOut = `
Summary:
  Total:	3.0041 secs
  Slowest:	0.0912 secs
  Fastest:	0.0001 secs
  Average:	0.0089 secs
  Requests/sec:	5603.0421

Status code distribution:
  [200]	16832 responses
  [500]	3 responses

Error distribution:
  [2]	Post "http://127.0.0.1:1/": dial tcp: connection refused
`

func TestParseHey(t *testing.T) {
	got, err := parseHey(heyOut)
	if err != nil {
		t.Fatal(err)
	}
	if want := (heyResult{ReqPerS: 5603.0421, OK: 16832, Other: 3, Errors: true}); got != want {
		t.Fatalf("parseHey = %+v, want %+v", got, want)
	}
	if _, err := parseHey("Error: bad flag\n"); err == nil {
		t.Fatal("parseHey of no report: no error")
	}
}

func TestParseVegeta(t *testing.T) {
	rep, err := parseVegetaReport([]byte(`{"latencies":{"50th":100},"requests":6000,"rate":2000.01,"throughput":1999.5,"success":1,"status_codes":{"200":6000},"errors":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 6000 || rep.Rate != 2000.01 || rep.Throughput != 1999.5 || rep.Success != 1 || rep.Status["200"] != 6000 {
		t.Fatalf("report = %+v", rep)
	}
	lat, failed, err := parseVegetaLatencies(`{"attack":"","seq":0,"code":200,"timestamp":"2026-01-01T00:00:00Z","latency":1500000,"bytes_out":1}
{"attack":"","seq":1,"code":500,"timestamp":"2026-01-01T00:00:00Z","latency":500000}

{"attack":"","seq":2,"code":200,"latency":2500000}
`)
	if err != nil {
		t.Fatal(err)
	}
	if failed != 1 || len(lat) != 3 || lat[0] != 1500*time.Microsecond || lat[2] != 2500*time.Microsecond {
		t.Fatalf("latencies %v, failed %d", lat, failed)
	}
	if _, _, err := parseVegetaLatencies("not json\n"); err == nil {
		t.Fatal("no error for a broken line")
	}
}

func TestQuantileOf(t *testing.T) {
	var d []time.Duration
	for i := 1000; i >= 1; i-- {
		d = append(d, time.Duration(i))
	}
	sortDurations(d)
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0, 1}, {0.5, 500}, {0.99, 990}, {0.999, 999}, {1, 1000}} {
		if got := quantileOf(d, tc.q); got != tc.want {
			t.Errorf("quantileOf(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := quantileOf(nil, 0.5); got != 0 {
		t.Errorf("quantileOf(empty) = %v", got)
	}
}

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
pkg: github.com/rpcload/rpcload/internal/wire
BenchmarkScanResult-2        	 1000000	      2743 ns/op	  20.42 MB/s	       0 B/op	       0 allocs/op
PASS
pkg: github.com/rpcload/rpcload/internal/engine
BenchmarkTCPClosedLoop1024-2     	       1	2013676837 ns/op	    595670 req/s	13634968 B/op	   21168 allocs/op
BenchmarkBroken-2 	 x 1 ns/op
ok  	github.com/rpcload/rpcload/internal/engine	8.784s
`
	bs := parseGoBench(out)
	if len(bs) != 2 {
		t.Fatalf("parsed %d benchmarks, want 2: %+v", len(bs), bs)
	}
	if b := bs[0]; b.Pkg != "github.com/rpcload/rpcload/internal/wire" || b.Name != "BenchmarkScanResult-2" || b.Iters != 1000000 ||
		b.metric("ns/op") != 2743 || b.metric("MB/s") != 20.42 || b.metric("allocs/op") != 0 {
		t.Errorf("first = %+v", b)
	}
	if b := bs[1]; b.Pkg != "github.com/rpcload/rpcload/internal/engine" || b.metric("req/s") != 595670 || b.metric("allocs/op") != 21168 {
		t.Errorf("second = %+v", b)
	}
	if v := bs[0].metric("req/s"); !math.IsNaN(v) {
		t.Errorf("missing metric = %v, want NaN", v)
	}
	tb := microTable(bs)
	if got := tb.Rows[1]; got[0] != "internal/engine" || got[2] != "2,013,676,837" || got[4] != "21,168" || got[5] != "595,670 req/s" {
		t.Errorf("micro row = %v", got)
	}
}

func TestParseProcStatCPU(t *testing.T) {
	for _, tc := range []struct {
		name string
		stat string
		want time.Duration
		ok   bool
	}{
		{"plain", "1234 (rpcload) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 5 0 100 1000 10", 3 * time.Second, true},
		{"name with spaces and parens", "77 (a (b) c) R 1 77 77 0 -1 0 0 0 0 0 7 3 0 0", 100 * time.Millisecond, true},
		{"truncated", "77 (x) R 1 2", 0, false},
		{"no name", "garbage", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseProcStatCPU(tc.stat)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("parseProcStatCPU = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestParseFuzzSummary(t *testing.T) {
	sample, err := os.ReadFile(filepath.Join("testdata", "fuzz-summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := parseFuzzSummary(sample)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Workers != 8 || sum.Execs != 8013 || sum.Checks != 160 || !sameFloat(sum.ExecsPerS, 2654.9645460199367) ||
		sum.Unconfirmed != 4 || sum.Failures != 0 || sum.Stopped != "" || len(sum.Warnings) != 0 {
		t.Errorf("summary = %+v", sum)
	}
	ts := sum.TimeSplit
	if !sameFloat(ts.BusyS, 24.017398039) || !sameFloat(ts.Shares["wait"], 0.8633490026408934) || ts.Shares["minimize"] != 0 {
		t.Errorf("time split = %+v", ts)
	}
	total := 0.0
	for _, p := range fuzzPhases {
		total += ts.Shares[p]
	}
	if math.Abs(total-1) > 1e-6 {
		t.Errorf("shares add up to %v, want 1", total)
	}

	for _, tc := range []struct {
		name, in, err string
	}{
		{"not JSON", "rpcfuzz: target unreachable", "summary.json"},
		{"another schema", `{"schema":"rpcfuzz.summary/v2","time_split":{}}`, "schema"},
		{"no time split", `{"schema":"rpcfuzz.summary/v1"}`, "busy_s"},
		{"a phase missing", `{"schema":"rpcfuzz.summary/v1","time_split":{"busy_s":1,"send":{"s":1,"share":1}}}`, "time_split.wait"},
		{"a phase without its share", `{"schema":"rpcfuzz.summary/v1","time_split":{"busy_s":1,"send":{"s":1}}}`, "time_split.send"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFuzzSummary([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error = %v, want one naming %q", err, tc.err)
			}
		})
	}
}
