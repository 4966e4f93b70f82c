package otp

import (
	"context"
	"otpgate/internal/rate"
)

// Verifier is the send-and-check service the public API calls; *Service implements it,
// and metrics decorate it.
type Verifier interface {
	// Send sends or resends a code. The result's Decision is set whenever the limiter was
	// asked, also with an error; with *ErrRateLimited it is the refusal's own.
	// Errors: *ErrInvalidRequest, *contact.ErrInvalidPhone, *ErrCountryNotAllowed,
	// ErrDuplicateSubmit, *ErrRateLimited, *ErrFraudBlocked, *ErrBlocked, *ErrProvider, and
	// errors wrapping ErrUnavailable.
	Send(ctx context.Context, in SendInput) (SendResult, error)
	// Check proves a code. The result's Decision is set whenever the limiter was asked,
	// as with Send. Errors: *ErrInvalidRequest, *ErrInvalidCode, ErrTooManyAttempts,
	// ErrNotFound, ErrExpired, *ErrRateLimited, and errors wrapping ErrUnavailable.
	Check(ctx context.Context, in CheckInput) (CheckResult, error)
	// SendLimitState reports the client IP's send limit without recording anything, for
	// rate-limit headers on responses that never reached the limiter. Errors wrap ErrUnavailable.
	SendLimitState(ctx context.Context, clientIP string) (rate.Decision, error)
}

var _ Verifier = (*Service)(nil)
