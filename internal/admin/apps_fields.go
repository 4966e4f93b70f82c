package admin

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
	"otpgate/internal/templates"
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
	// DeniedNumberTypes replaces the app's; "default" gives it the server's again.
	DeniedNumberTypes typesOrDefault `json:"denied_number_types"`
	// PSD2Enabled binds the app's codes to the payment each confirms (amount and payee).
	PSD2Enabled *bool `json:"psd2_enabled"`
	// AllowedOrigins are the browser origins that may call the app (CORS); [] for none.
	AllowedOrigins *[]string `json:"allowed_origins"`
	// TokenTTLSeconds and TokenAddress are the app's verification token settings.
	TokenTTLSeconds *int    `json:"token_ttl_seconds"`
	TokenAddress    *string `json:"token_address"`
}

// typesOrDefault is a list of number types, or the string "default" for the server's:
// set tells a field left out from one sent, list is nil for "default".
type typesOrDefault struct {
	set  bool
	list *[]string
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *typesOrDefault) UnmarshalJSON(b []byte) error {
	n.set = true
	var word string
	if json.Unmarshal(b, &word) == nil {
		if word != "default" {
			return &json.UnmarshalTypeError{Value: "string " + word, Type: reflect.TypeFor[[]string](), Field: "denied_number_types"}
		}
		n.list = nil
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	if l == nil {
		l = []string{}
	}
	n.list = &l
	return nil
}

// appTemplates are one locale's templates in the admin API; absent ones are built in.
type appTemplates struct {
	SMS          string `json:"sms,omitempty"`
	Voice        string `json:"voice,omitempty"`
	EmailSubject string `json:"email_subject,omitempty"`
	EmailText    string `json:"email_text,omitempty"`
	EmailHTML    string `json:"email_html,omitempty"`
}

// patch turns the request into an apps.Patch, which validates it.
func (q appRequest) patch() apps.Patch {
	p := apps.Patch{
		Name: q.Name, CodeLength: q.CodeLength, MaxSends: q.MaxSends, MaxAttempts: q.MaxAttempts,
		Locales: q.Locales, AllowedCountries: q.AllowedCountries, Channels: q.Channels,
		SendRules: q.SendRules, CheckRules: q.CheckRules, WebOTPDomain: q.WebOTPDomain, AndroidAppHash: q.AndroidAppHash,
		PSD2: q.PSD2Enabled,
	}
	if q.Templates != nil {
		m := make(map[string]templates.Message, len(*q.Templates))
		for l, t := range *q.Templates {
			m[l] = templates.Message(t)
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
	p.AllowedOrigins = q.AllowedOrigins
	if q.TokenTTLSeconds != nil {
		d := time.Duration(*q.TokenTTLSeconds) * time.Second
		if *q.TokenTTLSeconds < 1 || *q.TokenTTLSeconds > int(otp.MaxTokenTTL/time.Second) {
			d = -1 // out of range (0 too, which the validator would read as the default): it names it
		}
		p.TokenTTL = &d
	}
	if q.TokenAddress != nil {
		a := otp.TokenAddress(*q.TokenAddress)
		p.TokenAddress = &a
	}
	if q.DeniedNumberTypes.set {
		p.DeniedNumberTypes, p.ServerNumberTypes = q.DeniedNumberTypes.list, q.DeniedNumberTypes.list == nil
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
	// DeniedNumberTypes are the app's own; null when it takes the server's.
	DeniedNumberTypes *[]string `json:"denied_number_types"`
	// PSD2Enabled: every send and check names the payment's amount and payee.
	PSD2Enabled bool `json:"psd2_enabled"`
	// AllowedOrigins, TokenTTLSeconds and TokenAddress are the app's browser settings.
	AllowedOrigins  []string   `json:"allowed_origins"`
	TokenTTLSeconds int64      `json:"token_ttl_seconds"`
	TokenAddress    string     `json:"token_address"`
	CreatedAt       *time.Time `json:"created_at,omitempty"`
	UpdatedAt       *time.Time `json:"updated_at,omitempty"`
	Keys            []adminKey `json:"keys"`
}

func toAdminApp(info apps.Info) adminApp {
	a := info.App
	out := adminApp{
		ID: a.ID, ServiceSID: apps.ServiceSID(a.ID), Name: a.Name, Default: a.Default,
		CodeLength: a.CodeLength, CodeTTLSeconds: httpkit.CeilSeconds(a.CodeTTL), MaxSends: a.MaxSends, MaxAttempts: a.MaxAttempts,
		Locales: nonNil(a.Locales), AllowedCountries: nonNil(a.AllowedCountries), Channels: nonNil(a.Channels),
		SendRules: a.SendRules.String(), CheckRules: a.CheckRules.String(), Access: string(a.Access),
		CreatedAt: timeOrNil(a.CreatedAt), UpdatedAt: timeOrNil(a.UpdatedAt), Keys: make([]adminKey, len(info.Keys)),
		Templates: make(map[string]appTemplates, len(a.Templates)), WebOTPDomain: a.WebOTPDomain, AndroidAppHash: a.AndroidAppHash,
		DeniedNumberTypes: a.DeniedNumberTypes, PSD2Enabled: a.PSD2,
		AllowedOrigins: nonNil(a.AllowedOrigins), TokenTTLSeconds: httpkit.CeilSeconds(a.TokenTTL), TokenAddress: string(a.TokenAddress),
	}
	for l, t := range a.Templates {
		out.Templates[l] = appTemplates(t)
	}
	for i, k := range info.Keys {
		out.Keys[i] = toAdminKey(k)
	}
	return out
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

// appsResponse is GET /admin/api/apps.
type appsResponse struct {
	Apps []adminApp `json:"apps"`
}

// appForm holds an app's settings as the console's form shows them.
type appForm struct {
	Name, Access, CodeLength, CodeTTL, MaxSends, MaxAttempts string
	Locales, Countries, Channels, SendRules, CheckRules      string
	WebOTPDomain, AndroidAppHash                             string
	// NumberTypes are the denied number types: "default" for the server's, "none" for none.
	NumberTypes string
}

// numberTypesText is an app's denied number types as the form shows them.
func numberTypesText(types *[]string) string {
	switch {
	case types == nil:
		return "default"
	case len(*types) == 0:
		return "none"
	}
	return strings.Join(*types, ",")
}

func newAppForm(a otp.App) appForm {
	return appForm{
		Name: a.Name, Access: string(a.Access), CodeLength: strconv.Itoa(a.CodeLength),
		CodeTTL: strconv.FormatInt(httpkit.CeilSeconds(a.CodeTTL), 10), MaxSends: strconv.Itoa(a.MaxSends),
		MaxAttempts: strconv.Itoa(a.MaxAttempts), Locales: strings.Join(a.Locales, ","),
		Countries: strings.Join(a.AllowedCountries, ","), Channels: strings.Join(a.Channels, ","),
		SendRules: a.SendRules.String(), CheckRules: a.CheckRules.String(),
		WebOTPDomain: a.WebOTPDomain, AndroidAppHash: a.AndroidAppHash, NumberTypes: numberTypesText(a.DeniedNumberTypes),
	}
}

// formOf keeps what was typed, for a form shown again with its problems.
func formOf(q url.Values) appForm {
	return appForm{
		Name: q.Get("name"), Access: q.Get("access"), CodeLength: q.Get("code_length"), CodeTTL: q.Get("code_ttl_seconds"),
		MaxSends: q.Get("max_sends"), MaxAttempts: q.Get("max_attempts"), Locales: q.Get("locales"),
		Countries: q.Get("allowed_countries"), Channels: q.Get("channels"), SendRules: q.Get("send_rules"), CheckRules: q.Get("check_rules"),
		WebOTPDomain: q.Get("webotp_domain"), AndroidAppHash: q.Get("android_app_hash"), NumberTypes: q.Get("denied_number_types"),
	}
}

// patchOf reads the form into a patch; empty fields are left as they are, and a
// number that is not one is named among the problems.
func patchOf(q url.Values) (apps.Patch, map[string]string) {
	var p appRequest
	problems := map[string]string{}
	text := func(name string) *string {
		if !q.Has(name) {
			return nil
		}
		v := strings.TrimSpace(q.Get(name))
		return &v
	}
	num := func(name string) *int {
		v := strings.TrimSpace(q.Get(name))
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			problems[name] = "must be a whole number"
			return nil
		}
		return &n
	}
	list := func(name string) *[]string {
		v := text(name)
		if v == nil {
			return nil
		}
		out := []string{}
		for _, s := range strings.Split(*v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return &out
	}
	p.Name, p.Access, p.SendRules, p.CheckRules = text("name"), text("access"), text("send_rules"), text("check_rules")
	p.CodeLength, p.CodeTTLSeconds, p.MaxSends, p.MaxAttempts = num("code_length"), num("code_ttl_seconds"), num("max_sends"), num("max_attempts")
	p.Locales, p.AllowedCountries, p.Channels = list("locales"), list("allowed_countries"), list("channels")
	p.WebOTPDomain, p.AndroidAppHash = text("webotp_domain"), text("android_app_hash")
	// The server's types are "default" or an empty field; "none" denies no type.
	if v := text("denied_number_types"); v != nil {
		p.DeniedNumberTypes.set = true
		switch strings.ToLower(*v) {
		case "", "default":
		case "none":
			p.DeniedNumberTypes.list = &[]string{}
		default:
			p.DeniedNumberTypes.list = list("denied_number_types")
		}
	}
	return p.patch(), problems
}

// appsPage is the data of apps.html.
type appsPage struct {
	Apps     []apps.Info
	Form     appForm
	Problems []fieldProblem
}

// appPage is the data of app.html.
type appPage struct {
	Info       apps.Info
	ServiceSID string
	Form       appForm
	Problems   []fieldProblem
	// Secret is the key just made, shown once.
	Secret *apps.CreatedKey
	// Hooks are the app's webhook endpoints and what the page says about them; nil when
	// the console has no webhooks.
	Hooks *hooksSection
	// Tests are the app's test numbers and their form.
	Tests testsSection
	// TOTP links the app's TOTP page: the console has one.
	TOTP bool
}
