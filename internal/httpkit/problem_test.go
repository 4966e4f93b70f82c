package httpkit

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/tokens"
)

func TestProblemFor(t *testing.T) {
	limited := &otp.ErrRateLimited{Decision: rate.Decision{Rules: []rate.RuleState{
		{Scope: "phone", Rule: rate.Rule{Limit: 1, Window: time.Minute}, Used: 1, RetryAfter: 41*time.Second + time.Millisecond, Violated: true},
		{Scope: "ip", Rule: rate.Rule{Limit: 10, Window: time.Hour}, Used: 10, RetryAfter: 90 * time.Second, Violated: true},
	}}}
	tests := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"RequestError", InvalidRequest("bad", nil), 400, "invalid_request"},
		{"ServiceInvalidRequest", &otp.ErrInvalidRequest{Fields: map[string]string{"locale": "bad"}}, 400, "invalid_request"},
		{"TooLarge", ErrTooLarge, 413, "request_too_large"},
		{"UnsupportedMediaType", errUnsupportedMediaType, 415, "unsupported_media_type"},
		{"RouteNotFound", ErrRouteNotFound, 404, "not_found"},
		{"MethodNotAllowed", ErrMethodNotAllowed, 405, "method_not_allowed"},
		{"InvalidPhone", &contact.ErrInvalidPhone{Reason: "too short"}, 422, "invalid_phone"},
		{"CountryNotAllowed", &otp.ErrCountryNotAllowed{Country: "US"}, 403, "country_not_allowed"},
		{"DuplicateSubmit", otp.ErrDuplicateSubmit, 409, "duplicate_submit"},
		{"IdempotencyInFlight", otp.ErrIdempotencyInFlight, 409, "idempotency_in_flight"},
		{"IdempotencyKeyReused", otp.ErrIdempotencyKeyReused, 422, "idempotency_key_reused"},
		{"RateLimited", limited, 429, "rate_limited"},
		{"FraudBlocked", &otp.ErrFraudBlocked{Scope: "prefix", Key: "+81901234", RetryAfter: time.Hour}, 403, "fraud_blocked"},
		{"BudgetExceeded", &otp.ErrBudgetExceeded{Budget: "cap", Period: "day", RetryAfter: time.Hour}, 429, "budget_exceeded"},
		{"BlockListed", &otp.ErrBlocked{Entry: "country NG"}, 403, "blocked"},
		{"ProviderDefinite", &otp.ErrProvider{Provider: "twilio", Definite: true, Err: otp.ErrNotDelivered}, 502, "provider_error"},
		{"ProviderTimeout", &otp.ErrProvider{Provider: "webhook", Err: context.DeadlineExceeded}, 502, "provider_error"},
		{"Unavailable", fmt.Errorf("redis: %w: dial tcp: refused", otp.ErrUnavailable), 503, "unavailable"},
		{"IdempotencyStoreUnavailable", fmt.Errorf("idempotency: claim key: %w: %w", otp.ErrUnavailable, errors.New("EOF")), 503, "unavailable"},
		{"Timeout", fmt.Errorf("store: %w", context.DeadlineExceeded), 503, "unavailable"},
		{"InvalidCode", &otp.ErrInvalidCode{AttemptsLeft: 0}, 422, "invalid_code"},
		{"TooManyAttempts", otp.ErrTooManyAttempts, 429, "too_many_attempts"},
		{"NotFound", otp.ErrNotFound, 404, "not_found"},
		{"Expired", otp.ErrExpired, 410, "expired"},
		{"WrappedDomainError", fmt.Errorf("otp: check: %w", otp.ErrExpired), 410, "expired"},
		{"InvalidToken", tokens.ErrInvalid, 422, "invalid_token"},
		{"TokenExpired", tokens.ErrExpired, 410, "token_expired"},
		{"TokenRedeemed", fmt.Errorf("redeem: %w", tokens.ErrRedeemed), 409, "token_redeemed"},
		{"Unknown", errors.New("boom: secret detail"), 500, "internal"},
		{"UnknownThatMentionsANotFound", errors.New("no pending verification"), 500, "internal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ProblemFor(tt.err)
			if p.Status != tt.status || p.Code != tt.code {
				t.Errorf("got %v %v, want %v %v", p.Status, p.Code, tt.status, tt.code)
			}
			if p.Type != problemTypePrefix+tt.code || p.Title == "" || p.Detail == "" {
				t.Errorf("got type %q, title %q, detail %q; want all set", p.Type, p.Title, p.Detail)
			}
			if strings.Contains(p.Detail, "secret") {
				t.Errorf("detail %q repeats the internal error", p.Detail)
			}
		})
	}

	t.Run("RateLimitedListsViolations", func(t *testing.T) {
		p := ProblemFor(fmt.Errorf("otp: send: %w", limited))
		want := []Violation{
			{Scope: "phone", Limit: 1, WindowSeconds: 60, RetryAfterSeconds: 42},
			{Scope: "ip", Limit: 10, WindowSeconds: 3600, RetryAfterSeconds: 90},
		}
		if !reflect.DeepEqual(p.Violations, want) {
			t.Errorf("violations: got %+v, want %+v", p.Violations, want)
		}
		if p.RetryAfterSeconds == nil || *p.RetryAfterSeconds != 90 {
			t.Errorf("retry_after_seconds: got %v, want %v", p.RetryAfterSeconds, 90)
		}
	})
	t.Run("RateLimitedListsOnlyViolatedRules", func(t *testing.T) {
		d := rate.Decision{Rules: []rate.RuleState{
			{Scope: "phone", Rule: rate.Rule{Limit: 1, Window: time.Minute}, Used: 1, RetryAfter: 1500 * time.Millisecond, Violated: true},
			{Scope: "ip", Rule: rate.Rule{Limit: 10, Window: time.Hour}, Used: 3, Remaining: 7},
		}}
		p := ProblemFor(&otp.ErrRateLimited{Decision: d})
		if len(p.Violations) != 1 || p.Violations[0].Scope != "phone" {
			t.Errorf("violations: got %+v, want the phone rule only", p.Violations)
		}
		if p.RetryAfterSeconds == nil || *p.RetryAfterSeconds != 2 {
			t.Errorf("retry_after_seconds: got %v, want %v", p.RetryAfterSeconds, 2)
		}
	})
	t.Run("FraudBlockedSaysWhenToRetryButNotWhat", func(t *testing.T) {
		p := ProblemFor(fmt.Errorf("otp: send: %w", &otp.ErrFraudBlocked{Scope: "prefix", Key: "+81901234", RetryAfter: 90*time.Minute + time.Millisecond}))
		if p.RetryAfterSeconds == nil || *p.RetryAfterSeconds != 5401 {
			t.Errorf("retry_after_seconds: got %v, want 5401", p.RetryAfterSeconds)
		}
		if strings.Contains(p.Detail, "+81901234") || p.Violations != nil {
			t.Errorf("got %+v, want the blocked target kept from the client", p)
		}
	})
	t.Run("BudgetExceededNamesTheBudgetItsWindowAndItsReset", func(t *testing.T) {
		resets := time.Date(2030, 1, 3, 0, 0, 0, 0, time.UTC)
		p := ProblemFor(fmt.Errorf("otp: send: %w", &otp.ErrBudgetExceeded{Budget: "cap", Period: "day", ResetsAt: resets, RetryAfter: 90*time.Second + time.Millisecond}))
		if p.RetryAfterSeconds == nil || *p.RetryAfterSeconds != 91 || p.Budget != "cap" || p.BudgetWindow != "day" ||
			p.ResetsAt != "2030-01-03T00:00:00Z" || !strings.Contains(p.Detail, "cap") {
			t.Errorf("got %+v, want cap, day, its reset and 91 seconds", p)
		}
		if p.Country != "" || p.Share != "" {
			t.Errorf("got country %q share %q, want none when the cap refused", p.Country, p.Share)
		}
	})
	t.Run("AFenceNamesTheCountryAndItsShare", func(t *testing.T) {
		p := ProblemFor(&otp.ErrBudgetExceeded{Budget: "cap", Period: "day", RetryAfter: time.Hour, Country: "UZ", Young: true, Share: 1_050_000})
		if p.Code != "budget_exceeded" || p.Country != "UZ" || p.Share != "1.05" || !strings.Contains(p.Detail, "UZ") || !strings.Contains(p.Detail, "1.05") {
			t.Errorf("got %+v, want UZ and its share 1.05 named", p)
		}
	})
	t.Run("InvalidCodeCarriesAttemptsLeftEvenZero", func(t *testing.T) {
		p := ProblemFor(&otp.ErrInvalidCode{AttemptsLeft: 0})
		if p.AttemptsLeft == nil || *p.AttemptsLeft != 0 {
			t.Errorf("attempts_left: got %v, want %v", p.AttemptsLeft, 0)
		}
	})
	t.Run("ServiceFieldsBecomeErrors", func(t *testing.T) {
		p := ProblemFor(&otp.ErrInvalidRequest{Fields: map[string]string{"locale": `must be "en" or "ja"`}})
		if p.Errors["locale"] != `must be "en" or "ja"` {
			t.Errorf("errors: got %v, want the locale problem", p.Errors)
		}
	})
}
