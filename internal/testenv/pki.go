package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a throw-away certificate authority with a server certificate for 127.0.0.1 and
// localhost and a client certificate, as PEM files in one directory.
type PKI struct {
	// CA is the authority's certificate.
	CA string
	// ServerCert and ServerKey are the server's certificate and key.
	ServerCert, ServerKey string
	// ClientCert and ClientKey are the client's certificate and key.
	ClientCert, ClientKey string
}

// NewPKI writes a fresh CA and its certificates into dir: keys readable by their owner
// only, certificates by all.
func NewPKI(tb testing.TB, dir string) *PKI {
	tb.Helper()
	p := &PKI{
		CA:         filepath.Join(dir, "ca.crt"),
		ServerCert: filepath.Join(dir, "server.crt"), ServerKey: filepath.Join(dir, "server.key"),
		ClientCert: filepath.Join(dir, "client.crt"), ClientKey: filepath.Join(dir, "client.key"),
	}
	caKey := newKey(tb)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "otpgate test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		tb.Fatalf("testenv: CA certificate: %v", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		tb.Fatalf("testenv: CA certificate: %v", err)
	}
	writePEM(tb, p.CA, "CERTIFICATE", caDER, 0o644)

	leaf := func(serial int64, name string, usage x509.ExtKeyUsage, certPath, keyPath string) {
		key := newKey(tb)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			tb.Fatalf("testenv: %s certificate: %v", name, err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			tb.Fatalf("testenv: %s key: %v", name, err)
		}
		writePEM(tb, certPath, "CERTIFICATE", der, 0o644)
		writePEM(tb, keyPath, "PRIVATE KEY", keyDER, 0o600)
	}
	leaf(2, "localhost", x509.ExtKeyUsageServerAuth, p.ServerCert, p.ServerKey)
	leaf(3, "otpgate", x509.ExtKeyUsageClientAuth, p.ClientCert, p.ClientKey)
	return p
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("testenv: key: %v", err)
	}
	return k
}

func writePEM(tb testing.TB, path, typ string, der []byte, mode os.FileMode) {
	tb.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
}
