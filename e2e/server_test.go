package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"otpgate/internal/sms/smstest"
	"otpgate/internal/testenv"
	"otpgate/internal/testenv/fixture"
)

// Secrets of the test servers; long enough for production mode.
const (
	testSecret     = "e2e-secret-0123456789abcdef0123456789abcdef"
	testAdminToken = "e2e-admin-token-0123456789"
)

// server is one otpgate process, with its name in the test and its JSON log (its stderr).
type server struct {
	*fixture.Server
	name    string
	logPath string
}

// startServers starts n servers with the same environment, in parallel.
func startServers(t testing.TB, n int, env map[string]string) []*server {
	t.Helper()
	bin := testenv.ServerBinary(t)
	servers := make([]*server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { servers[i], errs[i] = launch(t, bin, fmt.Sprintf("server%d", i+1), env) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return servers
}

// startServer starts one server.
func startServer(t testing.TB, env map[string]string) *server {
	t.Helper()
	return startServers(t, 1, env)[0]
}

// launch runs the binary with env as its whole environment, waits until it answers
// /healthz, and stops it at cleanup with SIGTERM, reporting an unclean exit.
func launch(t testing.TB, bin, name string, env map[string]string) (*server, error) {
	s := &server{name: name, logPath: filepath.Join(t.TempDir(), name+".log")}
	logf, err := os.Create(s.logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the process has its own copy
	s.Server, err = fixture.StartServer(context.Background(), bin, env, logf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", name, err, s.logTail(20))
	}
	t.Cleanup(func() {
		if s.Exited() {
			return
		}
		if err := s.Stop(30 * time.Second); err != nil {
			t.Errorf("%s: stop at cleanup: %v\n%s", name, err, s.logTail(20))
		}
	})
	return s, nil
}

// logTail returns the last n lines of the server's log.
func (s *server) logTail(n int) string {
	b, _ := os.ReadFile(s.logPath)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "--- " + s.name + " log ---\n" + strings.Join(lines, "\n")
}

// log returns the server's whole log.
func (s *server) log() string {
	b, _ := os.ReadFile(s.logPath)
	return string(b)
}

// getStatus GETs url and returns the status code, or 0 when the request failed.
func getStatus(url string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// metric reads one unlabelled sample, such as go_goroutines, from the admin /metrics.
func (s *server) metric(t testing.TB, name string) float64 {
	t.Helper()
	v, err := s.readMetric(name)
	if err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	return v
}

// metricOr is metric for goroutines other than the test's: def when it cannot be read.
func (s *server) metricOr(def float64, name string) float64 {
	v, err := s.readMetric(name)
	if err != nil {
		return def
	}
	return v
}

// metricsClient opens a connection per scrape, so scrapes leave no connection behind in
// the counts they read.
var metricsClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

func (s *server) readMetric(name string) (float64, error) {
	req, _ := http.NewRequest(http.MethodGet, s.Admin+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	resp, err := metricsClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0, fmt.Errorf("metric %s = %q: %w", name, v, err)
			}
			return f, nil
		}
	}
	return 0, fmt.Errorf("/metrics has no %s", name)
}

// fds counts the open file descriptors of the server process.
func (s *server) fds(t testing.TB) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/" + strconv.Itoa(s.PID()) + "/fd")
	if err != nil {
		t.Fatalf("%s: open fds: %v", s.name, err)
	}
	return len(entries)
}

// prodEnv is a production environment over the given Redis and Postgres, sending SMS to
// the fake provider and trusting X-Forwarded-For from the loopback address, so a test can
// play many clients that the IP rule lets through; extra overrides it.
func prodEnv(t testing.TB, redisURL, databaseURL string, p *smstest.Provider, extra map[string]string) map[string]string {
	env := map[string]string{
		"REDIS_URL":           redisURL,
		"DATABASE_URL":        databaseURL,
		"OTP_REDIS_PREFIX":    testenv.KeyPrefix(t),
		"OTP_SECRET":          testSecret,
		"ADMIN_TOKEN":         testAdminToken,
		"SMS_PROVIDER":        "webhook",
		"SMS_WEBHOOK_URL":     p.URL,
		"SMS_WEBHOOK_SECRET":  p.Secret,
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32",
		"OTP_LIMIT_IP":        "1000000/1h",
		"OTP_LOG_LEVEL":       "warn",
		// These clients never approve their codes, which the fraud guard rightly takes for
		// pumping; its own proof is internal/loadtest/pumping.
		"OTP_FRAUD_GUARD": "off",
		// The fake provider and webhook receivers listen on loopback, which production
		// refuses unless it is allow-listed.
		"OTP_OUTBOUND_ALLOW": "127.0.0.0/8,::1/128",
		// Only a fault test's own fault may time out: on a small machine running the load,
		// several servers, Redis and Postgres at once, the default 200ms would also,
		// correctly, fail some requests closed. The fault tests set their own bound.
		"OTP_REDIS_TIMEOUT": "5s",
		"OTP_DB_TIMEOUT":    "10s",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// newProvider starts the fake SMS provider; the test fails if it gets a bad delivery.
func newProvider(t testing.TB) *smstest.Provider {
	t.Helper()
	return smstest.New(t, "e2e-webhook-secret")
}
