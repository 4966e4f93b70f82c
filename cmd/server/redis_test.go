package main

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/testenv"
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
	pki := testenv.NewPKI(t, dir)
	ca, cert, key := pki.CA, pki.ClientCert, pki.ClientKey
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
