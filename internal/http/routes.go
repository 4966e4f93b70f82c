package http

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"otpgate/api"
	"otpgate/internal/httpkit"
)

// addRoutes is the public API's table of contents.
func addRoutes(r chi.Router, d Deps) {
	app := func(h http.Handler) http.Handler { return withApp(d.Logger, d.Apps, d.IPv6Prefix, h) }
	// Every route that reads the request refuses a NUL or invalid UTF-8 in its path
	// parameters and query (JSON bodies are checked as they are decoded); the Twilio API
	// checks its own, in its own error shape.
	native := r.With(requireText(d.Logger))
	native.Method(http.MethodPost, "/v1/verifications", app(handleSend(d.Logger, d.Verifier, d.Idempotency)))
	native.Method(http.MethodPost, "/v1/verifications/check", app(handleCheck(d.Logger, d.Verifier, d.Tokens)))
	native.Method(http.MethodPost, "/v1/apps/{app}/verifications", app(handleSend(d.Logger, d.Verifier, d.Idempotency)))
	native.Method(http.MethodPost, "/v1/apps/{app}/verifications/check", app(handleCheck(d.Logger, d.Verifier, d.Tokens)))
	totpRoutes(native, d, app)
	if d.Tokens != nil && d.Apps != nil {
		native.Method(http.MethodPost, "/v1/apps/{app}/tokens/redeem", app(handleRedeem(d.Logger, d.Tokens)))
	}
	native.Method(http.MethodPost, "/v1/receipts/{kind}/{instance}", handleReceipt(d.Logger, d.Receipts))
	if d.Demo != nil {
		native.Method(http.MethodGet, "/demo", d.Demo)
	}
	if d.Twilio != nil {
		r.Mount("/v2", d.Twilio)
	}
	// The probes, the document and the component's script read nothing of the request.
	r.Method(http.MethodGet, "/healthz", httpkit.Healthz())
	r.Method(http.MethodGet, "/readyz", httpkit.Readyz(d.Logger, d.Ready))
	r.Method(http.MethodGet, "/openapi.json", httpkit.Document(api.PublicJSON))
	if d.Component != nil {
		r.Method(http.MethodGet, "/otpgate-verify.js", d.Component)
	}
	if d.Tokens != nil {
		r.Method(http.MethodGet, "/.well-known/jwks.json", handleJWKS(d.Logger, d.Tokens))
	}
	r.NotFound(httpkit.NotFound(d.Logger).ServeHTTP)
	r.MethodNotAllowed(httpkit.MethodNotAllowed(d.Logger, r).ServeHTTP)
}

// requireText is the public API's check of CheckRequestText, run on a route once chi has
// matched it (chi's With), so that path parameters have their names.
func requireText(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := httpkit.CheckRequestText(r); err != nil {
				httpkit.WriteProblem(w, r, log, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
