package otp

import (
	"slices"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/contact"
	"otpgate/internal/rate"
	"otpgate/internal/templates"
)

// DefaultAppID is the id of the default app, the one built from the OTP_* environment
// that serves /v1/verifications. It is fixed, so its history, keys and Twilio
// ServiceSid (VA00000000000000000000000000000001) stay the same across restarts.
const DefaultAppID = "00000000-0000-0000-0000-000000000001"

// DefaultAppAlias names the default app in URLs, as /v1/apps/default/verifications.
const DefaultAppAlias = "default"

// Access says who may call an app.
type Access string

// Access modes.
const (
	// AccessPublic apps take calls without a key, straight from mobile and web apps,
	// guarded by the IP-keyed rules.
	AccessPublic Access = "public"
	// AccessKey apps need one of their API keys on every call.
	AccessKey Access = "key"
	// AccessOff is for the default app alone (OTP_DEFAULT_APP_ACCESS=off): it takes no
	// call at all, so a server of key apps has no unauthenticated door.
	AccessOff Access = "off"
)

// ErrAppOff refuses every call of an app whose access is off (the default app under
// OTP_DEFAULT_APP_ACCESS=off) before anything is looked up or spent.
var ErrAppOff = Errorf(CodeNotFound, "the default app is off on this server (OTP_DEFAULT_APP_ACCESS=off): "+
	"call /v1/apps/{app_id}/verifications with the id of your app")

// Bounds of an app's settings; the code bounds are the ones OTP_CODE_LENGTH and
// OTP_CODE_TTL have.
const (
	MinCodeLength = 4
	MaxCodeLength = 10
	MaxCodeTTL    = 10 * time.Minute
)

// locales are the built-in message locales, read once.
var locales = contact.KnownLocales()

// App is one configuration of the service, what Twilio calls a Verify service. The
// running service reads apps from an immutable snapshot; apps.Validate is the one check
// of an app's settings, used by the configuration loader, the admin API and the stores.
type App struct {
	ID string
	// Name is shown in the messages of every app but the default one.
	Name        string
	CodeLength  int
	CodeTTL     time.Duration
	MaxSends    int
	MaxAttempts int
	// Locales are the message locales the app accepts; empty accepts every one the server has.
	Locales []string
	// AllowedCountries are ISO 3166 alpha-2 codes; empty allows every country.
	AllowedCountries []string
	// Channels are the channels the app accepts; empty accepts every one the server has.
	Channels []string
	// Templates replace built-in message templates, per locale.
	Templates map[string]templates.Message
	// WebOTPDomain, when set, ends every SMS with the origin-bound line "@<domain> #<code>",
	// so that a browser on that origin offers the code (WebOTP).
	WebOTPDomain string
	// AndroidAppHash, when set, puts the app's Android SMS Retriever hash on its own line
	// of every SMS, before the WebOTP line.
	AndroidAppHash string
	// SendRules are the app's own rules per phone (scope "app"), added to the shared ones.
	SendRules rate.Rules
	// CheckRules are the app's own check rules per phone (scope "app_check"), added to the shared ones.
	CheckRules rate.Rules
	// DeniedNumberTypes, when not nil, replaces the server's list of number types codes
	// are not sent to by SMS or voice (an empty list sends to every type).
	DeniedNumberTypes *[]string
	// AllowedOrigins are the browser origins (as contact.CanonOrigin writes them) whose pages may
	// call the app: CORS answers these and no other.
	AllowedOrigins []string
	// TokenTTL is how long the verification token of an approved check lasts.
	TokenTTL time.Duration
	// TokenAddress says how the token names the verified address.
	TokenAddress TokenAddress
	// PSD2 binds every code to the payment it confirms (Transaction): every send and check
	// must name its amount and payee, and a check naming others fails (Twilio's Psd2Enabled).
	PSD2 bool
	// TestNumbers are the app's test numbers by address, expired ones included (see
	// App.TestNumber); the apps registry fills them in, apps.Validate ignores them.
	TestNumbers map[string]TestNumber
	Access      Access
	// Default marks the default app, whose settings come from the environment.
	Default   bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// DefaultApp is the default app as the configuration describes it. apps.Validate
// checks and normalises it, as every app; the apps registry serves it normalised.
func (c Config) DefaultApp() App {
	return App{
		ID: DefaultAppID, Name: DefaultAppAlias, Default: true, Access: c.defaultAccess(),
		CodeLength: c.CodeLength, CodeTTL: c.CodeTTL, MaxSends: c.MaxSends, MaxAttempts: c.MaxAttempts,
		AllowedCountries: c.AllowedCountries, WebOTPDomain: c.WebOTPDomain, AndroidAppHash: c.AndroidAppHash,
		AllowedOrigins: c.AllowedOrigins, TokenTTL: c.TokenTTL, TokenAddress: c.TokenAddress,
	}
}

// defaultAccess is the default app's access mode: public unless the configuration says.
func (c Config) defaultAccess() Access {
	if c.DefaultAccess == "" {
		return AccessPublic
	}
	return c.DefaultAccess
}

// AcceptsLocale reports whether the app sends messages in locale l, a built-in locale
// as contact.CanonLocale returns it.
func (a App) AcceptsLocale(l string) bool {
	return slices.Contains(locales, l) && (len(a.Locales) == 0 || slices.Contains(a.Locales, l))
}

// AcceptsChannel reports whether the app sends codes over channel ch.
func (a App) AcceptsChannel(ch string) bool {
	return slices.Contains(channels[:], ch) && (len(a.Channels) == 0 || slices.Contains(a.Channels, ch))
}

// AllowsCountry applies AllowedCountries; an empty list allows all.
func (a App) AllowsCountry(region string) bool {
	return len(a.AllowedCountries) == 0 || slices.Contains(a.AllowedCountries, region)
}

// acceptedLocales are the locales the app accepts, for error messages.
func (a App) acceptedLocales() []string { return orAll(a.Locales, locales) }

func orAll(list, all []string) []string {
	if len(list) == 0 {
		return all
	}
	return list
}

// CanonAppID turns an app reference from a URL into an app id: the alias "default"
// is the default app, and UUIDs are written in lower case. ok is false when ref names
// no app id at all.
func CanonAppID(ref string) (string, bool) {
	if ref == DefaultAppAlias {
		return DefaultAppID, true
	}
	u, err := uuid.Parse(ref)
	if err != nil || len(ref) != 36 {
		return "", false
	}
	return u.String(), true
}

// validUUID reports whether s is a UUID in its 36-character form.
func validUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}

// StoredAppID is the app id a store keeps for id: the default app's when id is empty,
// as for rows written before there were apps.
func StoredAppID(id string) string {
	if id == "" {
		return DefaultAppID
	}
	return id
}

// TemplatesFor is the app's templates for a locale; zero when it has none.
func (a App) TemplatesFor(locale string) templates.Message { return a.Templates[locale] }

// TokenAddress says how a verification token names the address it proves.
type TokenAddress string

// The ways a token names its address.
const (
	// TokenAddressPlain puts the address itself (E.164 or the normalised email) in the
	// token's "address" claim: the browser that typed it can read it anyway.
	TokenAddressPlain TokenAddress = "address"
	// TokenAddressIndex puts the address's keyed index (the HMAC the stores and the
	// limiter key it by) in "address_index" instead, for backends that must not learn it.
	TokenAddressIndex TokenAddress = "index"
)

// Bounds of an app's browser settings.
const (
	// DefaultTokenTTL is how long a verification token lasts unless the app says.
	DefaultTokenTTL = 10 * time.Minute
	// MinTokenTTL and MaxTokenTTL bound it: signing keys are published for MaxTokenTTL
	// after they stop signing, so every token outlives none of its keys.
	MinTokenTTL = 10 * time.Second
	MaxTokenTTL = time.Hour
)

// AllowsOrigin reports whether a browser page of origin (the Origin header) may call
// the app: only the origins it lists.
func (a App) AllowsOrigin(origin string) bool {
	return origin != "" && slices.Contains(a.AllowedOrigins, origin)
}
