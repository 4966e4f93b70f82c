package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

func TestSend(t *testing.T) {
	t.Run("NewVerificationIs201", func(t *testing.T) {
		v := &stubVerifier{}
		h, _ := newTestServer(t, v, nil)
		w := post(t, h, "/v1/verifications", `{"phone":"+81 90-1234-5678","channel":"sms","locale":"ja"}`, nil)
		if w.Code != 201 {
			t.Fatalf("status: got %v, want %v (%s)", w.Code, 201, w.Body)
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("content type: got %v, want %v", ct, "application/json")
		}
		want := `{"id":"` + testID + `","phone":"+819012345678","channel":"sms","status":"pending",` +
			`"expires_at":"2030-01-02T03:09:05Z","next_resend_at":"2030-01-02T03:05:05Z","sends_left":4}` + "\n"
		if w.Body.String() != want {
			t.Errorf("body: got %s, want %s", w.Body, want)
		}
		in := v.sendCalls()[0]
		if in.Phone != "+81 90-1234-5678" || in.Channel != "sms" || in.Locale != "ja" || in.ClientIP != "192.0.2.1" {
			t.Errorf("service input: got %+v, want the body's fields and the peer's IP", in)
		}
	})
	t.Run("ResendIs200", func(t *testing.T) {
		v := &stubVerifier{send: func(context.Context, otp.SendInput) (otp.SendResult, error) { return pendingResult(false), nil }}
		h, _ := newTestServer(t, v, nil)
		if w := post(t, h, "/v1/verifications", `{"phone":"1"}`, nil); w.Code != 200 {
			t.Errorf("status: got %v, want %v", w.Code, 200)
		}
	})
	t.Run("TimesAreUTCWholeSeconds", func(t *testing.T) {
		res := pendingResult(true)
		jst := time.FixedZone("JST", 9*3600)
		res.Verification.ExpiresAt = time.Date(2030, 1, 2, 12, 9, 5, 900e6, jst)
		res.NextResendAt = time.Date(2030, 1, 2, 12, 5, 5, 100e6, jst)
		got := newSendResponse(res)
		if got.ExpiresAt != "2030-01-02T03:09:05Z" {
			t.Errorf("expires_at: got %v, want %v (rounded down)", got.ExpiresAt, "2030-01-02T03:09:05Z")
		}
		if got.NextResendAt != "2030-01-02T03:05:06Z" {
			t.Errorf("next_resend_at: got %v, want %v (rounded up)", got.NextResendAt, "2030-01-02T03:05:06Z")
		}
	})
	t.Run("SuccessCarriesRateLimitHeadersOfItsDecision", func(t *testing.T) {
		v := &stubVerifier{}
		h, _ := newTestServer(t, v, nil)
		w := post(t, h, "/v1/verifications", `{"phone":"1"}`, nil)
		if got := w.Header().Get("RateLimit"); got != `"phone-1m";r=0;t=60` {
			t.Errorf("RateLimit: got %v, want %v", got, `"phone-1m";r=0;t=60`)
		}
		if got := w.Header().Get("RateLimit-Policy"); got != `"phone-1m";q=1;w=60` {
			t.Errorf("RateLimit-Policy: got %v, want %v", got, `"phone-1m";q=1;w=60`)
		}
		if len(v.states) != 0 {
			t.Errorf("SendLimitState calls: got %v, want none", len(v.states))
		}
	})
	t.Run("ValidationListsEveryField", func(t *testing.T) {
		h, _ := newTestServer(t, refusingService(6), nil)
		for name, body := range map[string]string{
			"PhoneMissing": `{"channel":"voice","locale":"xx"}`,
			"PhoneEmpty":   `{"phone":"","channel":"voice","locale":"xx"}`,
			"PhoneBlank":   `{"phone":" \t","channel":"voice","locale":"xx"}`,
		} {
			w := post(t, h, "/v1/verifications", body, nil)
			p := decodeProblem(t, w)
			if w.Code != 400 || p.Code != "invalid_request" {
				t.Fatalf("%s: got %v %v, want 400 invalid_request", name, w.Code, p.Code)
			}
			known := contact.KnownLocales()
			quoted := make([]string, len(known))
			for i, l := range known {
				quoted[i] = strconv.Quote(l)
			}
			want := map[string]string{"phone": "is required", "channel": `must be "sms"`,
				"locale": "must be " + strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]}
			if fmt.Sprint(p.Errors) != fmt.Sprint(want) {
				t.Errorf("%s: errors: got %v, want %v", name, p.Errors, want)
			}
		}
	})
}

// TestSendErrorsCarryRateLimitHeaders checks the contract that every response of the
// send endpoint has RateLimit headers: from the decision when the limiter answered,
// else from SendLimitState — except an unavailable error without a decision (Redis
// failed before the limiter answered), where Redis is not asked a second time.
func TestSendErrorsCarryRateLimitHeaders(t *testing.T) {
	refused := rate.Decision{Rules: []rate.RuleState{
		{Scope: "phone", Rule: rate.Rule{Limit: 1, Window: time.Minute}, Used: 1, Remaining: 0, ResetAfter: 42 * time.Second, RetryAfter: 42 * time.Second, Violated: true},
	}}
	admitted := rate.Decision{Allowed: true, Rules: []rate.RuleState{
		{Scope: "ip", Rule: rate.Rule{Limit: 10, Window: time.Hour}, Used: 4, Remaining: 6, ResetAfter: 20 * time.Minute},
	}}
	const fromDecision, fromAdmitted, fromState = `"phone-1m";r=0;t=42`, `"ip-1h";r=6;t=1200`, `"ip-1h";r=7;t=1801`
	tests := []struct {
		name    string
		body    string
		header  map[string]string
		err     error
		res     rate.Decision
		status  int
		code    string
		limit   string
		asState bool
	}{
		{name: "BadJSON", body: `{"phone":`, status: 400, code: "invalid_request", limit: fromState, asState: true},
		{name: "WrongContentType", body: `{"phone":"1"}`, header: map[string]string{"Content-Type": "text/plain"}, status: 415, code: "unsupported_media_type", limit: fromState, asState: true},
		{name: "BadIdempotencyKey", body: `{"phone":"1"}`, header: map[string]string{"Idempotency-Key": "tab\there"}, status: 400, code: "invalid_request", limit: fromState, asState: true},
		{name: "InvalidPhoneBeforeLimiter", body: `{"phone":"1"}`, err: &contact.ErrInvalidPhone{Reason: "too short"}, status: 422, code: "invalid_phone", limit: fromState, asState: true},
		{name: "CountryBeforeLimiter", body: `{"phone":"1"}`, err: &otp.ErrCountryNotAllowed{Country: "US"}, status: 403, code: "country_not_allowed", limit: fromState, asState: true},
		{name: "InvalidFieldsBeforeLimiter", body: `{"phone":"1"}`, err: &otp.ErrInvalidRequest{Fields: map[string]string{"locale": `must be "en" or "ja"`}}, status: 400, code: "invalid_request", limit: fromState, asState: true},
		{name: "RateLimitedUsesItsDecision", body: `{"phone":"1"}`, err: &otp.ErrRateLimited{Decision: refused}, res: refused, status: 429, code: "rate_limited", limit: fromDecision},
		{name: "DuplicateUsesResultDecision", body: `{"phone":"1"}`, err: otp.ErrDuplicateSubmit, res: refused, status: 409, code: "duplicate_submit", limit: fromDecision},
		{name: "ProviderErrorUsesResultDecision", body: `{"phone":"1"}`, err: &otp.ErrProvider{Provider: "log", Err: errors.New("x")}, res: refused, status: 502, code: "provider_error", limit: fromDecision},
		{name: "LimiterUnavailable", body: `{"phone":"1"}`, err: fmt.Errorf("limiter: %w", otp.ErrUnavailable), status: 503, code: "unavailable", limit: ""},
		{name: "StoreUnavailableAfterLimiterUsesResultDecision", body: `{"phone":"1"}`, err: fmt.Errorf("otp: send: begin: %w", otp.ErrUnavailable), res: admitted, status: 503, code: "unavailable", limit: fromAdmitted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &stubVerifier{send: func(context.Context, otp.SendInput) (otp.SendResult, error) {
				return otp.SendResult{Decision: tt.res}, tt.err
			}}
			h, _ := newTestServer(t, v, nil)
			w := post(t, h, "/v1/verifications", tt.body, tt.header)
			if w.Code != tt.status {
				t.Fatalf("status: got %v, want %v (%s)", w.Code, tt.status, w.Body)
			}
			if p := decodeProblem(t, w); p.Code != tt.code {
				t.Errorf("code: got %v, want %v", p.Code, tt.code)
			}
			if got := w.Header().Get("RateLimit"); got != tt.limit {
				t.Errorf("RateLimit: got %v, want %v", got, tt.limit)
			}
			if (w.Header().Get("RateLimit-Policy") != "") != (tt.limit != "") {
				t.Errorf("RateLimit-Policy: got %q, want one exactly when RateLimit is set", w.Header().Get("RateLimit-Policy"))
			}
			if !tt.asState && len(v.states) != 0 {
				t.Errorf("SendLimitState calls: got %v, want none", v.states)
			}
			if tt.asState && (len(v.states) != 1 || v.states[0] != "192.0.2.1") {
				t.Errorf("SendLimitState calls: got %v, want one for 192.0.2.1", v.states)
			}
		})
	}
	t.Run("RateLimitedHasRetryAfterAndViolations", func(t *testing.T) {
		v := &stubVerifier{send: func(context.Context, otp.SendInput) (otp.SendResult, error) {
			return otp.SendResult{Decision: refused}, &otp.ErrRateLimited{Decision: refused}
		}}
		h, _ := newTestServer(t, v, nil)
		w := post(t, h, "/v1/verifications", `{"phone":"1"}`, nil)
		if got := w.Header().Get("Retry-After"); got != "42" {
			t.Errorf("Retry-After: got %v, want %v", got, "42")
		}
		var body map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		wantViolations := []any{map[string]any{"scope": "phone", "limit": 1.0, "window_seconds": 60.0, "retry_after_seconds": 42.0}}
		if fmt.Sprint(body["violations"]) != fmt.Sprint(wantViolations) || body["retry_after_seconds"] != 42.0 {
			t.Errorf("body: got %v, want retry_after_seconds 42 and violations %v", body, wantViolations)
		}
	})
	t.Run("StateErrorOmitsHeaders", func(t *testing.T) {
		v := &stubVerifier{state: func(context.Context, string) (rate.Decision, error) { return rate.Decision{}, otp.ErrUnavailable }}
		h, _ := newTestServer(t, v, nil)
		w := post(t, h, "/v1/verifications", `{"phone":`, nil)
		if w.Code != 400 || w.Header().Get("RateLimit") != "" {
			t.Errorf("got %v with RateLimit %q, want 400 without RateLimit", w.Code, w.Header().Get("RateLimit"))
		}
	})
}
