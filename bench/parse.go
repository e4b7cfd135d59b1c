package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// wrkResult is what the suite reads from wrk's report.
type wrkResult struct {
	Requests int64
	ReqPerS  float64
	Errors   int64 // socket errors and non-2xx responses
}

var (
	wrkRPS      = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	wrkTotal    = regexp.MustCompile(`(?m)^\s*([0-9]+) requests in `)
	wrkSocket   = regexp.MustCompile(`Socket errors: connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+)`)
	wrkNon2xx   = regexp.MustCompile(`Non-2xx or 3xx responses: ([0-9]+)`)
	heyRPS      = regexp.MustCompile(`(?m)^\s*Requests/sec:\s+([0-9.]+)`)
	heyStatus   = regexp.MustCompile(`(?m)^\s*\[([0-9]+)\]\s+([0-9]+) responses`)
	heyErrorSec = regexp.MustCompile(`(?m)^Error distribution:`)
)

// parseWrk reads wrk's text report.
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	m := wrkRPS.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("wrk: no Requests/sec line in %q", tail(out, 300))
	}
	r.ReqPerS, _ = strconv.ParseFloat(m[1], 64)
	if m := wrkTotal.FindStringSubmatch(out); m != nil {
		r.Requests, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := wrkSocket.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.ParseInt(s, 10, 64)
			r.Errors += n
		}
	}
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		r.Errors += n
	}
	return r, nil
}

// heyResult is what the suite reads from hey's report.
type heyResult struct {
	ReqPerS float64
	OK      int64 // 200 responses
	Other   int64 // other status codes
	Errors  bool  // hey printed an error distribution
}

// parseHey reads hey's text report.
func parseHey(out string) (heyResult, error) {
	var r heyResult
	m := heyRPS.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("hey: no Requests/sec line in %q", tail(out, 300))
	}
	r.ReqPerS, _ = strconv.ParseFloat(m[1], 64)
	for _, m := range heyStatus.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		if m[1] == "200" {
			r.OK += n
		} else {
			r.Other += n
		}
	}
	r.Errors = heyErrorSec.MatchString(out)
	return r, nil
}

// vegetaReport is the part of `vegeta report -type json` the suite reads.
type vegetaReport struct {
	Requests   int64            `json:"requests"`
	Rate       float64          `json:"rate"`       // requests sent per second of the attack
	Throughput float64          `json:"throughput"` // successful requests per second, waiting included
	Success    float64          `json:"success"`    // fraction of 2xx
	Status     map[string]int64 `json:"status_codes"`
	Errors     []string         `json:"errors"`
}

func parseVegetaReport(b []byte) (vegetaReport, error) {
	var r vegetaReport
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("vegeta report: %w", err)
	}
	return r, nil
}

// parseVegetaLatencies reads the latencies of `vegeta encode --to json`
// (one result per line, latency in nanoseconds), and the span from the
// first to the last scheduled request.
func parseVegetaLatencies(out string) (lat []time.Duration, failed int, err error) {
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var r struct {
			Code    int   `json:"code"`
			Latency int64 `json:"latency"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, 0, fmt.Errorf("vegeta encode: %w", err)
		}
		if r.Code != 200 {
			failed++
		}
		lat = append(lat, time.Duration(r.Latency))
	}
	return lat, failed, sc.Err()
}

// quantileOf returns the value of rank round(q*n) (at least 1) of the
// sorted latencies: the HdrHistogram convention, so tools are read alike.
func quantileOf(sorted []time.Duration, q float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(q*float64(n) + 0.5)
	rank = max(rank, 1)
	rank = min(rank, n)
	return sorted[rank-1]
}

func sortDurations(d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
}

// goBench is one line of `go test -bench` output.
type goBench struct {
	Pkg     string
	Name    string
	Iters   int64
	Metrics []benchMetric // in the order printed: ns/op, MB/s, custom, B/op, allocs/op
}

// benchMetric is one value-unit pair of a benchmark line.
type benchMetric struct {
	Value float64
	Unit  string
}

// metric returns the value with the given unit, or NaN.
func (b goBench) metric(unit string) float64 {
	for _, m := range b.Metrics {
		if m.Unit == unit {
			return m.Value
		}
	}
	return math.NaN()
}

// parseGoBench reads benchmark lines, tagging each with the package of the
// `pkg:` line before it.
func parseGoBench(out string) []goBench {
	var res []goBench
	pkg := ""
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		if !strings.HasPrefix(line, "Benchmark") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || len(f)%2 != 0 {
			continue
		}
		iters, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		b := goBench{Pkg: pkg, Name: f[0], Iters: iters}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			b.Metrics = append(b.Metrics, benchMetric{v, f[i+1]})
		}
		res = append(res, b)
	}
	return res
}

// tail returns the last n bytes of s, for error messages.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
