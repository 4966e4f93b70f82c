package otp

import (
	"context"
	"time"
)

// Verifier is the send-and-check service the public API calls; *Service implements it,
// and metrics decorate it.
type Verifier interface {
	// Send sends or resends a code. The result's Decision is set whenever the limiter was
	// asked, also with an error; with *ErrRateLimited it is the refusal's own.
	// Errors: *ErrInvalidRequest, *ErrInvalidPhone, *ErrCountryNotAllowed,
	// ErrDuplicateSubmit, *ErrRateLimited, *ErrFraudBlocked, *ErrBlocked, *ErrProvider, and
	// errors wrapping ErrUnavailable.
	Send(ctx context.Context, in SendInput) (SendResult, error)
	// Check proves a code. The result's Decision is set whenever the limiter was asked,
	// as with Send. Errors: *ErrInvalidRequest, *ErrInvalidCode, ErrTooManyAttempts,
	// ErrNotFound, ErrExpired, *ErrRateLimited, and errors wrapping ErrUnavailable.
	Check(ctx context.Context, in CheckInput) (CheckResult, error)
	// SendLimitState reports the client IP's send limit without recording anything, for
	// rate-limit headers on responses that never reached the limiter. Errors wrap ErrUnavailable.
	SendLimitState(ctx context.Context, clientIP string) (Decision, error)
}

// AdminService is what the admin console and its JSON API call; *Admin implements it.
type AdminService interface {
	// ListSends returns one page of history; see HistoryStore.ListSends.
	ListSends(ctx context.Context, f SendFilter) (rows []SendRow, next *SendCursor, err error)
	// Send returns one send by id. Errors: ErrNotFound.
	Send(ctx context.Context, id string) (SendRow, error)
	// VerificationDetail returns a verification with its sends and attempts. Errors: ErrNotFound.
	VerificationDetail(ctx context.Context, id string) (VerificationDetail, error)
	// Stats counts history per bucket, of one app or (appID "") all; see HistoryStore.Stats.
	Stats(ctx context.Context, since time.Time, bucket time.Duration, appID string) ([]StatBucket, error)
	// DeliveryRates counts sends and receipts per channel, country and provider; see DeliveryRater.
	DeliveryRates(ctx context.Context, since time.Time, appID string) ([]DeliveryRate, error)
	// Charts returns the last 24 hours per hour and the last 7 days per day, up to now.
	Charts(ctx context.Context) (hours, days []StatBucket, err error)
	// Limits reports every configured rule of the target's scopes without recording anything.
	// Errors wrap ErrUnavailable.
	Limits(ctx context.Context, t LimitTarget) ([]RuleState, error)
	// ResetLimits forgets what the limiter recorded for the target and audits it.
	// Errors wrap ErrUnavailable; nothing is reset when the audit entry cannot be written.
	ResetLimits(ctx context.Context, t LimitTarget, actor string) error
	// AdminActions returns the newest audit entries first, at most AdminActionLimit(limit).
	AdminActions(ctx context.Context, limit int) ([]AdminAction, error)
}

var (
	_ Verifier     = (*Service)(nil)
	_ AdminService = (*Admin)(nil)
)
