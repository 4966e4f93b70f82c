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
	// ScopeVerification is the per-verification send budget (OTP_MAX_SENDS), kept by the store.
	ScopeVerification = "verification"
)

// sendPolicy lists the limits one send must pass, duplicate first so that a double
// submit is reported as such even though the phone rule refuses it too.
func (s *Service) sendPolicy(phone, ip, fingerprint string) []Limit {
	limits := make([]Limit, 0, 4)
	if s.cfg.DuplicateWindow > 0 {
		limits = append(limits, Limit{
			Scope: ScopeDuplicate,
			Key:   phone + "|" + clientFingerprint(ip, fingerprint),
			Rules: []Rule{{Limit: 1, Window: s.cfg.DuplicateWindow}},
		})
	}
	if len(s.cfg.PhoneRules) > 0 {
		limits = append(limits, Limit{Scope: ScopePhone, Key: phone, Rules: s.cfg.PhoneRules})
	}
	if len(s.cfg.IPRules) > 0 {
		limits = append(limits, Limit{Scope: ScopeIP, Key: ip, Rules: s.cfg.IPRules})
	}
	if len(s.cfg.GlobalRules) > 0 {
		limits = append(limits, Limit{Scope: ScopeGlobal, Key: "all", Rules: s.cfg.GlobalRules})
	}
	return limits
}

// checkPolicy lists the limits one check must pass; phone is empty when the
// verification named by id does not exist (the IP still pays for the guess).
func (s *Service) checkPolicy(phone, ip string) []Limit {
	var limits []Limit
	if phone != "" && len(s.cfg.CheckPhoneRules) > 0 {
		limits = append(limits, Limit{Scope: ScopeCheckPhone, Key: phone, Rules: s.cfg.CheckPhoneRules})
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
