package apps_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
	"otpgate/internal/templates"
)

func TestAppMessageSettings(t *testing.T) {
	base := otp.Config{CodeLength: 6, CodeTTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5}.DefaultApp()
	base.Name, base.Default, base.ID = "Shop", false, ""
	t.Run("NormalisesLocalesAndDropsEmptyTemplates", func(t *testing.T) {
		a := base
		a.Locales = []string{"PT-br", "ja"}
		a.Templates = map[string]templates.Message{"pt-br": {SMS: "{{.Code}}"}, "en": {}}
		a.WebOTPDomain = " shop.example.com "
		got, err := apps.Validate(a)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Locales, []string{"ja", "pt-BR"}) || !reflect.DeepEqual(got.Templates, map[string]templates.Message{"pt-BR": {SMS: "{{.Code}}"}}) ||
			got.WebOTPDomain != "shop.example.com" {
			t.Errorf("got locales %v templates %v domain %q", got.Locales, got.Templates, got.WebOTPDomain)
		}
	})
	t.Run("NamesEveryBadSetting", func(t *testing.T) {
		a := base
		a.Templates = map[string]templates.Message{"de": {SMS: "{{.Code}", EmailHTML: "<p>{{.Nope}}</p>"}, "tlh": {SMS: "{{.Code}}"}}
		a.WebOTPDomain, a.AndroidAppHash, a.Channels = "Shop.Example.com:443", "not-a-hash!", []string{"fax"}
		_, err := apps.Validate(a)
		var inv *otp.ErrInvalidRequest
		if !errors.As(err, &inv) {
			t.Fatalf("got %v, want *ErrInvalidRequest", err)
		}
		for _, f := range []string{"templates.de.sms", "templates.de.email_html", "templates", "webotp_domain", "android_app_hash", "channels"} {
			if inv.Fields[f] == "" {
				t.Errorf("%s not named: %v", f, inv.Fields)
			}
		}
	})
}

// TestOnlyTheDefaultAppCanBeOff holds access "off" to the default app: any other app
// that asks for it is refused, naming access.
func TestOnlyTheDefaultAppCanBeOff(t *testing.T) {
	cfg := otp.Config{CodeLength: 6, CodeTTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 3, DefaultAccess: otp.AccessOff}
	if _, err := apps.Validate(cfg.DefaultApp()); err != nil {
		t.Errorf("default app: got %v, want valid", err)
	}
	other := cfg.DefaultApp()
	other.ID, other.Name, other.Default = "0193a4c2-7d1e-7c3a-9b1e-2f4d5a6b7c8d", "Tenant", false
	var invalid *otp.ErrInvalidRequest
	if _, err := apps.Validate(other); !errors.As(err, &invalid) || invalid.Fields["access"] == "" {
		t.Errorf("another app: got %v, want access refused", err)
	}
}

// TestAppNameIsSeenWhole: the name goes into every message, so it refuses what renders as
// nothing or reorders the text around it, as every friendly name does.
func TestAppNameIsSeenWhole(t *testing.T) {
	a := otp.Config{CodeLength: 6, CodeTTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5}.DefaultApp()
	a.Default, a.ID = false, ""
	for name, c := range map[string]struct{ name, problem string }{
		"HangulFiller":        {"Acme\u3164Bank", "must not hold invisible characters"},
		"HalfWidthFiller":     {"Acme\uffa0Bank", "must not hold invisible characters"},
		"GraphemeJoiner":      {"Ac\u034fme", "must not hold invisible characters"},
		"ZeroWidthSpace":      {"Ac\u200bme", "must be printable text on one line"},
		"RightToLeftOverride": {"Acme\u202eknaB", "must be printable text on one line"},
		"PlainName":           {"Acme Bank ✓", ""},
	} {
		t.Run(name, func(t *testing.T) {
			a.Name = c.name
			_, err := apps.Validate(a)
			var inv *otp.ErrInvalidRequest
			switch {
			case c.problem == "" && err != nil:
				t.Errorf("%q: got %v, want it valid", c.name, err)
			case c.problem != "" && (!errors.As(err, &inv) || inv.Fields["name"] != c.problem):
				t.Errorf("%q: got %v, want name refused: %s", c.name, err, c.problem)
			}
		})
	}
}
