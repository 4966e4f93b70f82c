// Package twilioapi serves a Twilio Verify v2 compatible API, so that code written
// against Twilio Verify works against otpgate by changing its base URL. It is an adapter
// like internal/http: it translates Twilio's form-encoded requests into calls of the
// domain's services and the domain's errors into Twilio's error shape and codes, and
// owns no behaviour of its own.
package twilioapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
)

// Deps is what the Twilio API needs.
type Deps struct {
	// Logger receives internal errors; nil discards them.
	Logger *slog.Logger
	// Verifier sends and checks codes; required.
	Verifier otp.Verifier
	// Manager fetches and closes verifications by id; required.
	Manager VerificationManager
	// Apps finds the app a ServiceSid names and authenticates keys; required.
	Apps apps.Directory
	// ClientIP is the client IP the call is limited by, given the key it came with
	// (a trusted_client_ip key may name the end user's). Errors: *otp.ErrInvalidRequest.
	ClientIP func(r *http.Request, key apps.Key) (string, error)
	// PublicURL is where clients reach the public listener (OTP_PUBLIC_URL): the url
	// fields of answers start with it. Empty leaves them paths from the listener's root.
	// The request's Host header is never used, since the client writes it.
	PublicURL string
	// Admin creates, changes and deletes apps for the Services resource; required.
	Admin apps.AdminService
	// Texts tells the built-in templates, for the Templates resource; required.
	Texts Texts
	// Attempts reads the Verification Attempts from history; required.
	Attempts Attempts
	// TOTP serves Entities, Factors and Challenges; nil leaves them unserved (20404).
	TOTP TOTP
	// RateLimits serves the Rate Limits and Buckets resources and RateLimits on a create;
	// nil answers them 20404 and refuses RateLimits.
	RateLimits RateLimits
	// AccountToken is the password of the account credential (OTP_ACCOUNT_TOKEN, see
	// account.go); empty refuses it.
	AccountToken string
}

// NewHandler returns the API, to be mounted at /v2 of the public listener.
func NewHandler(d Deps) http.Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	d.PublicURL = strings.TrimRight(d.PublicURL, "/")
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), publicURLKey{}, d.PublicURL)))
		})
	}, requireText(d))
	accountRoutes(r, d)
	r.Route("/Services/{ServiceSid}", func(r chi.Router) {
		r.Use(authenticate(d))
		serviceRoutes(r, d)
		if d.RateLimits != nil {
			rateLimitRoutes(r, d)
		}
		r.Method(http.MethodPost, "/Verifications", handleCreate(d))
		r.Method(http.MethodGet, "/Verifications/{Sid}", handleFetch(d))
		r.Method(http.MethodPost, "/Verifications/{Sid}", handleUpdate(d))
		r.Method(http.MethodPost, "/VerificationCheck", handleCheck(d))
		totpRoutes(r, d)
	})
	r.NotFound(func(w http.ResponseWriter, r *http.Request) { writeError(w, r, d.Logger, errNoResource) })
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) { writeError(w, r, d.Logger, errMethod) })
	return r
}

// callCtxKey keys the call's app and client IP in its context.
type callCtxKey int

const callKey callCtxKey = 0

// call is who calls which app, from where.
type call struct {
	app      otp.App
	clientIP string
	// key is the caller's app key, or the account credential (isAccount).
	key apps.Key
}

func callFrom(ctx context.Context) call {
	c, _ := ctx.Value(callKey).(call)
	return c
}

// authenticate checks HTTP Basic (key id and secret, or the account credential) first, as
// Twilio does, then finds the app the ServiceSid names: a key of another app finds
// nothing (20404), as a Twilio resource of another account does.
func authenticate(d Deps) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user, pass, ok := r.BasicAuth()
			if !ok {
				w.Header().Set("WWW-Authenticate", `Basic realm="otpgate"`)
				writeError(w, r, d.Logger, apps.ErrBadKey)
				return
			}
			key, err := caller(r.Context(), d, user, pass)
			if err != nil {
				w.Header().Set("WWW-Authenticate", `Basic realm="otpgate"`)
				writeError(w, r, d.Logger, err)
				return
			}
			id, ok := apps.IDFromSID(chi.URLParam(r, "ServiceSid"), "VA")
			var app otp.App
			if ok {
				app, err = d.Apps.App(r.Context(), id)
			}
			if !ok || err != nil {
				writeError(w, r, d.Logger, errNoService)
				return
			}
			if err := mayCall(app, key); err != nil {
				writeError(w, r, d.Logger, err)
				return
			}
			ip, err := d.ClientIP(r, key)
			if err != nil {
				writeError(w, r, d.Logger, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callKey, call{app: app, clientIP: ip, key: key})))
		})
	}
}

// requireText refuses a request whose path or query holds a NUL character or invalid
// UTF-8 (60200, naming the parameter, or "path"), before anything else: no resource takes
// such text. Form bodies are checked as form reads them.
func requireText(d Deps) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			err := otp.CheckText("path", r.URL.Path)
			if err == nil && r.URL.RawQuery != "" {
				query, qerr := url.ParseQuery(r.URL.RawQuery)
				if qerr != nil {
					err = otp.CheckText("query", r.URL.RawQuery)
				}
				if err == nil {
					err = httpkit.CheckValues(query)
				}
			}
			if err != nil {
				writeError(w, r, d.Logger, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// form reads a form-encoded body; a NUL character or invalid UTF-8 in a parameter's name
// or value is refused, naming it. Errors: *otp.ErrInvalidRequest, *otp.ErrInvalidText.
func form(r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/x-www-form-urlencoded") {
		return &otp.ErrInvalidRequest{Detail: "the body must be form-encoded (application/x-www-form-urlencoded)"}
	}
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &otp.ErrInvalidRequest{Detail: "the request body is too large"}
		}
		return &otp.ErrInvalidRequest{Detail: "the form could not be read"}
	}
	return httpkit.CheckValues(r.PostForm)
}
