package twilioapi

import (
	"net/http"
	"slices"
	"strings"

	"otpgate/internal/otp"
)

// Texts tells the built-in message templates; *message.Catalog implements it.
type Texts interface {
	// Locales lists the built-in locales, sorted.
	Locales() []string
	// BuiltinSMS is the built-in SMS template of a locale; ok is false for none.
	BuiltinSMS(locale string) (string, bool)
}

// builtinTemplateSID names otpgate's built-in templates, the template every app uses for
// the locales it has no own template for.
const builtinTemplateSID = "HJ00000000000000000000000000000000"

// appTemplateSID names an app's own templates: "HJ" and the app's 32 hex digits.
func appTemplateSID(appID string) string { return "HJ" + strings.ReplaceAll(appID, "-", "") }

// verificationTemplate is Twilio's Verification Template: a set of message texts per
// locale. Texts are otpgate's templates as written (Go text/template over {{.Code}},
// {{.App}}, {{.Expiry}} …; see docs/delivery.md).
type verificationTemplate struct {
	Sid          string                 `json:"sid"`
	AccountSid   string                 `json:"account_sid"`
	FriendlyName string                 `json:"friendly_name"`
	Channels     []string               `json:"channels"`
	Translations map[string]translation `json:"translations"`
}

// translation is one locale's text of a template.
type translation struct {
	Locale               string `json:"locale"`
	Text                 string `json:"text"`
	Status               string `json:"status"`
	IsDefaultTranslation bool   `json:"is_default_translation"`
}

// builtinTemplate is otpgate's built-in templates, named for app (whose account it is in).
func builtinTemplate(t Texts, app otp.App) verificationTemplate {
	out := verificationTemplate{
		Sid: builtinTemplateSID, AccountSid: accountSID(app), FriendlyName: "otpgate built-in",
		Channels: []string{"sms", "whatsapp", "call", "email"}, Translations: map[string]translation{},
	}
	for _, l := range t.Locales() {
		text, _ := t.BuiltinSMS(l)
		out.Translations[l] = translation{Locale: l, Text: text, Status: "approved", IsDefaultTranslation: l == "en"}
	}
	return out
}

// appTemplate is an app's own templates; ok is false for an app that has none.
func appTemplate(app otp.App) (verificationTemplate, bool) {
	if len(app.Templates) == 0 {
		return verificationTemplate{}, false
	}
	out := verificationTemplate{
		Sid: appTemplateSID(app.ID), AccountSid: accountSID(app), FriendlyName: app.Name,
		Channels: []string{}, Translations: map[string]translation{},
	}
	for l, t := range app.Templates {
		for ch, text := range map[string]string{"sms": t.SMS, "call": t.Voice, "email": t.EmailText} {
			if text != "" && !slices.Contains(out.Channels, ch) {
				out.Channels = append(out.Channels, ch)
			}
		}
		out.Translations[l] = translation{Locale: l, Text: t.SMS, Status: "approved", IsDefaultTranslation: l == "en"}
	}
	slices.Sort(out.Channels)
	return out, true
}

// handleTemplateList serves GET /v2/Templates: the built-in templates, then every app's
// own for the account credential (an app key sees its own app's). FriendlyName keeps
// the templates whose name contains it, in any letter case.
func handleTemplateList(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := newParams(r.URL.Query(), append(pagingParams, "FriendlyName")...)
		pr := readPage(p)
		name, _ := p.str("FriendlyName")
		if err := p.err(); err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		k := accountCaller(r.Context())
		all, err := d.Admin.ListApps(r.Context())
		if err != nil {
			writeError(w, r, d.Logger, err)
			return
		}
		var list []verificationTemplate
		for i, info := range all {
			if i == 0 {
				list = append(list, builtinTemplate(d.Texts, info.App))
			}
			if t, ok := appTemplate(info.App); ok && (isAccount(k) || info.App.ID == k.AppID) {
				list = append(list, t)
			}
		}
		list = slices.DeleteFunc(list, func(t verificationTemplate) bool {
			return !strings.Contains(strings.ToLower(t.FriendlyName), strings.ToLower(strings.TrimSpace(name)))
		})
		items, more := pageOf(list, pr)
		writeJSON(w, http.StatusOK, struct {
			Templates []verificationTemplate `json:"templates"`
			Meta      meta                   `json:"meta"`
		}{append([]verificationTemplate{}, items...), newMeta(r, "/Templates", "templates", pr, more, "")})
	})
}

// templateSidProblem accepts a send's TemplateSid only when it names the templates the
// send is rendered from anyway: the app's own when it has some, else the built-in ones.
// Choosing other templates per send is not supported. It says what is wrong, or "".
func templateSidProblem(r *http.Request, app otp.App) string {
	sid, ok := r.PostForm["TemplateSid"]
	if !ok {
		return ""
	}
	want := builtinTemplateSID
	if len(app.Templates) > 0 {
		want = appTemplateSID(app.ID)
	}
	if len(sid) != 1 || !strings.EqualFold(sid[0], want) {
		return "must be " + want + ", the templates this service renders its messages from (GET /v2/Templates); choosing others per send is not supported by otpgate"
	}
	return ""
}
