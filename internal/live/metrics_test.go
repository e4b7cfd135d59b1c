package live

import (
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rpcload/rpcload/internal/stats"
)

// scrape GETs /metrics from m and parses the text format.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + m.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %s: %s", resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return families
}

func TestMetricsServesTheLastUpdate(t *testing.T) {
	m, err := NewMetrics("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	// Before any update: counters at 0, no child RSS.
	families := scrape(t, m)
	if got := value(t, families, "rpcload_requests_sent_total", ""); got != 0 {
		t.Errorf("sent before any update = %v", got)
	}
	if _, ok := families["rpcload_child_rss_bytes"]; ok {
		t.Error("child RSS served though no child was measured")
	}

	m.Update(stats.Point{T: 12, InFlight: 7, OldestPendingUs: 1_500_000, TimedOutUnanswered: 4, TargetRate: 5000,
		ChildRSSBytes: 150 << 20, P50us: 850, P99us: 3400},
		stats.Requests{Sent: 1000, Notifications: 10, Answered: 990, OK: 980, RPCErrors: 10, TransportErrors: 3, Timeouts: 2, Late: 1, Dropped: 5,
			Messages: 210, Batches: 200},
		6, nil)
	families = scrape(t, m)
	tests := []struct {
		name, quantile string
		kind           dto.MetricType
		want           float64
	}{
		{"rpcload_requests_sent_total", "", dto.MetricType_COUNTER, 1000},
		{"rpcload_notifications_sent_total", "", dto.MetricType_COUNTER, 10},
		{"rpcload_messages_sent_total", "", dto.MetricType_COUNTER, 210},
		{"rpcload_batches_sent_total", "", dto.MetricType_COUNTER, 200},
		{"rpcload_answered_total", "", dto.MetricType_COUNTER, 990},
		{"rpcload_ok_total", "", dto.MetricType_COUNTER, 980},
		{"rpcload_rpc_errors_total", "", dto.MetricType_COUNTER, 10},
		{"rpcload_transport_errors_total", "", dto.MetricType_COUNTER, 3},
		{"rpcload_timeouts_total", "", dto.MetricType_COUNTER, 2},
		{"rpcload_late_total", "", dto.MetricType_COUNTER, 1},
		{"rpcload_dropped_total", "", dto.MetricType_COUNTER, 5},
		{"rpcload_violations_total", "", dto.MetricType_COUNTER, 6},
		{"rpcload_elapsed_seconds", "", dto.MetricType_GAUGE, 12},
		{"rpcload_inflight_requests", "", dto.MetricType_GAUGE, 7},
		{"rpcload_oldest_pending_seconds", "", dto.MetricType_GAUGE, 1.5},
		{"rpcload_timed_out_unanswered_requests", "", dto.MetricType_GAUGE, 4},
		{"rpcload_target_rate_requests_per_second", "", dto.MetricType_GAUGE, 5000},
		{"rpcload_child_rss_bytes", "", dto.MetricType_GAUGE, 150 << 20},
		{"rpcload_interval_latency_seconds", "0.5", dto.MetricType_GAUGE, 0.00085},
		{"rpcload_interval_latency_seconds", "0.99", dto.MetricType_GAUGE, 0.0034},
	}
	for _, tt := range tests {
		t.Run(tt.name+tt.quantile, func(t *testing.T) {
			f := families[tt.name]
			if f == nil {
				t.Fatalf("%s not served", tt.name)
			}
			if f.GetType() != tt.kind {
				t.Errorf("type %v, want %v", f.GetType(), tt.kind)
			}
			if !strings.HasPrefix(f.GetHelp(), strings.ToUpper(f.GetHelp()[:1])) || len(f.GetHelp()) < 10 {
				t.Errorf("help text %q", f.GetHelp())
			}
			if got := value(t, families, tt.name, tt.quantile); got != tt.want {
				t.Errorf("= %v, want %v", got, tt.want)
			}
		})
	}
	for name := range families {
		if !strings.HasPrefix(name, "rpcload_") {
			t.Errorf("metric %s lacks the rpcload_ prefix", name)
		}
	}
}

// value is the value of the metric name (with the quantile label, if not
// empty) in families.
func value(t *testing.T, families map[string]*dto.MetricFamily, name, quantile string) float64 {
	t.Helper()
	f := families[name]
	if f == nil {
		t.Fatalf("%s not served", name)
	}
	for _, m := range f.GetMetric() {
		q := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == "quantile" {
				q = l.GetValue()
			}
		}
		if q != quantile {
			continue
		}
		if m.Counter != nil {
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("%s{quantile=%q} not served", name, quantile)
	return 0
}

// TestMetricsAddresses: the endpoint listens where listen.Local lets it
// (whose own test has every case), and its errors say they are about the
// metrics address.
func TestMetricsAddresses(t *testing.T) {
	tests := []struct {
		addr  string
		allow bool
		want  string // in the error; "" = accepted
	}{
		{"127.0.0.1:0", false, ""},
		{"0.0.0.0:0", false, `metrics address "0.0.0.0:0": host "0.0.0.0" is not a loopback address`},
		{"127.0.0.1:http-alt-nonexistent", false, `metrics address "127.0.0.1:http-alt-nonexistent"`},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			m, err := NewMetrics(tt.addr, tt.allow)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				defer m.Close()
				if _ = scrape(t, m); !strings.Contains(m.Addr(), ":") {
					t.Errorf("Addr() = %q", m.Addr())
				}
				return
			}
			if err == nil {
				m.Close()
				t.Fatalf("accepted %s", tt.addr)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.addr) {
				t.Errorf("error %q does not name %q and say %q", err, tt.addr, tt.want)
			}
		})
	}
}

func TestMetricsClose(t *testing.T) {
	m, err := NewMetrics("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	addr := m.Addr()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		t.Errorf("still served after Close: %s", resp.Status)
	}
	// The port is free again.
	m2, err := NewMetrics(addr, false)
	if err != nil {
		t.Fatalf("the port was not released: %v", err)
	}
	m2.Close()
}
