package twilioapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
)

// service is Twilio's Service resource: an otpgate app. Only friendly_name (the app's
// name), code_length and psd2_enabled are the app's own; the other settings are what otpgate always
// does, and a request that asks for anything else is refused (serviceParams).
type service struct {
	Sid                            string            `json:"sid"`
	AccountSid                     string            `json:"account_sid"`
	FriendlyName                   string            `json:"friendly_name"`
	CodeLength                     int               `json:"code_length"`
	LookupEnabled                  bool              `json:"lookup_enabled"`
	Psd2Enabled                    bool              `json:"psd2_enabled"`
	SkipSmsToLandlines             bool              `json:"skip_sms_to_landlines"`
	DtmfInputRequired              bool              `json:"dtmf_input_required"`
	TtsName                        *string           `json:"tts_name"`
	DoNotShareWarningEnabled       bool              `json:"do_not_share_warning_enabled"`
	CustomCodeEnabled              bool              `json:"custom_code_enabled"`
	Push                           *struct{}         `json:"push"`
	Totp                           *struct{}         `json:"totp"`
	DefaultTemplateSid             *string           `json:"default_template_sid"`
	Whatsapp                       *struct{}         `json:"whatsapp"`
	Passkeys                       *struct{}         `json:"passkeys"`
	VerifyEventSubscriptionEnabled bool              `json:"verify_event_subscription_enabled"`
	DateCreated                    string            `json:"date_created"`
	DateUpdated                    string            `json:"date_updated"`
	URL                            string            `json:"url"`
	Links                          map[string]string `json:"links"`
}

func newService(r *http.Request, app otp.App) service {
	sid := apps.ServiceSID(app.ID)
	path := "/Services/" + sid
	return service{
		Sid: sid, AccountSid: accountSID(app), FriendlyName: app.Name, CodeLength: app.CodeLength, Psd2Enabled: app.PSD2,
		// Every built-in message warns never to share the code.
		DoNotShareWarningEnabled: true,
		DateCreated:              twilioTime(app.CreatedAt), DateUpdated: twilioTime(app.UpdatedAt),
		URL: resourceURL(r, path),
		Links: map[string]string{
			"verifications":       resourceURL(r, path+"/Verifications"),
			"verification_checks": resourceURL(r, path+"/VerificationCheck"),
		},
	}
}

// serviceParams are the parameters of creating and updating a Service, as Twilio
// defines them.
var serviceParams = []string{
	"FriendlyName", "CodeLength", "LookupEnabled", "SkipSmsToLandlines", "DtmfInputRequired", "TtsName",
	"Psd2Enabled", "DoNotShareWarningEnabled", "CustomCodeEnabled", "Push.IncludeDate", "Push.ApnCredentialSid",
	"Push.FcmCredentialSid", "Totp.Issuer", "Totp.TimeStep", "Totp.CodeLength", "Totp.Skew", "DefaultTemplateSid",
	"Whatsapp.MsgServiceSid", "Whatsapp.From", "Passkeys.RelyingParty.Id", "Passkeys.RelyingParty.Name",
	"Passkeys.RelyingParty.Origins", "Passkeys.AuthenticatorAttachment", "Passkeys.DiscoverableCredentials",
	"Passkeys.UserVerification", "VerifyEventSubscriptionEnabled",
}

// appFieldParams name the app's fields, in the domain's errors, by Service parameters.
var appFieldParams = map[string]string{"name": "FriendlyName", "code_length": "CodeLength", "id": "Sid"}

// servicePatch reads a Service's parameters into a patch of an app; every parameter
// otpgate does not offer with the value given is refused, each saying why.
// Errors: *otp.ErrInvalidRequest.
func servicePatch(r *http.Request) (apps.Patch, error) {
	var patch apps.Patch
	if err := form(r); err != nil {
		return patch, err
	}
	p := newParams(r.PostForm, serviceParams...)
	if name, ok := p.str("FriendlyName"); ok {
		patch.Name = &name
	}
	if n, ok := p.integer("CodeLength", otp.MinCodeLength, otp.MaxCodeLength); ok {
		patch.CodeLength = &n
	}
	p.fixed("LookupEnabled", false, "otpgate looks up no carrier or line type; only false")
	p.fixed("SkipSmsToLandlines", false, "otpgate knows no line types; only false")
	p.fixed("DtmfInputRequired", false, "a call reads the code without asking for a key press; only false")
	p.fixed("CustomCodeEnabled", false, "otpgate always draws the code itself; only false")
	p.fixed("VerifyEventSubscriptionEnabled", false, "otpgate's events are its webhooks (admin API); only false")
	if on, ok := p.boolean("Psd2Enabled"); ok {
		patch.PSD2 = &on
	}
	p.fixed("DoNotShareWarningEnabled", true, "every built-in message warns never to share the code; only true (an app's own templates are set in the admin API)")
	p.refuse("is not supported by otpgate", "TtsName", "Push.IncludeDate", "Push.ApnCredentialSid", "Push.FcmCredentialSid",
		"Totp.Issuer", "Totp.TimeStep", "Totp.CodeLength", "Totp.Skew", "DefaultTemplateSid", "Whatsapp.MsgServiceSid", "Whatsapp.From",
		"Passkeys.RelyingParty.Id", "Passkeys.RelyingParty.Name", "Passkeys.RelyingParty.Origins",
		"Passkeys.AuthenticatorAttachment", "Passkeys.DiscoverableCredentials", "Passkeys.UserVerification")
	return patch, p.err()
}

// handleServiceCreate serves POST /v2/Services (account credential only): a new app with
// the FriendlyName as its name, the default app's other settings, and access "key",
// since every call of Twilio's API carries credentials.
func handleServiceCreate(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := accountCaller(r.Context())
		if !isAccount(k) {
			writeError(w, r, d.Logger, errAccountOnly)
			return
		}
		patch, err := servicePatch(r)
		if err == nil && patch.Name == nil {
			err = &otp.ErrInvalidRequest{Fields: map[string]string{"FriendlyName": "is required"}}
		}
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		access := otp.AccessKey
		patch.Access = &access
		info, err := d.Admin.CreateApp(audited(r.Context(), k), patch, actor(k))
		if err != nil {
			writeError(w, r, d.Logger, renamed(err, appFieldParams))
			return
		}
		writeJSON(w, http.StatusCreated, newService(r, info.App))
	})
}

// handleServiceList serves GET /v2/Services: every app for the account credential, the
// default one first unless it is off; an app key sees its own.
func handleServiceList(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := newParams(r.URL.Query(), pagingParams...)
		pr := readPage(p)
		if err := p.err(); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		all, err := d.Admin.ListApps(r.Context())
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		k := accountCaller(r.Context())
		var list []service
		for _, info := range all {
			// An app that is off (the default app under OTP_DEFAULT_APP_ACCESS=off) has no
			// Service: fetching it answers as for none, and so does the list.
			if info.App.Access == otp.AccessOff {
				continue
			}
			if isAccount(k) || info.App.ID == k.AppID {
				list = append(list, newService(r, info.App))
			}
		}
		items, more := pageOf(list, pr)
		writeJSON(w, http.StatusOK, struct {
			Services []service `json:"services"`
			Meta     meta      `json:"meta"`
		}{append([]service{}, items...), newMeta(r, "/Services", "services", pr, more, "")})
	})
}

// handleServiceFetch serves GET /v2/Services/{ServiceSid}.
func handleServiceFetch(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := newParams(r.URL.Query()).err(); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		writeJSON(w, http.StatusOK, newService(r, callFrom(r.Context()).app))
	})
}

// handleServiceUpdate serves POST /v2/Services/{ServiceSid} (account credential only).
func handleServiceUpdate(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if !isAccount(c.key) {
			writeError(w, r, d.Logger, errAccountOnly)
			return
		}
		patch, err := servicePatch(r)
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		info, err := d.Admin.UpdateApp(audited(r.Context(), c.key), c.app.ID, patch, actor(c.key))
		if err != nil {
			writeError(w, r, d.Logger, renamed(err, appFieldParams))
			return
		}
		writeJSON(w, http.StatusOK, newService(r, info.App))
	})
}

// handleServiceDelete serves DELETE /v2/Services/{ServiceSid} (account credential only):
// the app is deleted and its keys revoked, as in the admin API.
func handleServiceDelete(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callFrom(r.Context())
		if !isAccount(c.key) {
			writeError(w, r, d.Logger, errAccountOnly)
			return
		}
		if err := d.Admin.DeleteApp(audited(r.Context(), c.key), c.app.ID, actor(c.key)); err != nil {
			writeError(w, r, d.Logger, renamed(err, appFieldParams))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// accountRoutes adds the account-level resources to the API's router.
func accountRoutes(r chi.Router, d Deps) {
	r.With(authenticateAccount(d)).Method(http.MethodGet, "/Services", handleServiceList(d))
	r.With(authenticateAccount(d)).Method(http.MethodPost, "/Services", handleServiceCreate(d))
	attemptRoutes(r, d)
	r.With(authenticateAccount(d)).Method(http.MethodGet, "/Templates", handleTemplateList(d))
}

// serviceRoutes adds the Service resource itself to the router of /Services/{ServiceSid}.
func serviceRoutes(r chi.Router, d Deps) {
	r.Method(http.MethodGet, "/", handleServiceFetch(d))
	r.Method(http.MethodPost, "/", handleServiceUpdate(d))
	r.Method(http.MethodDelete, "/", handleServiceDelete(d))
}
