package otp

import (
	"crypto/sha256"
	"encoding/hex"
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
// email rules.
func (s *Service) sendPolicy(t target, ip, fingerprint string) []Limit {
	limits := make([]Limit, 0, 4)
	if s.cfg.DuplicateWindow > 0 {
		limits = append(limits, Limit{
			Scope: ScopeDuplicate,
			Key:   t.address + "|" + clientFingerprint(ip, fingerprint),
			Rules: []Rule{{Limit: 1, Window: s.cfg.DuplicateWindow}},
		})
	}
	scope, rules := ScopePhone, s.cfg.PhoneRules
	if t.email() {
		scope, rules = ScopeEmail, s.cfg.EmailRules
	}
	if len(rules) > 0 {
		limits = append(limits, Limit{Scope: scope, Key: t.address, Rules: rules})
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
// budget is the app's partition of it (AddressKey).
func (s *Service) checkPolicy(app App, address, ip string) []Limit {
	var limits []Limit
	scope, rules := ScopeCheckPhone, s.cfg.CheckPhoneRules
	if IsEmailAddress(address) {
		scope, rules = ScopeCheckEmail, s.cfg.CheckEmailRules
	}
	if address != "" && len(rules) > 0 {
		limits = append(limits, Limit{Scope: scope, Key: AddressKey(app, address), Rules: rules})
	}
	if len(s.cfg.CheckIPRules) > 0 {
		limits = append(limits, Limit{Scope: ScopeCheckIP, Key: ip, Rules: s.cfg.CheckIPRules})
	}
	return limits
}

// clientFingerprint tells clients apart for the duplicate window without putting
// user agents into Redis keys.
func clientFingerprint(ip, userAgent string) string {
	h := sha256.Sum256([]byte(ip + "\x00" + userAgent))
	return hex.EncodeToString(h[:8])
}
