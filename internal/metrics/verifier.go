package metrics

import (
	"context"
	"errors"

	"otpgate/internal/otp"
)

// Verifier is the public API's view of the otp service, the same method set as
// internal/http's Verifier; it is repeated here so that metrics need not import the API.
type Verifier interface {
	Send(ctx context.Context, in otp.SendInput) (otp.SendResult, error)
	Check(ctx context.Context, in otp.CheckInput) (otp.CheckResult, error)
	SendLimitState(ctx context.Context, clientIP string) (otp.Decision, error)
}

// Outcomes of sends and checks, the values of their outcome labels.
var (
	sendOutcomes = []string{
		"created", "resent", "rate_limited", "duplicate", "invalid", "provider_error", "unavailable", "error",
	}
	checkOutcomes = []string{
		"approved", "invalid_code", "too_many_attempts", "expired", "not_found", "rate_limited", "invalid", "unavailable", "error",
	}
)

// Verifier wraps next so that every send and check is counted by its outcome.
func (m *Metrics) Verifier(next Verifier) Verifier {
	return &verifier{next: next, m: m}
}

type verifier struct {
	next Verifier
	m    *Metrics
}

func (v *verifier) Send(ctx context.Context, in otp.SendInput) (otp.SendResult, error) {
	res, err := v.next.Send(ctx, in)
	v.m.sends.WithLabelValues(sendOutcome(res, err)).Inc()
	return res, err
}

func (v *verifier) Check(ctx context.Context, in otp.CheckInput) (otp.CheckResult, error) {
	res, err := v.next.Check(ctx, in)
	v.m.checks.WithLabelValues(checkOutcome(err)).Inc()
	return res, err
}

// SendLimitState only reads limits, so it is passed through uncounted.
func (v *verifier) SendLimitState(ctx context.Context, clientIP string) (otp.Decision, error) {
	return v.next.SendLimitState(ctx, clientIP)
}

// sendOutcome names how a send ended. The provider is asked before anything that
// could be unavailable is reported, so a provider error wins over other causes.
func sendOutcome(res otp.SendResult, err error) string {
	var (
		limited  *otp.ErrRateLimited
		provider *otp.ErrProvider
	)
	switch {
	case err == nil && res.Created:
		return "created"
	case err == nil:
		return "resent"
	case errors.As(err, &limited):
		return "rate_limited"
	case errors.Is(err, otp.ErrDuplicateSubmit):
		return "duplicate"
	case invalid(err):
		return "invalid"
	case errors.As(err, &provider):
		return "provider_error"
	case errors.Is(err, otp.ErrUnavailable):
		return "unavailable"
	default:
		return "error"
	}
}

// checkOutcome names how a check ended.
func checkOutcome(err error) string {
	var (
		limited *otp.ErrRateLimited
		code    *otp.ErrInvalidCode
	)
	switch {
	case err == nil:
		return "approved"
	case errors.As(err, &code):
		return "invalid_code"
	case errors.Is(err, otp.ErrTooManyAttempts):
		return "too_many_attempts"
	case errors.Is(err, otp.ErrExpired):
		return "expired"
	case errors.Is(err, otp.ErrNotFound):
		return "not_found"
	case errors.As(err, &limited):
		return "rate_limited"
	case invalid(err):
		return "invalid"
	case errors.Is(err, otp.ErrUnavailable):
		return "unavailable"
	default:
		return "error"
	}
}

// invalid reports an error about the request itself: bad fields, a bad phone number,
// or a country outside the allowed ones.
func invalid(err error) bool {
	var (
		req     *otp.ErrInvalidRequest
		phone   *otp.ErrInvalidPhone
		country *otp.ErrCountryNotAllowed
	)
	return errors.As(err, &req) || errors.As(err, &phone) || errors.As(err, &country)
}
