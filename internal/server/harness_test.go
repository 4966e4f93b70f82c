package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"otpgate/internal/apitest"
	"otpgate/internal/pii"
	"otpgate/internal/sms/smstest"
	"otpgate/internal/testenv"
	"otpgate/internal/testenv/fixture"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// instance is one server started through run, as the binary would be.
type instance struct {
	api, admin string
	stdout     *syncBuffer
	stderr     *syncBuffer

	// cancel ends run's context, which the server takes as SIGTERM.
	cancel context.CancelFunc
	done   chan struct{} // closed once run has returned
	err    error         // what run returned, once done is closed
}

// wait waits up to timeout for run to return and reports what it returned, once: a later
// call returns nil, so that a test and its cleanup do not both report one failure.
func (in *instance) wait(timeout time.Duration) error {
	select {
	case <-in.done:
	case <-time.After(timeout):
		return fmt.Errorf("did not stop in %v", timeout)
	}
	err := in.err
	in.err = nil
	return err
}

// startServer runs the server in-process with env as its whole environment (on free
// loopback ports, without a drain delay, unless env says otherwise) and waits until it
// listens; it is stopped at cleanup.
func startServer(t testing.TB, env map[string]string) *instance {
	t.Helper()
	full := map[string]string{"OTP_HTTP_ADDR": "127.0.0.1:0", "OTP_ADMIN_ADDR": "127.0.0.1:0", "OTP_DRAIN_DELAY": "0"}
	for k, v := range env {
		full[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	in := &instance{stdout: newSyncBuffer(), stderr: newSyncBuffer(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(in.done)
		in.err = Run(ctx, []string{"server"}, func(k string) string { return full[k] }, in.stdout, in.stderr)
	}()
	t.Cleanup(func() {
		in.cancel()
		if err := in.wait(30 * time.Second); err != nil {
			t.Errorf("server stop: %v", err)
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		var ok bool
		if in.api, in.admin, ok = fixture.Listening(in.stdout.String()); ok {
			break
		}
		select {
		case <-in.done:
			t.Fatalf("server exited before listening: %v\nstderr:\n%s", in.wait(0), in.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not start in 30s\nstdout:\n%s\nstderr:\n%s", in.stdout.String(), in.stderr.String())
		}
	}
	for {
		resp, err := http.Get(in.api + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return in
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthz never answered 200: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testSecret is the OTP_SECRET of prodEnv.
const testSecret = "test-secret-0123456789abcdef0123456789"

// addressIndex is what stands in for address in the Redis keys of a server with
// testSecret: its keyed index.
func addressIndex(t testing.TB, address string) string {
	t.Helper()
	k, err := pii.New([]byte(testSecret), "")
	if err != nil {
		t.Fatal(err)
	}
	return k.Index(address)
}

// prodEnv is a production-mode environment over the test's Redis and a fresh
// database, sending SMS to p through the webhook sender; extra overrides it, and a
// database is made only when extra does not name one.
func prodEnv(t testing.TB, p *smstest.Provider, extra map[string]string) map[string]string {
	env := map[string]string{
		"OTP_REDIS_PREFIX":   testenv.KeyPrefix(t),
		"OTP_SECRET":         testSecret,
		"ADMIN_TOKEN":        "test-admin-token-0123456789",
		"SMS_PROVIDER":       "webhook",
		"SMS_WEBHOOK_URL":    p.URL,
		"SMS_WEBHOOK_SECRET": p.Secret,
		"OTP_LOG_LEVEL":      "warn",
		// Tests check outcomes, not latency: on a small machine running many servers and
		// clients under -race, the production bounds would fail some requests closed.
		"OTP_REDIS_TIMEOUT": "5s",
		"OTP_DB_TIMEOUT":    "10s",
		// Every test sends from the loopback network and seldom checks its codes, which the
		// fraud guard rightly takes for pumping; the fraud tests turn it on.
		"OTP_FRAUD_GUARD": "off",
		// The fake providers and webhook receivers listen on loopback, which production
		// refuses unless it is allow-listed.
		"OTP_OUTBOUND_ALLOW": "127.0.0.0/8,::1/128",
	}
	for k, v := range extra {
		env[k] = v
	}
	if env["REDIS_URL"] == "" {
		env["REDIS_URL"] = testenv.RedisURL(t)
	}
	if env["DATABASE_URL"] == "" {
		env["DATABASE_URL"] = testenv.PostgresDSN(t)
	}
	return env
}

// newProvider starts the fake SMS provider; the test fails if it gets a bad delivery.
func newProvider(t testing.TB) *smstest.Provider {
	t.Helper()
	return smstest.New(t, "webhook-secret")
}

// lastCode is the code of the newest message to a number.
func lastCode(t testing.TB, p *smstest.Provider, to string) string {
	t.Helper()
	code := p.LastCode(to)
	if code == "" {
		t.Fatalf("provider received no code for %s (got %d messages)", to, len(p.Received(to)))
	}
	return code
}

// reply is one decoded response.
type reply struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

func (r reply) str(k string) string {
	s, _ := r.Body[k].(string)
	return s
}

func (r reply) num(k string) float64 {
	n, _ := r.Body[k].(float64)
	return n
}

// client posts JSON to one instance.
var client = &http.Client{Timeout: 30 * time.Second}

// post sends body as JSON and checks the exchange against the public OpenAPI document.
func post(t testing.TB, url string, body any, headers ...string) reply {
	t.Helper()
	var buf []byte
	switch b := body.(type) {
	case string:
		buf = []byte(b)
	default:
		var err error
		if buf, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("POST %s: %v", url, err)
		return reply{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	x := apitest.Exchange{Request: req, RequestBody: buf, Status: resp.StatusCode, Header: resp.Header, Body: raw}
	if _, err := apitest.Public().Check(x); err != nil {
		t.Errorf("openapi: %v\nbody: %s", err, raw)
	}
	r := reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			t.Errorf("POST %s: %d reply is not JSON: %q", url, resp.StatusCode, raw)
		}
	}
	return r
}

func send(t testing.TB, in *instance, phone string, headers ...string) reply {
	t.Helper()
	return post(t, in.api+"/v1/verifications", map[string]string{"phone": phone}, headers...)
}

func check(t testing.TB, in *instance, body map[string]string, headers ...string) reply {
	t.Helper()
	return post(t, in.api+"/v1/verifications/check", body, headers...)
}

func wantStatus(t testing.TB, r reply, status int, code string) {
	t.Helper()
	if r.Status != status || (code != "" && r.str("code") != code) {
		t.Fatalf("got %d %s, want %d %s; body %s", r.Status, r.str("code"), status, code, r.Raw)
	}
}

// syncBuffer is an io.Writer safe for a server goroutine and a test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines returns the output lines that contain s.
func (b *syncBuffer) lines(s string) []string {
	var out []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}
