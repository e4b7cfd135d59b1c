//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rpcload/rpcload/cmd/internal/clitest"
	"github.com/rpcload/rpcload/internal/live"
	"github.com/rpcload/rpcload/internal/stats"
)

// TestMetricsAddUpAcrossShards runs two shards of one run, each serving
// /metrics with --metrics-linger, scrapes each after its run has ended
// (text and protobuf), and checks that the two scrapes' latency histograms
// add up, per method and kind, classic bucket by classic bucket and native
// bucket by native bucket, to the buckets the merged result's HDR
// histograms give (live.BucketsOf), with counts equal to the merged
// request counts. An interrupt then ends the linger at once, with the
// run's exit code.
func TestMetricsAddUpAcrossShards(t *testing.T) {
	bin := binary(t)
	target := startServeBinary(t)
	dir := t.TempDir()
	// Two methods, the one answered at once, the other after 0 to 40 ms:
	// the replies spread over several classic and many native buckets.
	scenario := filepath.Join(dir, "mix.yaml")
	if err := os.WriteFile(scenario, []byte(`version: 1
seed: 7
load: {rate: 200, duration: 2s}
mix:
  - method: echo
    params: [1]
  - method: sleep
    params: {ms: {$int: [0, 40]}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const shards = 2
	var parts []string
	type scrape struct{ text, proto map[string]*dto.MetricFamily }
	scrapes := make([]scrape, shards)
	for i := range shards {
		part := filepath.Join(dir, fmt.Sprintf("part-%d.json", i+1))
		parts = append(parts, part)
		addr := clitest.FreeAddr(t)
		cmd, _, stderr := clitest.Start(ctx, t, bin, "run", target, "-f", scenario, "--shard", fmt.Sprintf("%d/%d", i+1, shards),
			"-q", "-o", part, "--metrics-addr", addr, "--metrics-linger", "2m")
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		stderr.Wait(t, time.Minute, "the linger notice", func(line string) bool {
			return strings.Contains(line, "final figures stay on http://"+addr+"/metrics for 2m0s")
		})
		if _, err := os.Stat(part); err != nil {
			t.Fatalf("shard %d lingers before writing its result: %v", i+1, err)
		}
		scrapes[i] = scrape{scrapeMetrics(t, addr, expfmt.TypeTextPlain), scrapeMetrics(t, addr, expfmt.TypeProtoDelim)}

		// The first interrupt ends the linger, and the run's exit code stands.
		start := time.Now()
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("shard %d after the interrupt: %v; want exit 0\nstderr:\n%s", i+1, err, stderr)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("shard %d took %s to end after the interrupt", i+1, took)
		}
	}

	total := filepath.Join(dir, "total.json")
	if c := runBinary(t, childLimit, append(append([]string{"merge"}, parts...), "-o", total)...); c.code != exitOK {
		t.Fatalf("merge: %v", c)
	}
	merged := readResult(t, total)
	if len(merged.Methods) != 2 {
		t.Fatalf("merged methods %v; want echo and sleep", merged.Methods)
	}
	kinds := []struct {
		metric string
		get    func(l stats.LatencySet) stats.Latency
	}{
		{"rpcload_corrected_latency_seconds", func(l stats.LatencySet) stats.Latency { return l.Corrected }},
		{"rpcload_service_time_seconds", func(l stats.LatencySet) stats.Latency { return l.Service }},
	}
	var answered float64
	for _, s := range scrapes {
		answered += counterValue(t, s.text, "rpcload_answered_total")
	}
	if answered != float64(merged.Requests.Answered) || answered == 0 {
		t.Errorf("the scrapes' rpcload_answered_total add up to %g; the merged result answered %d", answered, merged.Requests.Answered)
	}
	for method, mr := range merged.Methods {
		for _, k := range kinds {
			want := live.BucketsOf(decodeHDR(t, total, k.get(mr.Latency)))
			var text, proto live.Buckets
			for i, s := range scrapes {
				text.Add(scrapedBuckets(t, s.text, k.metric, method, i+1))
				proto.Add(scrapedBuckets(t, s.proto, k.metric, method, i+1))
			}
			what := fmt.Sprintf("%s{method=%q}", k.metric, method)
			if want.Count != mr.Requests.Answered || want.Count == 0 {
				t.Fatalf("%s: the merged histogram holds %d values, the method answered %d", what, want.Count, mr.Requests.Answered)
			}
			if text.Count != want.Count || text.Classic != want.Classic {
				t.Errorf("%s: the text scrapes add up to %d values, classic ranges %v; the merged result gives %d, %v", what, text.Count, text.Classic, want.Count, want.Classic)
			}
			if !reflect.DeepEqual(proto, want) {
				t.Errorf("%s: the protobuf scrapes add up to\n%+v\nthe merged result gives\n%+v", what, proto, want)
			}
			occupied := 0
			for _, n := range want.Classic {
				if n > 0 {
					occupied++
				}
			}
			t.Logf("%s: %d replies in %d classic ranges and %d native buckets, the same in the scrapes and the merge", what, want.Count, occupied, len(want.Native))
		}
	}
}

// TestMetricsLinger: the endpoint outlives the run by --metrics-linger
// and then ends by itself with the run's exit code; after an interrupted
// run it lingers too, serving the figures up to the interrupt, and a
// second interrupt ends it at once with 130.
func TestMetricsLinger(t *testing.T) {
	bin := binary(t)
	target := startServeBinary(t)
	t.Run("runs out", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), childLimit)
		defer cancel()
		addr := clitest.FreeAddr(t)
		cmd, _, stderr := clitest.Start(ctx, t, bin, "run", target, "--method", "echo", "--rate", "100", "--duration", "300ms",
			"-q", "--metrics-addr", addr, "--metrics-linger", "700ms")
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		stderr.Wait(t, childLimit, "the linger notice", func(line string) bool { return strings.Contains(line, "for 700ms (--metrics-linger") })
		notice := time.Now()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v; want exit 0 by itself\nstderr:\n%s", err, stderr)
		}
		if took := time.Since(notice); took < 700*time.Millisecond {
			t.Errorf("exited %s after the linger notice; it was to linger 700ms", took)
		}
	})
	t.Run("after an interrupt", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), childLimit)
		defer cancel()
		addr := clitest.FreeAddr(t)
		out := filepath.Join(t.TempDir(), "result.json")
		cmd, _, stderr := clitest.Start(ctx, t, bin, "run", target, "--method", "echo", "--rate", "100", "--duration", "1h",
			"--interval", "100ms", "-o", out, "--metrics-addr", addr, "--metrics-linger", "10m")
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		stderr.Wait(t, childLimit, "a progress line showing requests sent", sendingProgress)
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		stderr.Wait(t, childLimit, "the linger notice", func(line string) bool { return strings.Contains(line, "for 10m0s (--metrics-linger") })
		res := readResult(t, out)
		if got := counterValue(t, scrapeMetrics(t, addr, expfmt.TypeTextPlain), "rpcload_answered_total"); got != float64(res.Requests.Answered) || got == 0 || !res.Interrupted {
			t.Errorf("served %g answered after the interrupt; the interrupted result says %d (interrupted %v)", got, res.Requests.Answered, res.Interrupted)
		}
		start := time.Now()
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if code, took := cmd.ProcessState.ExitCode(), time.Since(start); code != exitInterrupted || took > 5*time.Second {
			t.Errorf("exit %d %s after the second interrupt; want 130 at once\nstderr:\n%s", code, took, stderr)
		}
	})
}

// TestReadmeNamesEveryMetric: the README's table of the /metrics figures
// names every metric the endpoint serves, and what it says of the
// histograms' buckets is what live does.
func TestReadmeNamesEveryMetric(t *testing.T) {
	text := readme(t)
	m, err := live.NewMetrics("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	hist := hdr.New(1, 3_600_000_000, 3)
	m.Update(stats.Point{ChildRSSBytes: 1}, stats.Requests{}, 0, func(visit func(string, *hdr.Histogram, *hdr.Histogram)) {
		visit("echo", hist, hist)
	})
	families := scrapeMetrics(t, m.Addr(), expfmt.TypeTextPlain)
	if len(families) < 20 {
		t.Fatalf("only %d metrics served", len(families))
	}
	for name := range families {
		if !strings.Contains(text, "`"+name+"`") && !strings.Contains(text, "`"+name+"{") {
			t.Errorf("README.md does not name the metric %s", name)
		}
	}
	first, last := live.ClassicBoundsUs[0], live.ClassicBoundsUs[len(live.ClassicBoundsUs)-1]
	if first != 100 || last != 60_000_000 || !strings.Contains(text, "`le` = 100 µs,") || !strings.Contains(text, "25 s, 60 s\nand +Inf") {
		t.Errorf("README.md must give the classic buckets as 100 µs to 60 s (live has %d µs to %d µs)", first, last)
	}
	if live.NativeSchema != 3 || !strings.Contains(text, "native histogram of schema 3") {
		t.Errorf("README.md must give the native schema (%d)", live.NativeSchema)
	}
}

// scrapeMetrics GETs http://addr/metrics in the format asked for (text, or
// delimited protobuf, which carries the native buckets) and parses it.
func scrapeMetrics(t *testing.T, addr string, format expfmt.FormatType) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(format)))
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := expfmt.ResponseFormat(resp.Header)
	if resp.StatusCode != http.StatusOK || got.FormatType() != format {
		t.Fatalf("GET /metrics as %v: %s, %q", format, resp.Status, got)
	}
	if format == expfmt.TypeTextPlain {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return families
	}
	families := map[string]*dto.MetricFamily{}
	dec := expfmt.NewDecoder(resp.Body, got)
	for range 1000 {
		var f dto.MetricFamily
		if err := dec.Decode(&f); errors.Is(err, io.EOF) {
			return families
		} else if err != nil {
			t.Fatal(err)
		}
		families[f.GetName()] = &f
	}
	t.Fatal("more than 1000 metric families")
	return nil
}

// scrapedBuckets reads the histogram name{method} of one shard's scrape.
func scrapedBuckets(t *testing.T, families map[string]*dto.MetricFamily, name, method string, shard int) *live.Buckets {
	t.Helper()
	for _, m := range families[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "method" && l.GetValue() == method {
				b, err := live.ScrapedBuckets(m.GetHistogram())
				if err != nil {
					t.Fatalf("shard %d: %s{method=%q}: %v", shard, name, method, err)
				}
				return &b
			}
		}
	}
	t.Fatalf("shard %d served no %s{method=%q}", shard, name, method)
	return nil
}

// counterValue is the value of the counter name in families.
func counterValue(t *testing.T, families map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	if f := families[name]; f != nil && len(f.GetMetric()) == 1 && f.GetMetric()[0].Counter != nil {
		return f.GetMetric()[0].GetCounter().GetValue()
	}
	t.Fatalf("no counter %s served", name)
	return 0
}
