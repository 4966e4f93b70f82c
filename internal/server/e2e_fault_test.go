package server

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"otpgate/internal/sms/smstest"
	"otpgate/internal/testenv"
)

func TestProviderFailures(t *testing.T) {
	p := newProvider(t)
	env := prodEnv(t, p, map[string]string{"SMS_TIMEOUT": "300ms", "OTP_LIMIT_IP": "100/1m"})
	in := startServer(t, env)

	t.Run("RefusalIsRefunded", func(t *testing.T) {
		phone := newPhone()
		p.Set(smstest.Reply{Status: http.StatusBadRequest})
		r := send(t, in, phone)
		p.Set(smstest.Reply{})
		wantStatus(t, r, http.StatusBadGateway, "provider_error")
		if n := countRows(t, env["DATABASE_URL"], `SELECT count(*) FROM sends WHERE phone = $1 AND status = 'failed'`, addressIndex(t, phone)); n != 1 {
			t.Errorf("got %d failed sends in history, want 1", n)
		}
		// The limit was refunded, so the same client may try again at once and gets a new verification.
		wantStatus(t, send(t, in, phone), http.StatusCreated, "")
		if got := len(p.Received(phone)); got != 1 {
			t.Errorf("provider delivered %d messages, want 1", got)
		}
	})
	t.Run("TimeoutIsNotRefunded", func(t *testing.T) {
		phone := newPhone()
		p.Set(smstest.Reply{Delay: 2 * time.Second})
		start := time.Now()
		r := send(t, in, phone)
		took := time.Since(start)
		p.Set(smstest.Reply{})
		wantStatus(t, r, http.StatusBadGateway, "provider_error")
		if took > 1500*time.Millisecond {
			t.Errorf("send took %s with SMS_TIMEOUT=300ms", took)
		}
		// The SMS may have gone out, so the limit stays spent.
		wantStatus(t, send(t, in, phone, "User-Agent", "other"), http.StatusTooManyRequests, "rate_limited")
	})
}

func TestPostgresUnreachable(t *testing.T) {
	p := newProvider(t)
	dsn := testenv.PostgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, u.Host)
	env := prodEnv(t, p, map[string]string{"DATABASE_URL": proxy.Via(dsn), "OTP_DB_TIMEOUT": "500ms"})
	in := startServer(t, env)
	phone := newPhone()

	proxy.Cut()
	r := send(t, in, phone)
	wantStatus(t, r, http.StatusServiceUnavailable, "unavailable")
	if got := len(p.Received("")); got != 0 {
		t.Errorf("provider received %d messages while Postgres was down, want 0", got)
	}
	if ready, err := http.Get(in.api + "/readyz"); err != nil {
		t.Errorf("readyz while Postgres is down: got %v, want 503", err)
	} else {
		ready.Body.Close()
		if ready.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("readyz while Postgres is down: got %d, want 503", ready.StatusCode)
		}
	}
	proxy.Restore()
	// The reservation was refunded, so the same request succeeds once Postgres is back.
	wantStatus(t, send(t, in, phone), http.StatusCreated, "")
}

func TestRedisUnreachable(t *testing.T) {
	p := newProvider(t)
	rs := testenv.StartRedis(t)
	in := startServer(t, prodEnv(t, p, map[string]string{"REDIS_URL": rs.URL()}))
	rs.Stop()
	start := time.Now()
	r := send(t, in, newPhone())
	took := time.Since(start)
	wantStatus(t, r, http.StatusServiceUnavailable, "unavailable")
	if got := len(p.Received("")); got != 0 {
		t.Errorf("provider received %d messages while Redis was down, want 0", got)
	}
	t.Logf("503 after %s", took)
	rs.Start()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r = send(t, in, newPhone())
		if r.Status == http.StatusCreated || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	wantStatus(t, r, http.StatusCreated, "")
}

func TestIdempotencyKey(t *testing.T) {
	p := newProvider(t)
	in := startServer(t, prodEnv(t, p, nil))
	phone := newPhone()
	body := `{"phone":"` + phone + `"}`
	first := post(t, in.api+"/v1/verifications", body, "Idempotency-Key", "order-42")
	wantStatus(t, first, http.StatusCreated, "")
	again := post(t, in.api+"/v1/verifications", body, "Idempotency-Key", "order-42")
	if again.Status != first.Status || again.Raw != first.Raw || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay got %d %s (replayed=%q), want %d %s", again.Status, again.Raw, again.Header.Get("Idempotent-Replayed"), first.Status, first.Raw)
	}
	if again.Header.Get("RateLimit") != first.Header.Get("RateLimit") {
		t.Errorf("replayed RateLimit %q, want %q", again.Header.Get("RateLimit"), first.Header.Get("RateLimit"))
	}
	other := post(t, in.api+"/v1/verifications", `{"phone":"`+newPhone()+`"}`, "Idempotency-Key", "order-42")
	wantStatus(t, other, http.StatusUnprocessableEntity, "idempotency_key_reused")
	wantStatus(t, post(t, in.api+"/v1/verifications", body, "Idempotency-Key", "ключ"), http.StatusBadRequest, "invalid_request")
	if got := len(p.Received("")); got != 1 {
		t.Errorf("provider received %d messages, want 1", got)
	}
}
