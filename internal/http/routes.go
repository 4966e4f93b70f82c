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
	r.Method(http.MethodPost, "/v1/verifications", app(handleSend(d.Logger, d.Verifier, d.Idempotency)))
	r.Method(http.MethodPost, "/v1/verifications/check", app(handleCheck(d.Logger, d.Verifier)))
	r.Method(http.MethodPost, "/v1/apps/{app}/verifications", app(handleSend(d.Logger, d.Verifier, d.Idempotency)))
	r.Method(http.MethodPost, "/v1/apps/{app}/verifications/check", app(handleCheck(d.Logger, d.Verifier)))
	r.Method(http.MethodPost, "/v1/receipts/{kind}/{instance}", handleReceipt(d.Logger, d.Receipts))
	if d.Twilio != nil {
		r.Mount("/v2", d.Twilio)
	}
	r.Method(http.MethodGet, "/healthz", handleHealthz())
	r.Method(http.MethodGet, "/readyz", handleReadyz(d.Logger, d.Ready))
	r.Method(http.MethodGet, "/openapi.json", handleDocument(api.PublicJSON))
	r.NotFound(handleNotFound(d.Logger).ServeHTTP)
	r.MethodNotAllowed(handleMethodNotAllowed(d.Logger, r).ServeHTTP)
}

// addAdminRoutes is the admin listener's table of contents. Probes and metrics answer
// without the token; everything else under /admin/ needs it.
func addAdminRoutes(r chi.Router, d AdminDeps, view *adminView) {
	log := d.Logger
	params := adminParams{region: d.DefaultRegion, v6prefix: d.IPv6Prefix, now: d.Now}

	r.Method(http.MethodGet, "/healthz", handleHealthz())
	r.Method(http.MethodGet, "/readyz", handleReadyz(log, d.Ready))
	if d.Metrics != nil {
		r.Method(http.MethodGet, "/metrics", d.Metrics)
	}
	r.Method(http.MethodGet, "/", handleRedirect("/admin/"))
	r.Method(http.MethodGet, "/admin", handleRedirect("/admin/"))
	r.Method(http.MethodGet, "/admin/static/*", handleAdminStatic(log, view))

	r.Group(func(r chi.Router) {
		r.Use(requireAdmin(log, view, d.Token, view.csrf))
		r.Method(http.MethodGet, "/admin/", handleHistoryPage(log, view, d.Admin, d.Apps, params))
		r.Method(http.MethodGet, "/admin/verifications/{id}", handleVerificationPage(log, view, d.Admin))
		r.Method(http.MethodGet, "/admin/limits", handleLimitsPage(log, view, d.Admin, params))
		r.Method(http.MethodGet, "/admin/limits/reset", handleResetConfirm(log, view, d.Admin, params))
		r.Method(http.MethodPost, "/admin/limits/reset", handleResetLimits(log, view, d.Admin, params))
		r.Method(http.MethodGet, "/admin/charts", handleChartsPage(log, view, d.Admin))
		r.Method(http.MethodGet, "/admin/delivery", handleDeliveryPage(log, view, d.Admin, d.Apps, params))

		r.Method(http.MethodGet, "/admin/api/sends", handleAdminSends(log, d.Admin, params))
		r.Method(http.MethodGet, "/admin/api/sends/{id}", handleAdminSend(log, d.Admin))
		r.Method(http.MethodGet, "/admin/api/verifications/{id}", handleAdminVerification(log, d.Admin))
		r.Method(http.MethodGet, "/admin/api/limits", handleAdminLimits(log, d.Admin, params))
		r.Method(http.MethodDelete, "/admin/api/limits", handleAdminLimits(log, d.Admin, params))
		r.Method(http.MethodGet, "/admin/api/stats", handleAdminStats(log, d.Admin, params))
		r.Method(http.MethodGet, "/admin/api/delivery", handleAdminDelivery(log, d.Admin, params))
		r.Method(http.MethodGet, "/admin/openapi.json", handleDocument(api.AdminJSON))

		r.Handle("/debug/pprof/*", handlePprof())
		if d.Apps != nil {
			addAppRoutes(r, d, view)
		}

		if f := d.Fraud; f != nil {
			r.Method(http.MethodGet, "/admin/fraud", handleFraudPage(log, view, f, params))
			r.Method(http.MethodPost, "/admin/fraud/config", handleFraudConfigForm(log, view, f, params))
			r.Method(http.MethodPost, "/admin/fraud/lists", handleFraudListForm(log, view, f, params))
			r.Method(http.MethodPost, "/admin/fraud/lists/{id}/delete", handleFraudListDeleteForm(log, view, f))
			r.Method(http.MethodPost, "/admin/fraud/blocks/{id}/lift", handleFraudLiftForm(log, view, f))

			r.Method(http.MethodGet, "/admin/api/fraud/config", handleFraudConfig(log, f))
			r.Method(http.MethodPut, "/admin/api/fraud/config", handleFraudConfig(log, f))
			r.Method(http.MethodGet, "/admin/api/fraud/lists", handleFraudLists(log, f))
			r.Method(http.MethodPost, "/admin/api/fraud/lists", handleFraudLists(log, f))
			r.Method(http.MethodDelete, "/admin/api/fraud/lists/{id}", handleFraudListEntry(log, f))
			r.Method(http.MethodGet, "/admin/api/fraud/blocks", handleFraudBlocks(log, f, params))
			r.Method(http.MethodDelete, "/admin/api/fraud/blocks/{id}", handleFraudBlock(log, f, params))
			r.Method(http.MethodGet, "/admin/api/fraud/conversion", handleFraudConversion(log, f, params))
		}
	})
	r.NotFound(handleAdminNotFound(log, view).ServeHTTP)
	r.MethodNotAllowed(handleMethodNotAllowed(log, r).ServeHTTP)
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
