package providers

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"otpgate/internal/outbound"
)

// Settings are one instance's variables, read with its suffix.
type Settings struct {
	Instance
	kind   Kind
	values map[string]string
}

// Read reads the variables of an instance's kind with the instance's suffix and checks
// them. Errors name the variable as the instance reads it
// ("SMS_WEBHOOK_URL_BACKUP is required with provider backup (webhook)").
func Read(in Instance, getenv func(string) string) (Settings, error) {
	k, ok := Lookup(in.Kind)
	if !ok {
		return Settings{}, fmt.Errorf("provider %s: unknown kind %q", in.Name, in.Kind)
	}
	s := Settings{Instance: in, kind: k, values: make(map[string]string, len(k.Settings))}
	for _, v := range k.Settings {
		s.values[v.Name] = cmp.Or(getenv(s.Var(v.Name)), v.Default)
	}
	if k.Check != nil {
		if err := k.Check(s); err != nil {
			return s, err
		}
	}
	for _, v := range k.Settings {
		if v.Required && s.values[v.Name] == "" {
			return s, fmt.Errorf("%s is required with provider %s (%s)", s.Var(v.Name), in.Name, in.Kind)
		}
	}
	return s, nil
}

// Get is the value of one of the kind's variables, named without the suffix; "" for a
// variable the kind does not read.
func (s Settings) Get(name string) string { return s.values[name] }

// Var is a variable's name as this instance reads it, for messages: TWILIO_FROM_JP.
func (s Settings) Var(name string) string { return name + s.EnvSuffix() }

// Carries reports whether the instance's kind can carry channel.
func (s Settings) Carries(channel string) bool { return slices.Contains(s.kind.Channels, channel) }

// CheckOutbound refuses an instance whose URLs (the settings marked Outbound) lead where
// the policy refuses: to an address it refuses, or to a name that resolves to one. They are
// read at start, so a name that does not resolve then is left to the dialer.
// Errors name the variable and the host, never the whole URL, which may carry a token.
func (s Settings) CheckOutbound(ctx context.Context, p outbound.Policy) error {
	for _, v := range s.kind.Settings {
		if !v.Outbound || s.values[v.Name] == "" {
			continue
		}
		if err := p.CheckConfiguredURL(ctx, s.values[v.Name]); err != nil {
			return fmt.Errorf("%s: %w", s.Var(v.Name), err)
		}
	}
	return nil
}
