package delivery

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Kinds of provider instances, and the channels each can carry.
var kindChannels = map[string][]string{
	"log":     {"sms", "whatsapp", "voice", "email"},
	"webhook": {"sms"},
	"twilio":  {"sms", "whatsapp", "voice"},
	"smtp":    {"email"},
}

// KindChannels returns the channels a kind of provider carries, or nil for an unknown kind.
func KindChannels(kind string) []string { return slices.Clone(kindChannels[kind]) }

// Instance is one named provider instance of SMS_PROVIDERS.
type Instance struct {
	// Name is what routes, history and metrics call it, such as "twilio" or "backup".
	Name string
	// Kind is log, webhook, twilio or smtp.
	Kind string
}

// EnvSuffix is what the instance's settings carry after the kind's usual variable names:
// none for an instance named after its kind (TWILIO_AUTH_TOKEN), "_" and the upper-cased
// name for any other (TWILIO_AUTH_TOKEN_BACKUP).
func (i Instance) EnvSuffix() string {
	if i.Name == i.Kind {
		return ""
	}
	return "_" + strings.ToUpper(i.Name)
}

// Instances is the SMS_PROVIDERS list, "name:kind,name:kind"; an entry without ":kind"
// is an instance of that kind named after it ("twilio" is "twilio:twilio").
type Instances []Instance

var instanceName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// ValidName reports whether s can name a provider instance: a lower-case letter, then
// lower-case letters, digits or _, at most 32 in all.
func ValidName(s string) bool { return instanceName.MatchString(s) }

// UnmarshalText parses and checks the list: known kinds, names of lower-case letters,
// digits and underscores (they become parts of variable names), each name once.
func (l *Instances) UnmarshalText(b []byte) error {
	var out Instances
	for entry := range strings.SplitSeq(string(b), ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return fmt.Errorf("empty entry")
		}
		name, kind, ok := strings.Cut(entry, ":")
		name, kind = strings.TrimSpace(name), strings.TrimSpace(kind)
		if !ok {
			kind = name
		}
		if !instanceName.MatchString(name) {
			return fmt.Errorf("%q: a name is a lower-case letter, then letters, digits or _ (at most 32)", name)
		}
		if _, known := kindChannels[kind]; !known {
			return fmt.Errorf("%q: kind %q: must be log, webhook, twilio or smtp", entry, kind)
		}
		if slices.ContainsFunc(out, func(i Instance) bool { return i.Name == name }) {
			return fmt.Errorf("%q: name %s given twice", entry, name)
		}
		out = append(out, Instance{Name: name, Kind: kind})
	}
	*l = out
	return nil
}

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
			if !instanceName.MatchString(p) {
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
