// Package http serves otpgate's public REST API (routing, middleware, strict JSON
// decoding, problem+json errors, rate-limit headers, Idempotency-Key replays) and holds
// the kit the admin listener (internal/admin) shares with it, exported for that use
// only: the middleware (Common, RequestIDFrom, ClientIPFrom, IPKey), the mapping of
// errors to problem+json (ProblemFor, SendProblem, LogProblem, NotFound,
// MethodNotAllowed), strict JSON (ReadJSON, NewDecoder, CheckObject, Encode), the probes
// (Healthz, Readyz) and the OpenAPI document handler (Document).
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

	"otpgate/internal/apps"
	"otpgate/internal/httpkit"
	"otpgate/internal/idempotent"
	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// Deps is what the public server needs; zero values get the defaults documented per field.
type Deps struct {
	// Logger receives the access log and internal errors; nil discards them.
	Logger *slog.Logger
	// Verifier sends and checks codes; required.
	Verifier otp.Verifier
	// Apps finds apps and authenticates their keys; nil serves only the default app,
	// without keys.
	Apps apps.Directory
	// TOTP, when set, serves the native TOTP API under /v1/apps/{app}/totp.
	TOTP TOTP
	// Twilio, when set, serves the Twilio Verify compatible API under /v2/.
	Twilio http.Handler
	// Receipts takes providers' delivery callbacks; nil answers them 404.
	Receipts receipt.Receiver
	// Tokens, when set, signs the token of every approved check, serves the JWKS and
	// redeems tokens (with Apps) at /v1/apps/{app}/tokens/redeem.
	Tokens Tokens
	// Idempotency stores Idempotency-Key records; nil validates the header but replays nothing.
	Idempotency idempotent.Store
	// TrustedProxies are the peers whose X-Forwarded-For is believed (OTP_TRUSTED_PROXIES).
	TrustedProxies []netip.Prefix
	// IPv6Prefix is the prefix length IPv6 clients are limited by; 0 means 64.
	IPv6Prefix int
	// Ready reports whether Redis and Postgres answer, for /readyz; nil is always ready.
	Ready func(ctx context.Context) error
	// Observe, when set, is called once per request, for metrics.
	Observe func(route string, status int, d time.Duration)
	// Component, when set, serves the <otpgate-verify> web component's script at
	// /otpgate-verify.js.
	Component http.Handler
	// Demo, when set (dev mode), serves the component's demo page at /demo.
	Demo http.Handler
}

// Body and timing limits of the public API.
const (
	maxBodyBytes = 4 << 10
)

// NewServer returns the handler of the public listener.
func NewServer(d Deps) http.Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	r := chi.NewRouter()
	r.Use(httpkit.Common(d.Logger, d.Observe, d.TrustedProxies, d.IPv6Prefix, maxBodyBytes)...)
	r.Use(withCORS(d.Apps))
	addRoutes(r, d)
	return r
}
