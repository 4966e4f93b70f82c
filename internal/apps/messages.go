package apps

import (
	"maps"
	"slices"
	"strings"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/templates"
)

// canonLocaleOrSelf is contact.CanonLocale for lists: a tag it does not know stays as given,
// for the error that names it.
func canonLocaleOrSelf(tag string) string {
	if l, ok := contact.CanonLocale(tag); ok {
		return l
	}
	return tag
}

// validateMessages checks and normalises the app's message settings: templates per
// built-in locale (keys written as contact.CanonLocale returns them; locales without a template
// dropped), the WebOTP domain and the Android app hash. Problems go into f by API name.
func validateMessages(a *otp.App, f map[string]string) {
	if len(a.Templates) > 0 {
		out := make(map[string]templates.Message, len(a.Templates))
		for _, tag := range slices.Sorted(maps.Keys(a.Templates)) {
			t := a.Templates[tag]
			l, ok := contact.CanonLocale(tag)
			if !ok {
				f["templates"] = `locale "` + tag + `" is not one of ` + strings.Join(locales, ", ")
				continue
			}
			if _, dup := out[l]; dup {
				f["templates"] = "locale " + l + " is given twice"
				continue
			}
			for field, problem := range t.Check() {
				f["templates."+l+"."+field] = problem
			}
			if !t.Empty() {
				out[l] = t
			}
		}
		a.Templates = out
	}
	if len(a.Templates) == 0 {
		a.Templates = nil
	}
	a.WebOTPDomain = strings.TrimSpace(a.WebOTPDomain)
	if a.WebOTPDomain != "" {
		if err := templates.CheckWebOTPDomain(a.WebOTPDomain); err != nil {
			f["webotp_domain"] = err.Error()
		}
	}
	a.AndroidAppHash = strings.TrimSpace(a.AndroidAppHash)
	if a.AndroidAppHash != "" {
		if err := templates.CheckAppHash(a.AndroidAppHash); err != nil {
			f["android_app_hash"] = err.Error()
		}
	}
}
