package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// Outcomes of sends and checks, the values of their outcome labels.
var (
	sendOutcomes = []string{
		"created", "resent", "rate_limited", "duplicate", "invalid", "provider_error", "unavailable", "error",
		"fraud_blocked", "blocked", "budget_exceeded",
	}
	checkOutcomes = []string{
		"approved", "invalid_code", "too_many_attempts", "expired", "not_found", "rate_limited", "invalid", "unavailable", "error",
	}
)

// Verifier wraps next so that every send and check is counted by its outcome.
func (m *Metrics) Verifier(next otp.Verifier) otp.Verifier {
	return &verifier{next: next, m: m}
}

type verifier struct {
	next otp.Verifier
	m    *Metrics
}

func (v *verifier) Send(ctx context.Context, in otp.SendInput) (otp.SendResult, error) {
	res, err := v.next.Send(ctx, in)
	v.m.outcome(v.m.sends, "send", sendOutcome(res, err)).Inc()
	if err == nil {
		v.m.conversion.sent.WithLabelValues(res.Country).Inc()
	}
	if err == nil && res.Cost > 0 {
		v.m.spend.total.WithLabelValues(otp.StoredAppID(res.Verification.AppID), res.Country, res.Channel).Add(float64(res.Cost) / 1e6)
	}
	return res, err
}

func (v *verifier) Check(ctx context.Context, in otp.CheckInput) (otp.CheckResult, error) {
	res, err := v.next.Check(ctx, in)
	v.m.outcome(v.m.checks, "check", checkOutcome(err)).Inc()
	if err == nil {
		v.m.conversion.approved.WithLabelValues(addressCountry(res.Verification.Address)).Inc()
	}
	return res, err
}

// SendLimitState only reads limits, so it is passed through uncounted.
func (v *verifier) SendLimitState(ctx context.Context, clientIP string) (rate.Decision, error) {
	return v.next.SendLimitState(ctx, clientIP)
}

// sendOutcome names how a send ended, from the error's otp code.
func sendOutcome(res otp.SendResult, err error) string {
	switch {
	case err == nil && res.Created:
		return "created"
	case err == nil:
		return "resent"
	}
	return outcome(otp.ErrorCode(err))
}

// checkOutcome names how a check ended, from the error's otp code.
func checkOutcome(err error) string {
	if err == nil {
		return "approved"
	}
	return outcome(otp.ErrorCode(err))
}

// outcome is the label of a failed send or check: the code itself, but for the
// request's own mistakes, which share "invalid", a duplicate, and a fault, "error".
// Every code a send or check can end with has a label in sendOutcomes or checkOutcomes.
func outcome(c otp.Code) string {
	switch c {
	case otp.CodeInvalidRequest, otp.CodeInvalidPhone, otp.CodeInvalidEmail, otp.CodeCountryNotAllowed:
		return "invalid"
	case otp.CodeDuplicateSubmit:
		return "duplicate"
	case otp.CodeRateLimited, otp.CodeInvalidCode, otp.CodeTooManyAttempts, otp.CodeExpired,
		otp.CodeNotFound, otp.CodeProviderError, otp.CodeUnavailable, otp.CodeFraudBlocked, otp.CodeBlocked,
		otp.CodeBudgetExceeded:
		return string(c)
	}
	return "error"
}

// outcome returns vec's counter of one outcome label, kept in m.outcomes under kind.
func (m *Metrics) outcome(vec *prometheus.CounterVec, kind, label string) prometheus.Counter {
	k := [2]string{kind, label}
	if c, ok := m.outcomes.Load(k); ok {
		return c.(prometheus.Counter)
	}
	c := vec.WithLabelValues(label)
	m.outcomes.Store(k, c)
	return c
}
