package admin

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"otpgate/api"
	"otpgate/internal/httpkit"
	"otpgate/internal/operators"
)

// addRoutes is the admin listener's table of contents. Probes, metrics and the
// stylesheet answer without a credential; everything else needs one, and each route
// names the least role that may call it: viewers read, operators also lift blocks,
// reset limits and redeliver events, admins change everything else. Runtime profiles
// are admins' too: a heap profile holds whatever was in memory. Each resource's pages
// and API sit together.
func addRoutes(r chi.Router, d Deps, view *adminView) {
	log := d.Logger
	d.Admin = maskingAdmin{d.Admin}
	params := adminParams{region: d.DefaultRegion, v6prefix: d.IPv6Prefix, now: d.Now}

	r.Method(http.MethodGet, "/healthz", httpkit.Healthz())
	r.Method(http.MethodGet, "/readyz", httpkit.Readyz(log, d.Ready))
	if d.Metrics != nil {
		r.Method(http.MethodGet, "/metrics", d.Metrics)
	}
	r.Method(http.MethodGet, "/", handleRedirect("/admin/"))
	r.Method(http.MethodGet, "/admin", handleRedirect("/admin/"))
	r.Method(http.MethodGet, "/admin/static/*", handleAdminStatic(log, view))

	var sso *signIn
	if d.SignOn != nil && d.Operators != nil {
		// Single sign-on: the routes that start and finish it need no credential.
		ttl := d.SessionTTL
		if ttl == 0 {
			ttl = DefaultSessionTTL
		}
		sso = &signIn{provider: d.SignOn, ops: d.Operators, roles: d.Roles, seal: newSealer(d.SessionSecret), ttl: ttl, secure: !d.InsecureCookies, now: d.Now}
		r.Method(http.MethodGet, "/admin/login", handleLogin(log, view, sso))
		r.Method(http.MethodGet, "/admin/oidc/callback", handleCallback(log, view, sso))
	}

	r.Group(func(r chi.Router) {
		r.Use(requireAdmin(log, view, authenticator{token: d.Token, operators: d.Operators, sessions: sso}, view.csrf), requireText(log, view))
		// The admin document, converted from YAML once: served, and read for each
		// operation's query parameters.
		doc, query := mustAdminDocument()
		t := table{r: r, log: log, view: view, query: query}

		// Sends and verifications.
		t.add(asViewer, http.MethodGet, "/admin/", handleHistoryPage(log, view, d.Admin, d.Apps, params))
		t.add(asViewer, http.MethodGet, "/admin/api/sends", handleAdminSends(log, d.Admin, params))
		t.add(asViewer, http.MethodGet, "/admin/api/sends/{id}", handleAdminSend(log, d.Admin))
		t.add(asViewer, http.MethodGet, "/admin/verifications/{id}", handleVerificationPage(log, view, d.Admin))
		t.add(asViewer, http.MethodGet, "/admin/api/verifications/{id}", handleAdminVerification(log, d.Admin))

		// Limits.
		t.add(asViewer, http.MethodGet, "/admin/limits", handleLimitsPage(log, view, d.Admin, params))
		t.add(asViewer, http.MethodGet, "/admin/limits/reset", handleResetConfirm(log, view, d.Admin, params))
		t.add(asOperator, http.MethodPost, "/admin/limits/reset", handleResetLimits(log, view, d.Admin, params))
		t.add(asViewer, http.MethodGet, "/admin/api/limits", handleAdminLimits(log, d.Admin, params))
		t.add(asOperator, http.MethodDelete, "/admin/api/limits", handleAdminLimits(log, d.Admin, params))

		// Stats and delivery.
		t.add(asViewer, http.MethodGet, "/admin/charts", handleChartsPage(log, view, d.Admin))
		t.add(asViewer, http.MethodGet, "/admin/api/stats", handleAdminStats(log, d.Admin, params))
		t.add(asViewer, http.MethodGet, "/admin/delivery", handleDeliveryPage(log, view, d.Admin, d.Apps, params))
		t.add(asViewer, http.MethodGet, "/admin/api/delivery", handleAdminDelivery(log, d.Admin, params))

		// The API's own document and the runtime profiles.
		t.add(asViewer, http.MethodGet, "/admin/openapi.json", httpkit.Document(func() ([]byte, error) { return doc, nil }))
		t.any(asAdmin, "/debug/pprof/*", handlePprof())

		if a := d.Apps; a != nil {
			// Apps and their keys.
			t.add(asViewer, http.MethodGet, "/admin/apps", handleAppsPage(log, view, a))
			t.add(asAdmin, http.MethodPost, "/admin/apps", handleAppsPage(log, view, a))
			t.add(asViewer, http.MethodGet, "/admin/apps/{id}", handleAppPage(log, view, a, d.Webhooks))
			t.add(asAdmin, http.MethodPost, "/admin/apps/{id}", handleAppPage(log, view, a, d.Webhooks))
			t.add(asAdmin, http.MethodPost, "/admin/apps/{id}/delete", handleAppDelete(log, view, a))
			t.add(asViewer, http.MethodGet, "/admin/api/apps", handleAdminApps(log, a))
			t.add(asAdmin, http.MethodPost, "/admin/api/apps", handleAdminApps(log, a))
			t.add(asViewer, http.MethodGet, "/admin/api/apps/{id}", handleAdminApp(log, a))
			t.add(asAdmin, http.MethodPatch, "/admin/api/apps/{id}", handleAdminApp(log, a))
			t.add(asAdmin, http.MethodDelete, "/admin/api/apps/{id}", handleAdminApp(log, a))
			t.add(asAdmin, http.MethodPost, "/admin/apps/{id}/keys", handleAppKeyPage(log, view, a, d.Webhooks))
			t.add(asAdmin, http.MethodPost, "/admin/apps/{id}/keys/{key_id}/revoke", handleAppKeyRevoke(log, view, a))
			t.add(asAdmin, http.MethodPost, "/admin/api/apps/{id}/keys", handleAdminKeys(log, a))
			t.add(asAdmin, http.MethodDelete, "/admin/api/apps/{id}/keys/{key_id}", handleAdminKey(log, a))
			t.add(asAdmin, http.MethodPost, "/admin/apps/{id}/test-numbers", handleTestNumberAddPage(log, view, a, d.Webhooks))
			t.add(asAdmin, http.MethodPost, "/admin/apps/{id}/test-numbers/{tid}/remove", handleTestNumberRemovePage(log, view, a))
			t.add(asViewer, http.MethodGet, "/admin/api/apps/{id}/test-numbers", handleAdminTestNumbers(log, a, params))
			t.add(asAdmin, http.MethodPost, "/admin/api/apps/{id}/test-numbers", handleAdminTestNumbers(log, a, params))
			t.add(asAdmin, http.MethodDelete, "/admin/api/apps/{id}/test-numbers/{tid}", handleAdminTestNumber(log, a, params))

			if tp := d.TOTP; tp != nil {
				// The apps' TOTP entities and factors: enrolment with its QR code, and its first code.
				t.add(asViewer, http.MethodGet, "/admin/apps/{id}/totp", handleTOTPPage(log, view, a, tp, d.Admin))
				t.add(asAdmin, http.MethodPost, "/admin/apps/{id}/totp", handleTOTPPage(log, view, a, tp, d.Admin))
				t.add(asAdmin, http.MethodPost, "/admin/apps/{id}/totp/verify", handleTOTPVerifyPage(log, view, a, tp, d.Admin))
			}

			if d.Webhooks != nil {
				// The apps' webhook endpoints and their deliveries.
				w := maskingEvents{d.Webhooks}
				t.add(asAdmin, http.MethodPost, "/admin/apps/{id}/webhooks", handleWebhookAddPage(log, view, a, w))
				t.add(asAdmin, http.MethodPost, "/admin/apps/{id}/webhooks/{wid}/test", handleWebhookTestPage(log, view, a, w))
				t.add(asAdmin, http.MethodPost, "/admin/apps/{id}/webhooks/{wid}/delete", handleWebhookDeletePage(log, view, w))
				t.add(asViewer, http.MethodGet, "/admin/api/apps/{id}/webhooks", handleAdminWebhooks(log, w))
				t.add(asAdmin, http.MethodPost, "/admin/api/apps/{id}/webhooks", handleAdminWebhooks(log, w))
				t.add(asAdmin, http.MethodDelete, "/admin/api/apps/{id}/webhooks/{wid}", handleAdminWebhook(log, w))
				t.add(asAdmin, http.MethodPost, "/admin/api/apps/{id}/webhooks/{wid}/test", handleAdminWebhookTest(log, w))
				t.add(asViewer, http.MethodGet, "/admin/apps/{id}/webhooks/{wid}", handleDeliveriesPage(log, view, a, w))
				t.add(asOperator, http.MethodPost, "/admin/apps/{id}/webhooks/{wid}/deliveries/{eid}/redeliver", handleRedeliverPage(log, view, w))
				t.add(asViewer, http.MethodGet, "/admin/api/apps/{id}/webhooks/{wid}/deliveries", handleAdminDeliveries(log, w))
				t.add(asOperator, http.MethodPost, "/admin/api/apps/{id}/webhooks/{wid}/deliveries/{eid}/redeliver", handleAdminRedeliver(log, w))
			}
		}

		// Erasure of one person's data.
		if d.Erasure != nil {
			t.add(asAdmin, http.MethodDelete, "/admin/api/subjects/{subject}", handleAdminEraseSubject(log, d.Erasure))
		}

		// The audit log.
		t.add(asViewer, http.MethodGet, "/admin/audit", handleAuditPage(log, view, d.Admin))
		t.add(asViewer, http.MethodGet, "/admin/api/audit", handleAdminAudit(log, d.Admin))

		// Who the caller is, and the end of a console session.
		t.add(asViewer, http.MethodGet, "/admin/api/me", handleAdminMe())
		t.add(asViewer, http.MethodPost, "/admin/logout", handleLogout(log, view, sso))

		if o := d.Operators; o != nil {
			// Operator accounts and their personal tokens.
			t.add(asAdmin, http.MethodGet, "/admin/operators", handleOperatorsPage(log, view, o))
			t.add(asAdmin, http.MethodPost, "/admin/operators", handleOperatorsPage(log, view, o))
			t.add(asAdmin, http.MethodGet, "/admin/operators/{id}", handleOperatorPage(log, view, o))
			t.add(asAdmin, http.MethodPost, "/admin/operators/{id}", handleOperatorPage(log, view, o))
			t.add(asAdmin, http.MethodPost, "/admin/operators/{id}/tokens", handleOperatorTokenPage(log, view, o))
			t.add(asAdmin, http.MethodPost, "/admin/operators/{id}/tokens/{token_id}/revoke", handleOperatorTokenRevoke(log, view, o))
			t.add(asAdmin, http.MethodGet, "/admin/api/operators", handleAdminOperators(log, o))
			t.add(asAdmin, http.MethodPost, "/admin/api/operators", handleAdminOperators(log, o))
			t.add(asAdmin, http.MethodGet, "/admin/api/operators/{id}", handleAdminOperator(log, o))
			t.add(asAdmin, http.MethodPatch, "/admin/api/operators/{id}", handleAdminOperator(log, o))
			t.add(asAdmin, http.MethodPost, "/admin/api/operators/{id}/tokens", handleAdminOperatorTokens(log, o))
			t.add(asAdmin, http.MethodDelete, "/admin/api/operators/{id}/tokens/{token_id}", handleAdminOperatorToken(log, o))
		}

		if s := d.Spend; s != nil {
			// Spend: the price table and the budgets.
			t.add(asViewer, http.MethodGet, "/admin/spend", handleSpendPage(log, view, s, params))
			t.add(asAdmin, http.MethodPost, "/admin/spend/currency", handleSpendForm(log, view, s, params, currencyChange))
			t.add(asAdmin, http.MethodPost, "/admin/spend/prices", handleSpendForm(log, view, s, params, priceAdd))
			t.add(asAdmin, http.MethodPost, "/admin/spend/prices/change", handleSpendForm(log, view, s, params, priceChange))
			t.add(asAdmin, http.MethodPost, "/admin/spend/prices/remove", handleSpendForm(log, view, s, params, priceRemove))
			t.add(asAdmin, http.MethodPost, "/admin/spend/budgets", handleSpendForm(log, view, s, params, budgetAdd))
			t.add(asAdmin, http.MethodPost, "/admin/spend/budgets/{name}", handleSpendForm(log, view, s, params, budgetChange))
			t.add(asAdmin, http.MethodPost, "/admin/spend/budgets/{name}/remove", handleSpendForm(log, view, s, params, budgetRemove))
			t.add(asViewer, http.MethodGet, "/admin/api/spend/config", handleSpendConfig(log, s))
			t.add(asAdmin, http.MethodPut, "/admin/api/spend/config", handleSpendConfig(log, s))
		}

		if d.Fraud != nil {
			f := maskingFraud{d.Fraud}
			// The fraud guard: its page, settings, lists, blocks and conversion.
			t.add(asViewer, http.MethodGet, "/admin/fraud", handleFraudPage(log, view, f, params))
			t.add(asAdmin, http.MethodPost, "/admin/fraud/config", handleFraudConfigForm(log, view, f, params))
			t.add(asViewer, http.MethodGet, "/admin/api/fraud/config", handleFraudConfig(log, f))
			t.add(asAdmin, http.MethodPut, "/admin/api/fraud/config", handleFraudConfig(log, f))
			t.add(asAdmin, http.MethodPost, "/admin/fraud/lists", handleFraudListForm(log, view, f, params))
			t.add(asAdmin, http.MethodPost, "/admin/fraud/lists/{id}/delete", handleFraudListDeleteForm(log, view, f))
			t.add(asViewer, http.MethodGet, "/admin/api/fraud/lists", handleFraudLists(log, f))
			t.add(asAdmin, http.MethodPost, "/admin/api/fraud/lists", handleFraudLists(log, f))
			t.add(asAdmin, http.MethodDelete, "/admin/api/fraud/lists/{id}", handleFraudListEntry(log, f))
			t.add(asOperator, http.MethodPost, "/admin/fraud/blocks/{id}/lift", handleFraudLiftForm(log, view, f))
			t.add(asViewer, http.MethodGet, "/admin/api/fraud/blocks", handleFraudBlocks(log, f, params))
			t.add(asOperator, http.MethodDelete, "/admin/api/fraud/blocks/{id}", handleFraudBlock(log, f, params))
			t.add(asViewer, http.MethodGet, "/admin/api/fraud/conversion", handleFraudConversion(log, f, params))
		}
	})
	r.NotFound(handleAdminNotFound(log, view).ServeHTTP)
	r.MethodNotAllowed(httpkit.MethodNotAllowed(log, r).ServeHTTP)
}

// Shorthands of the roles in the route table.
const (
	asViewer   = operators.RoleViewer
	asOperator = operators.RoleOperator
	asAdmin    = operators.RoleAdmin
)

// table adds routes behind authentication, each with the least role it needs.
type table struct {
	r    chi.Router
	log  *slog.Logger
	view *adminView
	// query is what each API operation takes (the document's), which it checks.
	query apiQuery
}

// add serves method and pattern with h for principals whose role allows need. An API
// operation the document describes refuses query parameters it does not list.
func (t table) add(need operators.Role, method, pattern string, h http.Handler) {
	if names, ok := t.query[method+" "+pattern]; ok {
		h = onlyKnownQuery(t.log, names, h)
	}
	t.r.Method(method, pattern, requireRole(t.log, t.view, need, h))
}

// mustAdminDocument is the embedded admin document as JSON, and the query parameters of
// each of its operations.
func mustAdminDocument() ([]byte, apiQuery) {
	doc, err := api.AdminJSON()
	var q apiQuery
	if err == nil {
		q, err = readAPIQuery(doc)
	}
	if err != nil {
		// The document is embedded and tested; failing here is a build mistake.
		panic(fmt.Sprintf("admin: the API document: %v", err))
	}
	return doc, q
}

// any serves every method of pattern with h for principals whose role allows need.
func (t table) any(need operators.Role, pattern string, h http.Handler) {
	t.r.Handle(pattern, requireRole(t.log, t.view, need, h))
}
