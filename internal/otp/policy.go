package otp

import (
	"crypto/sha256"
	"encoding/hex"
	"otpgate/internal/contact"
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
func (s *Service) sendPolicy(t target, index, ip, fingerprint string) []Limit {
	limits := make([]Limit, 0, 4)
	if s.cfg.DuplicateWindow > 0 {
		limits = append(limits, Limit{
			Scope: ScopeDuplicate,
			Key:   duplicateKey(index, ip, fingerprint),
			Rules: []Rule{{Limit: 1, Window: s.cfg.DuplicateWindow}},
		})
	}
	scope, rules := ScopePhone, s.cfg.PhoneRules
	if t.email() {
		scope, rules = ScopeEmail, s.cfg.EmailRules
	}
	if len(rules) > 0 {
		limits = append(limits, Limit{Scope: scope, Key: index, Rules: rules})
	}
	if len(s.cfg.IPRules) > 0 {
		limits = append(limits, Limit{Scope: ScopeIP, Key: ip, Rules: s.cfg.IPRules})
	}
	if len(s.cfg.GlobalRules) > 0 {
		limits = append(limits, Limit{Scope: ScopeGlobal, Key: "all", Rules: s.cfg.GlobalRules})
	}
	return limits
}

// checkPolicy lists the limits one check must pass; address is empty when the check
// cannot succeed (no verification of the app's could be approved by it: the IP still
// pays for the guess, but no budget of the address is spent). The address's check
// budget is the app's partition of it (AddressKey), keyed by index (Config.Index).
func (s *Service) checkPolicy(app App, address, index, ip string) []Limit {
	var limits []Limit
	scope, rules := ScopeCheckPhone, s.cfg.CheckPhoneRules
	if contact.IsEmailAddress(address) {
		scope, rules = ScopeCheckEmail, s.cfg.CheckEmailRules
	}
	if address != "" && len(rules) > 0 {
		limits = append(limits, Limit{Scope: scope, Key: AddressKey(app, index), Rules: rules})
	}
	if len(s.cfg.CheckIPRules) > 0 {
		limits = append(limits, Limit{Scope: ScopeCheckIP, Key: ip, Rules: s.cfg.CheckIPRules})
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
