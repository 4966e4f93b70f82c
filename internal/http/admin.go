package http

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/otp"
)

// adminFiles holds the console's templates and static files, so the binary serves
// them offline with nothing to install next to it.
//
//go:embed admin/templates/*.html admin/static/*
var adminFiles embed.FS

// AdminDeps is what the admin listener needs; zero values get the defaults documented per field.
type AdminDeps struct {
	// Logger receives the access log and internal errors; nil discards them.
	Logger *slog.Logger
	// Admin answers the console's questions and resets limits; required.
	Admin otp.AdminService
	// Apps manages apps and their keys; nil leaves the apps pages and API out.
	Apps otp.AppAdmin
	// Fraud runs the Fraud page and /admin/api/fraud; nil serves neither.
	Fraud fraud.AdminService
	// Webhooks manages the apps' webhook endpoints; nil leaves them out of the apps pages and API.
	Webhooks events.AdminService
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

// NewAdminServer returns the handler of the admin listener: the console under /admin/,
// its JSON API under /admin/api/, and /metrics, /healthz and /readyz.
//
// /metrics, /healthz, /readyz and the stylesheet answer without authentication, so
// Prometheus and orchestrators can reach them; the listener binds to 127.0.0.1 by
// default, and whoever exposes it wider should put it behind their own network rules.
func NewAdminServer(d AdminDeps) http.Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.IPv6Prefix == 0 {
		d.IPv6Prefix = defaultIPv6Prefix
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	view, err := newAdminView(d.Logger, newCSRFGuard(d.Token))
	if err != nil {
		// The templates are embedded and tested; failing here is a build mistake.
		panic(fmt.Sprintf("admin: %v", err))
	}
	r := chi.NewRouter()
	r.Use(
		requestID,
		clientIP(nil, d.IPv6Prefix),
		accessLog(d.Logger, d.Observe),
		recoverPanics(d.Logger),
		limitBody(maxAdminBodyBytes),
		adminHeaders,
		emptySegmentNotFound(d.Logger, view),
	)
	addAdminRoutes(r, d, view)
	return r
}

// adminHeaders sets the security headers of every admin response. Data pages and API
// answers are never stored by a browser or proxy; the stylesheet may be cached.
func adminHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
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

// handleAdminStatic serves the embedded stylesheet; it holds no data.
func handleAdminStatic(log *slog.Logger, view *adminView) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := "admin/static/" + chi.URLParam(r, "*")
		if fi, err := fs.Stat(adminFiles, name); err != nil || fi.IsDir() {
			handleAdminNotFound(log, view).ServeHTTP(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		http.ServeFileFS(w, r, adminFiles, name)
	})
}

// handleAdminNotFound answers unknown admin paths: a problem for the API, a page otherwise.
func handleAdminNotFound(log *slog.Logger, view *adminView) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isAdminAPI(r) {
			writeProblem(w, r, log, errRouteNotFound)
			return
		}
		view.fail(w, r, http.StatusNotFound, "There is no such page.")
	})
}
