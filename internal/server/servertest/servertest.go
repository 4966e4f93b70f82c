// Package servertest starts otpgate in-process, through server.Run as the binary does, on
// free loopback ports, and holds the helpers the test rooms share: the public API's and the
// admin API's calls (each exchange checked against its OpenAPI document), apps and keys,
// numbers, webhooks, tokens and Twilio's Go library. Only tests import it; the layering
// test keeps it out of the binary.
package servertest

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"otpgate/internal/pii"
	"otpgate/internal/server"
	"otpgate/internal/sms/smstest"
	"otpgate/internal/testenv"
	"otpgate/internal/testenv/fixture"
)

// Instance is one server started through server.Run, as the binary would be.
type Instance struct {
	API, Admin string
	Stdout     *fixture.SyncBuffer
	Stderr     *fixture.SyncBuffer

	// Cancel ends server.Run's context, which the server takes as SIGTERM.
	Cancel context.CancelFunc
	done   chan struct{} // closed once run has returned
	err    error         // what run returned, once done is closed
}

// Wait waits up to timeout for server.Run to return and reports what it returned, once: a later
// call returns nil, so that a test and its cleanup do not both report one failure.
func (in *Instance) Wait(timeout time.Duration) error {
	select {
	case <-in.done:
	case <-time.After(timeout):
		return fmt.Errorf("did not stop in %v", timeout)
	}
	err := in.err
	in.err = nil
	return err
}

// Start runs the server in-process with env as its whole environment (on free
// loopback ports, without a drain delay, unless env says otherwise) and waits until it
// listens; it is stopped at cleanup.
func Start(t testing.TB, env map[string]string) *Instance {
	t.Helper()
	full := map[string]string{"OTP_HTTP_ADDR": "127.0.0.1:0", "OTP_ADMIN_ADDR": "127.0.0.1:0", "OTP_DRAIN_DELAY": "0"}
	for k, v := range env {
		full[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	in := &Instance{Stdout: &fixture.SyncBuffer{}, Stderr: &fixture.SyncBuffer{}, Cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(in.done)
		in.err = server.Run(ctx, []string{"server"}, func(k string) string { return full[k] }, in.Stdout, in.Stderr)
	}()
	t.Cleanup(func() {
		in.Cancel()
		if err := in.Wait(30 * time.Second); err != nil {
			t.Errorf("server stop: %v", err)
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		var ok bool
		if in.API, in.Admin, ok = fixture.Listening(in.Stdout.String()); ok {
			break
		}
		select {
		case <-in.done:
			t.Fatalf("server exited before listening: %v\nstderr:\n%s", in.Wait(0), in.Stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not start in 30s\nstdout:\n%s\nstderr:\n%s", in.Stdout.String(), in.Stderr.String())
		}
	}
	for {
		resp, err := http.Get(in.API + "/healthz")
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

// TestSecret is the OTP_SECRET of ProdEnv.
const TestSecret = "test-secret-0123456789abcdef0123456789"

// AddressIndex is what stands in for address in the Redis keys of a server with
// TestSecret: its keyed index.
func AddressIndex(t testing.TB, address string) string {
	t.Helper()
	k, err := pii.New([]byte(TestSecret), "")
	if err != nil {
		t.Fatal(err)
	}
	return k.Index(address)
}

// ProdEnv is a production-mode environment over the test's Redis and a fresh
// database, sending SMS to p through the webhook sender; extra overrides it, and a
// database is made only when extra does not name one.
func ProdEnv(t testing.TB, p *smstest.Provider, extra map[string]string) map[string]string {
	env := map[string]string{
		"OTP_REDIS_PREFIX":   testenv.KeyPrefix(t),
		"OTP_SECRET":         TestSecret,
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

// NewProvider starts the fake SMS provider; the test fails if it gets a bad delivery.
func NewProvider(t testing.TB) *smstest.Provider {
	t.Helper()
	return smstest.New(t, "webhook-secret")
}

// LastCode is the code of the newest message to a number.
func LastCode(t testing.TB, p *smstest.Provider, to string) string {
	t.Helper()
	code := p.LastCode(to)
	if code == "" {
		t.Fatalf("provider received no code for %s (got %d messages)", to, len(p.Received(to)))
	}
	return code
}
