package apps

import (
	"slices"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// AddressKeys are every partition of address for apps, in the order of apps with the
// key apps' partition once: what an operator inspects and resets for one address. The
// service keys every partition by the address's index (otp.Config.Index): callers pass that.
func AddressKeys(apps []otp.App, address string) []string {
	var out []string
	for _, a := range apps {
		if k := otp.AddressKey(a, address); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// AddressLimits are the limiter keys an address can have in apps: its send and check
// scopes in every partition (AddressKeys) and every app's own scopes, keyed by index, the
// address's otp.Config.Index. Only Scope and Key are set: what an erasure deletes.
func AddressLimits(apps []otp.App, address, index string) []rate.Limit {
	send, check := otp.ScopePhone, otp.ScopeCheckPhone
	if contact.IsEmailAddress(address) {
		send, check = otp.ScopeEmail, otp.ScopeCheckEmail
	}
	var out []rate.Limit
	for _, k := range AddressKeys(apps, index) {
		out = append(out, rate.Limit{Scope: send, Key: k}, rate.Limit{Scope: check, Key: k})
	}
	for _, a := range apps {
		out = append(out, rate.Limit{Scope: otp.ScopeApp, Key: a.ID + "|" + index}, rate.Limit{Scope: otp.ScopeAppCheck, Key: a.ID + "|" + index})
	}
	return out
}
