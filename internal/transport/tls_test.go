package transport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testPKI is a private CA with a server certificate for 127.0.0.1 and a
// client certificate, written as PEM files.
type testPKI struct {
	dir                              string
	caFile, otherCAFile, garbageFile string
	certFile, keyFile, bothFile      string // the client's
	server                           tls.Certificate
	caPool                           *x509.CertPool
	caCert                           *x509.Certificate
	caKey                            *ecdsa.PrivateKey
	clientCertPEM, clientKeyPEM      []byte
	serverCertPEM, serverKeyPEM      []byte
	serial                           int64
	notBefore, notAfter              time.Time
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir(), notBefore: time.Now().Add(-time.Hour), notAfter: time.Now().Add(time.Hour)}
	var caPEM []byte
	p.caCert, p.caKey, caPEM = p.newCA(t, "rpcload test CA")
	_, _, otherPEM := p.newCA(t, "another CA")
	p.caPool = x509.NewCertPool()
	p.caPool.AddCert(p.caCert)
	p.serverCertPEM, p.serverKeyPEM = p.leaf(t, "127.0.0.1", x509.ExtKeyUsageServerAuth)
	p.clientCertPEM, p.clientKeyPEM = p.leaf(t, "rpcload client", x509.ExtKeyUsageClientAuth)
	var err error
	if p.server, err = tls.X509KeyPair(p.serverCertPEM, p.serverKeyPEM); err != nil {
		t.Fatal(err)
	}
	p.caFile = p.write(t, "ca.pem", caPEM)
	p.otherCAFile = p.write(t, "other-ca.pem", otherPEM)
	p.garbageFile = p.write(t, "garbage.pem", []byte("not a certificate\n"))
	p.certFile = p.write(t, "client.pem", p.clientCertPEM)
	p.keyFile = p.write(t, "client-key.pem", p.clientKeyPEM)
	p.bothFile = p.write(t, "client-both.pem", append(append([]byte(nil), p.clientCertPEM...), p.clientKeyPEM...))
	return p
}

func (p *testPKI) write(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (p *testPKI) newCA(t *testing.T, name string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: name},
		NotBefore: p.notBefore, NotAfter: p.notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func (p *testPKI) leaf(t *testing.T, name string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: name},
		NotBefore: p.notBefore, NotAfter: p.notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// TestLoadTLSErrors checks that each bad combination or file is refused
// with the flag and the file named, and the key's contents never quoted.
func TestLoadTLSErrors(t *testing.T) {
	p := newTestPKI(t)
	missing := filepath.Join(p.dir, "missing.pem")
	for _, tc := range []struct {
		name                string
		ca, cert, key, want string
	}{
		{"missing CA file", missing, "", "", "--ca-cert: open " + missing},
		{"CA file without certificates", p.garbageFile, "", "", "--ca-cert " + p.garbageFile + ": no PEM certificate"},
		{"key without certificate", "", "", p.keyFile, "--client-key needs --client-cert"},
		{"certificate without its key", "", p.certFile, "", "--client-cert " + p.certFile},
		{"key that is no key", "", p.certFile, p.caFile, "--client-key " + p.caFile},
		{"missing certificate", "", missing, p.keyFile, "--client-cert " + missing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadTLS(false, tc.ca, tc.cert, tc.key)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadTLS(%q, %q, %q) = %v; want an error containing %q", tc.ca, tc.cert, tc.key, err, tc.want)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") || strings.Contains(err.Error(), string(p.clientKeyPEM[40:60])) {
				t.Errorf("error quotes key material: %v", err)
			}
		})
	}
}

// TestTLSVerification handshakes with a server whose certificate comes from
// a private CA and that requires a client certificate from the same CA:
// verification is on by default, --ca-cert trusts the CA (and only it),
// --insecure skips verification, and the client certificate is presented
// (from two files or one).
func TestTLSVerification(t *testing.T) {
	p := newTestPKI(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{p.server}, ClientCAs: p.caPool, ClientAuth: tls.RequireAndVerifyClientCert,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				c.(*tls.Conn).Handshake() // the client's outcome is what the test judges
				c.Write([]byte("x"))
			}()
		}
	}()
	for _, tc := range []struct {
		name          string
		insecure      bool
		ca, cert, key string
		wantErr       string // "" = the handshake and a read succeed
	}{
		{"system roots do not know the private CA", false, "", p.certFile, p.keyFile, "certificate signed by unknown authority"},
		{"another CA is not trusted", false, p.otherCAFile, p.certFile, p.keyFile, "certificate signed by unknown authority"},
		{"--ca-cert trusts the private CA", false, p.caFile, p.certFile, p.keyFile, ""},
		{"certificate and key in one file", false, p.caFile, p.bothFile, "", ""},
		{"--insecure skips verification", true, "", p.certFile, p.keyFile, ""},
		{"no client certificate is refused by the server", false, p.caFile, "", "", "certificate required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := LoadTLS(tc.insecure, tc.ca, tc.cert, tc.key)
			if err != nil {
				t.Fatal(err)
			}
			c, err := tls.Dial("tcp", ln.Addr().String(), cfg.Config("127.0.0.1"))
			if err == nil {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				// TLS 1.3: the server's verdict on the client certificate
				// arrives with the first read.
				_, err = c.Read(make([]byte, 1))
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("handshake: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("handshake error %v; want one containing %q", err, tc.wantErr)
			}
		})
	}
}
