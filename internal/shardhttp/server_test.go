package shardhttp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// request sends method path to s and returns the status code, the header
// and the body.
func request(t *testing.T, s *Server, method, path, ifMatch string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+s.Addr()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

func statusOf(t *testing.T, body string) Status {
	t.Helper()
	var st Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("not a status: %q: %v", body, err)
	}
	return st
}

// TestServerLifecycle: a shard's endpoints through a run that is done:
// running, then the result with its ETag, an acknowledgement of another
// ETag refused, the right one accepted and seen by Wait.
func TestServerLifecycle(t *testing.T) {
	s, err := Listen("127.0.0.1:0", false, "2/3")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	code, _, body := request(t, s, "GET", StatusPath, "")
	if st := statusOf(t, body); code != 200 || st.State != Running || st.Shard != "2/3" || st.ExitCode != nil {
		t.Errorf("status while running: %d %+v", code, st)
	}
	code, h, body := request(t, s, "GET", ResultPath, "")
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || statusOf(t, body).State != Running {
		t.Errorf("result while running: %d, Retry-After %q, %s", code, h.Get("Retry-After"), body)
	}
	if code, _, _ := request(t, s, "POST", AckPath, ""); code != http.StatusConflict {
		t.Errorf("ack while running: %d, want 409", code)
	}

	result := `{"schema":"rpcload.result/v1"}` + "\n"
	s.Done([]byte(result), 1)
	code, _, body = request(t, s, "GET", StatusPath, "")
	if st := statusOf(t, body); code != 200 || st.State != Done || st.ExitCode == nil || *st.ExitCode != 1 {
		t.Errorf("status when done: %d %s", code, body)
	}
	code, h, body = request(t, s, "GET", ResultPath, "")
	if code != 200 || body != result || h.Get("ETag") != ETag([]byte(result)) || h.Get("Content-Type") != "application/json" {
		t.Errorf("result: %d %q ETag %q type %q", code, body, h.Get("ETag"), h.Get("Content-Type"))
	}
	if code, h, _ := request(t, s, "POST", AckPath, `"sha256-00"`); code != http.StatusPreconditionFailed || h.Get("ETag") != ETag([]byte(result)) {
		t.Errorf("ack of another ETag: %d (ETag %q), want 412 with the right one", code, h.Get("ETag"))
	}
	select {
	case <-s.acked:
		t.Fatal("a refused acknowledgement counted")
	default:
	}
	if code, _, _ := request(t, s, "POST", AckPath, ETag([]byte(result))); code != http.StatusNoContent {
		t.Errorf("ack: %d, want 204", code)
	}
	if by := s.Wait(context.Background(), time.Minute); !strings.HasPrefix(by, "127.0.0.1:") {
		t.Errorf("Wait after an acknowledgement: by %q, want the merger's address", by)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + s.Addr() + StatusPath); err == nil {
		t.Error("still serving after Close")
	}
}

// TestServerFailed: a failed run says so on every endpoint, and its
// failure can be acknowledged without an ETag.
func TestServerFailed(t *testing.T) {
	s, err := Listen("127.0.0.1:0", false, "1/2")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Fail(3, "target unreachable: dial tcp 127.0.0.1:1: connection refused")
	for _, path := range []string{StatusPath, ResultPath} {
		code, _, body := request(t, s, "GET", path, "")
		st := statusOf(t, body)
		want := map[string]int{StatusPath: 200, ResultPath: http.StatusConflict}[path]
		if code != want || st.State != Failed || st.ExitCode == nil || *st.ExitCode != 3 || !strings.Contains(st.Error, "target unreachable") {
			t.Errorf("%s: %d %s; want %d and the failure", path, code, body, want)
		}
	}
	if code, _, _ := request(t, s, "POST", AckPath, ""); code != http.StatusNoContent {
		t.Errorf("ack of a failure: %d, want 204", code)
	}
	if by := s.Wait(context.Background(), time.Minute); by == "" {
		t.Error("Wait did not see the acknowledgement")
	}
}

// TestServerRefuses: other paths and methods, and a wait no merger ends.
func TestServerRefuses(t *testing.T) {
	s, err := Listen("localhost:0", false, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tt := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/", 404}, {"GET", "/results", 404}, {"POST", StatusPath, 405}, {"PUT", ResultPath, 405}, {"GET", AckPath, 405},
	} {
		if code, _, _ := request(t, s, tt.method, tt.path, ""); code != tt.code {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, code, tt.code)
		}
	}
	start := time.Now()
	if by := s.Wait(context.Background(), 50*time.Millisecond); by != "" || time.Since(start) > 5*time.Second {
		t.Errorf("Wait without a merger: %q after %s", by, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if by := s.Wait(ctx, time.Hour); by != "" {
		t.Errorf("Wait with a cancelled context: %q", by)
	}
	if _, err := Listen("0.0.0.0:0", false, ""); err == nil || !strings.Contains(err.Error(), `result address "0.0.0.0:0": host "0.0.0.0" is not a loopback address`) {
		t.Errorf("a non-loopback address without anyHost: %v", err)
	}
}
