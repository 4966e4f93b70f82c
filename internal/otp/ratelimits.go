package otp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ScopeRateLimit is the scope of an app's rate limits that the caller keys by a value of
// its own (a user id, a session): Twilio's Service Rate Limits.
const ScopeRateLimit = "rate_limit"

// maxRateLimitValueLen bounds a rate limit's value.
const maxRateLimitValueLen = 256

// KeyedLimit is one of an app's rate limits, with the value a send keys it by: its rules
// (Twilio's buckets) limit the sends of the app that name that value.
type KeyedLimit struct {
	// ID names the rate limit; Name is its unique name, which the caller used.
	ID, Name string
	Value    string
	Rules    []Rule
}

// checkKeyedLimits says what is wrong with the values of a send's rate limits, into f.
func checkKeyedLimits(limits []KeyedLimit, f map[string]string) {
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
func keyedLimits(app App, limits []KeyedLimit, index func(string) string) []Limit {
	var out []Limit
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
		out = append(out, Limit{Scope: ScopeRateLimit, Key: app.ID + "|" + k.ID + "|" + v, Rules: k.Rules})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
