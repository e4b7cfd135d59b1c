package transport

import (
	"bytes"
	"context"
	"net/http"
	"time"
)

// H2Client posts JSON-RPC messages over HTTP/2: h2c (prior knowledge) on
// http:// URLs, h2 over TLS on https://, so that many requests share each
// connection. It is safe for concurrent use; net/http's HTTP/2 transport
// does the multiplexing.
type H2Client struct {
	client  *http.Client
	url     string
	header  http.Header
	maxBody int
}

// NewH2 returns an HTTP/2 client for o.URL.
func NewH2(o H1Options) *H2Client {
	var p http.Protocols
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{
		Proxy:              nil, // a load test goes straight to its target
		DialContext:        o.Dial,
		Protocols:          &p,
		DisableCompression: true,
		TLSClientConfig:    o.TLS.Config(""), // net/http sets the server name and ALPN per connection
		IdleConnTimeout:    90 * time.Second,
	}
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}, "User-Agent": {"rpcload"}}
	for k, v := range o.Header {
		h[http.CanonicalHeaderKey(k)] = v
	}
	// A redirect is the server's answer, counted as a status error as over
	// HTTP/1.1: following it would send the load, and the headers with any
	// secret in them, to a host the user did not name.
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &H2Client{client: &http.Client{Transport: tr, CheckRedirect: noRedirect}, url: o.URL, header: h, maxBody: o.MaxBody}
}

// Post sends body and returns the reply body appended to dst[:0], like
// H1Conn.Post: a status outside 2xx also returns *StatusError; a body over
// MaxBody returns ErrBodyTooLarge.
func (c *H2Client) Post(ctx context.Context, body, dst []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return dst[:0], 0, err
	}
	req.Header = c.header.Clone()
	if h := c.header.Get("Host"); h != "" {
		req.Host = h
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return dst[:0], 0, err
	}
	defer resp.Body.Close()
	if resp.ContentLength > int64(c.maxBody) {
		return dst[:0], resp.StatusCode, ErrBodyTooLarge
	}
	dst, err = readLimited(resp.Body, dst[:0], c.maxBody)
	if err != nil {
		return dst, resp.StatusCode, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return dst, resp.StatusCode, &StatusError{Code: resp.StatusCode, Body: snippet(dst)}
	}
	return dst, resp.StatusCode, nil
}

// Close closes idle connections.
func (c *H2Client) Close() { c.client.CloseIdleConnections() }
