package httpkit

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
)

// NotFound answers unknown paths with a problem.
func NotFound(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteProblem(w, r, log, ErrRouteNotFound)
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
		WriteProblem(w, r, log, ErrMethodNotAllowed)
	})
}
