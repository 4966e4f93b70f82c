package http

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

func TestWriteProblem(t *testing.T) {
	t.Run("RetryAfterHeaderInWholeSecondsRoundedUp", func(t *testing.T) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/", nil)
		httpkit.WriteProblem(w, r, discardLogger(), &otp.ErrRateLimited{Decision: rate.Decision{Rules: []rate.RuleState{
			{Scope: "ip", Rule: rate.Rule{Limit: 10, Window: time.Hour}, Used: 10, RetryAfter: 59*time.Second + time.Microsecond, Violated: true},
		}}})
		if got := w.Header().Get("Retry-After"); got != "60" {
			t.Errorf("Retry-After: got %v, want %v", got, "60")
		}
		p := decodeProblem(t, w)
		if p.RetryAfterSeconds == nil || *p.RetryAfterSeconds != 60 {
			t.Errorf("retry_after_seconds: got %v, want %v", p.RetryAfterSeconds, 60)
		}
	})
	t.Run("RetryAfterIsAtLeastOneSecond", func(t *testing.T) {
		w := httptest.NewRecorder()
		// A spent send budget whose verification expires this instant refuses for 0s.
		httpkit.WriteProblem(w, httptest.NewRequest("POST", "/", nil), discardLogger(), &otp.ErrRateLimited{Decision: rate.Decision{Rules: []rate.RuleState{
			{Scope: "verification", Rule: rate.Rule{Limit: 5, Window: 5 * time.Minute}, Used: 5, Violated: true},
		}}})
		if got := w.Header().Get("Retry-After"); got != "1" {
			t.Errorf("Retry-After: got %v, want %v", got, "1")
		}
	})
	t.Run("NoRetryAfterOnOtherProblems", func(t *testing.T) {
		w := httptest.NewRecorder()
		httpkit.WriteProblem(w, httptest.NewRequest("POST", "/", nil), discardLogger(), otp.ErrTooManyAttempts)
		if got := w.Header().Get("Retry-After"); got != "" {
			t.Errorf("Retry-After: got %v, want none", got)
		}
	})
	t.Run("InternalErrorIsLoggedWithRequestID", func(t *testing.T) {
		v := &stubVerifier{check: func(context.Context, otp.CheckInput) (otp.CheckResult, error) {
			return otp.CheckResult{}, errors.New("disk on fire")
		}}
		h, logs := newTestServer(t, v, nil)
		w := post(t, h, "/v1/verifications/check", `{"phone":"1","code":"123456"}`, map[string]string{"X-Request-Id": "req-42"})
		p := decodeProblem(t, w)
		if w.Code != 500 || p.Code != "internal" || p.Detail != "internal error" {
			t.Errorf("got %v %v %q, want 500 internal %q", w.Code, p.Code, p.Detail, "internal error")
		}
		if strings.Contains(w.Body.String(), "disk on fire") {
			t.Errorf("body %s leaks the internal error", w.Body)
		}
		if !strings.Contains(logs.String(), `"msg":"internal error","request_id":"req-42","err":"disk on fire"`) {
			t.Errorf("logs %s: want the internal error with its request id", logs)
		}
	})
}

func TestUnavailableIsLoggedAsAWarning(t *testing.T) {
	v := &stubVerifier{check: func(context.Context, otp.CheckInput) (otp.CheckResult, error) {
		return otp.CheckResult{}, fmt.Errorf("postgres: check: %w: dial tcp: connection refused", otp.ErrUnavailable)
	}}
	h, logs := newTestServer(t, v, nil)
	w := post(t, h, "/v1/verifications/check", `{"phone":"1","code":"123456"}`, map[string]string{"X-Request-Id": "req-43"})
	if p := decodeProblem(t, w); w.Code != 503 || p.Code != "unavailable" {
		t.Errorf("got %v %v, want 503 unavailable", w.Code, p.Code)
	}
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"backing service unavailable","request_id":"req-43"`) {
		t.Errorf("logs %s: want a warning with the request id", logs)
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("logs %s: unavailability must not be logged as an error", logs)
	}
}
