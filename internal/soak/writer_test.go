package soak

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcload/rpcload/internal/stats"
)

var testStart = time.Date(2026, 3, 1, 12, 0, 0, 437_000_000, time.UTC)

// testInterval returns the figures of interval i (0-based) of a made-up run
// with 10 s intervals: corrected latencies of 100+i µs (i+1 of them) plus
// one slow reply of 25 ms, and service times of 50 µs.
func testInterval(i int) (p stats.Point, from, to time.Duration, corrected, service *hdr.Histogram) {
	corrected = hdr.New(1, 3_600_000_000, 3)
	service = hdr.New(1, 3_600_000_000, 3)
	for range i + 1 {
		_ = corrected.RecordValue(int64(100 + i))
		_ = service.RecordValue(50)
	}
	_ = corrected.RecordValue(25_000)
	from, to = time.Duration(i)*10*time.Second, time.Duration(i+1)*10*time.Second
	p = stats.Point{T: to.Seconds(), Sent: uint64(i + 2), Answered: uint64(i + 2), OK: uint64(i + 2),
		InFlight: int64(i), OldestPendingUs: int64(1000 * i), TargetRate: 100, ChildRSSBytes: int64(i+1) << 20,
		P50us: corrected.ValueAtQuantile(50), P99us: corrected.ValueAtQuantile(99)}
	return p, from, to, corrected, service
}

type readInterval struct {
	tag           string
	count         int64
	startMs       int64
	maxColumnMs   float64
	startColumnS  float64
	lengthColumnS float64
}

// readLog reads an interval log back with hdrhistogram-go's reader, and the
// Max column of each interval line by hand (the reader skips it).
func readLog(t *testing.T, data []byte) []readInterval {
	t.Helper()
	var got []readInterval
	r := hdr.NewHistogramLogReader(bytes.NewReader(data))
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("reading the interval log: %v", err)
		}
		if h == nil {
			break
		}
		got = append(got, readInterval{tag: h.Tag(), count: h.TotalCount(), startMs: h.StartTimeMs()})
	}
	i := 0
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, `"`) {
			continue
		}
		line = strings.TrimPrefix(line, "Tag="+ServiceTag+",")
		cols := strings.Split(line, ",")
		if len(cols) != 4 || i >= len(got) {
			t.Fatalf("unexpected interval line %q", line)
		}
		got[i].startColumnS, _ = strconv.ParseFloat(cols[0], 64)
		got[i].lengthColumnS, _ = strconv.ParseFloat(cols[1], 64)
		got[i].maxColumnMs, _ = strconv.ParseFloat(cols[2], 64)
		i++
	}
	return got
}

func readSeries(t *testing.T, path string) []stats.Point {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []stats.Point
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p stats.Point
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("series line %d: %v", len(got)+1, err)
		}
		got = append(got, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestWriterRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 5} {
		t.Run(strconv.Itoa(n)+" intervals", func(t *testing.T) {
			dir := t.TempDir()
			hlog, series := filepath.Join(dir, "run.hlog"), filepath.Join(dir, "run.jsonl")
			w, err := NewWriter(hlog, series, testStart, "rpcload soak\nof tcp://127.0.0.1:1")
			if err != nil {
				t.Fatal(err)
			}
			var want []stats.Point
			for i := range n {
				p, from, to, c, s := testInterval(i)
				if err := w.Interval(p, from, to, c, s); err != nil {
					t.Fatal(err)
				}
				want = append(want, p)
				// The caller keeps its histograms untouched.
				if c.Tag() != "" || s.Tag() != "" || c.StartTimeMs() != 0 {
					t.Fatalf("Interval changed the caller's histograms: tags %q %q, start %d", c.Tag(), s.Tag(), c.StartTimeMs())
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}

			data, err := os.ReadFile(hlog)
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			for _, line := range []string{
				"#[Histogram log format version 1.3]\n",
				"#[StartTime: 1772366400.437 (seconds since epoch), 2026-03-01T12:00:00.437Z]\n",
				"#[BaseTime: 1772366400.437 (seconds since epoch)]\n",
				`"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"` + "\n",
				"# rpcload soak of tcp://127.0.0.1:1\n",
			} {
				if !strings.Contains(text, line) {
					t.Errorf("the log lacks the line %q:\n%s", line, text)
				}
			}

			got := readLog(t, data)
			if len(got) != 2*n {
				t.Fatalf("read %d histograms, want %d", len(got), 2*n)
			}
			for i := range n {
				c, s := got[2*i], got[2*i+1]
				wantStartMs := testStart.UnixMilli() + int64(i)*10_000
				if c.tag != "" || c.count != int64(i+2) || c.startMs != wantStartMs {
					t.Errorf("interval %d corrected: tag %q count %d start %d; want untagged, %d, %d", i, c.tag, c.count, c.startMs, i+2, wantStartMs)
				}
				if s.tag != ServiceTag || s.count != int64(i+1) || s.startMs != wantStartMs {
					t.Errorf("interval %d service: tag %q count %d start %d; want %q, %d, %d", i, s.tag, s.count, s.startMs, ServiceTag, i+1, wantStartMs)
				}
				if c.startColumnS != float64(10*i) || c.lengthColumnS != 10 {
					t.Errorf("interval %d: start %v length %v, want %d and 10", i, c.startColumnS, c.lengthColumnS, 10*i)
				}
				// 25,000 µs recorded: the Max column is in ms (HDR rounds the
				// bucket up by less than 0.1%).
				if c.maxColumnMs < 25 || c.maxColumnMs > 25.03 {
					t.Errorf("interval %d: max column %v, want 25 ms", i, c.maxColumnMs)
				}
				if s.maxColumnMs != 0.05 {
					t.Errorf("interval %d: service max column %v, want 0.05 ms", i, s.maxColumnMs)
				}
			}
			if gotSeries := readSeries(t, series); !reflect.DeepEqual(gotSeries, want) {
				t.Errorf("series read back:\n%+v\nwant\n%+v", gotSeries, want)
			}
		})
	}
}

// Every interval is in the files as soon as Interval returns, while the
// writer is still open: a crash loses only the interval in progress.
func TestWriterIntervalsReachTheFileBeforeClose(t *testing.T) {
	dir := t.TempDir()
	hlog, series := filepath.Join(dir, "a.hlog"), filepath.Join(dir, "a.jsonl")
	w, err := NewWriter(hlog, series, testStart, "")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := range 3 {
		p, from, to, c, s := testInterval(i)
		if err := w.Interval(p, from, to, c, s); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(hlog)
		if err != nil {
			t.Fatal(err)
		}
		if got := readLog(t, data); len(got) != 2*(i+1) {
			t.Fatalf("after interval %d the log holds %d histograms, want %d", i, len(got), 2*(i+1))
		}
		if got := readSeries(t, series); len(got) != i+1 || !reflect.DeepEqual(got[i], p) {
			t.Fatalf("after interval %d the series holds %+v", i, got)
		}
	}
}

func TestWriterOneFileOnlyAndNilHistograms(t *testing.T) {
	dir := t.TempDir()
	series := filepath.Join(dir, "only.jsonl")
	w, err := NewWriter("", series, testStart, "x")
	if err != nil {
		t.Fatal(err)
	}
	p, from, to, _, _ := testInterval(0)
	if err := w.Interval(p, from, to, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readSeries(t, series); len(got) != 1 || !reflect.DeepEqual(got[0], p) {
		t.Errorf("series %+v, want one point %+v", got, p)
	}
	if err := w.Interval(p, from, to, nil, nil); err == nil {
		t.Error("Interval after Close succeeded")
	}

	hlog := filepath.Join(dir, "only.hlog")
	w, err = NewWriter(hlog, "", testStart, "")
	if err != nil {
		t.Fatal(err)
	}
	_, from, to, c, _ := testInterval(1)
	if err := w.Interval(p, from, to, c, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	data, _ := os.ReadFile(hlog)
	if got := readLog(t, data); len(got) != 1 || got[0].tag != "" {
		t.Errorf("log with the service histogram left out: %+v", got)
	}
}

func TestWriterTruncatesAnOldFile(t *testing.T) {
	dir := t.TempDir()
	series := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(series, []byte(strings.Repeat("old line\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter("", series, testStart, "")
	if err != nil {
		t.Fatal(err)
	}
	p, from, to, c, s := testInterval(0)
	if err := w.Interval(p, from, to, c, s); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got := readSeries(t, series); len(got) != 1 {
		t.Errorf("the old file was not truncated: %d lines", len(got))
	}
}

func TestNewWriterErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		hlog, series string
		want         string // in the message
	}{
		{"hlog is a directory", dir, "", "interval log " + dir + " is a directory"},
		{"series is a directory", "", dir, "series file " + dir + " is a directory"},
		{"missing parent", filepath.Join(dir, "no", "x.hlog"), "", filepath.Join(dir, "no", "x.hlog")},
		{"parent is a file", "", filepath.Join(file, "x.jsonl"), filepath.Join(file, "x.jsonl")},
		{"same file twice", file, file, "same file: " + file},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := NewWriter(tt.hlog, tt.series, testStart, "")
			if err == nil {
				w.Close()
				t.Fatal("NewWriter succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
	// A failure on the second file leaves no first file open (and the
	// first one created is harmless: it is truncated by the next run).
	if _, err := NewWriter(filepath.Join(dir, "ok.hlog"), dir, testStart, ""); err == nil {
		t.Error("NewWriter with a directory as the series file succeeded")
	}
}
