package clitest

import (
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// TLSServer serves h over https on 127.0.0.1 with a certificate of its own
// (in no system's roots) until the test ends, and returns its URL and a
// PEM file of the certificate, for --ca-cert.
func TLSServer(t testing.TB, h http.Handler) (url, caFile string) {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are what such tests are about
	ts.StartTLS()
	t.Cleanup(ts.Close)
	caFile = filepath.Join(t.TempDir(), "server.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return ts.URL, caFile
}
