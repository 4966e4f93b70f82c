package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// devServer is the real server binary running in dev mode.
type devServer struct {
	api, admin, token string
	cmd               *exec.Cmd
	log               *lockedWriter
}

// serverBinary is the binary OTPGATE_E2E_SERVER names (make test builds it once), else
// one built from the repository.
func serverBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("OTPGATE_E2E_SERVER"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "otpgate")
	run(t, "..", "go", "build", "-o", bin, "./cmd/server")
	return bin
}

var (
	listening = regexp.MustCompile(`listening: api http://(\S+) admin http://(\S+)/admin/`)
	tokenLine = regexp.MustCompile(`Admin token \(shown once\): (\S+)`)
)

// startDevServer starts the binary in dev mode (no REDIS_URL or DATABASE_URL: the
// environment is only env and PATH) on free ports, and stops it at cleanup.
func startDevServer(t *testing.T, env map[string]string) *devServer {
	t.Helper()
	cmd := exec.Command(serverBinary(t))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "OTP_HTTP_ADDR=127.0.0.1:0", "OTP_ADMIN_ADDR=127.0.0.1:0", "OTP_DRAIN_DELAY=0s"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	s := &devServer{cmd: cmd, log: &lockedWriter{}}
	cmd.Stderr = s.log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := tokenLine.FindStringSubmatch(sc.Text()); m != nil {
				s.token = m[1]
			}
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				s.api, s.admin = "http://"+m[1], "http://"+m[2]
				ready <- nil
				break
			}
		}
		ready <- fmt.Errorf("server ended before listening: %v", sc.Err())
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("%v\n%s", err, s.log)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("server not listening after a minute\n%s", s.log)
	}
	if s.token == "" {
		t.Fatal("dev banner printed no admin token")
	}
	return s
}

// lockedWriter holds the server's log, which the test reads while the server writes it.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String is what the server logged so far.
func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// codeLine finds the address and the code of a message the dev mode's log sender printed
// instead of sending it: the first run of digits of its body.
var codeLine = regexp.MustCompile(`msg="(?:sms|email) not sent: log sender".* to=(\S+) .*body="\D*(\d{4,10})`)

// code is the latest code the log sender printed for to, waiting a little for its line.
func (s *devServer) code(t *testing.T, to string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		code := ""
		for _, line := range strings.Split(s.log.String(), "\n") {
			if m := codeLine.FindStringSubmatch(line); m != nil && m[1] == to {
				code = m[2]
			}
		}
		if code != "" {
			return code
		}
	}
	t.Fatalf("no code for %s in the server's log\n%s", to, s.log)
	return ""
}

// do sends a request and returns the status and body.
func (s *devServer) do(t *testing.T, method, url string, body any, header map[string]string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// expect sends a request and fails the test unless it answers want.
func (s *devServer) expect(t *testing.T, want int, method, url string, body any, header map[string]string) []byte {
	t.Helper()
	got, b := s.do(t, method, url, body, header)
	if got != want {
		t.Fatalf("%s %s: got %d, want %d\n%s\nserver log:\n%s", method, url, got, want, b, s.log)
	}
	return b
}

// scrape reads the admin listener's /metrics: every series name with its label names
// (a histogram's _bucket, _sum and _count; its buckets carry le).
func (s *devServer) scrape(t *testing.T) exposed {
	t.Helper()
	_, body := s.do(t, http.MethodGet, s.admin+"/metrics", nil, nil)
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	have := exposed{}
	add := func(name string, labels map[string]bool) {
		if have[name] == nil {
			have[name] = map[string]bool{}
		}
		for l := range labels {
			have[name][l] = true
		}
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]bool{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = true
			}
			switch {
			case m.Histogram != nil:
				add(name+"_sum", labels)
				add(name+"_count", labels)
				labels["le"] = true
				add(name+"_bucket", labels)
			case m.Summary != nil:
				add(name+"_sum", labels)
				add(name+"_count", labels)
				labels["quantile"] = true
				add(name, labels)
			default:
				add(name, labels)
			}
		}
	}
	return have
}

// failingProvider is an SMS webhook that refuses every message (a 400: a definite failure,
// so the send answers 502), so that the scenario counts a provider error; it checks that
// what it gets is a signed JSON message.
func failingProvider(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct{ To, Body string }
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil || msg.To == "" || !strings.HasPrefix(r.Header.Get("Otpgate-Signature"), "t=") {
			t.Errorf("provider got a request that is not a signed message: %v, %+v", err, msg)
		}
		http.Error(w, "refused", http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	return srv
}
