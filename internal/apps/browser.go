package apps

import (
	"fmt"
	"slices"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
)

// maxOrigins bounds an app's allowed browser origins.
const maxOrigins = 50

// validateBrowser checks and normalises the settings of an app's browser callers and
// tokens into f: allowed_origins, token_ttl_seconds, token_address.
func validateBrowser(a *otp.App, f map[string]string) {
	switch {
	case a.TokenTTL == 0:
		a.TokenTTL = otp.DefaultTokenTTL
	case a.TokenTTL < otp.MinTokenTTL || a.TokenTTL > otp.MaxTokenTTL:
		f["token_ttl_seconds"] = fmt.Sprintf("must be between %d and %d", int(otp.MinTokenTTL/time.Second), int(otp.MaxTokenTTL/time.Second))
	}
	switch a.TokenAddress {
	case "":
		a.TokenAddress = otp.TokenAddressPlain
	case otp.TokenAddressPlain, otp.TokenAddressIndex:
	default:
		f["token_address"] = `must be "address" or "index"`
	}
	if len(a.AllowedOrigins) > maxOrigins {
		f["allowed_origins"] = fmt.Sprintf("must have at most %d entries", maxOrigins)
		return
	}
	out := make([]string, 0, len(a.AllowedOrigins))
	for _, o := range a.AllowedOrigins {
		canon, err := contact.CanonOrigin(o)
		if err != nil {
			f["allowed_origins"] = fmt.Sprintf("%q %s", o, err)
			return
		}
		out = append(out, canon)
	}
	slices.Sort(out)
	a.AllowedOrigins = slices.Compact(out)
	if len(a.AllowedOrigins) == 0 {
		a.AllowedOrigins = nil
	}
	if a.AllowedOrigins != nil && a.Access == otp.AccessKey {
		// A browser page could only call it with the key in the page, for anyone to read.
		f["allowed_origins"] = "a key app takes no calls from browsers (its key would be in the page): make it public, or list no origins"
	}
}

// normalBrowser is the default app with its browser settings normalised as Validate
// normalises them; what is wrong with them the configuration's check reports.
func normalBrowser(a otp.App) otp.App {
	validateBrowser(&a, map[string]string{})
	return a
}
