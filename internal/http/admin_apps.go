package http

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/otp"
)

// appRequest is the body of POST /admin/api/apps and PATCH /admin/api/apps/{id}:
// absent fields keep their value (for POST, the default app's).
type appRequest struct {
	Name             *string   `json:"name"`
	CodeLength       *int      `json:"code_length"`
	CodeTTLSeconds   *int      `json:"code_ttl_seconds"`
	MaxSends         *int      `json:"max_sends"`
	MaxAttempts      *int      `json:"max_attempts"`
	Locales          *[]string `json:"locales"`
	AllowedCountries *[]string `json:"allowed_countries"`
	Channels         *[]string `json:"channels"`
	SendRules        *string   `json:"send_rules"`
	CheckRules       *string   `json:"check_rules"`
	Access           *string   `json:"access"`
	// Templates replaces the app's templates, every locale at once; {} restores the built-in ones.
	Templates      *map[string]appTemplates `json:"templates"`
	WebOTPDomain   *string                  `json:"webotp_domain"`
	AndroidAppHash *string                  `json:"android_app_hash"`
}

// appTemplates are one locale's templates in the admin API; absent ones are built in.
type appTemplates struct {
	SMS          string `json:"sms,omitempty"`
	Voice        string `json:"voice,omitempty"`
	EmailSubject string `json:"email_subject,omitempty"`
	EmailText    string `json:"email_text,omitempty"`
	EmailHTML    string `json:"email_html,omitempty"`
}

// patch turns the request into an otp.AppPatch, which validates it.
func (q appRequest) patch() otp.AppPatch {
	p := otp.AppPatch{
		Name: q.Name, CodeLength: q.CodeLength, MaxSends: q.MaxSends, MaxAttempts: q.MaxAttempts,
		Locales: q.Locales, AllowedCountries: q.AllowedCountries, Channels: q.Channels,
		SendRules: q.SendRules, CheckRules: q.CheckRules, WebOTPDomain: q.WebOTPDomain, AndroidAppHash: q.AndroidAppHash,
	}
	if q.Templates != nil {
		m := make(map[string]otp.MessageTemplates, len(*q.Templates))
		for l, t := range *q.Templates {
			m[l] = otp.MessageTemplates(t)
		}
		p.Templates = &m
	}
	if q.CodeTTLSeconds != nil {
		d := time.Duration(*q.CodeTTLSeconds) * time.Second
		if *q.CodeTTLSeconds < 0 || *q.CodeTTLSeconds > int(otp.MaxCodeTTL/time.Second) {
			d = -1 // out of range, also of time.Duration: the validator names it
		}
		p.CodeTTL = &d
	}
	if q.Access != nil {
		a := otp.Access(*q.Access)
		p.Access = &a
	}
	return p
}

// adminApp is one app as the admin API shows it, with its keys (never their secrets).
type adminApp struct {
	ID               string   `json:"id"`
	ServiceSID       string   `json:"service_sid"`
	Name             string   `json:"name"`
	Default          bool     `json:"default"`
	CodeLength       int      `json:"code_length"`
	CodeTTLSeconds   int64    `json:"code_ttl_seconds"`
	MaxSends         int      `json:"max_sends"`
	MaxAttempts      int      `json:"max_attempts"`
	Locales          []string `json:"locales"`
	AllowedCountries []string `json:"allowed_countries"`
	Channels         []string `json:"channels"`
	SendRules        string   `json:"send_rules"`
	CheckRules       string   `json:"check_rules"`
	Access           string   `json:"access"`
	// Templates are the app's own templates per locale; {} when it uses the built-in ones.
	Templates      map[string]appTemplates `json:"templates"`
	WebOTPDomain   string                  `json:"webotp_domain"`
	AndroidAppHash string                  `json:"android_app_hash"`
	CreatedAt      *time.Time              `json:"created_at,omitempty"`
	UpdatedAt      *time.Time              `json:"updated_at,omitempty"`
	Keys           []adminKey              `json:"keys"`
}

// adminKey is one key as the admin API shows it; Secret only in the answer that made it.
type adminKey struct {
	ID              string     `json:"id"`
	AppID           string     `json:"app_id"`
	Name            string     `json:"name"`
	TrustedClientIP bool       `json:"trusted_client_ip"`
	CreatedAt       time.Time  `json:"created_at"`
	LastUsedAt      *time.Time `json:"last_used_at"`
	RevokedAt       *time.Time `json:"revoked_at"`
	Secret          string     `json:"secret,omitempty"`
}

func toAdminApp(info otp.AppInfo) adminApp {
	a := info.App
	out := adminApp{
		ID: a.ID, ServiceSID: otp.ServiceSID(a.ID), Name: a.Name, Default: a.Default,
		CodeLength: a.CodeLength, CodeTTLSeconds: ceilSeconds(a.CodeTTL), MaxSends: a.MaxSends, MaxAttempts: a.MaxAttempts,
		Locales: nonNil(a.Locales), AllowedCountries: nonNil(a.AllowedCountries), Channels: nonNil(a.Channels),
		SendRules: a.SendRules.String(), CheckRules: a.CheckRules.String(), Access: string(a.Access),
		CreatedAt: timeOrNil(a.CreatedAt), UpdatedAt: timeOrNil(a.UpdatedAt), Keys: make([]adminKey, len(info.Keys)),
		Templates: make(map[string]appTemplates, len(a.Templates)), WebOTPDomain: a.WebOTPDomain, AndroidAppHash: a.AndroidAppHash,
	}
	for l, t := range a.Templates {
		out.Templates[l] = appTemplates(t)
	}
	for i, k := range info.Keys {
		out.Keys[i] = toAdminKey(k)
	}
	return out
}

func toAdminKey(k otp.AppKey) adminKey {
	return adminKey{ID: k.ID, AppID: k.AppID, Name: k.Name, TrustedClientIP: k.TrustedClientIP, CreatedAt: k.CreatedAt,
		LastUsedAt: timeOrNil(k.LastUsedAt), RevokedAt: timeOrNil(k.RevokedAt)}
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// keyRequest is the body of POST /admin/api/apps/{id}/keys; it may be empty.
type keyRequest struct {
	Name            string `json:"name"`
	TrustedClientIP bool   `json:"trusted_client_ip"`
}

// appsResponse is GET /admin/api/apps.
type appsResponse struct {
	Apps []adminApp `json:"apps"`
}

// appNotFound names a missing app (or key) in the admin API's answer.
func appNotFound(err error) error {
	if errors.Is(err, otp.ErrNotFound) {
		return errAdminNoSuchApp
	}
	return err
}

var errAdminNoSuchApp = otp.Errorf(otp.CodeNotFound, "there is no such app or key")

// handleAdminApps serves GET (list) and POST (create) /admin/api/apps.
func handleAdminApps(log *slog.Logger, a otp.AppAdmin) http.Handler {
	requests := newDecoder[appRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			infos, err := a.ListApps(r.Context())
			if err != nil {
				writeAdminProblem(w, r, log, err)
				return
			}
			out := appsResponse{Apps: make([]adminApp, len(infos))}
			for i, info := range infos {
				out.Apps[i] = toAdminApp(info)
			}
			_ = encode(w, http.StatusOK, out)
			return
		}
		p, err := decodeAppPatch(r, requests)
		if err == nil {
			var info otp.AppInfo
			if info, err = a.CreateApp(r.Context(), p, actorFrom(r.Context())); err == nil {
				w.Header().Set("Location", "/admin/api/apps/"+info.App.ID)
				_ = encode(w, http.StatusCreated, toAdminApp(info))
				return
			}
		}
		writeAdminProblem(w, r, log, err)
	})
}

// decodeAppPatch reads an appRequest body strictly into a patch.
func decodeAppPatch(r *http.Request, requests decoder[appRequest]) (otp.AppPatch, error) {
	body, err := readJSON(r)
	if err != nil {
		return otp.AppPatch{}, err
	}
	req, err := requests.decode(body)
	if err != nil {
		return otp.AppPatch{}, err
	}
	return req.patch(), nil
}

// handleAdminApp serves GET, PATCH and DELETE /admin/api/apps/{id}.
func handleAdminApp(log *slog.Logger, a otp.AppAdmin) http.Handler {
	requests := newDecoder[appRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id := r.Context(), chi.URLParam(r, "id")
		var (
			info otp.AppInfo
			err  error
		)
		switch r.Method {
		case http.MethodGet:
			info, err = a.GetApp(ctx, id)
		case http.MethodPatch:
			var p otp.AppPatch
			if p, err = decodeAppPatch(r, requests); err == nil {
				info, err = a.UpdateApp(ctx, id, p, actorFrom(ctx))
			}
		case http.MethodDelete:
			if err = a.DeleteApp(ctx, id, actorFrom(ctx)); err == nil {
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if err != nil {
			writeAdminProblem(w, r, log, appNotFound(err))
			return
		}
		_ = encode(w, http.StatusOK, toAdminApp(info))
	})
}

// handleAdminKeys serves POST /admin/api/apps/{id}/keys: the answer is the only place
// the secret ever appears.
func handleAdminKeys(log *slog.Logger, a otp.AppAdmin) http.Handler {
	requests := newDecoder[keyRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var (
			req  keyRequest
			err  error
			body []byte
		)
		// A key needs nothing, so an empty POST is fine; a body must be JSON.
		if r.ContentLength != 0 || r.Header.Get("Content-Type") != "" {
			if body, err = readJSON(r); err == nil && len(body) > 0 {
				req, err = requests.decode(body)
			}
		}
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		k, err := a.CreateKey(r.Context(), chi.URLParam(r, "id"), otp.NewKey{Name: req.Name, TrustedClientIP: req.TrustedClientIP}, actorFrom(r.Context()))
		if err != nil {
			writeAdminProblem(w, r, log, appNotFound(err))
			return
		}
		out := toAdminKey(k.Key)
		out.Secret = k.Secret
		_ = encode(w, http.StatusCreated, out)
	})
}

// handleAdminKey serves DELETE /admin/api/apps/{id}/keys/{key_id}: the key is revoked.
func handleAdminKey(log *slog.Logger, a otp.AppAdmin) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.RevokeKey(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "key_id"), actorFrom(r.Context())); err != nil {
			writeAdminProblem(w, r, log, appNotFound(err))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
