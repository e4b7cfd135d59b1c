package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLS is how https and wss targets are verified and what the client
// presents. The zero value verifies the server against the system's roots
// and presents no certificate.
type TLS struct {
	// Insecure skips verification of the server's certificate (--insecure);
	// reports say so.
	Insecure bool
	// Roots, when set, are the only certificate authorities trusted
	// (--ca-cert), as with curl's --cacert: a private CA's bundle must not
	// widen into "the system's roots and this too" by accident.
	Roots *x509.CertPool
	// Certificates are presented when the server asks for a client
	// certificate (--client-cert, --client-key).
	Certificates []tls.Certificate
}

// Config returns a fresh tls.Config for a connection to serverName that
// offers protos by ALPN (none: no ALPN).
func (t TLS) Config(serverName string, protos ...string) *tls.Config {
	return &tls.Config{
		ServerName:         serverName,
		InsecureSkipVerify: t.Insecure, //nolint:gosec // only with --insecure, which reports print as a warning
		RootCAs:            t.Roots,
		Certificates:       t.Certificates,
		NextProtos:         protos,
		MinVersion:         tls.VersionTLS12,
	}
}

// LoadTLS reads the files named by --ca-cert, --client-cert and
// --client-key (empty names are not given). Each error names the flag and
// the file, and never quotes a key's contents.
func LoadTLS(insecure bool, caFile, certFile, keyFile string) (TLS, error) {
	t := TLS{Insecure: insecure}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return t, fmt.Errorf("--ca-cert: %w", err)
		}
		t.Roots = x509.NewCertPool()
		if !t.Roots.AppendCertsFromPEM(pem) {
			return t, fmt.Errorf("--ca-cert %s: no PEM certificate in it", caFile)
		}
	}
	switch {
	case certFile == "" && keyFile == "":
	case certFile == "":
		return t, errors.New("--client-key needs --client-cert")
	case keyFile == "":
		// A PEM file may hold both; try it as the key file too.
		keyFile = certFile
		fallthrough
	default:
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return t, fmt.Errorf("--client-cert %s / --client-key %s: %w", certFile, keyFile, err)
		}
		t.Certificates = []tls.Certificate{c}
	}
	return t, nil
}
