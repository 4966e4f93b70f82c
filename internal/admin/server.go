// Package admin serves the admin listener: the console under /admin/ (HTML pages
// rendered from embedded templates, with HTTP Basic login and CSRF tokens) and its JSON
// API under /admin/api/ (bearer token, problem+json), plus the probes, /metrics and the
// runtime profiles. It has one auth model (auth.go), one error renderer (errors.go) and
// one route table (routes.go); the shared HTTP kit (middleware, problem+json, strict
// JSON) comes from internal/http. It reaches history, limits, apps, webhooks and the
// fraud guard only through their services.
package admin

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/httpkit"
	"otpgate/internal/operators"
	"otpgate/internal/spend"
)

// Deps is what the admin listener needs; zero values get the defaults documented per field.
type Deps struct {
	// Logger receives the access log and internal errors; nil discards them.
	Logger *slog.Logger
	// Admin answers the console's questions and resets limits; required.
	Admin history.AdminService
	// Erasure erases one person's data (DELETE /admin/api/subjects/{subject}); nil serves
	// no erasure.
	Erasure Erasure
	// Apps manages apps and their keys; nil leaves the apps pages and API out.
	Apps apps.AdminService
	// Fraud runs the Fraud page and /admin/api/fraud; nil serves neither.
	Fraud fraud.AdminService
	// Spend serves /admin/api/spend (prices and budgets); nil serves none.
	Spend spend.AdminService
	// Webhooks manages the apps' webhook endpoints; nil leaves them out of the apps pages and API.
	Webhooks events.AdminService
	// TOTP enrols and lists the apps' TOTP factors on the console; nil serves no TOTP page
	// (it also needs Apps).
	TOTP TOTP
	// Operators manages operator accounts and checks their personal tokens; nil accepts
	// ADMIN_TOKEN only and serves no operators pages.
	Operators operators.AdminService
	// SignOn is the identity provider of the console's single sign-on; nil serves none.
	SignOn SignOn
	// Roles maps the identity provider's role claim to roles at sign-in.
	Roles operators.RoleMap
	// SessionSecret keys the sealed sign-in cookies (OTP_SECRET); required with SignOn.
	SessionSecret []byte
	// SessionTTL is how long a console sign-in lasts; 0 means DefaultSessionTTL.
	SessionTTL time.Duration
	// InsecureCookies drops Secure from the sign-in cookies, for a console served over
	// plain http (dev mode, or an http OTP_ADMIN_PUBLIC_URL).
	InsecureCookies bool
	// Token is ADMIN_TOKEN, the password of the console and the API's bearer token. An
	// empty token refuses everyone.
	Token string
	// DefaultRegion reads phone filters without a leading +, as the public API does.
	DefaultRegion string
	// IPv6Prefix is the prefix length the limiter keys IPv6 clients by; 0 means 64.
	IPv6Prefix int
	// Ready reports whether Redis and Postgres answer, for /readyz; nil is always ready.
	Ready func(ctx context.Context) error
	// Metrics serves GET /metrics without authentication, for Prometheus; nil serves no metrics.
	Metrics http.Handler
	// Observe, when set, is called once per request, for metrics.
	Observe func(route string, status int, d time.Duration)
	// Now is the clock of relative time ranges such as since=24h; nil means time.Now.
	Now func() time.Time
}

// Limits of the admin listener.
const (
	// maxAdminBodyBytes covers the console's forms and the JSON API's bodies (apps, fraud settings).
	maxAdminBodyBytes = 16 << 10
	// adminActionsShown is how many audit entries the limits page lists.
	adminActionsShown = 20
)

// NewServer returns the handler of the admin listener: the console under /admin/,
// its JSON API under /admin/api/, and /metrics, /healthz and /readyz.
//
// /metrics, /healthz, /readyz and the stylesheet answer without authentication, so
// Prometheus and orchestrators can reach them; the listener binds to 127.0.0.1 by
// default, and whoever exposes it wider should put it behind their own network rules.
func NewServer(d Deps) http.Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.IPv6Prefix == 0 {
		d.IPv6Prefix = httpkit.DefaultIPv6Prefix
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	view, err := newAdminView(d.Logger, newCSRFGuard(d.Token))
	if err != nil {
		// The templates are embedded and tested; failing here is a build mistake.
		panic(fmt.Sprintf("admin: %v", err))
	}
	view.spendNav = d.Spend != nil
	view.totpPage = d.TOTP != nil && d.Apps != nil
	r := chi.NewRouter()
	r.Use(httpkit.Common(d.Logger, d.Observe, nil, d.IPv6Prefix, maxAdminBodyBytes)...)
	r.Use(adminHeaders, emptySegmentNotFound(d.Logger, view))
	addRoutes(r, d, view)
	return r
}

// adminHeaders sets the security headers of every admin response. Data pages and API
// answers are never stored by a browser or proxy; the stylesheet may be cached. Images
// may be data URIs: the TOTP page draws its enrolment QR code as one, not as a URL that
// would hold the secret.
func adminHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		// same-origin: no other site learns a console address, and the console's own form
		// posts carry its Origin, which the CSRF check compares (no-referrer would make
		// browsers send "Origin: null").
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// emptySegmentNotFound answers a path with an empty segment, such as
// /admin/api/apps/x/webhooks//test, as the unknown path it is: the router would match it,
// with an empty parameter, behind authentication.
func emptySegmentNotFound(log *slog.Logger, view *adminView) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "//") {
				handleAdminNotFound(log, view).ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// handleRedirect sends the browser to a fixed path of the console.
func handleRedirect(to string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to, http.StatusFound)
	})
}

// requireText refuses, after authentication and with the listener's own error renderer, a
// request whose path parameters, query or form hold a NUL character or invalid UTF-8
// (httpkit.CheckRequestText), naming the field: no console form or API call passes such
// text on to the services and stores. JSON bodies are checked as they are decoded. A form
// is parsed here to be checked, and a form that cannot be read is refused as the
// handlers refuse it.
func requireText(log *slog.Logger, view *adminView) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if isForm(r) {
				if err := r.ParseForm(); err != nil {
					adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
					return
				}
			}
			if err := httpkit.CheckRequestText(r); err != nil {
				adminError(w, r, log, view, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// isForm reports whether r carries a form-encoded body.
func isForm(r *http.Request) bool {
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(ct), "application/x-www-form-urlencoded")
}
