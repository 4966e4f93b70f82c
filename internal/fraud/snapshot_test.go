package fraud

import (
	"errors"
	"testing"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

func TestNewListEntry(t *testing.T) {
	for _, c := range []struct {
		list, kind, value string
		wantKind          Kind
		wantValue         string
		badField          string
	}{
		{"block", "", "+819012345678", KindNumber, "+819012345678", ""},
		{"block", "", "+8190123", KindPrefix, "+8190123", ""},
		{"block", "prefix", "+819012345678", KindPrefix, "+819012345678", ""},
		{"block", "", "ng", KindCountry, "NG", ""},
		{"block", "", "203.0.113.7/24", KindCIDR, "203.0.113.0/24", ""},
		{"safe", "", "2001:db8::1", KindCIDR, "2001:db8::1/128", ""},
		{"safe", "", "::ffff:192.0.2.1", KindCIDR, "192.0.2.1/32", ""},
		{"safe", "", "NG", "", "", "kind"},
		{"grey", "", "NG", "", "", "list"},
		{"block", "", "hello", "", "", "kind"},
		{"block", "number", "+81", "", "", "value"},
		{"block", "prefix", "8190", "", "", "value"},
		{"block", "cidr", "10.0.0.0/33", "", "", "value"},
	} {
		e, err := NewListEntry(c.list, c.kind, c.value, "")
		var inv *otp.ErrInvalidRequest
		switch {
		case c.badField != "" && (!errors.As(err, &inv) || inv.Fields[c.badField] == ""):
			t.Errorf("%s %s %q: got %v, want a refusal naming %s", c.list, c.kind, c.value, err, c.badField)
		case c.badField == "" && err != nil:
			t.Errorf("%s %s %q: got %v", c.list, c.kind, c.value, err)
		case c.badField == "" && (e.Kind != c.wantKind || e.Value != c.wantValue):
			t.Errorf("%s %s %q: got %s %q, want %s %q", c.list, c.kind, c.value, e.Kind, e.Value, c.wantKind, c.wantValue)
		}
	}
}

func mustEntry(t *testing.T, list, value string) ListEntry {
	t.Helper()
	e, err := NewListEntry(list, "", value, "")
	if err != nil {
		t.Fatalf("NewListEntry(%s, %s): %v", list, value, err)
	}
	return e
}

func TestScreen(t *testing.T) {
	cfg, err := Defaults().Apply(map[string]string{"limit_country": "*:500/1h,NG:10/1h", "limit_prefix": "20/1h:shadow"})
	if err != nil {
		t.Fatal(err)
	}
	s := NewSnapshot(cfg, []ListEntry{
		mustEntry(t, "block", "+234701"), mustEntry(t, "block", "198.51.100.0/24"), mustEntry(t, "block", "KP"),
		mustEntry(t, "block", "2001:db8:bad::/48"),
		mustEntry(t, "safe", "+819012345678"), mustEntry(t, "safe", "203.0.113.0/24"),
	}, 7)
	jp := otp.FraudTarget{Phone: "+819087654321", Region: "JP", ClientIP: "192.0.2.77"}

	t.Run("LimitsOfTheThreeScopesAndThePool", func(t *testing.T) {
		got := s.Screen(jp)
		if got.Blocked != "" || got.Safe || len(got.Limits) != 4 {
			t.Fatalf("got %+v, want four limits", got)
		}
		want := []struct{ scope, key, rules string }{
			{rate.ScopeCountry, "JP", "500/1h"}, {rate.ScopePrefix, "+81908765", "20/1h:shadow"}, {rate.ScopeIPNet, "192.0.2.0/24", "off"},
			{rate.ScopeYoungCountries, rate.KeyPool, "off"},
		}
		for i, w := range want {
			l := got.Limits[i]
			if l.Scope != w.scope || l.Key != w.key || rate.Rules(l.Rules).String() != w.rules || l.Guard == nil || l.Guard.Shadow {
				t.Errorf("limit %d: got %+v, want %s %s %s with an enforcing guard", i, l, w.scope, w.key, w.rules)
			}
		}
		if got.Limits[0].Guard.Floor != 100 || got.Limits[1].Guard.Floor != 10 || got.Limits[2].Guard.Floor != 10 || got.Limits[3].Guard.Floor != 20 {
			t.Errorf("floors: got %d %d %d %d, want 100 10 10 20", got.Limits[0].Guard.Floor, got.Limits[1].Guard.Floor, got.Limits[2].Guard.Floor, got.Limits[3].Guard.Floor)
		}
		if got.Limits[0].Guard.Role != rate.RoleCountry || got.Limits[3].Guard.Role != rate.RolePool {
			t.Errorf("roles: got %q and %q, want the country feeding the pool", got.Limits[0].Guard.Role, got.Limits[3].Guard.Role)
		}
	})

	t.Run("BlockListFirst", func(t *testing.T) {
		for target, want := range map[otp.FraudTarget]string{
			{Phone: "+2347011234567", Region: "NG", ClientIP: "192.0.2.1"}:          "prefix +234701",
			{Phone: "+819087654321", Region: "JP", ClientIP: "198.51.100.9"}:        "cidr 198.51.100.0/24",
			{Phone: "+8501912345678", Region: "KP", ClientIP: "192.0.2.1"}:          "country KP",
			{Phone: "+819087654321", Region: "JP", ClientIP: "2001:db8:bad:1::/64"}: "cidr 2001:db8:bad::/48",
			// The safe list never overrides the block list.
			{Phone: "+819012345678", Region: "JP", ClientIP: "198.51.100.9"}: "cidr 198.51.100.0/24",
		} {
			if got := s.Screen(target); got.Blocked != want {
				t.Errorf("%+v: got %+v, want blocked by %s", target, got, want)
			}
		}
	})

	t.Run("SafeListSkipsTheFraudLimits", func(t *testing.T) {
		for _, target := range []otp.FraudTarget{
			{Phone: "+819012345678", Region: "JP", ClientIP: "192.0.2.1"},
			{Phone: "+819087654321", Region: "JP", ClientIP: "203.0.113.200"},
		} {
			if got := s.Screen(target); !got.Safe || len(got.Limits) != 0 || got.Blocked != "" {
				t.Errorf("%+v: got %+v, want safe without limits", target, got)
			}
			if got := s.GuardTargets(target); len(got) != 0 {
				t.Errorf("%+v: approvals counted for %+v, want none", target, got)
			}
		}
	})

	t.Run("GuardOffLeavesTheRules", func(t *testing.T) {
		off, _ := cfg.Apply(map[string]string{"fraud_guard": "off"})
		got := NewSnapshot(off, nil, 1).Screen(jp)
		if len(got.Limits) != 2 || got.Limits[0].Guard != nil || got.Limits[1].Guard != nil {
			t.Errorf("got %+v, want the country and prefix rules without guards", got.Limits)
		}
		if n := NewSnapshot(off, nil, 1).GuardTargets(jp); len(n) != 0 {
			t.Errorf("GuardTargets: got %+v, want none", n)
		}
	})

	t.Run("ShadowGuard", func(t *testing.T) {
		shadow, _ := cfg.Apply(map[string]string{"fraud_guard": "shadow"})
		for _, l := range NewSnapshot(shadow, nil, 1).Screen(jp).Limits {
			if l.Guard == nil || !l.Guard.Shadow {
				t.Errorf("%s: got guard %+v, want a shadow guard", l.Scope, l.Guard)
			}
		}
	})
}

func TestTargets(t *testing.T) {
	if got := Prefix("+819012345678", 4); got != "+81901234" {
		t.Errorf("Prefix: got %q", got)
	}
	if got := Prefix("+1234", 4); got != "" {
		t.Errorf("Prefix of a short number: got %q, want none", got)
	}
	for in, want := range map[string]string{
		"192.0.2.77": "192.0.2.0/24", "2001:db8:1:2::/64": "2001:db8:1::/48", "2001:db8::/32": "2001:db8::/32",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1::/48", "@": "",
	} {
		if got := Network(in); got != want {
			t.Errorf("Network(%q): got %q, want %q", in, got, want)
		}
	}
}
