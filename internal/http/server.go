// Package http serves otpgate over HTTP: the public REST API (routing, middleware,
// strict JSON decoding, problem+json errors, rate-limit headers, Idempotency-Key
// replays) and the admin console with its JSON API on the admin listener.
// It is named after the dependency it wraps; callers that also use net/http import
// it as otphttp.
package http

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/idempotency"
	"otpgate/internal/otp"
)

// Verifier is the part of the otp service the public API calls.
type Verifier interface {
	// Send sends or resends a code. The result's Decision is set whenever the limiter was
	// asked, also with an error; with *otp.ErrRateLimited it is the refusal's own.
	// Errors: *otp.ErrInvalidRequest, *otp.ErrInvalidPhone,
	// *otp.ErrCountryNotAllowed, otp.ErrDuplicateSubmit, *otp.ErrRateLimited,
	// *otp.ErrProvider, and errors wrapping otp.ErrUnavailable.
	Send(ctx context.Context, in otp.SendInput) (otp.SendResult, error)
	// Check proves a code. The result's Decision is set whenever the limiter was asked,
	// as with Send. Errors: *otp.ErrInvalidRequest, *otp.ErrInvalidCode,
	// otp.ErrTooManyAttempts, otp.ErrNotFound, otp.ErrExpired, *otp.ErrRateLimited, and
	// errors wrapping otp.ErrUnavailable.
	Check(ctx context.Context, in otp.CheckInput) (otp.CheckResult, error)
	// SendLimitState reports the client IP's send limit without recording anything, for
	// rate-limit headers on responses that never reached the limiter.
	SendLimitState(ctx context.Context, clientIP string) (otp.Decision, error)
}

// Idempotency keeps Idempotency-Key records; internal/idempotency implements it over Redis.
type Idempotency interface {
	// Begin claims the key or returns the first response stored for it. Errors:
	// idempotency.ErrInFlight, idempotency.ErrKeyReused, errors wrapping otp.ErrUnavailable.
	Begin(ctx context.Context, endpoint, key string, bodyHash [32]byte) (idempotency.Claim, error)
	// Complete stores the response of the request that holds the lock.
	Complete(ctx context.Context, l idempotency.Lock, r idempotency.Response) error
	// Release gives the key up so that a retry is evaluated afresh.
	Release(ctx context.Context, l idempotency.Lock) error
}

// Deps is what the public server needs; zero values get the defaults documented per field.
type Deps struct {
	// Logger receives the access log and internal errors; nil discards them.
	Logger *slog.Logger
	// Verifier sends and checks codes; required.
	Verifier Verifier
	// Idempotency stores Idempotency-Key records; nil validates the header but replays nothing.
	Idempotency Idempotency
	// TrustedProxies are the peers whose X-Forwarded-For is believed (OTP_TRUSTED_PROXIES).
	TrustedProxies []netip.Prefix
	// IPv6Prefix is the prefix length IPv6 clients are limited by; 0 means 64.
	IPv6Prefix int
	// Ready reports whether Redis and Postgres answer, for /readyz; nil is always ready.
	Ready func(ctx context.Context) error
	// Observe, when set, is called once per request, for metrics.
	Observe func(route string, status int, d time.Duration)
}

// Body and timing limits of the public API.
const (
	maxBodyBytes = 4 << 10
	readyTimeout = 2 * time.Second
)

// NewServer returns the handler of the public listener.
func NewServer(d Deps) http.Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	r := chi.NewRouter()
	// Outermost first: the id and client IP exist before anything logs; the access log
	// sees the 500 that recovery writes; the body limit covers every handler.
	r.Use(
		requestID,
		clientIP(d.TrustedProxies, d.IPv6Prefix),
		accessLog(d.Logger, d.Observe),
		recoverPanics(d.Logger),
		limitBody(maxBodyBytes),
	)
	addRoutes(r, d)
	return r
}
