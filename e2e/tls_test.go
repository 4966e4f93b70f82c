package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"otpgate/internal/testenv"
)

// TestRedisTLS runs the server against a redis-server that speaks only TLS and demands a
// client certificate: with REDIS_CA_FILE and the client certificate it works; without
// them it fails closed; TLS files with a plain URL stop start-up.
func TestRedisTLS(t *testing.T) {
	need(t, "redis-server")
	dir := t.TempDir()
	certs := testenv.NewPKI(t, dir)
	port := freePort(t)
	daemon(t, dir, "redis-server", "--port", "0", "--tls-port", port, "--bind", "127.0.0.1",
		"--tls-cert-file", certs.ServerCert, "--tls-key-file", certs.ServerKey,
		"--tls-ca-cert-file", certs.CA, "--tls-auth-clients", "yes",
		"--save", "", "--appendonly", "no", "--dir", dir)
	waitRedis(t, &redis.Options{Addr: "127.0.0.1:" + port, TLSConfig: clientTLS(t, certs)})

	p := newProvider(t)
	dsn := testenv.PostgresDSN(t)
	tlsURL := "rediss://127.0.0.1:" + port + "/0"
	withFiles := func(kv ...string) map[string]string {
		env := prodEnv(t, tlsURL, dsn, p, nil)
		for i := 0; i+1 < len(kv); i += 2 {
			env[kv[i]] = kv[i+1]
		}
		return env
	}
	cases := []struct {
		name  string
		env   map[string]string
		ready int
		send  int
	}{
		{"CAAndClientCertificate", withFiles("REDIS_CA_FILE", certs.CA, "REDIS_CLIENT_CERT_FILE", certs.ClientCert, "REDIS_CLIENT_KEY_FILE", certs.ClientKey), 200, 201},
		{"SystemRootsDoNotTrustThePrivateCA", withFiles("REDIS_CLIENT_CERT_FILE", certs.ClientCert, "REDIS_CLIENT_KEY_FILE", certs.ClientKey), 503, 503},
		{"ServerDemandsAClientCertificate", withFiles("REDIS_CA_FILE", certs.CA), 503, 503},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startServer(t, c.env)
			if got := getStatus(s.API + "/readyz"); got != c.ready {
				t.Errorf("/readyz: got %d, want %d", got, c.ready)
			}
			o := doSend(t.Context(), newClient(t, true), call{srv: s, phone: phone(7_100_000 + i), ip: "10.31.0.1"})
			if o.status != c.send {
				t.Errorf("send: got %d %s (err %v), want %d", o.status, o.code, o.err, c.send)
			}
		})
	}
	t.Run("CAFileWithPlainURLStopsStartUp", func(t *testing.T) {
		env := withFiles("REDIS_CA_FILE", certs.CA)
		env["REDIS_URL"] = "redis://127.0.0.1:" + port + "/0"
		log, err := runUntilExit(t, env, 30*time.Second)
		if err == nil || !strings.Contains(log, "REDIS_CA_FILE") {
			t.Errorf("got exit %v and output %q, want a failed start naming REDIS_CA_FILE", err, log)
		}
	})
}

// TestPostgresTLS runs the server against a PostgreSQL with ssl=on, through a DATABASE_URL
// with sslmode=verify-full and the private CA as sslrootcert; without the CA the server
// refuses to start.
func TestPostgresTLS(t *testing.T) {
	pg := testenv.StartPostgres(t)
	certs := pg.NewPKI()
	for _, sql := range []string{
		"ALTER SYSTEM SET ssl_cert_file = '" + certs.ServerCert + "'",
		"ALTER SYSTEM SET ssl_key_file = '" + certs.ServerKey + "'",
		"ALTER SYSTEM SET ssl = on",
		"SELECT pg_reload_conf()",
	} {
		query(t, pg.DSN("postgres"), sql, func(pgx.Rows) error { return nil })
	}
	verifyFull := "postgres://postgres@" + pg.Addr + "/postgres?sslmode=verify-full&sslrootcert=" + url.QueryEscape(certs.CA)
	if !waitUntil(10*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, verifyFull)
		if err == nil {
			conn.Close(ctx)
		}
		return err == nil
	}) {
		t.Fatalf("PostgreSQL does not accept TLS after ssl=on")
	}
	p := newProvider(t)

	t.Run("VerifyFullWithTheCA", func(t *testing.T) {
		s := startServer(t, prodEnv(t, testenv.RedisURL(t), verifyFull, p, nil))
		if got := getStatus(s.API + "/readyz"); got != http.StatusOK {
			t.Errorf("/readyz: got %d, want 200", got)
		}
		o := doSend(t.Context(), newClient(t, true), call{srv: s, phone: phone(7_200_000), ip: "10.32.0.1"})
		if o.status != http.StatusCreated {
			t.Fatalf("send: got %d %s (err %v), want 201", o.status, o.code, o.err)
		}
		tlsConns := 0
		query(t, pg.DSN("postgres"), `SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
			WHERE s.ssl AND a.backend_type = 'client backend'`, func(r pgx.Rows) error { return r.Scan(&tlsConns) })
		if tlsConns == 0 {
			t.Errorf("got no TLS connections to PostgreSQL while the server runs, want its pool's")
		}
		if !sentRowsOf(t, pg.DSN("postgres"), []string{o.id})[o.id] {
			t.Errorf("201 for verification %s has no sent row", o.id)
		}
	})
	t.Run("VerifyFullWithoutTheCAStopsStartUp", func(t *testing.T) {
		noCA := "postgres://postgres@" + pg.Addr + "/postgres?sslmode=verify-full"
		log, err := runUntilExit(t, prodEnv(t, testenv.RedisURL(t), noCA, p, nil), 30*time.Second)
		if err == nil || !strings.Contains(log, "certificate") {
			t.Errorf("got exit %v and output %q, want a failed start over the certificate", err, log)
		}
	})
}

// TestRedisSentinel runs the server through a sentinel watching one master: the
// redis+sentinel:// form finds the master, and the limiter's keys land there.
func TestRedisSentinel(t *testing.T) {
	need(t, "redis-server")
	master := testenv.StartRedis(t)
	dir := t.TempDir()
	port := freePort(t)
	host, masterPort, _ := strings.Cut(master.Addr, ":")
	conf := filepath.Join(dir, "sentinel.conf")
	body := "port " + port + "\nbind 127.0.0.1\ndir " + dir + "\nsentinel monitor otpgate " + host + " " + masterPort + " 1\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	daemon(t, dir, "redis-server", conf, "--sentinel")
	sentinel := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + port})
	t.Cleanup(func() { sentinel.Close() })
	if !waitUntil(10*time.Second, func() bool {
		addr, err := sentinel.GetMasterAddrByName(context.Background(), "otpgate").Result()
		return err == nil && len(addr) == 2 && addr[1] == masterPort
	}) {
		t.Fatalf("the sentinel does not report master %s", master.Addr)
	}

	p := newProvider(t)
	env := prodEnv(t, "redis+sentinel://127.0.0.1:"+port+"/otpgate", testenv.PostgresDSN(t), p, nil)
	s := startServer(t, env)
	if got := getStatus(s.API + "/readyz"); got != http.StatusOK {
		t.Errorf("/readyz: got %d, want 200", got)
	}
	o := doSend(t.Context(), newClient(t, true), call{srv: s, phone: phone(7_300_000), ip: "10.33.0.1"})
	if o.status != http.StatusCreated {
		t.Fatalf("send: got %d %s (err %v), want 201", o.status, o.code, o.err)
	}
	keys, err := master.Client().Keys(context.Background(), env["OTP_REDIS_PREFIX"]+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Errorf("got keys %v (err %v) under the server's prefix on the master, want its limiter keys", keys, err)
	}
}

// clientTLS is the client side of certs: its CA and client certificate.
func clientTLS(t testing.TB, certs *testenv.PKI) *tls.Config {
	t.Helper()
	ca, err := os.ReadFile(certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(certs.ClientCert, certs.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// waitRedis waits up to 10s for a Redis to answer PING.
func waitRedis(t testing.TB, opt *redis.Options) {
	t.Helper()
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	var err error
	if !waitUntil(10*time.Second, func() bool { err = rdb.Ping(context.Background()).Err(); return err == nil }) {
		t.Fatalf("redis on %s does not answer: %v", opt.Addr, err)
	}
}

// need ends the test when a program is missing: a failure under CI, a skip elsewhere.
func need(t testing.TB, program string) {
	t.Helper()
	if _, err := exec.LookPath(program); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v", program, err)
		}
		t.Skipf("%s: %v", program, err)
	}
}
