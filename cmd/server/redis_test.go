package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestRedisTLSSettings(t *testing.T) {
	base := map[string]string{
		"REDIS_URL": "rediss://127.0.0.1:6380/0", "DATABASE_URL": "postgres://postgres@127.0.0.1/otpgate",
		"OTP_SECRET": strings.Repeat("s", 32), "ADMIN_TOKEN": strings.Repeat("t", 16), "SMS_PROVIDER": "log",
	}
	cases := []struct {
		name    string
		env     map[string]string
		wantErr string // "" for none
	}{
		{"CAWithTLSURL", map[string]string{"REDIS_CA_FILE": "ca.pem"}, ""},
		{"ClientCertificateWithTLSCluster", map[string]string{"REDIS_URL": "rediss+cluster://a:1,b:2", "REDIS_CLIENT_CERT_FILE": "c.pem", "REDIS_CLIENT_KEY_FILE": "k.pem"}, ""},
		{"CertificateWithoutKey", map[string]string{"REDIS_CLIENT_CERT_FILE": "c.pem"}, "REDIS_CLIENT_KEY_FILE"},
		{"KeyWithoutCertificate", map[string]string{"REDIS_CLIENT_KEY_FILE": "k.pem"}, "REDIS_CLIENT_CERT_FILE"},
		{"CAWithPlainURL", map[string]string{"REDIS_URL": "redis://127.0.0.1:6379/0", "REDIS_CA_FILE": "ca.pem"}, "REDIS_CA_FILE"},
		{"CertificateWithPlainSentinel", map[string]string{"REDIS_URL": "redis+sentinel://h:26379/m", "REDIS_CLIENT_CERT_FILE": "c.pem", "REDIS_CLIENT_KEY_FILE": "k.pem"}, "REDIS_CLIENT_CERT_FILE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range c.env {
				env[k] = v
			}
			_, err := loadConfig(func(k string) string { return env[k] })
			if c.wantErr == "" && err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("got %v, want an error naming %s", err, c.wantErr)
			}
		})
	}
}

func TestNewRedisTLSFiles(t *testing.T) {
	dir := t.TempDir()
	ca, cert, key := writeTestCert(t, dir)
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("FilesReachEveryForm", func(t *testing.T) {
		files := redisTLS{caFile: ca, certFile: cert, keyFile: key}
		for _, url := range []string{"rediss://127.0.0.1:6380/0", "rediss+cluster://127.0.0.1:7000,127.0.0.1:7001", "rediss+sentinel://127.0.0.1:26379/m"} {
			rdb, err := newRedis(url, time.Second, files)
			if err != nil {
				t.Fatalf("%s: %v", url, err)
			}
			var tc *tls.Config
			switch c := rdb.(type) {
			case *redis.Client:
				tc = c.Options().TLSConfig
			case *redis.ClusterClient:
				tc = c.Options().TLSConfig
			}
			rdb.Close()
			if tc == nil || tc.RootCAs == nil || len(tc.Certificates) != 1 {
				t.Errorf("%s: got TLS config %+v, want the CA as roots and one client certificate", url, tc)
			}
		}
	})
	t.Run("PlainURLHasNoTLS", func(t *testing.T) {
		rdb, err := newRedis("redis://127.0.0.1:6379/0", time.Second, redisTLS{})
		if err != nil {
			t.Fatal(err)
		}
		defer rdb.Close()
		if tc := rdb.(*redis.Client).Options().TLSConfig; tc != nil {
			t.Errorf("got TLS config %+v, want none", tc)
		}
	})
	for _, c := range []struct {
		name    string
		files   redisTLS
		wantErr string
	}{
		{"MissingCA", redisTLS{caFile: filepath.Join(dir, "nope.pem")}, "REDIS_CA_FILE"},
		{"CAWithoutPEM", redisTLS{caFile: notPEM}, "no PEM certificate"},
		{"KeyOfNoCertificate", redisTLS{certFile: cert, keyFile: notPEM}, "REDIS_CLIENT_CERT_FILE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := newRedis("rediss://127.0.0.1:6380/0", time.Second, c.files)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("got %v, want an error containing %q", err, c.wantErr)
			}
		})
	}
}

// writeTestCert writes a self-signed certificate, usable as CA and as client certificate,
// and its key.
func writeTestCert(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "otpgate test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, cert, key
}
