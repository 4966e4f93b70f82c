package http

import (
	"net/http"
	"strings"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
)

// What the CORS answers of a listed origin allow: the send and check routes take POST
// with a JSON body and an Idempotency-Key, and a page may read the headers a client acts
// on. No credentials: a browser never holds a key, and no cookie is read.
const (
	corsAllowMethods  = "POST"
	corsAllowHeaders  = "Content-Type, Idempotency-Key"
	corsExposeHeaders = "Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, X-Request-Id"
	// corsMaxAge is how long a browser may cache a preflight: Chromium's upper bound.
	corsMaxAge = "7200"
)

// withCORS answers the browser origins an app lists (otp.App.AllowedOrigins) on the
// routes a page calls, sending and checking codes, and no other origin: a preflight is
// answered here, before routing, and an actual request gets its CORS headers before its
// handler runs. Every other request passes as it would without it.
func withCORS(dir apps.Directory) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if dir == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			origin := r.Header.Get("Origin")
			ref, browserRoute := corsApp(r.URL.Path)
			if origin == "" || !browserRoute {
				next.ServeHTTP(w, r)
				return
			}
			h := w.Header()
			h.Add("Vary", "Origin")
			app, err := dir.App(r.Context(), ref)
			allowed := err == nil && app.AllowsOrigin(origin)
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				if allowed && r.Header.Get("Access-Control-Request-Method") == http.MethodPost {
					h.Set("Access-Control-Allow-Origin", origin)
					h.Set("Access-Control-Allow-Methods", corsAllowMethods)
					h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
					h.Set("Access-Control-Max-Age", corsMaxAge)
				}
				w.WriteHeader(http.StatusNoContent)
				return
			}
			if allowed {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// corsApp names the app of a route a browser page may call, as withApp finds it; ok is
// false for every other route.
func corsApp(path string) (ref string, ok bool) {
	switch path {
	case "/v1/verifications", "/v1/verifications/check":
		return otp.DefaultAppAlias, true
	}
	rest, ok := strings.CutPrefix(path, "/v1/apps/")
	if !ok {
		return "", false
	}
	ref, tail, _ := strings.Cut(rest, "/")
	return ref, ref != "" && (tail == "verifications" || tail == "verifications/check")
}
