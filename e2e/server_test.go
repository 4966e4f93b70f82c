package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"otpgate/internal/testenv"
)

// Secrets of the test servers; long enough for production mode.
const (
	testSecret     = "e2e-secret-0123456789abcdef0123456789abcdef"
	testAdminToken = "e2e-admin-token-0123456789"
)

// server is one otpgate process.
type server struct {
	name       string
	cmd        *exec.Cmd
	api, admin string // base URLs, such as http://127.0.0.1:41234
	logPath    string // the process's stderr: its JSON log

	done   chan struct{}
	exit   error // the process's exit, valid once done is closed
	exitAt time.Time
}

// listeningRe matches the line a server prints once both listeners are open.
var listeningRe = regexp.MustCompile(`listening: api http://(\S+) admin http://(\S+?)/admin/`)

// startServers starts n servers with the same environment, in parallel.
func startServers(t testing.TB, n int, env map[string]string) []*server {
	t.Helper()
	bin := serverBinary(t)
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

// launch runs the binary with env as its whole environment (listeners on free ports unless
// env says otherwise), waits until it listens and answers /healthz, and stops it at
// cleanup with SIGTERM, reporting an unclean exit.
func launch(t testing.TB, bin, name string, env map[string]string) (*server, error) {
	full := map[string]string{"OTP_HTTP_ADDR": "127.0.0.1:0", "OTP_ADMIN_ADDR": "127.0.0.1:0"}
	for k, v := range env {
		full[k] = v
	}
	var list []string
	for k, v := range full {
		list = append(list, k+"="+v)
	}
	sort.Strings(list)

	s := &server{name: name, logPath: filepath.Join(t.TempDir(), name+".log"), done: make(chan struct{})}
	logf, err := os.Create(s.logPath)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin)
	s.cmd.Env = list
	s.cmd.Stderr = logf
	// Its own process group, so a terminal interrupt reaches only the test binary, and a
	// parent-death signal, so a crashed test leaves no server behind.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	listening := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listeningRe.FindStringSubmatch(sc.Text()); m != nil {
				listening <- m
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		s.exit = s.cmd.Wait()
		s.exitAt = time.Now()
		logf.Close()
		close(s.done)
	}()
	t.Cleanup(func() {
		if s.exited() {
			return
		}
		s.term()
		if err := s.wait(30 * time.Second); err != nil {
			t.Errorf("%s: stop at cleanup: %v\n%s", name, err, s.logTail(20))
		}
	})

	select {
	case m := <-listening:
		s.api, s.admin = "http://"+m[1], "http://"+m[2]
	case <-s.done:
		return nil, fmt.Errorf("%s exited before listening: %v\n%s", name, s.exit, s.logTail(20))
	case <-time.After(60 * time.Second):
		return nil, fmt.Errorf("%s did not listen within 60s\n%s", name, s.logTail(20))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.api + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: /healthz never answered 200: %v", name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pid is the server's process id.
func (s *server) pid() int { return s.cmd.Process.Pid }

// term sends SIGTERM to the server process (never to the test process).
func (s *server) term() { _ = s.cmd.Process.Signal(syscall.SIGTERM) }

// exited reports whether the process has ended.
func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// wait waits for the process to exit and returns an error unless it exited with status 0;
// a process still running after timeout is killed.
func (s *server) wait(timeout time.Duration) error {
	select {
	case <-s.done:
	case <-time.After(timeout):
		_ = s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("%s still running %s after SIGTERM; killed", s.name, timeout)
	}
	if s.exit != nil {
		return fmt.Errorf("%s exited: %v", s.name, s.exit)
	}
	return nil
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

// status GETs a path and returns the status code, or 0 when the request failed.
func (s *server) status(base, path string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
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
	req, _ := http.NewRequest(http.MethodGet, s.admin+"/metrics", nil)
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
	entries, err := os.ReadDir("/proc/" + strconv.Itoa(s.pid()) + "/fd")
	if err != nil {
		t.Fatalf("%s: open fds: %v", s.name, err)
	}
	return len(entries)
}

// prodEnv is a production environment over the given Redis and Postgres, sending SMS to
// the fake provider and trusting X-Forwarded-For from the loopback address, so a test can
// play many clients; extra overrides it.
func prodEnv(t testing.TB, redisURL, databaseURL string, p *provider, extra map[string]string) map[string]string {
	env := map[string]string{
		"REDIS_URL":           redisURL,
		"DATABASE_URL":        databaseURL,
		"OTP_REDIS_PREFIX":    testenv.KeyPrefix(t),
		"OTP_SECRET":          testSecret,
		"ADMIN_TOKEN":         testAdminToken,
		"SMS_PROVIDER":        "webhook",
		"SMS_WEBHOOK_URL":     p.url(),
		"SMS_WEBHOOK_SECRET":  p.secret,
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32",
		"OTP_LOG_LEVEL":       "warn",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}
