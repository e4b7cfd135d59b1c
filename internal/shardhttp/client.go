package shardhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rpcload/rpcload/internal/stats"
)

// Limits of what a merger reads from a shard: a status is a few hundred
// bytes; a result file is rarely over a few MiB (its series is thinned
// past 4,096 points), so 256 MiB means the address is not a shard.
const (
	maxStatusBytes = 64 << 10
	maxResultBytes = 256 << 20
)

// Client is the merger's side of the protocol, one call per endpoint. Its
// errors are of two kinds: a ProtocolError (the address answered, but not
// as a shard does: the wrong port, a garbled body) and any other error,
// which means no answer this time (refused, timed out, cut short, a
// gateway's 502, 503 or 504).
type Client interface {
	Status(ctx context.Context, base string) (Status, error)
	// Result fetches a done shard's result, whole (its ETag checked).
	Result(ctx context.Context, base string) (data []byte, etag string, err error)
	// Ack acknowledges a result fetched (etag) or a failure seen (etag "").
	Ack(ctx context.Context, base, etag string) error
}

// ProtocolError is an answer that no shard gives: the merge fails at once
// on it rather than waiting for an answer that will not come.
type ProtocolError struct{ Err error }

func (e *ProtocolError) Error() string { return e.Err.Error() }
func (e *ProtocolError) Unwrap() error { return e.Err }

// BaseURL is the base URL of a shard given to --from as host:port or
// http://host:port[/prefix].
func BaseURL(source string) (string, error) {
	raw := source
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", fmt.Errorf("%q is not host:port or an http:// URL: %v", source, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("%q: a shard serves http://, not %s://", source, u.Scheme)
	case u.Host == "" || u.Port() == "":
		return "", fmt.Errorf("%q has no host:port (a shard serves on the port of its --serve-result)", source)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return "", fmt.Errorf("%q: give host:port or http://host:port[/prefix], without user, query or fragment", source)
	}
	return strings.TrimSuffix(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"), nil
}

// HTTPClient is the Client over HTTP. Status and Ack give up after
// requestTimeout: a shard that answers slower counts as not answering
// this time.
type HTTPClient struct {
	HTTP           *http.Client
	RequestTimeout time.Duration
	ResultTimeout  time.Duration // for a whole result body
}

// NewHTTPClient is an HTTPClient with its own transport (no proxy from
// the environment: shards are addressed directly) and the given timeout
// for status and ack requests.
func NewHTTPClient(requestTimeout time.Duration) *HTTPClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	return &HTTPClient{HTTP: &http.Client{Transport: tr}, RequestTimeout: requestTimeout, ResultTimeout: 2 * time.Minute}
}

// Status implements Client.
func (c *HTTPClient) Status(ctx context.Context, base string) (Status, error) {
	ctx, cancel := context.WithTimeout(ctx, c.RequestTimeout)
	defer cancel()
	resp, body, err := c.do(ctx, http.MethodGet, base+StatusPath, "", maxStatusBytes)
	if err != nil {
		return Status{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return Status{}, refusal(resp, body, base+StatusPath)
	}
	return decodeStatus(body, base+StatusPath)
}

// Result implements Client.
func (c *HTTPClient) Result(ctx context.Context, base string) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.ResultTimeout)
	defer cancel()
	resp, body, err := c.do(ctx, http.MethodGet, base+ResultPath, "", maxResultBytes)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", refusal(resp, body, base+ResultPath)
	}
	etag := resp.Header.Get("ETag")
	if etag == "" {
		return nil, "", &ProtocolError{fmt.Errorf("%s came without an ETag: not a shard's answer", base+ResultPath)}
	}
	if got := ETag(body); got != etag {
		return nil, "", fmt.Errorf("%s: the body (%d bytes) does not match its ETag %s: cut short or changed on the way", base+ResultPath, len(body), etag)
	}
	return body, etag, nil
}

// Ack implements Client.
func (c *HTTPClient) Ack(ctx context.Context, base, etag string) error {
	ctx, cancel := context.WithTimeout(ctx, c.RequestTimeout)
	defer cancel()
	resp, body, err := c.do(ctx, http.MethodPost, base+AckPath, etag, maxStatusBytes)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		return refusal(resp, body, base+AckPath)
	}
	return nil
}

// do sends one request and reads the whole body, up to limit bytes (a
// longer body is a ProtocolError).
func (c *HTTPClient) do(ctx context.Context, method, u, ifMatch string, limit int64) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, nil, &ProtocolError{err}
	}
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: reading the answer: %w", method, u, err)
	}
	if int64(len(body)) > limit {
		return nil, nil, &ProtocolError{fmt.Errorf("%s %s: the answer is over %s: not a shard's", method, u, sizeText(limit))}
	}
	return resp, body, nil
}

// refusal is the error of an answer other than 200: no answer this time
// for a gateway's 502/503/504 and a shard's 503 (still running); a
// ProtocolError for anything else, with the shard's status when the body
// holds one.
func refusal(resp *http.Response, body []byte, u string) error {
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return fmt.Errorf("%s answered %s", u, resp.Status)
	}
	if st, err := decodeStatus(body, u); err == nil {
		return &ProtocolError{fmt.Errorf("%s answered %s (state %s)", u, resp.Status, st.State)}
	}
	return &ProtocolError{fmt.Errorf("%s answered %s: %s", u, resp.Status, stats.OneLine(string(body), 120))}
}

func decodeStatus(body []byte, u string) (Status, error) {
	var st Status
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&st); err != nil {
		return Status{}, &ProtocolError{fmt.Errorf("%s: not a shard's status (%v): %s", u, err, stats.OneLine(string(body), 120))}
	}
	switch st.State {
	case Running, Done, Failed:
	default:
		return Status{}, &ProtocolError{fmt.Errorf("%s: not a shard's status: state %q", u, st.State)}
	}
	if st.State != Running && st.ExitCode == nil {
		return Status{}, &ProtocolError{fmt.Errorf("%s: a %s run without an exit code", u, st.State)}
	}
	if st.Shard != "" {
		if _, _, err := ParseShard(st.Shard); err != nil {
			return Status{}, &ProtocolError{fmt.Errorf("%s: %v", u, err)}
		}
	}
	return st, nil
}

func sizeText(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// isProtocol reports whether err is a ProtocolError.
func isProtocol(err error) bool {
	var pe *ProtocolError
	return errors.As(err, &pe)
}
