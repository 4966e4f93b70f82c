package inproc

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"otpgate/internal/server/servertest"
	"otpgate/internal/sms/smstest"
	"otpgate/internal/testenv"
)

func TestProviderFailures(t *testing.T) {
	p := servertest.NewProvider(t)
	env := servertest.ProdEnv(t, p, map[string]string{"SMS_TIMEOUT": "300ms", "OTP_LIMIT_IP": "100/1m"})
	in := servertest.Start(t, env)

	t.Run("RefusalIsRefunded", func(t *testing.T) {
		phone := servertest.NewPhone()
		p.Set(smstest.Reply{Status: http.StatusBadRequest})
		r := servertest.Send(t, in, phone)
		p.Set(smstest.Reply{})
		servertest.WantStatus(t, r, http.StatusBadGateway, "provider_error")
		if n := countRows(t, env["DATABASE_URL"], `SELECT count(*) FROM sends WHERE phone = $1 AND status = 'failed'`, servertest.AddressIndex(t, phone)); n != 1 {
			t.Errorf("got %d failed sends in history, want 1", n)
		}
		// The limit was refunded, so the same client may try again at once and gets a new verification.
		servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
		if got := len(p.Received(phone)); got != 1 {
			t.Errorf("provider delivered %d messages, want 1", got)
		}
	})
	t.Run("TimeoutIsNotRefunded", func(t *testing.T) {
		phone := servertest.NewPhone()
		p.Set(smstest.Reply{Delay: 2 * time.Second})
		start := time.Now()
		r := servertest.Send(t, in, phone)
		took := time.Since(start)
		p.Set(smstest.Reply{})
		servertest.WantStatus(t, r, http.StatusBadGateway, "provider_error")
		if took > 1500*time.Millisecond {
			t.Errorf("send took %s with SMS_TIMEOUT=300ms", took)
		}
		// The SMS may have gone out, so the limit stays spent.
		servertest.WantStatus(t, servertest.Send(t, in, phone, "User-Agent", "other"), http.StatusTooManyRequests, "rate_limited")
	})
}

func TestPostgresUnreachable(t *testing.T) {
	p := servertest.NewProvider(t)
	dsn := testenv.PostgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, u.Host)
	env := servertest.ProdEnv(t, p, map[string]string{"DATABASE_URL": proxy.Via(dsn), "OTP_DB_TIMEOUT": "500ms"})
	in := servertest.Start(t, env)
	phone := servertest.NewPhone()

	proxy.Cut()
	r := servertest.Send(t, in, phone)
	servertest.WantStatus(t, r, http.StatusServiceUnavailable, "unavailable")
	if got := len(p.Received("")); got != 0 {
		t.Errorf("provider received %d messages while Postgres was down, want 0", got)
	}
	if ready, err := http.Get(in.API + "/readyz"); err != nil {
		t.Errorf("readyz while Postgres is down: got %v, want 503", err)
	} else {
		ready.Body.Close()
		if ready.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("readyz while Postgres is down: got %d, want 503", ready.StatusCode)
		}
	}
	proxy.Restore()
	// The reservation was refunded, so the same request succeeds once Postgres is back.
	servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
}

func TestRedisUnreachable(t *testing.T) {
	p := servertest.NewProvider(t)
	rs := testenv.StartRedis(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{"REDIS_URL": rs.URL()}))
	rs.Stop()
	start := time.Now()
	r := servertest.Send(t, in, servertest.NewPhone())
	took := time.Since(start)
	servertest.WantStatus(t, r, http.StatusServiceUnavailable, "unavailable")
	if got := len(p.Received("")); got != 0 {
		t.Errorf("provider received %d messages while Redis was down, want 0", got)
	}
	t.Logf("503 after %s", took)
	rs.Start()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r = servertest.Send(t, in, servertest.NewPhone())
		if r.Status == http.StatusCreated || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	servertest.WantStatus(t, r, http.StatusCreated, "")
}

func TestIdempotencyKey(t *testing.T) {
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, nil))
	phone := servertest.NewPhone()
	body := `{"phone":"` + phone + `"}`
	first := servertest.Post(t, in.API+"/v1/verifications", body, "Idempotency-Key", "order-42")
	servertest.WantStatus(t, first, http.StatusCreated, "")
	again := servertest.Post(t, in.API+"/v1/verifications", body, "Idempotency-Key", "order-42")
	if again.Status != first.Status || again.Raw != first.Raw || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay got %d %s (replayed=%q), want %d %s", again.Status, again.Raw, again.Header.Get("Idempotent-Replayed"), first.Status, first.Raw)
	}
	if again.Header.Get("RateLimit") != first.Header.Get("RateLimit") {
		t.Errorf("replayed RateLimit %q, want %q", again.Header.Get("RateLimit"), first.Header.Get("RateLimit"))
	}
	other := servertest.Post(t, in.API+"/v1/verifications", `{"phone":"`+servertest.NewPhone()+`"}`, "Idempotency-Key", "order-42")
	servertest.WantStatus(t, other, http.StatusUnprocessableEntity, "idempotency_key_reused")
	servertest.WantStatus(t, servertest.Post(t, in.API+"/v1/verifications", body, "Idempotency-Key", "ключ"), http.StatusBadRequest, "invalid_request")
	if got := len(p.Received("")); got != 1 {
		t.Errorf("provider received %d messages, want 1", got)
	}
}
