package http

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"otpgate/api"
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
	r.Method(http.MethodGet, "/healthz", Healthz())
	r.Method(http.MethodGet, "/readyz", Readyz(d.Logger, d.Ready))
	r.Method(http.MethodGet, "/openapi.json", Document(api.PublicJSON))
	if d.Component != nil {
		r.Method(http.MethodGet, "/otpgate-verify.js", d.Component)
	}
	if d.Tokens != nil {
		r.Method(http.MethodGet, "/.well-known/jwks.json", handleJWKS(d.Logger, d.Tokens))
	}
	r.NotFound(NotFound(d.Logger).ServeHTTP)
	r.MethodNotAllowed(MethodNotAllowed(d.Logger, r).ServeHTTP)
}

// NotFound answers unknown paths with a problem.
func NotFound(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, r, log, errRouteNotFound)
	})
}

// MethodNotAllowed answers a known path asked with the wrong method with a
// problem and the Allow header RFC 9110 requires, found by asking the router.
func MethodNotAllowed(log *slog.Logger, routes chi.Routes) http.Handler {
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, m := range methods {
			if routes.Match(chi.NewRouteContext(), m, r.URL.Path) {
				w.Header().Add("Allow", m)
			}
		}
		writeProblem(w, r, log, errMethodNotAllowed)
	})
}
