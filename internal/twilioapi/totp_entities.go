package twilioapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
)

func handleEntityCreate(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if err := form(r); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		p := newParams(r.PostForm, "Identity")
		identity, ok := p.str("Identity")
		if !ok && !p.has("Identity") {
			p.fields["Identity"] = "is required"
		}
		if err := p.err(); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		e, err := d.TOTP.CreateEntity(r.Context(), c.app.ID, identity)
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		writeJSON(w, http.StatusCreated, newEntity(r, c.app, e))
	})
}

func handleEntityList(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		p := newParams(r.URL.Query(), pagingParams...)
		pr := readPage(p)
		if err := p.err(); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		all, err := d.TOTP.Entities(r.Context(), c.app.ID)
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		items, more := pageOf(all, pr)
		out := make([]entity, len(items))
		for i, e := range items {
			out[i] = newEntity(r, c.app, e)
		}
		writeJSON(w, http.StatusOK, struct {
			Entities []entity `json:"entities"`
			Meta     meta     `json:"meta"`
		}{out, newMeta(r, "/Services/"+apps.ServiceSID(c.app.ID)+"/Entities", "entities", pr, more, "")})
	})
}

func handleEntityFetch(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if err := noQuery(r); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		e, err := d.TOTP.Entity(r.Context(), c.app.ID, chi.URLParam(r, "Identity"))
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		writeJSON(w, http.StatusOK, newEntity(r, c.app, e))
	})
}

func handleEntityDelete(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if err := d.TOTP.DeleteEntity(r.Context(), c.app.ID, chi.URLParam(r, "Identity")); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// factorCreateParams are the parameters of creating a Factor, as Twilio defines them.
var factorCreateParams = []string{
	"FriendlyName", "FactorType", "Binding.Alg", "Binding.PublicKey", "Config.AppId", "Config.NotificationPlatform",
	"Config.NotificationToken", "Config.SdkVersion", "Binding.Secret", "Config.TimeStep", "Config.Skew", "Config.CodeLength",
	"Config.Alg", "Metadata",
}
