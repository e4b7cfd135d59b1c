package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// HTTPOptions configure an HTTPClient.
type HTTPOptions struct {
	URL      string
	Conns    int         // keep-alive connections in the pool (the most requests in flight)
	Header   http.Header // extra request headers
	MaxBody  int         // largest reply body read; longer bodies are an error
	Insecure bool        // skip TLS verification
}

// HTTPClient POSTs frames over a bounded keep-alive pool.
type HTTPClient struct {
	client  *http.Client
	url     string
	header  http.Header
	maxBody int
}

// ErrBodyTooLarge reports a reply body over MaxBody.
var ErrBodyTooLarge = errors.New("transport: reply body larger than --max-frame")

// StatusError reports a non-2xx HTTP status; the body is kept (cut short) for
// the report.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("transport: HTTP %d %s", e.Code, http.StatusText(e.Code))
}

// NewHTTP returns a client for o.URL.
func NewHTTP(o HTTPOptions) *HTTPClient {
	if o.Conns < 1 {
		o.Conns = 1
	}
	tr := &http.Transport{
		Proxy:               nil, // a load test goes straight to its target
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        o.Conns,
		MaxIdleConnsPerHost: o.Conns,
		MaxConnsPerHost:     o.Conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: o.Insecure}, //nolint:gosec // only with --insecure
	}
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	for k, v := range o.Header {
		h[k] = v
	}
	return &HTTPClient{client: &http.Client{Transport: tr}, url: o.URL, header: h, maxBody: o.MaxBody}
}

// Post sends body and returns the reply body appended to dst[:0]. An empty
// reply (e.g. 204 to a notification) returns an empty slice. A status outside
// 2xx returns *StatusError.
func (c *HTTPClient) Post(ctx context.Context, body, dst []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return dst[:0], 0, fmt.Errorf("transport: %w", err)
	}
	req.Header = c.header
	req.ContentLength = int64(len(body))
	resp, err := c.client.Do(req)
	if err != nil {
		return dst[:0], 0, err
	}
	defer resp.Body.Close()
	dst, err = readLimited(resp.Body, dst[:0], c.maxBody)
	if err != nil {
		return dst, resp.StatusCode, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b := dst
		if len(b) > 256 {
			b = b[:256]
		}
		return dst, resp.StatusCode, &StatusError{Code: resp.StatusCode, Body: strings.ToValidUTF8(string(b), "?")}
	}
	return dst, resp.StatusCode, nil
}

// readLimited reads r to its end into dst, failing once more than max bytes
// arrive, without reading (or holding) more than max+1.
func readLimited(r io.Reader, dst []byte, max int) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst) > max {
			return dst[:max], ErrBodyTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// CloseIdle closes the pool's idle connections.
func (c *HTTPClient) CloseIdle() { c.client.CloseIdleConnections() }
