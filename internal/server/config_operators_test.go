package server

import (
	"strings"
	"testing"

	"otpgate/internal/operators"
)

func TestConfigSingleSignOn(t *testing.T) {
	good := map[string]string{
		"OTP_OIDC_ISSUER": "https://accounts.example.com", "OTP_OIDC_CLIENT_ID": "otpgate", "OTP_OIDC_CLIENT_SECRET": "s3cret",
		"OTP_OIDC_ROLES": "otp-admins=admin, otp-ops=operator", "OTP_ADMIN_PUBLIC_URL": "https://otp-admin.example.com",
	}
	with := func(k, v string) map[string]string {
		env := map[string]string{}
		for a, b := range good {
			env[a] = b
		}
		env[k] = v
		return env
	}
	t.Run("Valid", func(t *testing.T) {
		cfg, err := loadConfig(func(k string) string { return good[k] })
		if err != nil {
			t.Fatalf("got %v, want no error", err)
		}
		if cfg.sso == nil || cfg.roles.Values["otp-ops"] != operators.RoleOperator || cfg.roles.Default != "" || cfg.insecureAdminCookies() {
			t.Errorf("got sso %v roles %+v, want single sign-on with the map, no default role, Secure cookies", cfg.sso, cfg.roles)
		}
		if cfg.OIDCTrustUnverifiedEmail || cfg.OIDCRecheck != operators.DefaultClaimsRecheck {
			t.Errorf("got trust unverified %v, recheck %s; want false and %s by default", cfg.OIDCTrustUnverifiedEmail, cfg.OIDCRecheck, operators.DefaultClaimsRecheck)
		}
	})
	t.Run("NoneByDefault", func(t *testing.T) {
		cfg, err := loadConfig(func(string) string { return "" })
		if err != nil || cfg.sso != nil {
			t.Errorf("got %v, %v; want no single sign-on and no error", cfg.sso, err)
		}
	})
	for name, c := range map[string]struct {
		env  map[string]string
		want string
	}{
		"BadIssuer":           {with("OTP_OIDC_ISSUER", "accounts.example.com"), "OTP_OIDC_ISSUER"},
		"NoClientID":          {with("OTP_OIDC_CLIENT_ID", ""), "OTP_OIDC_CLIENT_ID"},
		"NoClientSecret":      {with("OTP_OIDC_CLIENT_SECRET", ""), "OTP_OIDC_CLIENT_SECRET"},
		"NoCallbackURL":       {with("OTP_ADMIN_PUBLIC_URL", ""), "OTP_ADMIN_PUBLIC_URL"},
		"BadCallbackURL":      {with("OTP_ADMIN_PUBLIC_URL", "otp-admin.example.com"), "OTP_ADMIN_PUBLIC_URL"},
		"BadRoleMap":          {with("OTP_OIDC_ROLES", "otp-admins=root"), "OTP_OIDC_ROLES"},
		"BadDefaultRole":      {with("OTP_OIDC_DEFAULT_ROLE", "everyone"), "OTP_OIDC_DEFAULT_ROLE"},
		"ClientWithoutIssuer": {map[string]string{"OTP_OIDC_CLIENT_ID": "otpgate"}, "OTP_OIDC_CLIENT_ID"},
		"SessionTooLong":      {with("OTP_ADMIN_SESSION_TTL", "720h"), "OTP_ADMIN_SESSION_TTL"},
		"RecheckTooShort":     {with("OTP_OIDC_RECHECK", "1m"), "OTP_OIDC_RECHECK"},
		"RecheckTooLong":      {with("OTP_OIDC_RECHECK", "9000h"), "OTP_OIDC_RECHECK"},
		"TrustWithoutIssuer":  {map[string]string{"OTP_OIDC_TRUST_UNVERIFIED_EMAIL": "true"}, "OTP_OIDC_TRUST_UNVERIFIED_EMAIL"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(func(k string) string { return c.env[k] })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error naming %s", err, c.want)
			}
		})
	}
}
