package fraud

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
)

func TestRules(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"", "off", ""},
		{"off", "off", ""},
		{"10/1h", "10/1h", ""},
		{" 10/1h , 50/24h:shadow ", "10/1h,50/24h:shadow", ""},
		{"10/1h,20/1h", "", "already given"},
		{"10/1h:shady", "", "rule 1"},
		{"10", "", "rule 1"},
	} {
		var r Rules
		err := r.UnmarshalText([]byte(c.in))
		switch {
		case c.err != "" && (err == nil || !contains(err.Error(), c.err)):
			t.Errorf("%q: got error %v, want one saying %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: got error %v", c.in, err)
		case c.err == "" && r.String() != c.want:
			t.Errorf("%q: got %q, want %q", c.in, r.String(), c.want)
		}
	}
}

func TestCountryRules(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"", "off", ""},
		{"*:500/1h,NG:10/1h", "*:500/1h,NG:10/1h", ""},
		{"ng:10/1h,50/24h:shadow,*:500/1h", "NG:10/1h,NG:50/24h:shadow,*:500/1h", ""},
		{"NG:10/1h,GB:5/1m,NG:3/1m", "NG:10/1h,NG:3/1m,GB:5/1m", ""},
		{"10/1h", "", "want COUNTRY:count/window"},
		{"XX:10/1h", "", "not an ISO 3166"},
		{"NG:10/1h,NG:20/1h", "", "already given"},
		{"NG:ten/1h", "", "entry 1"},
	} {
		var r CountryRules
		err := r.UnmarshalText([]byte(c.in))
		switch {
		case c.err != "" && (err == nil || !contains(err.Error(), c.err)):
			t.Errorf("%q: got error %v, want one saying %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: got error %v", c.in, err)
		case c.err == "" && r.String() != c.want:
			t.Errorf("%q: got %q, want %q", c.in, r.String(), c.want)
		}
	}
	var r CountryRules
	if err := r.UnmarshalText([]byte("*:500/1h,NG:10/1h")); err != nil {
		t.Fatal(err)
	}
	if got := r.For("NG").String(); got != "10/1h" {
		t.Errorf("For(NG): got %s, want its own rule", got)
	}
	if got := r.For("JP").String(); got != "500/1h" {
		t.Errorf("For(JP): got %s, want the rule of *", got)
	}
}

func TestConfig(t *testing.T) {
	t.Run("DefaultsAreValidAndReadBack", func(t *testing.T) {
		d := Defaults()
		if err := d.Validate(); err != nil {
			t.Fatalf("Validate: %v", err)
		}
		back, err := Defaults().Apply(d.Values())
		if err != nil || !maps.Equal(back.Values(), d.Values()) {
			t.Errorf("Values read back: got %v, %v; want %v", back.Values(), err, d.Values())
		}
		for _, name := range FieldNames() {
			if _, ok := d.Values()[name]; !ok {
				t.Errorf("Values lacks %s", name)
			}
		}
	})

	t.Run("ApplySetsByName", func(t *testing.T) {
		c, err := Defaults().Apply(map[string]string{
			"fraud_guard": "SHADOW", "limit_prefix": "10/1h", "fraud_long_horizon": "2d", "fraud_ratio": "0.25", "prefix_drop": "5",
		})
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if c.Mode != ModeShadow || c.Prefix.String() != "10/1h" || time.Duration(c.LongHorizon) != 48*time.Hour || c.Ratio != 0.25 || c.PrefixDrop != 5 {
			t.Errorf("got %+v", c)
		}
		if got := c.Values()["fraud_long_horizon"]; got != "48h" {
			t.Errorf("long horizon reads back %q, want 48h", got)
		}
	})

	t.Run("BadValuesAreNamedAndChangeNothing", func(t *testing.T) {
		d := Defaults()
		got, err := d.Apply(map[string]string{
			"fraud_guard": "loud", "fraud_ratio": "2", "prefix_drop": "x", "nope": "1", "fraud_block": "-1h",
		})
		var inv *otp.ErrInvalidRequest
		if !errors.As(err, &inv) {
			t.Fatalf("got %v, want *otp.ErrInvalidRequest", err)
		}
		for _, name := range []string{"fraud_guard", "prefix_drop", "nope", "fraud_block"} {
			if inv.Fields[name] == "" {
				t.Errorf("errors %v do not name %s", inv.Fields, name)
			}
		}
		if !maps.Equal(got.Values(), d.Values()) {
			t.Errorf("got %v, want the config unchanged", got.Values())
		}
		// Values of the right type but out of bounds are found by Validate, each named.
		_, err = d.Apply(map[string]string{"fraud_ratio": "2", "fraud_short_horizon": "30d", "fraud_floor_prefix": "0"})
		if !errors.As(err, &inv) || inv.Fields["fraud_ratio"] == "" || inv.Fields["fraud_long_horizon"] == "" || inv.Fields["fraud_floor_prefix"] == "" {
			t.Errorf("got %v, want ratio, long horizon (shorter than short) and floor named", err)
		}
	})

	t.Run("EnvNames", func(t *testing.T) {
		if got := EnvName("limit_ip_net"); got != "OTP_LIMIT_IP_NET" {
			t.Errorf("got %s", got)
		}
		if !Numeric("fraud_ratio") || !Numeric("prefix_drop") || Numeric("fraud_guard") {
			t.Error("Numeric: wrong answer")
		}
	})
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
