package http

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/contact"
	"otpgate/internal/idempotency"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/testenv"
)

// newIdempotentServer serves v with an Idempotency-Key store over the shared Redis.
func newIdempotentServer(t *testing.T, v otp.Verifier) http.Handler {
	t.Helper()
	rdb, prefix := testenv.Redis(t)
	h, _ := newTestServer(t, v, func(d *Deps) { d.Idempotency = idempotency.New(rdb, prefix, 24*time.Hour) })
	return h
}

// refusedFor is a decision whose phone rule refuses for retry.
func refusedFor(retry time.Duration) rate.Decision {
	return rate.Decision{Rules: []rate.RuleState{
		{Scope: "phone", Rule: rate.Rule{Limit: 1, Window: time.Minute}, Used: 1, ResetAfter: retry, RetryAfter: retry, Violated: true},
	}}
}

func sendWithKey(t *testing.T, h http.Handler, key, body string) *httptest.ResponseRecorder {
	t.Helper()
	return post(t, h, "/v1/verifications", body, map[string]string{"Idempotency-Key": key})
}

func TestIdempotencyKey(t *testing.T) {
	const body = `{"phone":"+819012345678"}`

	t.Run("SameKeyAndBodyReplaysExactly", func(t *testing.T) {
		v := &stubVerifier{}
		h := newIdempotentServer(t, v)
		first := sendWithKey(t, h, "k-1", body)
		again := sendWithKey(t, h, "k-1", body)
		if first.Code != 201 || again.Code != 201 {
			t.Fatalf("status: got %v then %v, want 201 twice", first.Code, again.Code)
		}
		if again.Body.String() != first.Body.String() {
			t.Errorf("body: got %s, want %s", again.Body, first.Body)
		}
		for _, name := range []string{"Content-Type", "RateLimit", "RateLimit-Policy"} {
			if got, want := again.Header().Get(name), first.Header().Get(name); got != want || want == "" {
				t.Errorf("%s: got %q, want %q", name, got, want)
			}
		}
		if got, first := again.Header().Get("X-Request-Id"), first.Header().Get("X-Request-Id"); got == first || got == "" {
			t.Errorf("X-Request-Id: got %q, want the replay's own id, not the first's %q", got, first)
		}
		if got := again.Header().Get("Idempotent-Replayed"); got != "true" {
			t.Errorf("Idempotent-Replayed: got %q, want %q", got, "true")
		}
		if got := first.Header().Get("Idempotent-Replayed"); got != "" {
			t.Errorf("Idempotent-Replayed on the first response: got %q, want none", got)
		}
		if n := len(v.sendCalls()); n != 1 {
			t.Errorf("service sends: got %v, want %v", n, 1)
		}
		if len(v.states) != 0 {
			t.Errorf("SendLimitState calls: got %v, want none (a replay spends nothing)", len(v.states))
		}
	})
	t.Run("OtherBodyIs422", func(t *testing.T) {
		v := &stubVerifier{}
		h := newIdempotentServer(t, v)
		sendWithKey(t, h, "k-1", body)
		w := sendWithKey(t, h, "k-1", `{"phone":"+819012345679"}`)
		if p := decodeProblem(t, w); w.Code != 422 || p.Code != "idempotency_key_reused" {
			t.Errorf("got %v %v, want 422 idempotency_key_reused", w.Code, p.Code)
		}
		if w.Header().Get("RateLimit") == "" {
			t.Error("RateLimit: got none, want the IP's state")
		}
		if n := len(v.sendCalls()); n != 1 {
			t.Errorf("service sends: got %v, want %v", n, 1)
		}
	})
	t.Run("OtherKeysAreIndependent", func(t *testing.T) {
		v := &stubVerifier{}
		h := newIdempotentServer(t, v)
		sendWithKey(t, h, "k-1", body)
		if w := sendWithKey(t, h, "k-2", body); w.Header().Get("Idempotent-Replayed") != "" {
			t.Error("another key was replayed")
		}
		if n := len(v.sendCalls()); n != 2 {
			t.Errorf("service sends: got %v, want %v", n, 2)
		}
	})
	t.Run("ConcurrentSameKeyIs409InFlight", func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		v := &stubVerifier{send: func(context.Context, otp.SendInput) (otp.SendResult, error) {
			close(entered)
			<-release
			return pendingResult(true), nil
		}}
		h := newIdempotentServer(t, v)
		var first *httptest.ResponseRecorder
		var wg sync.WaitGroup
		wg.Go(func() { first = sendWithKey(t, h, "k-1", body) })
		<-entered
		second := sendWithKey(t, h, "k-1", body)
		close(release)
		wg.Wait()
		if p := decodeProblem(t, second); second.Code != 409 || p.Code != "idempotency_in_flight" {
			t.Errorf("second: got %v %v, want 409 idempotency_in_flight", second.Code, p.Code)
		}
		if first.Code != 201 {
			t.Errorf("first: got %v, want %v", first.Code, 201)
		}
		if third := sendWithKey(t, h, "k-1", body); third.Code != 201 || third.Header().Get("Idempotent-Replayed") != "true" {
			t.Errorf("after the first finished: got %v replayed %q, want a 201 replay", third.Code, third.Header().Get("Idempotent-Replayed"))
		}
	})
	t.Run("ProviderErrorIsStored", func(t *testing.T) {
		v := &stubVerifier{send: func(context.Context, otp.SendInput) (otp.SendResult, error) {
			return otp.SendResult{}, &otp.ErrProvider{Provider: "webhook", Err: context.DeadlineExceeded}
		}}
		h := newIdempotentServer(t, v)
		first := sendWithKey(t, h, "k-1", body)
		again := sendWithKey(t, h, "k-1", body)
		if first.Code != 502 || again.Code != 502 || again.Header().Get("Idempotent-Replayed") != "true" {
			t.Errorf("got %v then %v (replayed %q), want 502 then a replayed 502", first.Code, again.Code, again.Header().Get("Idempotent-Replayed"))
		}
		if again.Body.String() != first.Body.String() || again.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("replay: got %s %s, want %s", again.Header().Get("Content-Type"), again.Body, first.Body)
		}
		if n := len(v.sendCalls()); n != 1 {
			t.Errorf("service sends: got %v, want %v", n, 1)
		}
	})

	// Outcomes that changed nothing release the key: the retry is evaluated afresh.
	released := []struct {
		name   string
		err    error
		status int
	}{
		{"Unavailable", fmt.Errorf("store: %w", otp.ErrUnavailable), 503},
		{"RateLimited", &otp.ErrRateLimited{Decision: refusedFor(7 * time.Second)}, 429},
		{"DuplicateSubmit", otp.ErrDuplicateSubmit, 409},
		{"InvalidPhone", &contact.ErrInvalidPhone{Reason: "x"}, 422},
		{"Internal", errors.New("bug"), 500},
	}
	for _, tt := range released {
		t.Run(tt.name+"IsNotStored", func(t *testing.T) {
			calls := 0
			v := &stubVerifier{send: func(context.Context, otp.SendInput) (otp.SendResult, error) {
				calls++
				if calls == 1 {
					return otp.SendResult{}, tt.err
				}
				return pendingResult(true), nil
			}}
			h := newIdempotentServer(t, v)
			first := sendWithKey(t, h, "k-1", body)
			again := sendWithKey(t, h, "k-1", body)
			if first.Code != tt.status || again.Code != 201 || again.Header().Get("Idempotent-Replayed") != "" {
				t.Errorf("got %v then %v (replayed %q), want %v then a fresh 201", first.Code, again.Code, again.Header().Get("Idempotent-Replayed"), tt.status)
			}
		})
	}
	t.Run("RateLimitedIsNotStoredAndKeepsRetryAfter", func(t *testing.T) {
		v := &stubVerifier{send: func(context.Context, otp.SendInput) (otp.SendResult, error) {
			return otp.SendResult{Decision: refusedFor(7 * time.Second)}, &otp.ErrRateLimited{Decision: refusedFor(7 * time.Second)}
		}}
		h := newIdempotentServer(t, v)
		sendWithKey(t, h, "k-1", body)
		w := sendWithKey(t, h, "k-1", body)
		if w.Code != 429 || w.Header().Get("Retry-After") != "7" || w.Header().Get("Idempotent-Replayed") != "" {
			t.Errorf("got %v Retry-After %q replayed %q, want a fresh 429 with Retry-After 7", w.Code, w.Header().Get("Retry-After"), w.Header().Get("Idempotent-Replayed"))
		}
		if n := len(v.sendCalls()); n != 2 {
			t.Errorf("service sends: got %v, want %v", n, 2)
		}
	})
	t.Run("PanicReleasesTheKey", func(t *testing.T) {
		calls := 0
		v := &stubVerifier{send: func(context.Context, otp.SendInput) (otp.SendResult, error) {
			calls++
			if calls == 1 {
				panic("kaboom")
			}
			return pendingResult(true), nil
		}}
		h := newIdempotentServer(t, v)
		if w := sendWithKey(t, h, "k-1", body); w.Code != 500 {
			t.Fatalf("got %v, want %v", w.Code, 500)
		}
		if w := sendWithKey(t, h, "k-1", body); w.Code != 201 {
			t.Errorf("retry after a panic: got %v, want %v", w.Code, 201)
		}
	})
	t.Run("InvalidKeysAre400", func(t *testing.T) {
		v := &stubVerifier{}
		h := newIdempotentServer(t, v)
		for name, key := range map[string]string{
			"TooLong": strings.Repeat("k", 256), "ControlCharacter": "a\x01b", "NonASCII": "ключ",
		} {
			w := sendWithKey(t, h, key, body)
			if p := decodeProblem(t, w); w.Code != 400 || p.Code != "invalid_request" || p.Errors["Idempotency-Key"] == "" {
				t.Errorf("%s: got %v %v %v, want 400 invalid_request naming Idempotency-Key", name, w.Code, p.Code, p.Errors)
			}
		}
		r := httptest.NewRequest("POST", "/v1/verifications", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Add("Idempotency-Key", "a")
		r.Header.Add("Idempotency-Key", "b")
		if w := serve(h, r); w.Code != 400 {
			t.Errorf("two keys: got %v, want %v", w.Code, 400)
		}
		if w := sendWithKey(t, h, strings.Repeat("k", 255), body); w.Code != 201 {
			t.Errorf("255 characters: got %v, want %v", w.Code, 201)
		}
		if n := len(v.sendCalls()); n != 1 {
			t.Errorf("service sends: got %v, want %v", n, 1)
		}
	})
	t.Run("StoreUnavailableIs503", func(t *testing.T) {
		srv := testenv.StartRedis(t)
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
		t.Cleanup(func() { _ = rdb.Close() })
		v := &stubVerifier{}
		h, _ := newTestServer(t, v, func(d *Deps) { d.Idempotency = idempotency.New(rdb, testenv.KeyPrefix(t), time.Hour) })
		srv.Stop()
		w := sendWithKey(t, h, "k-1", body)
		if p := decodeProblem(t, w); w.Code != 503 || p.Code != "unavailable" {
			t.Errorf("got %v %v, want 503 unavailable", w.Code, p.Code)
		}
		if n := len(v.sendCalls()); n != 0 {
			t.Errorf("service sends: got %v, want %v", n, 0)
		}
	})
}
