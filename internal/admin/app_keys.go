package admin

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
)

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

func toAdminKey(k apps.Key) adminKey {
	return adminKey{ID: k.ID, AppID: k.AppID, Name: k.Name, TrustedClientIP: k.TrustedClientIP, CreatedAt: k.CreatedAt,
		LastUsedAt: timeOrNil(k.LastUsedAt), RevokedAt: timeOrNil(k.RevokedAt)}
}

// keyRequest is the body of POST /admin/api/apps/{id}/keys; it may be empty.
type keyRequest struct {
	Name            string `json:"name"`
	TrustedClientIP bool   `json:"trusted_client_ip"`
}

// handleAdminKeys serves POST /admin/api/apps/{id}/keys: the answer is the only place
// the secret ever appears.
func handleAdminKeys(log *slog.Logger, a apps.AdminService) http.Handler {
	requests := httpkit.NewDecoder[keyRequest]()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var (
			req  keyRequest
			err  error
			body []byte
		)
		// A key needs nothing, so an empty POST is fine; a body must be JSON.
		if r.ContentLength != 0 || r.Header.Get("Content-Type") != "" {
			if body, err = httpkit.ReadJSON(r); err == nil && len(body) > 0 {
				req, err = requests.Decode(body)
			}
		}
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		k, err := a.CreateKey(r.Context(), chi.URLParam(r, "id"), apps.NewKey{Name: req.Name, TrustedClientIP: req.TrustedClientIP}, actorFrom(r.Context()))
		if err != nil {
			writeAdminProblem(w, r, log, appNotFound(err))
			return
		}
		out := toAdminKey(k.Key)
		out.Secret = k.Secret
		_ = httpkit.Encode(w, http.StatusCreated, out)
	})
}

// handleAdminKey serves DELETE /admin/api/apps/{id}/keys/{key_id}: the key is revoked.
func handleAdminKey(log *slog.Logger, a apps.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.RevokeKey(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "key_id"), actorFrom(r.Context())); err != nil {
			writeAdminProblem(w, r, log, appNotFound(err))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// liveKeys counts the keys that are not revoked.
func liveKeys(keys []apps.Key) int {
	n := 0
	for _, k := range keys {
		if !k.Revoked() {
			n++
		}
	}
	return n
}

// handleAppKeyPage makes a key and shows its secret on the app's page, once: the
// answer is not a redirect, so the secret is in no URL and no later page.
func handleAppKeyPage(log *slog.Logger, view *adminView, a apps.AdminService, hooks events.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, id := r.Context(), chi.URLParam(r, "id")
		if err := r.ParseForm(); err != nil {
			adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
			return
		}
		k, err := a.CreateKey(ctx, id, apps.NewKey{Name: r.PostForm.Get("name"), TrustedClientIP: r.PostForm.Get("trusted_client_ip") == "true"}, actorFrom(ctx))
		var invalid *otp.ErrInvalidRequest
		switch {
		case errors.As(err, &invalid):
			renderApp(w, r, log, view, a, hooks, id, http.StatusBadRequest, invalid.Fields, nil, nil, hooksSection{})
		case err != nil:
			adminError(w, r, log, view, appNotFound(err))
		default:
			renderApp(w, r, log, view, a, hooks, id, http.StatusCreated, nil, nil, &k, hooksSection{})
		}
	})
}

// handleAppKeyRevoke revokes a key and goes back to the app's page.
func handleAppKeyRevoke(log *slog.Logger, view *adminView, a apps.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "id")
		if err := a.RevokeKey(r.Context(), id, chi.URLParam(r, "key_id"), actorFrom(r.Context())); err != nil {
			adminError(w, r, log, view, appNotFound(err))
			return
		}
		http.Redirect(w, r, "/admin/apps/"+id, http.StatusSeeOther)
	})
}
