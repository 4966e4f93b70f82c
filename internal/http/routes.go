package http

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
)

// addRoutes is the public API's table of contents.
func addRoutes(r chi.Router, d Deps) {
	r.Method(http.MethodPost, "/v1/verifications", handleSend(d.Logger, d.Verifier, d.Idempotency))
	r.Method(http.MethodPost, "/v1/verifications/check", handleCheck(d.Logger, d.Verifier, d.CodeLength))
	r.Method(http.MethodGet, "/healthz", handleHealthz())
	r.Method(http.MethodGet, "/readyz", handleReadyz(d.Logger, d.Ready))
	r.NotFound(handleNotFound(d.Logger).ServeHTTP)
	r.MethodNotAllowed(handleMethodNotAllowed(d.Logger, r).ServeHTTP)
}

// handleNotFound answers unknown paths with a problem.
func handleNotFound(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, r, log, errRouteNotFound)
	})
}

// handleMethodNotAllowed answers a known path asked with the wrong method with a
// problem and the Allow header RFC 9110 requires, found by asking the router.
func handleMethodNotAllowed(log *slog.Logger, routes chi.Routes) http.Handler {
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
