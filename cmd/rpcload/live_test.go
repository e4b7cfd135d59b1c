package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcload/rpcload/internal/stats"
	"github.com/rpcload/rpcload/internal/testsrv"
)

// readHlog reads an interval log back with HdrHistogram's own reader and
// returns its untagged and service-tagged interval histograms.
func readHlog(t *testing.T, path string) (corrected, service []*hdr.Histogram) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := hdr.NewHistogramLogReader(f)
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h == nil {
			return corrected, service
		}
		if h.Tag() == "service" {
			service = append(service, h)
		} else {
			corrected = append(corrected, h)
		}
	}
}

// readSeries reads a JSON Lines series file.
func readSeries(t *testing.T, path string) []stats.Point {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []stats.Point
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var p stats.Point
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("%s: line %d: %v", path, len(out)+1, err)
		}
		out = append(out, p)
	}
	return out
}

// TestSoakRun: a soak run writes its interval log and series next to -o,
// both readable and adding up to the result, and the result carries the
// soak verdict; thresholds and JUnit ride along.
func TestSoakRun(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	dir := t.TempDir()
	out := filepath.Join(dir, "soak.json")
	junit := filepath.Join(dir, "junit.xml")
	c := runBinary(t, childLimit, "run", tcpURL, "--method", "echo", "--params", "[1]", "--rate", "500",
		"--duration", "1200ms", "--soak", "--interval", "200ms", "-o", out,
		"--threshold", "p99<1s", "--threshold", "leaked==0", "--junit", junit)
	if c.code != exitOK {
		t.Fatalf("want exit 0: %v", c)
	}
	res := readResult(t, out)
	if res.Soak == nil || res.Soak.Points < 5 || res.Soak.Verdict == "" {
		t.Fatalf("soak section %+v", res.Soak)
	}
	mustContain(t, "report", c.stdout, "soak ", "verdict: ", "PASS p99<1s", "PASS leaked==0")
	if len(res.Thresholds) != 2 || !res.Thresholds[0].Pass {
		t.Errorf("thresholds in the result: %+v", res.Thresholds)
	}
	if _, err := os.Stat(junit); err != nil {
		t.Errorf("junit file: %v", err)
	}
	corrected, service := readHlog(t, filepath.Join(dir, "soak.hlog"))
	series := readSeries(t, filepath.Join(dir, "soak.series.jsonl"))
	if len(corrected) != len(series) || len(service) != len(series) || len(series) != len(res.Series) {
		t.Fatalf("%d corrected and %d service histograms, %d series lines, %d points in the result",
			len(corrected), len(service), len(series), len(res.Series))
	}
	var inLog int64
	var answered uint64
	for i, h := range corrected {
		inLog += h.TotalCount()
		answered += series[i].Answered
		if uint64(h.TotalCount()) != series[i].Answered {
			t.Errorf("interval %d: %d values in the log, %d answered in the series", i, h.TotalCount(), series[i].Answered)
		}
	}
	if inLog != res.Latency.Corrected.Count || answered != res.Requests.Answered {
		t.Errorf("the log holds %d values and the series %d answered; the result %d and %d", inLog, answered, res.Latency.Corrected.Count, res.Requests.Answered)
	}
}

// TestSoakFilesSurviveACrash: the interval files hold every closed interval
// while the run goes on, so a killed rpcload loses at most the last one.
func TestSoakFilesSurviveACrash(t *testing.T) {
	_, _, tcpURL := startServer(t, testsrv.Config{})
	dir := t.TempDir()
	out := filepath.Join(dir, "crash.json")
	ctx, cancel := context.WithTimeout(context.Background(), childLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), "run", tcpURL, "--method", "echo", "--rate", "200",
		"--duration", "30s", "--soak", "--interval", "100ms", "-o", out)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	seriesPath := filepath.Join(dir, "crash.series.jsonl")
	// Poll the file the run writes (bounded by childLimit): the event
	// waited for is in another process.
	for {
		data, _ := os.ReadFile(seriesPath)
		if bytes.Count(data, []byte("\n")) >= 3 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the series file never reached 3 intervals")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	series := readSeries(t, seriesPath)
	corrected, _ := readHlog(t, filepath.Join(dir, "crash.hlog"))
	if len(series) < 3 || len(corrected) < 3 {
		t.Fatalf("after the kill: %d series lines, %d logged intervals", len(series), len(corrected))
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a killed run left a result file (%v); only the interval files are written as it goes", err)
	}
}

// TestLiveFlagErrors: mistakes in the new flags are usage errors that name
// the flag, before any load is sent.
func TestLiveFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--soak"}, "--soak writes its results as the run goes"},
		{[]string{"--metrics-addr", "0.0.0.0:0"}, "--metrics-addr"},
		{[]string{"--metrics-linger", "1m"}, "--metrics-linger keeps the --metrics-addr endpoint up after the run: give --metrics-addr too"},
		{[]string{"--metrics-addr", "127.0.0.1:0", "--metrics-linger", "-1s"}, "--metrics-linger must not be negative (got -1s)"},
		{[]string{"--shard", "4/3"}, "--shard"},
		{[]string{"--shard", "x"}, "--shard"},
		{[]string{"--start-at", "tomorrow"}, "--start-at"},
		{[]string{"--threshold", "p99<<5ms"}, "--threshold"},
		{[]string{"--hlog", t.TempDir()}, "directory"},
	} {
		args := append([]string{"run", "tcp://127.0.0.1:1", "--method", "echo", "--duration", "100ms"}, tc.args...)
		c := runBinary(t, childLimit, args...)
		if c.code != exitUsage || !strings.Contains(c.stderr, tc.want) {
			t.Errorf("%q: want exit 2 naming %q; %v", tc.args, tc.want, c)
		}
	}
}
