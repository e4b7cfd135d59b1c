package transport

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
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
// MaxBody returns ErrBodyTooLarge; an SSE body, ErrEventStream.
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
	if isEventStream([]byte(resp.Header.Get("Content-Type"))) {
		return dst, resp.StatusCode, ErrEventStream
	}
	return dst, resp.StatusCode, nil
}

// Close closes idle connections.
func (c *H2Client) Close() { c.client.CloseIdleConnections() }

// ErrNoHTTP2 reports a server that does not speak HTTP/2 the way H2Client
// asks for it (ProbeH2).
var ErrNoHTTP2 = errors.New("the server does not speak HTTP/2")

// h2Preface is the client's connection preface (RFC 9113 §3.4) followed
// by an empty SETTINGS frame.
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + "\x00\x00\x00\x04\x00\x00\x00\x00\x00"

// ProbeH2 checks that the server at o.URL speaks HTTP/2 as H2Client will
// ask for it, without sending a request: over https, that the TLS
// handshake agrees on h2 (ALPN); over http, that the server answers the
// connection preface (h2c with prior knowledge) with its SETTINGS frame,
// as RFC 9113 §3.4 requires. A server that answers otherwise gives an
// error wrapping ErrNoHTTP2 that says what it did; failing to connect at
// all gives the dial's error. ctx bounds the whole probe.
func ProbeH2(ctx context.Context, o H1Options) error {
	c, u, err := dialHTTP(ctx, o, "h2", "http/1.1")
	if err != nil {
		return err
	}
	defer c.Close()
	if tc, ok := c.(*tls.Conn); ok {
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			if p == "" {
				p = "none"
			}
			return fmt.Errorf("%w: offered h2 in the TLS handshake (ALPN), it chose %s", ErrNoHTTP2, p)
		}
		return nil
	}
	if d, ok := ctx.Deadline(); ok {
		c.SetDeadline(d)
	}
	how := "h2c, HTTP/2 without TLS with prior knowledge, on " + u.Scheme + "://"
	if _, err := io.WriteString(c, h2Preface); err != nil {
		return fmt.Errorf("%w (%s): writing the connection preface: %v", ErrNoHTTP2, how, err)
	}
	br := bufio.NewReaderSize(c, 256)
	head, err := br.Peek(9)
	switch {
	case err == nil && head[3] == 0x4 && head[4]&0x1 == 0 && head[5]|head[6]|head[7]|head[8] == 0:
		return nil // the server's SETTINGS: it speaks HTTP/2
	case len(head) == 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)):
		return fmt.Errorf("%w (%s): it closed the connection on the HTTP/2 connection preface", ErrNoHTTP2, how)
	case bytes.HasPrefix(head, []byte("HTTP/")):
		line, _ := br.Peek(br.Buffered())
		line, _, _ = bytes.Cut(line, []byte("\n"))
		return fmt.Errorf("%w (%s): it answered the HTTP/2 connection preface with %q", ErrNoHTTP2, how, snippet(bytes.TrimSpace(line)))
	case err != nil && len(head) == 0:
		return fmt.Errorf("%w (%s): no answer to the HTTP/2 connection preface: %v", ErrNoHTTP2, how, err)
	}
	return fmt.Errorf("%w (%s): it answered the HTTP/2 connection preface with %q, not a SETTINGS frame", ErrNoHTTP2, how, snippet(head))
}
