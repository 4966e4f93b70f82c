package twilioapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/totp"
)

// pushOnly are the Factor parameters of push and passkeys factors, which otpgate does not offer.
var pushOnly = []string{"Binding.Alg", "Binding.PublicKey", "Config.AppId", "Config.NotificationPlatform",
	"Config.NotificationToken", "Config.SdkVersion", "Metadata"}

// readConfig reads a TOTP factor's Config.* parameters over the defaults.
func readConfig(p *params) totp.Config {
	cfg := totp.DefaultConfig()
	if n, ok := p.integer("Config.TimeStep", totp.MinPeriod, totp.MaxPeriod); ok {
		cfg.Period = n
	}
	if n, ok := p.integer("Config.Skew", totp.MinSkew, totp.MaxSkew); ok {
		cfg.Skew = n
	}
	if n, ok := p.integer("Config.CodeLength", totp.MinDigits, totp.MaxDigits); ok {
		cfg.Digits = n
	}
	if s, ok := p.str("Config.Alg"); ok {
		switch a := totp.Algorithm(s); a {
		case totp.SHA1, totp.SHA256, totp.SHA512:
			cfg.Alg = a
		default:
			p.fields["Config.Alg"] = "must be sha1, sha256 or sha512"
		}
	}
	return cfg
}

func handleFactorCreate(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if err := form(r); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		p := newParams(r.PostForm, factorCreateParams...)
		n := totp.NewFactor{Identity: chi.URLParam(r, "Identity")}
		switch typ, ok := p.str("FactorType"); {
		case !ok && !p.has("FactorType"):
			p.fields["FactorType"] = "is required"
		case ok && typ != "totp":
			p.fields["FactorType"] = "must be totp: push and passkeys factors are not supported by otpgate"
		}
		if name, ok := p.str("FriendlyName"); ok {
			n.FriendlyName = name
		} else if !p.has("FriendlyName") {
			p.fields["FriendlyName"] = "is required"
		}
		p.refuse("is a parameter of push and passkeys factors, which otpgate does not support", pushOnly...)
		n.Config = readConfig(p)
		if s, ok := p.str("Binding.Secret"); ok {
			if b, ok := totp.DecodeSecret(s); ok {
				n.Secret = b
			} else {
				p.fields["Binding.Secret"] = "must be 80 to 512 bits in base32"
			}
		}
		if err := p.err(); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		en, err := d.TOTP.CreateFactor(r.Context(), c.app, n)
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		out := newFactorAnswer{factor: newFactor(r, c.app, en.Factor)}
		out.Binding.Secret, out.Binding.URI = en.Secret, en.URI
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusCreated, out)
	})
}

func handleFactorList(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		p := newParams(r.URL.Query(), pagingParams...)
		pr := readPage(p)
		if err := p.err(); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		identity := chi.URLParam(r, "Identity")
		all, err := d.TOTP.Factors(r.Context(), c.app.ID, identity)
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		items, more := pageOf(all, pr)
		out := make([]factor, len(items))
		for i, f := range items {
			out[i] = newFactor(r, c.app, f)
		}
		writeJSON(w, http.StatusOK, struct {
			Factors []factor `json:"factors"`
			Meta    meta     `json:"meta"`
		}{out, newMeta(r, entityPath(c.app, identity)+"/Factors", "factors", pr, more, "")})
	})
}

// factorID reads the {Sid} of a Factor's path; a sid of anything else finds nothing.
func factorID(r *http.Request) (string, error) { return sidParam(r, "YF") }

// sidParam is the id in the path's Sid of a resource whose SIDs start with prefix; a Sid
// that is not one is errNoResource, as Twilio answers it.
func sidParam(r *http.Request, prefix string) (string, error) {
	id, ok := apps.IDFromSID(chi.URLParam(r, "Sid"), prefix)
	if !ok {
		return "", errNoResource
	}
	return id, nil
}

func handleFactorFetch(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		id, err := factorID(r)
		if err == nil {
			err = noQuery(r)
		}
		var f totp.Factor
		if err == nil {
			f, err = d.TOTP.Factor(r.Context(), c.app.ID, chi.URLParam(r, "Identity"), id)
		}
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		writeJSON(w, http.StatusOK, newFactor(r, c.app, f))
	})
}

// handleFactorUpdate serves POST …/Factors/{Sid}: AuthPayload verifies the factor with a
// first code (a wrong one leaves it unverified, answered 200 as Twilio does), FriendlyName
// renames it; its Config cannot change once the authenticator holds it.
func handleFactorUpdate(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		id, err := factorID(r)
		if err == nil {
			err = form(r)
		}
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		p := newParams(r.PostForm, "AuthPayload", "FriendlyName", "Config.NotificationToken", "Config.SdkVersion",
			"Config.TimeStep", "Config.Skew", "Config.CodeLength", "Config.Alg", "Config.NotificationPlatform")
		p.refuse("cannot change: the authenticator app holds the factor's settings; create a new factor", "Config.TimeStep", "Config.Skew",
			"Config.CodeLength", "Config.Alg")
		p.refuse("is a parameter of push factors, which otpgate does not support", "Config.NotificationToken", "Config.SdkVersion",
			"Config.NotificationPlatform")
		code, hasCode := p.str("AuthPayload")
		name, hasName := p.str("FriendlyName")
		if err := p.err(); err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		identity := chi.URLParam(r, "Identity")
		var f totp.Factor
		switch {
		case hasName:
			f, err = d.TOTP.RenameFactor(r.Context(), c.app.ID, identity, id, name)
		default:
			f, err = d.TOTP.Factor(r.Context(), c.app.ID, identity, id)
		}
		if err == nil && hasCode {
			f, _, err = d.TOTP.VerifyFactor(r.Context(), c.app.ID, identity, id, code)
		}
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		writeJSON(w, http.StatusOK, newFactor(r, c.app, f))
	})
}

func handleFactorDelete(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		id, err := factorID(r)
		if err == nil {
			err = d.TOTP.DeleteFactor(r.Context(), c.app.ID, chi.URLParam(r, "Identity"), id)
		}
		if err != nil {
			writeTOTPError(w, r, d, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
