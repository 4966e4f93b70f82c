package apps

import (
	"errors"
	"maps"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/templates"
)

// Patch changes some settings of an app; nil fields stay as they are.
type Patch struct {
	Name             *string
	CodeLength       *int
	CodeTTL          *time.Duration
	MaxSends         *int
	MaxAttempts      *int
	Locales          *[]string
	AllowedCountries *[]string
	Channels         *[]string
	// SendRules and CheckRules are rule lists as the environment writes them, such as "1/1m,10/1h".
	SendRules  *string
	CheckRules *string
	Access     *otp.Access
	// Templates replaces the app's templates, all locales at once.
	Templates      *map[string]templates.Message
	WebOTPDomain   *string
	AndroidAppHash *string
	// DeniedNumberTypes replaces the app's denied number types (an empty list sends to every
	// type); ServerNumberTypes, when set instead, gives the app the server's again.
	DeniedNumberTypes *[]string
	ServerNumberTypes bool
	// PSD2 binds the app's codes to the payments they confirm (otp.App.PSD2).
	PSD2 *bool
	// AllowedOrigins, TokenTTL and TokenAddress are the app's browser settings.
	AllowedOrigins *[]string
	TokenTTL       *time.Duration
	TokenAddress   *otp.TokenAddress
}

// Apply returns a with the patch's fields set and validated by Validate. Errors:
// *otp.ErrInvalidRequest naming every bad field, send_rules and check_rules included.
func (p Patch) Apply(a otp.App) (otp.App, error) {
	fields := map[string]string{}
	for name, f := range map[string]struct {
		raw *string
		dst *rate.Rules
	}{"send_rules": {p.SendRules, &a.SendRules}, "check_rules": {p.CheckRules, &a.CheckRules}} {
		if f.raw != nil {
			if err := f.dst.UnmarshalText([]byte(*f.raw)); err != nil {
				fields[name] = err.Error()
			}
		}
	}
	set(&a.Name, p.Name)
	set(&a.CodeLength, p.CodeLength)
	set(&a.CodeTTL, p.CodeTTL)
	set(&a.MaxSends, p.MaxSends)
	set(&a.MaxAttempts, p.MaxAttempts)
	set(&a.Locales, p.Locales)
	set(&a.AllowedCountries, p.AllowedCountries)
	set(&a.Channels, p.Channels)
	set(&a.Access, p.Access)
	set(&a.Templates, p.Templates)
	set(&a.WebOTPDomain, p.WebOTPDomain)
	set(&a.AndroidAppHash, p.AndroidAppHash)
	set(&a.PSD2, p.PSD2)
	set(&a.AllowedOrigins, p.AllowedOrigins)
	set(&a.TokenTTL, p.TokenTTL)
	set(&a.TokenAddress, p.TokenAddress)
	switch {
	case p.ServerNumberTypes:
		a.DeniedNumberTypes = nil
	case p.DeniedNumberTypes != nil:
		types := append([]string{}, *p.DeniedNumberTypes...)
		a.DeniedNumberTypes = &types
	}
	a, err := Validate(a)
	var invalid *otp.ErrInvalidRequest
	if errors.As(err, &invalid) {
		maps.Copy(fields, invalid.Fields)
	} else if err != nil {
		return a, err
	}
	if len(fields) > 0 {
		return a, &otp.ErrInvalidRequest{Fields: fields}
	}
	return a, nil
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
