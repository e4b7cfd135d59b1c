package srvgauge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// MaxExposition bounds the body of one scrape: a node's exposition is
// rarely over a few MiB, and a server that answers with more must not
// make rpcload hold it.
const MaxExposition = 16 << 20

// acceptText asks for the classic text format, which every Prometheus
// client writes, rather than OpenMetrics or protobuf.
const acceptText = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// scrape fetches url's exposition, at most limit bytes, and parses it.
func scrape(ctx context.Context, client *http.Client, url string, limit int) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", acceptText)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("HTTP status %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("reading the exposition: %w", err)
	}
	if len(body) > limit {
		return nil, fmt.Errorf("the exposition is larger than %s", sizeText(limit))
	}
	return ParseExposition(body)
}

// sizeText writes a limit in MiB or KiB.
func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// ParseExposition parses a Prometheus text exposition (version 0.0.4;
// OpenMetrics text reads the same for gauges, its # EOF being a comment).
// Any line it cannot read fails the whole exposition, as Prometheus's own
// scrape would.
func ParseExposition(body []byte) (map[string]*dto.MetricFamily, error) {
	if bytes.IndexByte(body, 0) >= 0 {
		return nil, errors.New("the exposition is not text (it holds a NUL byte)")
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("not a Prometheus text exposition: %w", err)
	}
	return fams, nil
}

// Value is the sum of the series of fams that sel picks. found is false
// when the metric is absent or no series matches; err says why a metric
// that is there cannot be read as a gauge.
func Value(fams map[string]*dto.MetricFamily, sel Selector) (v float64, found bool, err error) {
	f, ok := fams[sel.Name]
	if !ok {
		return 0, false, nil
	}
	for _, m := range f.GetMetric() {
		if !sel.matches(m.GetLabel()) {
			continue
		}
		var x float64
		switch f.GetType() {
		case dto.MetricType_GAUGE:
			x = m.GetGauge().GetValue()
		case dto.MetricType_COUNTER:
			x = m.GetCounter().GetValue()
		case dto.MetricType_UNTYPED:
			x = m.GetUntyped().GetValue()
		default:
			kind := strings.ToLower(f.GetType().String())
			return 0, false, fmt.Errorf("%s is a %s, not a gauge (name its _sum or _count series in a recording rule, or pick another)", sel.Name, kind)
		}
		v += x
		found = true
	}
	return v, found, nil
}
