package testenv_test

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"

	"otpgate/internal/testenv"
)

func TestNewPKI(t *testing.T) {
	p := testenv.NewPKI(t, t.TempDir())
	caPEM, err := os.ReadFile(p.CA)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatalf("got no certificate in %s, want the CA", p.CA)
	}
	cases := []struct {
		name, cert, key string
		usage           x509.ExtKeyUsage
		host            string
	}{
		{"ServerCertificateForLoopback", p.ServerCert, p.ServerKey, x509.ExtKeyUsageServerAuth, "127.0.0.1"},
		{"ServerCertificateForLocalhost", p.ServerCert, p.ServerKey, x509.ExtKeyUsageServerAuth, "localhost"},
		{"ClientCertificate", p.ClientCert, p.ClientKey, x509.ExtKeyUsageClientAuth, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pair, err := tls.LoadX509KeyPair(c.cert, c.key)
			if err != nil {
				t.Fatalf("got %v, want a matching certificate and key", err)
			}
			leaf, err := x509.ParseCertificate(pair.Certificate[0])
			if err != nil {
				t.Fatal(err)
			}
			opts := x509.VerifyOptions{Roots: roots, DNSName: c.host, KeyUsages: []x509.ExtKeyUsage{c.usage}}
			if _, err := leaf.Verify(opts); err != nil {
				t.Errorf("got %v, want the certificate to verify against the CA", err)
			}
		})
	}
	t.Run("KeysAreOwnerOnly", func(t *testing.T) {
		for _, k := range []string{p.ServerKey, p.ClientKey} {
			fi, err := os.Stat(k)
			if err != nil {
				t.Fatal(err)
			}
			if m := fi.Mode().Perm(); m != 0o600 {
				t.Errorf("%s: got mode %o, want 600", k, m)
			}
		}
	})
}
