package apps

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/templates"
)

// Bounds of an app's settings that its API fields do not state themselves.
const (
	maxAppBudget   = 1_000_000
	maxAppNameLen  = templates.SampleNameLen
	maxAppListSize = 300
)

// locales and channels are the server's message locales and channels, read once.
var (
	locales  = contact.KnownLocales()
	channels = otp.Channels()
)

// Validate checks every setting of a and returns it normalised: names trimmed, lists
// sorted without repeats, country codes upper-cased. It is the one check of an app's
// settings, used by the configuration loader, the admin API and the stores. Errors:
// *otp.ErrInvalidRequest naming each bad field by its API name (name, code_length,
// code_ttl_seconds, max_sends, max_attempts, locales, allowed_countries, channels,
// access, id, templates, webotp_domain, android_app_hash, denied_number_types,
// allowed_origins, token_ttl_seconds, token_address).
func Validate(a otp.App) (otp.App, error) {
	if err := otp.CheckTextIn("app", a); err != nil {
		return a, err
	}
	f := map[string]string{}
	if a.ID != "" {
		if id, ok := otp.CanonAppID(a.ID); ok && a.ID != otp.DefaultAppAlias {
			a.ID = id
		} else {
			f["id"] = "must be a UUID"
		}
	}
	a.Name = strings.TrimSpace(a.Name)
	switch {
	case a.Name == "":
		f["name"] = "is required"
	case utf8.RuneCountInString(a.Name) > maxAppNameLen:
		f["name"] = fmt.Sprintf("must be at most %d characters", maxAppNameLen)
	case strings.IndexFunc(a.Name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		f["name"] = "must be printable text on one line"
	case templates.HiddenText(a.Name):
		// Printable letters such as U+3164 HANGUL FILLER render as nothing; the name is
		// shown in every message (and is a Twilio Service's FriendlyName), so it is held
		// to the friendly names' rule.
		f["name"] = "must not hold invisible characters"
	}
	if a.CodeLength < otp.MinCodeLength || a.CodeLength > otp.MaxCodeLength {
		f["code_length"] = fmt.Sprintf("must be between %d and %d", otp.MinCodeLength, otp.MaxCodeLength)
	}
	if a.CodeTTL <= 0 || a.CodeTTL > otp.MaxCodeTTL {
		f["code_ttl_seconds"] = "must be more than 0 and at most 10m"
	}
	for name, n := range map[string]int{"max_sends": a.MaxSends, "max_attempts": a.MaxAttempts} {
		switch {
		case n < 1:
			f[name] = "must be at least 1"
		case n > maxAppBudget:
			f[name] = fmt.Sprintf("must be at most %d", maxAppBudget)
		}
	}
	var err string
	if a.Locales, err = knownSubset(a.Locales, locales, canonLocaleOrSelf); err != "" {
		f["locales"] = err
	}
	if a.Channels, err = knownSubset(a.Channels, channels, strings.ToLower); err != "" {
		f["channels"] = err
	}
	validateMessages(&a, f)
	if a.AllowedCountries, err = regions(a.AllowedCountries); err != "" {
		f["allowed_countries"] = err
	}
	if a.DeniedNumberTypes != nil {
		types, problem := knownSubset(*a.DeniedNumberTypes, contact.NumberTypes(), strings.ToLower)
		if problem != "" {
			f["denied_number_types"] = problem
		}
		if types == nil {
			types = []string{}
		}
		a.DeniedNumberTypes = &types
	}
	switch a.Access {
	case otp.AccessPublic, otp.AccessKey:
	case otp.AccessOff:
		if !a.Default {
			f["access"] = `must be "public" or "key"`
		}
	case "":
		a.Access = otp.AccessPublic
	default:
		f["access"] = `must be "public" or "key"`
	}
	validateBrowser(&a, f)
	if len(f) > 0 {
		return a, &otp.ErrInvalidRequest{Fields: f}
	}
	return a, nil
}

// knownSubset normalises a list that must only hold values of known; it returns the
// list sorted and without repeats, or a problem.
func knownSubset(list, known []string, norm func(string) string) ([]string, string) {
	var out []string
	for _, v := range list {
		v = norm(strings.TrimSpace(v))
		if !slices.Contains(known, v) {
			return nil, fmt.Sprintf("%q is not one of %s", v, strings.Join(known, ", "))
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return slices.Compact(out), ""
}

// regions normalises a list of ISO 3166 codes as contact.Countries does.
func regions(list []string) ([]string, string) {
	if len(list) > maxAppListSize {
		return nil, fmt.Sprintf("must have at most %d entries", maxAppListSize)
	}
	var c contact.Countries
	if err := c.UnmarshalText([]byte(strings.Join(list, ","))); err != nil {
		return nil, err.Error()
	}
	out := []string(c)
	slices.Sort(out)
	return slices.Compact(out), ""
}
