package http

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
)

// clientIPHeader is where a trusted_client_ip key names the end user's address.
const clientIPHeader = "Otpgate-Client-Ip"

// appKey keys the app a public request is for in its context, when the request has no
// httpkit.RequestInfo to carry it.
const appKey appCtxKey = 0

// appCtxKey keys the public API's own context values.
type appCtxKey int

// appFrom returns the app the request is for; nil means the service's default app.
func appFrom(ctx context.Context) *otp.App {
	if ri := httpkit.RequestInfoFrom(ctx); ri != nil && ri.App != nil {
		return ri.App
	}
	a, _ := ctx.Value(appKey).(*otp.App)
	return a
}

// errClientIPHeader refuses an Otpgate-Client-Ip that names no address.
var errClientIPHeader = httpkit.InvalidRequest("Otpgate-Client-Ip must be one IPv4 or IPv6 address",
	map[string]string{clientIPHeader: "must be one IPv4 or IPv6 address"})

// withApp resolves the app a request is for (the URL's {app}, or the default app
// for the routes without one) and authenticates its caller before the handler runs,
// so a request without the key an app needs is refused with 401 before anything is
// looked up or spent. A Bearer key is checked for public apps too, when one is sent.
// When the key may name the end user (trusted_client_ip), Otpgate-Client-Ip becomes
// the request's client IP; for everyone else that header is ignored.
func withApp(log *slog.Logger, dir apps.Directory, v6prefix int, next http.Handler) http.Handler {
	if dir == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ref := chi.URLParam(r, "app")
		if ref == "" {
			ref = otp.DefaultAppAlias
		}
		app, err := dir.App(r.Context(), ref)
		if errors.Is(err, otp.ErrNotFound) {
			err = httpkit.ErrNoSuchApp
		}
		if err == nil && app.Access == otp.AccessOff {
			// Before the key is looked at: an app that is off takes no call, with any key.
			err = otp.ErrAppOff
		}
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		key, err := bearerKey(r, dir)
		if err == nil {
			err = apps.Authorize(app, key)
		}
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="otpgate"`)
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		ip, err := CallerIP(r, key, v6prefix)
		if err != nil {
			httpkit.WriteProblem(w, r, log, err)
			return
		}
		// A trusted key may name the end user's address; the access log then shows it too.
		// The app rides in the same request info, which saves copying the request.
		if ri := httpkit.RequestInfoFrom(r.Context()); ri != nil {
			ri.ClientIP, ri.App = ip, &app
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), appKey, &app)))
	})
}

// bearerKey authenticates the request's Bearer secret; no Authorization header is no
// key (apps.Key with an empty ID). Errors: apps.ErrBadKey.
func bearerKey(r *http.Request, dir apps.Directory) (apps.Key, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return apps.Key{}, nil
	}
	scheme, secret, _ := strings.Cut(h, " ")
	secret = strings.TrimSpace(secret)
	id, ok := apps.KeyIDOf(secret)
	if !strings.EqualFold(scheme, "Bearer") || !ok {
		return apps.Key{}, apps.ErrBadKey
	}
	return dir.Authenticate(r.Context(), id, secret)
}

// CallerIP is the client IP a request authenticated with key is limited by: the end
// user's address from Otpgate-Client-Ip when the key is trusted to name it and the
// request does, else the client IP the middleware found. The header's address is
// keyed as every client address is (IPv6 by its /v6prefix network).
// Errors: *otp.ErrInvalidRequest for a header that is not one address.
func CallerIP(r *http.Request, key apps.Key, v6prefix int) (string, error) {
	values := r.Header.Values(clientIPHeader)
	if !key.TrustedClientIP || key.Revoked() || len(values) == 0 {
		return httpkit.ClientIPFrom(r.Context()), nil
	}
	a, ok := httpkit.ParseHostAddr(values[0])
	if len(values) > 1 || !ok {
		return "", errClientIPHeader
	}
	return httpkit.AddrKey(a, v6prefix), nil
}
