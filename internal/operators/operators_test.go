package operators

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
)

func TestRoleAllows(t *testing.T) {
	for _, c := range []struct {
		have, need Role
		want       bool
	}{
		{RoleViewer, RoleViewer, true}, {RoleViewer, RoleOperator, false}, {RoleViewer, RoleAdmin, false},
		{RoleOperator, RoleViewer, true}, {RoleOperator, RoleOperator, true}, {RoleOperator, RoleAdmin, false},
		{RoleAdmin, RoleViewer, true}, {RoleAdmin, RoleOperator, true}, {RoleAdmin, RoleAdmin, true},
		{"", RoleViewer, false}, {"root", RoleViewer, false},
	} {
		if got := c.have.Allows(c.need); got != c.want {
			t.Errorf("%q.Allows(%q): got %v, want %v", c.have, c.need, got, c.want)
		}
	}
}

func TestNormalizeEmail(t *testing.T) {
	for in, want := range map[string]string{
		" Alice@Example.COM ": "alice@example.com", "a@b.c": "a@b.c",
		"": "", "not an address": "", "Alice <a@b.c>": "", "a@b.c, d@e.f": "", strings.Repeat("a", 250) + "@b.cd": "",
	} {
		if got, ok := NormalizeEmail(in); got != want || ok != (want != "") {
			t.Errorf("NormalizeEmail(%q): got %q %v, want %q", in, got, ok, want)
		}
	}
}

func TestTokenSecrets(t *testing.T) {
	id, secret, hash := newTokenSecret()
	if !LooksLikeToken(secret) || !strings.Contains(secret, id) || string(hash) != string(HashSecret(secret)) {
		t.Fatalf("token %s (id %s) does not have its own shape or hash", secret, id)
	}
	_, other, _ := newTokenSecret()
	if other == secret {
		t.Errorf("two tokens got the same secret")
	}
	for _, bad := range []string{"", "otpgate_op_", secret[:len(secret)-1], secret + "0", strings.ToUpper(secret), "x" + secret[1:]} {
		if LooksLikeToken(bad) {
			t.Errorf("LooksLikeToken(%q): got true, want false", bad)
		}
	}
	now := time.Now()
	live := Token{ExpiresAt: now.Add(time.Minute)}
	if !live.LiveAt(now) || live.LiveAt(now.Add(time.Minute)) {
		t.Errorf("a token must live until, not at, its expiry")
	}
	if (Token{ExpiresAt: now.Add(time.Hour), RevokedAt: now}).LiveAt(now) {
		t.Errorf("a revoked token is not live")
	}
}

func TestValidate(t *testing.T) {
	ok := Operator{Email: "a@example.com", Role: RoleViewer}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid operator: %v", err)
	}
	for name, o := range map[string]Operator{
		"email": {Email: "A@example.com", Role: RoleViewer},
		"role":  {Email: "a@example.com", Role: "root"},
		"name":  {Email: "a@example.com", Role: RoleViewer, Name: "two\nlines"},
	} {
		if err := o.Validate(); err == nil || !strings.Contains(fieldsOf(err), name) {
			t.Errorf("%s: got %v, want a problem naming %s", name, err, name)
		}
	}
}

// fieldsOf lists the fields an *otp.ErrInvalidRequest names.
func fieldsOf(err error) string {
	var inv *otp.ErrInvalidRequest
	if !errors.As(err, &inv) {
		return ""
	}
	return strings.Join(slices.Collect(maps.Keys(inv.Fields)), ",")
}
