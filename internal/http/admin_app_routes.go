package http

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// addAppRoutes adds the apps pages and API to the admin routes (inside requireAdmin).
func addAppRoutes(r chi.Router, d AdminDeps, view *adminView) {
	log := d.Logger
	r.Method(http.MethodGet, "/admin/api/apps", handleAdminApps(log, d.Apps))
	r.Method(http.MethodPost, "/admin/api/apps", handleAdminApps(log, d.Apps))
	r.Method(http.MethodGet, "/admin/api/apps/{id}", handleAdminApp(log, d.Apps))
	r.Method(http.MethodPatch, "/admin/api/apps/{id}", handleAdminApp(log, d.Apps))
	r.Method(http.MethodDelete, "/admin/api/apps/{id}", handleAdminApp(log, d.Apps))
	r.Method(http.MethodPost, "/admin/api/apps/{id}/keys", handleAdminKeys(log, d.Apps))
	r.Method(http.MethodDelete, "/admin/api/apps/{id}/keys/{key_id}", handleAdminKey(log, d.Apps))
	if w := d.Webhooks; w != nil {
		r.Method(http.MethodGet, "/admin/api/apps/{id}/webhooks", handleAdminWebhooks(log, w))
		r.Method(http.MethodPost, "/admin/api/apps/{id}/webhooks", handleAdminWebhooks(log, w))
		r.Method(http.MethodDelete, "/admin/api/apps/{id}/webhooks/{wid}", handleAdminWebhook(log, w))
		r.Method(http.MethodPost, "/admin/api/apps/{id}/webhooks/{wid}/test", handleAdminWebhookTest(log, w))
		r.Method(http.MethodGet, "/admin/api/apps/{id}/webhooks/{wid}/deliveries", handleAdminDeliveries(log, w))
		r.Method(http.MethodPost, "/admin/api/apps/{id}/webhooks/{wid}/deliveries/{eid}/redeliver", handleAdminRedeliver(log, w))

		r.Method(http.MethodPost, "/admin/apps/{id}/webhooks", handleWebhookAddPage(log, view, d.Apps, w))
		r.Method(http.MethodPost, "/admin/apps/{id}/webhooks/{wid}/test", handleWebhookTestPage(log, view, d.Apps, w))
		r.Method(http.MethodPost, "/admin/apps/{id}/webhooks/{wid}/delete", handleWebhookDeletePage(log, view, w))
		r.Method(http.MethodGet, "/admin/apps/{id}/webhooks/{wid}", handleDeliveriesPage(log, view, d.Apps, w))
		r.Method(http.MethodPost, "/admin/apps/{id}/webhooks/{wid}/deliveries/{eid}/redeliver", handleRedeliverPage(log, view, w))
	}

	r.Method(http.MethodGet, "/admin/apps", handleAppsPage(log, view, d.Apps))
	r.Method(http.MethodPost, "/admin/apps", handleAppsPage(log, view, d.Apps))
	r.Method(http.MethodGet, "/admin/apps/{id}", handleAppPage(log, view, d.Apps, d.Webhooks))
	r.Method(http.MethodPost, "/admin/apps/{id}", handleAppPage(log, view, d.Apps, d.Webhooks))
	r.Method(http.MethodPost, "/admin/apps/{id}/keys", handleAppKeyPage(log, view, d.Apps, d.Webhooks))
	r.Method(http.MethodPost, "/admin/apps/{id}/keys/{key_id}/revoke", handleAppKeyRevoke(log, view, d.Apps))
	r.Method(http.MethodPost, "/admin/apps/{id}/delete", handleAppDelete(log, view, d.Apps))
}
