package srvgauge

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

const exposition = `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 42
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 1.2345e+07
# TYPE http_in_flight gauge
http_in_flight{handler="/rpc"} 3
http_in_flight{handler="/metrics"} 1
# TYPE requests_total counter
requests_total{code="200"} 100
requests_total{code="500"} 7
queue_length 5
# TYPE latency_seconds histogram
latency_seconds_bucket{le="+Inf"} 1
latency_seconds_sum 0.1
latency_seconds_count 1
# EOF
`

func TestValue(t *testing.T) {
	fams, err := ParseExposition([]byte(exposition))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sel   string
		want  float64
		found bool
		err   string
	}{
		{sel: "go_goroutines", want: 42, found: true},
		{sel: "process_resident_memory_bytes", want: 12345000, found: true},
		{sel: "http_in_flight", want: 4, found: true},
		{sel: `http_in_flight{handler="/rpc"}`, want: 3, found: true},
		{sel: `http_in_flight{handler!="/rpc"}`, want: 1, found: true},
		{sel: `http_in_flight{handler="/nope"}`},
		{sel: `http_in_flight{other=""}`, want: 4, found: true}, // an absent label is empty
		{sel: `requests_total{code="500"}`, want: 7, found: true},
		{sel: "queue_length", want: 5, found: true}, // untyped
		{sel: "go_threads"},
		{sel: "latency_seconds", err: "is a histogram, not a gauge"},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			sel, err := ParseSelector(tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			v, found, err := Value(fams, sel)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || v != tt.want || found != tt.found {
				t.Errorf("Value = %g, %v, %v; want %g, %v", v, found, err, tt.want, tt.found)
			}
		})
	}
}

func TestParseExpositionErrors(t *testing.T) {
	for _, in := range []string{"not an exposition at all {{{", "x 1\x00\n", "# TYPE x gauge\nx one\n"} {
		if _, err := ParseExposition([]byte(in)); err == nil {
			t.Errorf("ParseExposition(%q): no error", in)
		}
	}
}

// endpoint serves body (a function of the request count) on 127.0.0.1.
func endpoint(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

func TestSamplerRead(t *testing.T) {
	good := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "text/plain") {
			http.Error(w, "want text", http.StatusNotAcceptable)
			return
		}
		fmt.Fprint(w, exposition)
	})
	other := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "go_goroutines 8\nprocess_open_fds 9\n")
	})
	notFound := endpoint(t, http.NotFound)
	garbage := endpoint(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>{{{") })
	hang := endpoint(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	huge := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
		line := strings.Repeat("# padding\n", 10_000)
		for n := 0; n <= 1<<20; n += len(line) {
			if _, err := fmt.Fprint(w, line); err != nil {
				return
			}
		}
	})
	inflight, _ := ParseSelector(`http_in_flight{handler="/rpc"}`)
	absent, _ := ParseSelector("never_there")
	tests := []struct {
		name    string
		urls    []string
		gauges  []Selector
		pid     bool
		want    map[string]float64
		failed  uint64
		errText string
		missing []string
		timeout time.Duration // 0: 200ms
		limit   int           // 0: MaxExposition
	}{
		{name: "defaults where present", urls: []string{good},
			want: map[string]float64{"go_goroutines": 42, "process_resident_memory_bytes": 12345000}},
		{name: "asked gauges", urls: []string{good}, gauges: []Selector{inflight, absent},
			want:    map[string]float64{"go_goroutines": 42, "process_resident_memory_bytes": 12345000, `http_in_flight{handler="/rpc"}`: 3},
			missing: []string{"never_there"}},
		{name: "replicas add up", urls: []string{good, other},
			want: map[string]float64{"go_goroutines": 50, "process_resident_memory_bytes": 12345000, "process_open_fds": 9}},
		{name: "one replica failing hides the sums", urls: []string{good, notFound}, want: map[string]float64{}, failed: 1, errText: "404"},
		{name: "garbage", urls: []string{garbage}, want: map[string]float64{}, failed: 1, errText: "not a Prometheus text exposition"},
		{name: "timeout", urls: []string{hang}, want: map[string]float64{}, failed: 1, errText: "no exposition within 200ms"},
		{name: "too large", urls: []string{huge}, want: map[string]float64{}, failed: 1, errText: "larger than 1 MiB", timeout: MaxTimeout, limit: 1 << 20},
		{name: "pid", pid: true},
		{name: "pid and a failing endpoint", urls: []string{notFound}, pid: true, failed: 1, errText: "404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{URLs: tt.urls, Gauges: tt.gauges, Timeout: cmp.Or(tt.timeout, 200*time.Millisecond)}
			if tt.pid {
				cfg.PID = os.Getpid()
			}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tt.limit > 0 {
				s.limit = tt.limit
			}
			start := time.Now()
			got, failed := s.Read(context.Background())
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("Read took %v", took)
			}
			if failed != tt.failed {
				t.Errorf("failed = %d, want %d", failed, tt.failed)
			}
			if tt.pid {
				if got[PIDRSS] <= 0 || got[PIDThreads] < 1 || got[PIDOpenFDs] < 3 {
					t.Errorf("pid gauges %v", got)
				}
				delete(got, PIDRSS)
				delete(got, PIDThreads)
				delete(got, PIDOpenFDs)
				if tt.want == nil {
					tt.want = map[string]float64{}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Read = %v, want %v", got, tt.want)
			}
			rep := s.Report()
			if rep.Reads != uint64(len(rep.Sources)) || rep.Failures != tt.failed {
				t.Errorf("report: %d reads of %d sources, %d failures", rep.Reads, len(rep.Sources), rep.Failures)
			}
			if tt.errText != "" && (len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], tt.errText)) {
				t.Errorf("report errors %q, want one with %q", rep.Errors, tt.errText)
			}
			if fmt.Sprint(rep.Missing) != fmt.Sprint(tt.missing) {
				t.Errorf("missing %q, want %q", rep.Missing, tt.missing)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	sel, _ := ParseSelector("x")
	tests := []struct {
		cfg Config
		err string
	}{
		{Config{}, "nothing to read"},
		{Config{URLs: []string{"tcp://127.0.0.1:1/metrics"}}, "want an http:// or https:// URL"},
		{Config{URLs: []string{"http:///metrics"}}, "no host"},
		{Config{URLs: []string{"http://[::1"}}, "missing ']'"},
		{Config{PID: -3}, "not a process id"},
		{Config{PID: 1, Gauges: []Selector{sel}}, "give --server-metrics"},
	}
	for _, tt := range tests {
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("New(%+v) = %v, want %q", tt.cfg, err, tt.err)
		}
	}
}

// TestReportHidesPassword: an endpoint's password never reaches the report.
func TestReportHidesPassword(t *testing.T) {
	s, err := New(Config{URLs: []string{"http://user:secret@127.0.0.1:1/metrics"}})
	if err != nil {
		t.Fatal(err)
	}
	if src := s.Report().Sources; len(src) != 1 || strings.Contains(src[0], "secret") {
		t.Errorf("sources %q", src)
	}
}
