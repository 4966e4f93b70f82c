package delivery

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// providerName is the shape of a provider instance's name: it becomes part of variable
// names (TWILIO_AUTH_TOKEN_JP) and of receipt paths.
var providerName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// ValidName reports whether s can name a provider instance: a lower-case letter, then
// lower-case letters, digits or _, at most 32 in all.
func ValidName(s string) bool { return providerName.MatchString(s) }

// Route is one entry of a channel's route table.
type Route struct {
	// Countries are ISO 3166 alpha-2 codes; empty means every country not named elsewhere.
	Countries []string
	// Providers are instance names, tried in this order.
	Providers []string
}

// Routes is one channel's route table, such as SMS_ROUTES="JP,KR:webhook,twilio;*:twilio":
// entries separated by ";", each "COUNTRIES:providers" with countries separated by ","
// or "*" for the rest; an entry without "COUNTRIES:" is the "*" one.
type Routes []Route

var countryCode = regexp.MustCompile(`^[A-Z]{2}$`)

// UnmarshalText parses and checks the table's shape; New checks the provider names.
func (rs *Routes) UnmarshalText(b []byte) error {
	var out Routes
	seen := map[string]bool{}
	for entry := range strings.SplitSeq(string(b), ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return fmt.Errorf("empty entry")
		}
		var r Route
		countries, providers, ok := strings.Cut(entry, ":")
		if !ok {
			countries, providers = "*", entry
		}
		for c := range strings.SplitSeq(countries, ",") {
			c = strings.ToUpper(strings.TrimSpace(c))
			if c != "*" && !countryCode.MatchString(c) {
				return fmt.Errorf("%q: %q is not a country code (two letters) or *", entry, c)
			}
			if seen[c] {
				return fmt.Errorf("%q: %s has a route already", entry, c)
			}
			seen[c] = true
			if c != "*" {
				r.Countries = append(r.Countries, c)
			}
		}
		if len(r.Countries) > 0 && strings.Contains(countries, "*") {
			return fmt.Errorf("%q: * goes in an entry of its own", entry)
		}
		for p := range strings.SplitSeq(providers, ",") {
			p = strings.TrimSpace(p)
			if !ValidName(p) {
				return fmt.Errorf("%q: %q is not a provider name", entry, p)
			}
			if slices.Contains(r.Providers, p) {
				return fmt.Errorf("%q: %s is twice in one chain", entry, p)
			}
			r.Providers = append(r.Providers, p)
		}
		out = append(out, r)
	}
	*rs = out
	return nil
}

// String writes the table in the syntax UnmarshalText reads.
func (rs Routes) String() string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		countries := "*"
		if len(r.Countries) > 0 {
			countries = strings.Join(r.Countries, ",")
		}
		parts[i] = countries + ":" + strings.Join(r.Providers, ",")
	}
	return strings.Join(parts, ";")
}

// chain returns the providers for a country: its own entry's, else the "*" entry's.
func (rs Routes) chain(country string) ([]string, bool) {
	var rest []string
	found := false
	for _, r := range rs {
		if len(r.Countries) == 0 {
			rest, found = r.Providers, true
			continue
		}
		if slices.Contains(r.Countries, country) {
			return r.Providers, true
		}
	}
	return rest, found
}
