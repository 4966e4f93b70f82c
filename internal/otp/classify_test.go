package otp

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"otpgate/internal/contact"
	"otpgate/internal/rate"
)

func TestErrorCode(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want Code
	}{
		{"Nil", nil, ""},
		{"Coded", Errorf(CodeUnauthorized, "no key"), CodeUnauthorized},
		{"WrappedCoded", fmt.Errorf("auth: %w", Errorf(CodeCSRFFailed, "no cookie")), CodeCSRFFailed},
		{"InvalidRequest", &ErrInvalidRequest{Fields: map[string]string{"phone": "is required"}}, CodeInvalidRequest},
		{"InvalidPhone", &contact.ErrInvalidPhone{Reason: "too short"}, CodeInvalidPhone},
		{"CountryNotAllowed", &ErrCountryNotAllowed{Country: "US"}, CodeCountryNotAllowed},
		{"Duplicate", ErrDuplicateSubmit, CodeDuplicateSubmit},
		{"IdempotencyInFlight", ErrIdempotencyInFlight, CodeIdempotencyInFlight},
		{"IdempotencyKeyReused", ErrIdempotencyKeyReused, CodeIdempotencyKeyReused},
		{"RateLimited", &ErrRateLimited{}, CodeRateLimited},
		{"SendBudgetIsARateLimit", &ErrSendBudget{MaxSends: 5}, CodeRateLimited},
		{"FraudBlocked", fmt.Errorf("send: %w", &ErrFraudBlocked{Scope: rate.ScopePrefix, Key: "+8190123"}), CodeFraudBlocked},
		{"BlockListed", &ErrBlocked{Entry: "country NG"}, CodeBlocked},
		{"InvalidCode", &ErrInvalidCode{AttemptsLeft: 2}, CodeInvalidCode},
		{"TooManyAttempts", ErrTooManyAttempts, CodeTooManyAttempts},
		{"NotFound", fmt.Errorf("store: %w", ErrNotFound), CodeNotFound},
		{"Expired", ErrExpired, CodeExpired},
		{"ProviderTimeoutIsTheProvidersNotUnavailable", &ErrProvider{Err: context.DeadlineExceeded}, CodeProviderError},
		{"Unavailable", fmt.Errorf("redis: %w: refused", ErrUnavailable), CodeUnavailable},
		{"Deadline", fmt.Errorf("store: %w", context.DeadlineExceeded), CodeUnavailable},
		{"Canceled", context.Canceled, CodeUnavailable},
		{"UnknownIsInternal", errors.New("scan: cannot convert text to int"), CodeInternal},
		{"TextOfADomainErrorIsNotEnough", errors.New(ErrNotFound.Error()), CodeInternal},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ErrorCode(c.err); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestCodeSeverity(t *testing.T) {
	for code, want := range map[Code]Severity{
		CodeInternal:       SeverityFault,
		CodeUnavailable:    SeverityDegraded,
		CodeRateLimited:    SeverityClient,
		CodeInvalidRequest: SeverityClient,
		CodeProviderError:  SeverityClient,
	} {
		if got := code.Severity(); got != want {
			t.Errorf("%s: got %v, want %v", code, got, want)
		}
	}
}
