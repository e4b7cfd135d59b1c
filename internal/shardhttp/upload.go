package shardhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/rpcload/rpcload/internal/stats"
)

// CheckUploadURL refuses an --upload URL that is not http:// or https://.
func CheckUploadURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s is not an http:// or https:// URL", ShowURL(raw))
	}
	return nil
}

// Upload PUTs data (a merged result, application/json) to rawURL, as an
// object store's signed URL or a WebDAV or artifact server takes a file;
// any 2xx answer is success. Errors show the URL without its user
// information and query, where signed URLs keep their credentials.
func Upload(ctx context.Context, client *http.Client, rawURL string, data []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, rawURL, bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("uploading to %s: %v", ShowURL(rawURL), withoutURL(err))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("uploading to %s: %v", ShowURL(rawURL), withoutURL(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("uploading to %s: the server answered %s: %s", ShowURL(rawURL), resp.Status, stats.OneLine(string(body), 200))
	}
	return nil
}

// ShowURL is a URL as messages may show it: without user information and
// query (where a signed URL's credentials are), "?…" standing for a query.
func ShowURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the URL given"
	}
	q := ""
	if u.RawQuery != "" || u.ForceQuery {
		q = "?…"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
	return u.String() + q
}

// withoutURL is err without the URL net/http puts in its errors, which
// would show a signed URL's credentials.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
