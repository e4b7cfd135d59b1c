package live

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rpcload/rpcload/internal/listen"
	"github.com/rpcload/rpcload/internal/stats"
)

// Metrics serves a run's live figures on /metrics in Prometheus text
// format (or protobuf, if the scraper asks for it): cumulative counts as
// counters, the latency of the replies so far as histograms per method,
// the last interval's figures as gauges, all named rpcload_*. Update feeds
// it; a scrape reads the figures of one Update, never half of two.
type Metrics struct {
	srv     *http.Server
	ln      net.Listener
	created time.Time // when the counts began, for the histograms' created timestamp

	mu         sync.Mutex
	point      stats.Point
	requests   stats.Requests
	violations uint64
	latency    []methodLatency

	closeOnce sync.Once
	closeErr  error
	served    chan struct{} // closed when Serve has returned
}

// NewMetrics listens on addr (host:port; port 0 picks a free one) and
// serves /metrics until Close. Unless allowNonLoopback is true, a host that
// is not a loopback address is refused (listen.Local says which and why).
func NewMetrics(addr string, allowNonLoopback bool) (*Metrics, error) {
	ln, err := listen.Local(addr, allowNonLoopback)
	if err != nil {
		return nil, fmt.Errorf("metrics %w", err)
	}
	m := &Metrics{ln: ln, created: time.Now(), served: make(chan struct{})}
	reg := prometheus.NewRegistry()
	if err := reg.Register(m.collector()); err != nil {
		ln.Close()
		return nil, fmt.Errorf("registering the metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(m.served)
		_ = m.srv.Serve(ln) // ErrServerClosed after Close; a listener error ends the serving only
	}()
	return m, nil
}

// Addr is the address the metrics are served on (with the port picked, if
// the address asked for port 0).
func (m *Metrics) Addr() string { return m.ln.Addr().String() }

// Update replaces the figures served: p is the interval that just closed,
// cumulative the run's counts so far, violations the broken rules so far,
// and hists (if not nil) visits the run's latency histograms so far, which
// become the served histograms' buckets (BucketsOf) before Update returns.
func (m *Metrics) Update(p stats.Point, cumulative stats.Requests, violations uint64, hists stats.MethodHistsFunc) {
	var latency []methodLatency
	if hists != nil {
		// Copy under the aggregator's lock, map after: the hot path waits
		// on that lock when a recorder's buffer fills.
		type copied struct {
			method             string
			corrected, service *hdr.Snapshot
		}
		var copies []copied
		hists(func(method string, corrected, service *hdr.Histogram) {
			copies = append(copies, copied{method, corrected.Export(), service.Export()})
		})
		for _, c := range copies {
			latency = append(latency, methodLatency{method: c.method, corrected: bucketsOfSnapshot(c.corrected), service: bucketsOfSnapshot(c.service)})
		}
	}
	m.mu.Lock()
	m.point, m.requests, m.violations = p, cumulative, violations
	if hists != nil {
		m.latency = latency
	}
	m.mu.Unlock()
}

// methodLatency is one method's latency histograms as served.
type methodLatency struct {
	method             string
	corrected, service Buckets
}

// Close stops serving and waits until the server has stopped. Calling it
// again returns the first call's result.
func (m *Metrics) Close() error {
	m.closeOnce.Do(func() {
		err := m.srv.Close()
		<-m.served
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.closeErr = fmt.Errorf("closing the metrics server on %s: %w", m.Addr(), err)
		}
	})
	return m.closeErr
}

// metric is one figure served: its description and where Update keeps it.
type metric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(p *stats.Point, q *stats.Requests, violations uint64) (v float64, present bool)
	label string // the value of the metric's one label, if it has one
}

func counter(name, help string, v func(q *stats.Requests) uint64) metric {
	return metric{
		desc: prometheus.NewDesc("rpcload_"+name+"_total", help, nil, nil),
		kind: prometheus.CounterValue,
		value: func(_ *stats.Point, q *stats.Requests, _ uint64) (float64, bool) {
			return float64(v(q)), true
		},
	}
}

func gauge(name, help string, v func(p *stats.Point) (float64, bool)) metric {
	return metric{
		desc:  prometheus.NewDesc("rpcload_"+name, help, nil, nil),
		kind:  prometheus.GaugeValue,
		value: func(p *stats.Point, _ *stats.Requests, _ uint64) (float64, bool) { return v(p) },
	}
}

func always(v float64) (float64, bool) { return v, true }

// collector describes every metric served.
func (m *Metrics) collector() prometheus.Collector {
	latency := prometheus.NewDesc("rpcload_interval_latency_seconds",
		"Corrected latency (reply time minus intended send time) of the last interval's replies, at a quantile. Quantiles of different processes do not add up: across pods use rpcload_corrected_latency_seconds.",
		[]string{"quantile"}, nil)
	ms := []metric{
		counter("requests_sent", "Requests written (notifications not included).", func(q *stats.Requests) uint64 { return q.Sent }),
		counter("notifications_sent", "Notifications written.", func(q *stats.Requests) uint64 { return q.Notifications }),
		counter("messages_sent", "Messages written: a request, a notification or a whole batch each.", func(q *stats.Requests) uint64 { return q.Messages }),
		counter("batches_sent", "Batches written (each also a message; its elements are requests and notifications).", func(q *stats.Requests) uint64 { return q.Batches }),
		counter("answered", "Requests answered: ok, rpc errors and invalid replies.", func(q *stats.Requests) uint64 { return q.Answered }),
		counter("ok", "Requests answered with a result.", func(q *stats.Requests) uint64 { return q.OK }),
		counter("rpc_errors", "Requests answered with a JSON-RPC error.", func(q *stats.Requests) uint64 { return q.RPCErrors }),
		counter("transport_errors", "Requests that could not be sent, or whose connection failed before the reply.", func(q *stats.Requests) uint64 { return q.TransportErrors }),
		counter("timeouts", "Requests not answered within the timeout.", func(q *stats.Requests) uint64 { return q.Timeouts }),
		counter("late", "Replies that arrived after their request timed out.", func(q *stats.Requests) uint64 { return q.Late }),
		counter("dropped", "Open-loop requests not sent because the in-flight cap was reached.", func(q *stats.Requests) uint64 { return q.Dropped }),
		{
			desc: prometheus.NewDesc("rpcload_violations_total", "Broken JSON-RPC rules (warnings included).", nil, nil),
			kind: prometheus.CounterValue,
			value: func(_ *stats.Point, _ *stats.Requests, v uint64) (float64, bool) {
				return float64(v), true
			},
		},
		gauge("elapsed_seconds", "Time since the run's clock started, at the end of the last interval.",
			func(p *stats.Point) (float64, bool) { return always(p.T) }),
		gauge("inflight_requests", "Requests sent and not yet answered, timed out or failed.",
			func(p *stats.Point) (float64, bool) { return always(float64(p.InFlight)) }),
		gauge("oldest_pending_seconds", "Age of the oldest request still waiting for its reply (0 when none is).",
			func(p *stats.Point) (float64, bool) { return always(float64(p.OldestPendingUs) / 1e6) }),
		gauge("timed_out_unanswered_requests", "Requests that timed out and have had no late reply since.",
			func(p *stats.Point) (float64, bool) { return always(float64(p.TimedOutUnanswered)) }),
		gauge("target_rate_requests_per_second", "The schedule's rate in messages per second, a batch counting once (0 in closed loop).",
			func(p *stats.Point) (float64, bool) { return always(p.TargetRate) }),
		gauge("child_rss_bytes", "Resident memory of the server's child processes (only when rpcload started them).",
			func(p *stats.Point) (float64, bool) { return float64(p.ChildRSSBytes), p.ChildRSSBytes > 0 }),
		{desc: latency, kind: prometheus.GaugeValue, label: "0.5",
			value: func(p *stats.Point, _ *stats.Requests, _ uint64) (float64, bool) {
				return always(float64(p.P50us) / 1e6)
			}},
		{desc: latency, kind: prometheus.GaugeValue, label: "0.99",
			value: func(p *stats.Point, _ *stats.Requests, _ uint64) (float64, bool) {
				return always(float64(p.P99us) / 1e6)
			}},
	}
	return &collector{m: m, metrics: ms,
		corrected: prometheus.NewDesc("rpcload_corrected_latency_seconds",
			"Corrected latency of the run's replies so far, by method: reply time minus the time the request was due on the schedule (so a stalled sender does not hide a slow server). Warm-up replies are left out, as in the result file.",
			[]string{"method"}, nil),
		service: prometheus.NewDesc("rpcload_service_time_seconds",
			"Service time of the run's replies so far, by method: reply time minus the time the request was written. Warm-up replies are left out, as in the result file.",
			[]string{"method"}, nil),
	}
}

// collector hands a scrape the figures of one Update.
type collector struct {
	m                  *Metrics
	metrics            []metric
	corrected, service *prometheus.Desc // the histograms
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.corrected
	ch <- c.service
	seen := map[*prometheus.Desc]bool{}
	for _, mt := range c.metrics {
		if !seen[mt.desc] {
			seen[mt.desc] = true
			ch <- mt.desc
		}
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	p, q, v, latency := c.m.point, c.m.requests, c.m.violations, c.m.latency
	c.m.mu.Unlock()
	for _, ml := range latency {
		for _, h := range []struct {
			desc *prometheus.Desc
			b    *Buckets
		}{{c.corrected, &ml.corrected}, {c.service, &ml.service}} {
			m, err := h.b.metric(h.desc, c.m.created, ml.method)
			if err != nil {
				m = prometheus.NewInvalidMetric(h.desc, err)
			}
			ch <- m
		}
	}
	for _, mt := range c.metrics {
		value, ok := mt.value(&p, &q, v)
		if !ok {
			continue
		}
		var labels []string
		if mt.label != "" {
			labels = []string{mt.label}
		}
		m, err := prometheus.NewConstMetric(mt.desc, mt.kind, value, labels...)
		if err != nil {
			m = prometheus.NewInvalidMetric(mt.desc, err)
		}
		ch <- m
	}
}
