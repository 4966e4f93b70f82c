package e2e

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

// pki is a throw-away certificate authority with a server certificate for 127.0.0.1 and
// localhost and a client certificate, written as PEM files into one directory.
type pki struct {
	dir                   string
	ca                    string // CA certificate
	serverCert, serverKey string
	clientCert, clientKey string
}

// newPKI writes a fresh CA and its certificates into dir, readable by the current user
// only (keys) or by all (certificates).
func newPKI(t testing.TB, dir string) *pki {
	t.Helper()
	p := &pki{
		dir: dir, ca: filepath.Join(dir, "ca.crt"),
		serverCert: filepath.Join(dir, "server.crt"), serverKey: filepath.Join(dir, "server.key"),
		clientCert: filepath.Join(dir, "client.crt"), clientKey: filepath.Join(dir, "client.key"),
	}
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "otpgate test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, p.ca, "CERTIFICATE", caDER, 0o644)

	leaf := func(serial int64, name string, usage x509.ExtKeyUsage, certPath, keyPath string) {
		key := newKey(t)
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
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		writePEM(t, certPath, "CERTIFICATE", der, 0o644)
		writePEM(t, keyPath, "PRIVATE KEY", keyDER, 0o600)
	}
	leaf(2, "localhost", x509.ExtKeyUsageServerAuth, p.serverCert, p.serverKey)
	leaf(3, "otpgate", x509.ExtKeyUsageClientAuth, p.clientCert, p.clientKey)
	return p
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t testing.TB, path, typ string, der []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
		t.Fatal(err)
	}
}
