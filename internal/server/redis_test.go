package server

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"slices"
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

// TestParseRedisURLForms checks that each documented form reaches go-redis as the
// options it means: hosts, credentials, master name, database and TLS.
func TestParseRedisURLForms(t *testing.T) {
	t.Run("Standalone", func(t *testing.T) {
		o := mustParseRedisURL(t, "redis://alice:pw@cache.internal:6380/2")
		s := o.simple
		if s == nil || s.Addr != "cache.internal:6380" || s.DB != 2 || s.Username != "alice" || s.Password != "pw" || s.TLSConfig != nil {
			t.Fatalf("got %+v, want cache.internal:6380 db 2 as alice without TLS", s)
		}
	})
	t.Run("StandaloneTLS", func(t *testing.T) {
		if tc := mustParseRedisURL(t, "rediss://cache.internal:6380/0").simple.TLSConfig; tc == nil || tc.ServerName != "cache.internal" {
			t.Fatalf("got TLS config %+v, want one for cache.internal", tc)
		}
	})
	t.Run("Cluster", func(t *testing.T) {
		c := mustParseRedisURL(t, "redis+cluster://h1:6379,h2:6379").cluster
		if c == nil || !slices.Equal(c.Addrs, []string{"h1:6379", "h2:6379"}) || c.Username != "" || c.Password != "" || c.TLSConfig != nil {
			t.Fatalf("got %+v, want hosts h1 and h2 without credentials or TLS", c)
		}
	})
	t.Run("ClusterTLSWithCredentialsAndOptions", func(t *testing.T) {
		c := mustParseRedisURL(t, "rediss+cluster://alice:s%40cret@h1:7000, h2:7000,[::1]:7001?pool_size=20").cluster
		if c == nil || !slices.Equal(c.Addrs, []string{"h1:7000", "h2:7000", "[::1]:7001"}) {
			t.Fatalf("got %+v, want hosts h1, h2 and ::1", c)
		}
		if c.Username != "alice" || c.Password != "s@cret" || c.PoolSize != 20 {
			t.Errorf("got user %q password %q pool %d, want alice, s@cret, 20", c.Username, c.Password, c.PoolSize)
		}
		if c.TLSConfig == nil || c.TLSConfig.ServerName != "h1" {
			t.Errorf("got TLS config %+v, want one for h1", c.TLSConfig)
		}
	})
	t.Run("Sentinel", func(t *testing.T) {
		f := mustParseRedisURL(t, "redis+sentinel://s1:26379,s2:26379/mymaster").failover
		if f == nil || !slices.Equal(f.SentinelAddrs, []string{"s1:26379", "s2:26379"}) || f.MasterName != "mymaster" || f.DB != 0 {
			t.Fatalf("got %+v, want sentinels s1 and s2 of mymaster, db 0", f)
		}
		if f.Username != "" || f.Password != "" || f.SentinelPassword != "" || f.TLSConfig != nil {
			t.Errorf("got %+v, want no credentials and no TLS", f)
		}
	})
	t.Run("SentinelTLSWithCredentialsAndDB", func(t *testing.T) {
		f := mustParseRedisURL(t, "rediss+sentinel://bob:pw@s1:26379,s2:26379/mymaster?db=3").failover
		if f == nil || !slices.Equal(f.SentinelAddrs, []string{"s1:26379", "s2:26379"}) || f.MasterName != "mymaster" || f.DB != 3 {
			t.Fatalf("got %+v, want sentinels s1 and s2 of mymaster, db 3", f)
		}
		// The data nodes get user and password; the sentinels the password alone.
		if f.Username != "bob" || f.Password != "pw" || f.SentinelUsername != "" || f.SentinelPassword != "pw" {
			t.Errorf("got user %q password %q, sentinel user %q password %q; want bob, pw, none, pw",
				f.Username, f.Password, f.SentinelUsername, f.SentinelPassword)
		}
		// Sentinels and the master they name share the config, so no one name is pinned.
		if f.TLSConfig == nil || f.TLSConfig.ServerName != "" {
			t.Errorf("got TLS config %+v, want one that checks each host by its own name", f.TLSConfig)
		}
	})
	t.Run("SentinelPasswordOnly", func(t *testing.T) {
		f := mustParseRedisURL(t, "redis+sentinel://:pw@s1:26379/mymaster").failover
		if f.Username != "" || f.Password != "pw" || f.SentinelPassword != "pw" {
			t.Errorf("got user %q password %q sentinel password %q, want none, pw, pw", f.Username, f.Password, f.SentinelPassword)
		}
	})
}

// TestRedisSettle checks that every form gets the timeouts, the TLS floor and RESP2 unless
// the URL names a protocol.
func TestRedisSettle(t *testing.T) {
	for _, c := range []struct {
		url      string
		protocol int
	}{
		{"rediss://h:6380/0", 2}, {"rediss+cluster://h1:7000,h2:7000", 2}, {"rediss+sentinel://s1:26379/m", 2},
		{"rediss://h:6380/0?protocol=3", 3}, {"rediss+cluster://h1:7000,h2:7000?protocol=3", 3}, {"rediss+sentinel://s1:26379/m?protocol=3", 3},
	} {
		t.Run(c.url, func(t *testing.T) {
			o := mustParseRedisURL(t, c.url)
			o.settle(redisTLSConfig{}, 200*time.Millisecond)
			tc, dial, read, write, ctxTimeout, protocol := o.shared()
			if *dial != time.Second || *read != 200*time.Millisecond || *write != 200*time.Millisecond || !*ctxTimeout {
				t.Errorf("got dial %v read %v write %v context timeout %v, want 1s, 200ms, 200ms, true", *dial, *read, *write, *ctxTimeout)
			}
			if tc == nil || tc.MinVersion != tls.VersionTLS12 {
				t.Errorf("got TLS config %+v, want TLS 1.2 at least", tc)
			}
			if *protocol != c.protocol {
				t.Errorf("got protocol %d, want %d", *protocol, c.protocol)
			}
		})
	}
}

func TestParseRedisURLErrors(t *testing.T) {
	for _, c := range []struct {
		name, url, want string
	}{
		{"NoScheme", "h1:6379", "REDIS_URL: missing scheme"},
		{"UnknownScheme", "memcached://h:11211", `REDIS_URL: unknown scheme "memcached"`},
		{"UnknownForm", "redis+ring://h:6379", `REDIS_URL: unknown scheme "redis+ring"`},
		{"ClusterWithoutHosts", "redis+cluster://", "REDIS_URL: no hosts"},
		{"ClusterHostWithoutPort", "redis+cluster://h1:6379,h2", `REDIS_URL: host "h2": want host:port`},
		{"ClusterUnknownOption", "redis+cluster://h1:6379?bogus=1", "REDIS_URL: redis: unexpected option: bogus"},
		{"ClusterBadOption", "redis+cluster://h1:6379?pool_size=many", "pool_size"},
		{"SentinelWithoutMaster", "redis+sentinel://s1:26379", "REDIS_URL: sentinel form needs the master name as path"},
		{"SentinelNestedMaster", "redis+sentinel://s1:26379/a/b", "REDIS_URL: sentinel form needs the master name as path"},
		{"SentinelMasterTwice", "redis+sentinel://s1:26379/m?master_name=x", "not also from master_name"},
		{"SentinelBadDB", "redis+sentinel://s1:26379/m?db=x", "REDIS_URL: redis: invalid database number"},
		{"SentinelRouting", "redis+sentinel://s1:26379/m?route_randomly=true", "do not apply to the sentinel form"},
		{"SentinelUnknownOption", "redis+sentinel://s1:26379/m?bogus=1", "REDIS_URL: redis: unexpected option: bogus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseRedisURL(c.url)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
	t.Run("PasswordIsNotEchoed", func(t *testing.T) {
		for _, url := range []string{"redis://u:topsecret@h:6379/%zz", "redis+cluster://u:topsecret@h1:6379/%zz", "redis+sentinel://u:topsecret@s1:26379/m?db=%zz"} {
			_, err := parseRedisURL(url)
			if err == nil || strings.Contains(err.Error(), "topsecret") {
				t.Errorf("%s: got %v, want an error without the password", url, err)
			}
		}
	})
}

// mustParseRedisURL parses a REDIS_URL or ends the test.
func mustParseRedisURL(t *testing.T, url string) redisOptions {
	t.Helper()
	o, err := parseRedisURL(url)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return o
}
