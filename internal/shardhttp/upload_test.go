package shardhttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestUpload(t *testing.T) {
	var gotMethod, gotType, gotBody, gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		gotMethod, gotType, gotBody, gotQuery = r.Method, r.Header.Get("Content-Type"), string(body), r.URL.RawQuery
		if strings.Contains(r.URL.Path, "denied") {
			http.Error(w, "AccessDenied: the signature expired", http.StatusForbidden)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	ctx := context.Background()
	if err := Upload(ctx, srv.Client(), srv.URL+"/runs/total.json?X-Amz-Signature=s3cr3t", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if gotMethod != "PUT" || gotType != "application/json" || gotBody != `{"a":1}` || gotQuery != "X-Amz-Signature=s3cr3t" {
		t.Errorf("the server got %s %q %q, query %q", gotMethod, gotType, gotBody, gotQuery)
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	for _, tt := range []struct{ url, want string }{
		{srv.URL + "/denied?X-Amz-Signature=s3cr3t", srv.URL + "/denied?…: the server answered 403 Forbidden: AccessDenied: the signature expired"},
		{dead.URL + "/x?sig=s3cr3t", "connection refused"},
	} {
		err := Upload(ctx, srv.Client(), tt.url, []byte(`{}`))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("upload to %s: %v; want an error with %q, without the URL's credentials", tt.url, err, tt.want)
		}
	}
}

func TestShowURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://bucket.s3.amazonaws.com/run/total.json?X-Amz-Signature=abc": "https://bucket.s3.amazonaws.com/run/total.json?…",
		"https://user:pass@dav.example.com/results/total.json":               "https://dav.example.com/results/total.json",
		"http://127.0.0.1:8080/up":                                           "http://127.0.0.1:8080/up",
		"http://%zz":                                                         "the URL given",
	} {
		if got := ShowURL(in); got != want {
			t.Errorf("ShowURL(%q) = %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"ftp://x/y", "/tmp/total.json", "http://"} {
		if err := CheckUploadURL(bad); err == nil {
			t.Errorf("CheckUploadURL(%q) accepted it", bad)
		}
	}
	if err := CheckUploadURL("https://x/y?sig=1"); err != nil {
		t.Error(err)
	}
}
