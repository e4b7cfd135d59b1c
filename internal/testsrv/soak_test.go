package testsrv

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// parked counts the goroutines parked by Leak, in every server of the
// process, from their stacks.
func parked() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "testsrv.parkLeaked(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// waitParked polls until until(parked()) holds, for up to 10 s, and
// returns how many goroutines Leak has parked.
func waitParked(until func(n int) bool) int {
	deadline := time.Now().Add(10 * time.Second)
	for !until(parked()) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return parked()
}

func TestSoakModes(t *testing.T) {
	tests := []struct {
		name        string
		cfg         Config
		requests    int
		leaked      int64
		cacheLen    int
		metricsLine string
	}{
		{name: "leak every 10th", cfg: Config{Leak: Leak{Every: 10}, Metrics: true}, requests: 95, leaked: 9,
			metricsLine: "rpcload_testsrv_leaked_goroutines 9"},
		{name: "leak with threads", cfg: Config{Leak: Leak{Every: 5, Thread: true}}, requests: 20, leaked: 4},
		{name: "cache fills and holds", cfg: Config{Cache: Cache{Entries: 8, EntryBytes: 100}, Metrics: true}, requests: 30, cacheLen: 8,
			metricsLine: "rpcload_testsrv_cache_entries 8"},
		{name: "neither", cfg: Config{}, requests: 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := parked()
			s, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for range tt.requests {
				if out, ok := s.HandleFrame(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`)); !ok || len(out) == 0 {
					t.Fatal("no reply")
				}
			}
			if got := s.Leaked(); got != tt.leaked {
				t.Errorf("leaked %d, want %d", got, tt.leaked)
			}
			if n := waitParked(func(n int) bool { return n >= before+int(tt.leaked) }); n != before+int(tt.leaked) {
				t.Errorf("%d goroutines parked after %d leaks, %d before", n, tt.leaked, before)
			}
			s.soak.mu.Lock()
			if len(s.soak.entries) != tt.cacheLen {
				t.Errorf("cache holds %d entries, want %d", len(s.soak.entries), tt.cacheLen)
			}
			s.soak.mu.Unlock()
			if tt.metricsLine != "" {
				hs := httptest.NewServer(s.Handler())
				resp, err := http.Get(hs.URL + MetricsPath)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				for _, want := range []string{tt.metricsLine, "go_goroutines ", "process_resident_memory_bytes ", "go_memstats_heap_inuse_bytes ", "process_open_fds "} {
					if !strings.Contains(string(body), want) {
						t.Errorf("GET /metrics lacks %q", want)
					}
				}
				// A POST to /metrics is JSON-RPC, as on any path.
				resp, err = http.Post(hs.URL+MetricsPath, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"echo","params":[1]}`))
				if err != nil {
					t.Fatal(err)
				}
				body, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.Contains(string(body), `"id":7`) {
					t.Errorf("POST /metrics: %s", body)
				}
				hs.Close()
			}
			s.Close()
			if n := waitParked(func(n int) bool { return n <= before }); n > before {
				t.Errorf("%d goroutines parked after Close, %d before: the leaked ones did not end", n, before)
			}
		})
	}
}

func TestSoakConfigErrors(t *testing.T) {
	for _, cfg := range []Config{{Leak: Leak{Every: -1}}, {Cache: Cache{Entries: -1}}, {Cache: Cache{Entries: 3}}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v): no error", cfg)
		}
	}
}
