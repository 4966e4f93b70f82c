package providers

import (
	"fmt"
	"slices"
	"strings"

	"otpgate/internal/delivery"
)

// Instance is one named provider instance of SMS_PROVIDERS.
type Instance struct {
	// Name is what routes, history and metrics call it, such as "twilio" or "backup".
	Name string
	// Kind names its entry in Kinds, such as "twilio".
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

// UnmarshalText parses and checks the list: registered kinds, names of lower-case
// letters, digits and underscores (they become parts of variable names), each name once.
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
		if !delivery.ValidName(name) {
			return fmt.Errorf("%q: a name is a lower-case letter, then letters, digits or _ (at most 32)", name)
		}
		if _, known := Lookup(kind); !known {
			return fmt.Errorf("%q: kind %q: must be %s", entry, kind, Choices(""))
		}
		if slices.ContainsFunc(out, func(i Instance) bool { return i.Name == name }) {
			return fmt.Errorf("%q: name %s given twice", entry, name)
		}
		out = append(out, Instance{Name: name, Kind: kind})
	}
	*l = out
	return nil
}
