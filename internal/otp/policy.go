package otp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"otpgate/internal/contact"
	"otpgate/internal/rate"
)

// Limiter scopes. They appear in violations, RateLimit headers and history.
const (
	ScopePhone      = "phone"
	ScopeIP         = "ip"
	ScopeDuplicate  = "duplicate"
	ScopeGlobal     = "global"
	ScopeCheckPhone = "check_phone"
	ScopeCheckIP    = "check_ip"
	// ScopeEmail and ScopeCheckEmail count sends and checks per email address, as the
	// phone scopes do per number.
	ScopeEmail      = "email"
	ScopeCheckEmail = "check_email"
	// ScopeVerification is the per-verification send budget (OTP_MAX_SENDS), kept by the store.
	ScopeVerification = "verification"
)

// sendPolicy lists the limits one send must pass, duplicate first so that a double
// submit is reported as such even though the phone (or email) rule refuses it too. A
// phone is limited per number on every phone channel together; an email address by the
// email rules. index is what stands in for the address in keys (Config.Index).
func (s *Service) sendPolicy(t target, index, ip, fingerprint string) []rate.Limit {
	limits := make([]rate.Limit, 0, 4)
	if s.cfg.DuplicateWindow > 0 {
		limits = append(limits, rate.Limit{
			Scope: ScopeDuplicate,
			Key:   duplicateKey(index, ip, fingerprint),
			Rules: []rate.Rule{{Limit: 1, Window: s.cfg.DuplicateWindow}},
		})
	}
	scope, rules := ScopePhone, s.cfg.PhoneRules
	if t.email() {
		scope, rules = ScopeEmail, s.cfg.EmailRules
	}
	if len(rules) > 0 {
		limits = append(limits, rate.Limit{Scope: scope, Key: index, Rules: rules})
	}
	if len(s.cfg.IPRules) > 0 {
		limits = append(limits, rate.Limit{Scope: ScopeIP, Key: ip, Rules: s.cfg.IPRules})
	}
	if len(s.cfg.GlobalRules) > 0 {
		limits = append(limits, rate.Limit{Scope: ScopeGlobal, Key: "all", Rules: s.cfg.GlobalRules})
	}
	return limits
}

// checkPolicy lists the limits one check must pass; address is empty when the check
// cannot succeed (no verification of the app's could be approved by it: the IP still
// pays for the guess, but no budget of the address is spent). The address's check
// budget is the app's partition of it (AddressKey), keyed by index (Config.Index).
func (s *Service) checkPolicy(app App, address, index, ip string) []rate.Limit {
	var limits []rate.Limit
	scope, rules := ScopeCheckPhone, s.cfg.CheckPhoneRules
	if contact.IsEmailAddress(address) {
		scope, rules = ScopeCheckEmail, s.cfg.CheckEmailRules
	}
	if address != "" && len(rules) > 0 {
		limits = append(limits, rate.Limit{Scope: scope, Key: AddressKey(app, index), Rules: rules})
	}
	if len(s.cfg.CheckIPRules) > 0 {
		limits = append(limits, rate.Limit{Scope: ScopeCheckIP, Key: ip, Rules: s.cfg.CheckIPRules})
	}
	return limits
}

// duplicateKey is the key of one address and client in the duplicate window: a hash of
// the address's index with the client's IP and user agent, so that neither user agents
// nor anything an erasure looks for (the address, its index) are in Redis key names. The
// key lives only as long as the window (seconds), so an erasure leaves it to expire.
func duplicateKey(index, ip, userAgent string) string {
	h := sha256.Sum256([]byte(index + "\x00" + ip + "\x00" + userAgent))
	return hex.EncodeToString(h[:12])
}

// maxRateLimitValueLen bounds a rate limit's value.
const maxRateLimitValueLen = 256

// checkKeyedLimits says what is wrong with the values of a send's rate limits, into f.
func checkKeyedLimits(limits []rate.KeyedLimit, f map[string]string) {
	for _, k := range limits {
		field := "rate_limits." + k.Name
		switch {
		case k.Value == "":
			f[field] = "must not be empty"
		case len(k.Value) > maxRateLimitValueLen:
			f[field] = fmt.Sprintf("must be at most %d bytes", maxRateLimitValueLen)
		case !utf8.ValidString(k.Value):
			f[field] = "must be valid UTF-8"
		case strings.ContainsFunc(k.Value, unicode.IsControl):
			f[field] = "must not hold control characters"
		}
	}
}

// keyedLimits are the limits of a send's rate limits, in a fixed order (by name), so that
// the policy is the same whatever order the caller named them in. The value is hashed into
// the key: it is the caller's, may be long, and need not be readable in Redis. Values are
// often phone numbers, whose few digits a plain hash would not hide, so it is the keyed
// index when there is one (Config.AddressIndex).
func keyedLimits(app App, limits []rate.KeyedLimit, index func(string) string) []rate.Limit {
	var out []rate.Limit
	for _, k := range limits {
		if len(k.Rules) == 0 {
			continue // a rate limit without buckets limits nothing, as in Twilio
		}
		var v string
		if index != nil {
			v = index(k.Value)
		} else {
			sum := sha256.Sum256([]byte(k.Value))
			v = hex.EncodeToString(sum[:16])
		}
		out = append(out, rate.Limit{Scope: rate.ScopeRateLimit, Key: app.ID + "|" + k.ID + "|" + v, Rules: k.Rules})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
