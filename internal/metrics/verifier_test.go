package metrics

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// The decorator must fit where the public API takes the service.
var _ otp.Verifier = (*verifier)(nil)

// fixedVerifier answers every call with its fields.
type fixedVerifier struct {
	created bool
	err     error
}

func (f fixedVerifier) Send(context.Context, otp.SendInput) (otp.SendResult, error) {
	return otp.SendResult{Created: f.created}, f.err
}

func (f fixedVerifier) Check(context.Context, otp.CheckInput) (otp.CheckResult, error) {
	return otp.CheckResult{}, f.err
}

func (f fixedVerifier) SendLimitState(context.Context, string) (rate.Decision, error) {
	return rate.Decision{Allowed: true}, f.err
}

// wrapped hides err behind the context the service adds, as errors.Is/As must see through.
func wrapped(err error) error { return fmt.Errorf("otp: send: %w", err) }

var errUnavailable = fmt.Errorf("otp: limiter: %w: %w", otp.ErrUnavailable, errors.New("i/o timeout"))

// rateLimited is a refusal by the phone's 1/1m rule.
func rateLimited() error {
	return &otp.ErrRateLimited{Decision: rate.Decision{Rules: []rate.RuleState{
		{Scope: otp.ScopePhone, Rule: rate.Rule{Limit: 1, Window: time.Minute}, Used: 1, RetryAfter: 30 * time.Second, Violated: true},
	}}}
}

func TestSendOutcomeMetrics(t *testing.T) {
	for _, c := range []struct {
		name    string
		created bool
		err     error
		want    string
	}{
		{"NewVerificationIsCreated", true, nil, "created"},
		{"PendingVerificationIsResent", false, nil, "resent"},
		{"RateLimited", false, rateLimited(), "rate_limited"},
		{"DuplicateSubmit", false, otp.ErrDuplicateSubmit, "duplicate"},
		{"BadFieldsAreInvalid", false, &otp.ErrInvalidRequest{Fields: map[string]string{"locale": "bad"}}, "invalid"},
		{"BadPhoneIsInvalid", false, &contact.ErrInvalidPhone{Reason: "too short"}, "invalid"},
		{"ForbiddenCountryIsInvalid", false, &otp.ErrCountryNotAllowed{Country: "US"}, "invalid"},
		{"DefiniteProviderFailure", false, &otp.ErrProvider{Provider: "webhook", Definite: true, Err: otp.ErrNotDelivered}, "provider_error"},
		{"UnknownProviderFailure", false, &otp.ErrProvider{Provider: "webhook", Err: errors.New("timeout")}, "provider_error"},
		{"Unavailable", false, errUnavailable, "unavailable"},
		{"WrappedUnavailable", false, wrapped(errUnavailable), "unavailable"},
		{"AnythingElseIsError", false, errors.New("boom"), "error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := New()
			v := m.Verifier(fixedVerifier{created: c.created, err: c.err})
			if _, err := v.Send(context.Background(), otp.SendInput{}); err != c.err {
				t.Fatalf("got error %v, want %v passed through", err, c.err)
			}
			for _, o := range sendOutcomes {
				want := 0.0
				if o == c.want {
					want = 1
				}
				if got := counter(t, m, "otpgate_sends_total", "outcome", o); got != want {
					t.Errorf("%s: got %v, want %v", o, got, want)
				}
			}
		})
	}
}

func TestCheckOutcomeMetrics(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"Approved", nil, "approved"},
		{"InvalidCode", &otp.ErrInvalidCode{AttemptsLeft: 3}, "invalid_code"},
		{"TooManyAttempts", otp.ErrTooManyAttempts, "too_many_attempts"},
		{"Expired", wrapped(otp.ErrExpired), "expired"},
		{"NotFound", otp.ErrNotFound, "not_found"},
		{"RateLimited", wrapped(rateLimited()), "rate_limited"},
		{"BadFieldsAreInvalid", &otp.ErrInvalidRequest{Fields: map[string]string{"code": "bad"}}, "invalid"},
		{"BadPhoneIsInvalid", &contact.ErrInvalidPhone{Reason: "not a number"}, "invalid"},
		{"Unavailable", errUnavailable, "unavailable"},
		{"ContextEndIsUnavailableAsInTheAPI", context.Canceled, "unavailable"},
		{"AnythingElseIsError", errors.New("scan: cannot convert"), "error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := New()
			v := m.Verifier(fixedVerifier{err: c.err})
			if _, err := v.Check(context.Background(), otp.CheckInput{}); err != c.err {
				t.Fatalf("got error %v, want %v passed through", err, c.err)
			}
			for _, o := range checkOutcomes {
				want := 0.0
				if o == c.want {
					want = 1
				}
				if got := counter(t, m, "otpgate_checks_total", "outcome", o); got != want {
					t.Errorf("%s: got %v, want %v", o, got, want)
				}
			}
		})
	}
}

func TestMetricsSkipSendLimitState(t *testing.T) {
	m := New()
	v := m.Verifier(fixedVerifier{})
	if d, err := v.SendLimitState(context.Background(), "192.0.2.1"); err != nil || !d.Allowed {
		t.Fatalf("got %v %v, want the wrapped answer", d.Allowed, err)
	}
	for _, o := range sendOutcomes {
		if got := counter(t, m, "otpgate_sends_total", "outcome", o); got != 0 {
			t.Errorf("%s: got %v, want 0", o, got)
		}
	}
}
