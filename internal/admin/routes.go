package admin

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"otpgate/api"
	otphttp "otpgate/internal/http"
)

// addRoutes is the admin listener's table of contents. Probes, metrics and the
// stylesheet answer without the token; everything else needs it. Each resource's pages
// and API sit together.
func addRoutes(r chi.Router, d Deps, view *adminView) {
	log := d.Logger
	params := adminParams{region: d.DefaultRegion, v6prefix: d.IPv6Prefix, now: d.Now}

	r.Method(http.MethodGet, "/healthz", otphttp.Healthz())
	r.Method(http.MethodGet, "/readyz", otphttp.Readyz(log, d.Ready))
	if d.Metrics != nil {
		r.Method(http.MethodGet, "/metrics", d.Metrics)
	}
	r.Method(http.MethodGet, "/", handleRedirect("/admin/"))
	r.Method(http.MethodGet, "/admin", handleRedirect("/admin/"))
	r.Method(http.MethodGet, "/admin/static/*", handleAdminStatic(log, view))

	r.Group(func(r chi.Router) {
		r.Use(requireAdmin(log, view, d.Token, view.csrf), requireText(log, view))

		// Sends and verifications.
		r.Method(http.MethodGet, "/admin/", handleHistoryPage(log, view, d.Admin, d.Apps, params))
		r.Method(http.MethodGet, "/admin/api/sends", handleAdminSends(log, d.Admin, params))
		r.Method(http.MethodGet, "/admin/api/sends/{id}", handleAdminSend(log, d.Admin))
		r.Method(http.MethodGet, "/admin/verifications/{id}", handleVerificationPage(log, view, d.Admin))
		r.Method(http.MethodGet, "/admin/api/verifications/{id}", handleAdminVerification(log, d.Admin))

		// Limits.
		r.Method(http.MethodGet, "/admin/limits", handleLimitsPage(log, view, d.Admin, params))
		r.Method(http.MethodGet, "/admin/limits/reset", handleResetConfirm(log, view, d.Admin, params))
		r.Method(http.MethodPost, "/admin/limits/reset", handleResetLimits(log, view, d.Admin, params))
		r.Method(http.MethodGet, "/admin/api/limits", handleAdminLimits(log, d.Admin, params))
		r.Method(http.MethodDelete, "/admin/api/limits", handleAdminLimits(log, d.Admin, params))

		// Stats and delivery.
		r.Method(http.MethodGet, "/admin/charts", handleChartsPage(log, view, d.Admin))
		r.Method(http.MethodGet, "/admin/api/stats", handleAdminStats(log, d.Admin, params))
		r.Method(http.MethodGet, "/admin/delivery", handleDeliveryPage(log, view, d.Admin, d.Apps, params))
		r.Method(http.MethodGet, "/admin/api/delivery", handleAdminDelivery(log, d.Admin, params))

		// The API's own document and the runtime profiles.
		r.Method(http.MethodGet, "/admin/openapi.json", otphttp.Document(api.AdminJSON))
		r.Handle("/debug/pprof/*", handlePprof())

		if a := d.Apps; a != nil {
			// Apps and their keys.
			r.Method(http.MethodGet, "/admin/apps", handleAppsPage(log, view, a))
			r.Method(http.MethodPost, "/admin/apps", handleAppsPage(log, view, a))
			r.Method(http.MethodGet, "/admin/apps/{id}", handleAppPage(log, view, a, d.Webhooks))
			r.Method(http.MethodPost, "/admin/apps/{id}", handleAppPage(log, view, a, d.Webhooks))
			r.Method(http.MethodPost, "/admin/apps/{id}/delete", handleAppDelete(log, view, a))
			r.Method(http.MethodGet, "/admin/api/apps", handleAdminApps(log, a))
			r.Method(http.MethodPost, "/admin/api/apps", handleAdminApps(log, a))
			r.Method(http.MethodGet, "/admin/api/apps/{id}", handleAdminApp(log, a))
			r.Method(http.MethodPatch, "/admin/api/apps/{id}", handleAdminApp(log, a))
			r.Method(http.MethodDelete, "/admin/api/apps/{id}", handleAdminApp(log, a))
			r.Method(http.MethodPost, "/admin/apps/{id}/keys", handleAppKeyPage(log, view, a, d.Webhooks))
			r.Method(http.MethodPost, "/admin/apps/{id}/keys/{key_id}/revoke", handleAppKeyRevoke(log, view, a))
			r.Method(http.MethodPost, "/admin/api/apps/{id}/keys", handleAdminKeys(log, a))
			r.Method(http.MethodDelete, "/admin/api/apps/{id}/keys/{key_id}", handleAdminKey(log, a))
			r.Method(http.MethodPost, "/admin/apps/{id}/test-numbers", handleTestNumberAddPage(log, view, a, d.Webhooks))
			r.Method(http.MethodPost, "/admin/apps/{id}/test-numbers/{tid}/remove", handleTestNumberRemovePage(log, view, a))
			r.Method(http.MethodGet, "/admin/api/apps/{id}/test-numbers", handleAdminTestNumbers(log, a, params))
			r.Method(http.MethodPost, "/admin/api/apps/{id}/test-numbers", handleAdminTestNumbers(log, a, params))
			r.Method(http.MethodDelete, "/admin/api/apps/{id}/test-numbers/{tid}", handleAdminTestNumber(log, a, params))

			if w := d.Webhooks; w != nil {
				// The apps' webhook endpoints and their deliveries.
				r.Method(http.MethodPost, "/admin/apps/{id}/webhooks", handleWebhookAddPage(log, view, a, w))
				r.Method(http.MethodPost, "/admin/apps/{id}/webhooks/{wid}/test", handleWebhookTestPage(log, view, a, w))
				r.Method(http.MethodPost, "/admin/apps/{id}/webhooks/{wid}/delete", handleWebhookDeletePage(log, view, w))
				r.Method(http.MethodGet, "/admin/api/apps/{id}/webhooks", handleAdminWebhooks(log, w))
				r.Method(http.MethodPost, "/admin/api/apps/{id}/webhooks", handleAdminWebhooks(log, w))
				r.Method(http.MethodDelete, "/admin/api/apps/{id}/webhooks/{wid}", handleAdminWebhook(log, w))
				r.Method(http.MethodPost, "/admin/api/apps/{id}/webhooks/{wid}/test", handleAdminWebhookTest(log, w))
				r.Method(http.MethodGet, "/admin/apps/{id}/webhooks/{wid}", handleDeliveriesPage(log, view, a, w))
				r.Method(http.MethodPost, "/admin/apps/{id}/webhooks/{wid}/deliveries/{eid}/redeliver", handleRedeliverPage(log, view, w))
				r.Method(http.MethodGet, "/admin/api/apps/{id}/webhooks/{wid}/deliveries", handleAdminDeliveries(log, w))
				r.Method(http.MethodPost, "/admin/api/apps/{id}/webhooks/{wid}/deliveries/{eid}/redeliver", handleAdminRedeliver(log, w))
			}
		}

		if s := d.Spend; s != nil {
			// Spend: the price table and the budgets.
			r.Method(http.MethodGet, "/admin/spend", handleSpendPage(log, view, s, params))
			r.Method(http.MethodGet, "/admin/api/spend/config", handleSpendConfig(log, s))
			r.Method(http.MethodPut, "/admin/api/spend/config", handleSpendConfig(log, s))
		}

		if f := d.Fraud; f != nil {
			// The fraud guard: its page, settings, lists, blocks and conversion.
			r.Method(http.MethodGet, "/admin/fraud", handleFraudPage(log, view, f, params))
			r.Method(http.MethodPost, "/admin/fraud/config", handleFraudConfigForm(log, view, f, params))
			r.Method(http.MethodGet, "/admin/api/fraud/config", handleFraudConfig(log, f))
			r.Method(http.MethodPut, "/admin/api/fraud/config", handleFraudConfig(log, f))
			r.Method(http.MethodPost, "/admin/fraud/lists", handleFraudListForm(log, view, f, params))
			r.Method(http.MethodPost, "/admin/fraud/lists/{id}/delete", handleFraudListDeleteForm(log, view, f))
			r.Method(http.MethodGet, "/admin/api/fraud/lists", handleFraudLists(log, f))
			r.Method(http.MethodPost, "/admin/api/fraud/lists", handleFraudLists(log, f))
			r.Method(http.MethodDelete, "/admin/api/fraud/lists/{id}", handleFraudListEntry(log, f))
			r.Method(http.MethodPost, "/admin/fraud/blocks/{id}/lift", handleFraudLiftForm(log, view, f))
			r.Method(http.MethodGet, "/admin/api/fraud/blocks", handleFraudBlocks(log, f, params))
			r.Method(http.MethodDelete, "/admin/api/fraud/blocks/{id}", handleFraudBlock(log, f, params))
			r.Method(http.MethodGet, "/admin/api/fraud/conversion", handleFraudConversion(log, f, params))
		}
	})
	r.NotFound(handleAdminNotFound(log, view).ServeHTTP)
	r.MethodNotAllowed(otphttp.MethodNotAllowed(log, r).ServeHTTP)
}
