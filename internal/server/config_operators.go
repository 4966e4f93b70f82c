package server

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"otpgate/internal/operators"
	"otpgate/internal/sso"
)

// OperatorSettings are the variables of the console's single sign-on (docs/operators.md).
type OperatorSettings struct {
	OIDCIssuer       string `env:"OTP_OIDC_ISSUER"`
	OIDCClientID     string `env:"OTP_OIDC_CLIENT_ID"`
	OIDCClientSecret string `env:"OTP_OIDC_CLIENT_SECRET"`
	OIDCRoleClaim    string `env:"OTP_OIDC_ROLE_CLAIM" envDefault:"groups"`
	OIDCRoles        string `env:"OTP_OIDC_ROLES"`
	// OIDCDefaultRole is the role of a person whose claims map to none: viewer, operator,
	// admin, or none (they sign in only to an account an admin created or set the role of).
	OIDCDefaultRole string `env:"OTP_OIDC_DEFAULT_ROLE" envDefault:"none"`
	// OIDCTrustUnverifiedEmail counts an ID token without an email_verified claim as
	// vouching for its address, for a provider that verifies every address and never
	// sends the claim. Off, an address counts only when the claim is the boolean true.
	OIDCTrustUnverifiedEmail bool `env:"OTP_OIDC_TRUST_UNVERIFIED_EMAIL" envDefault:"false"`
	// OIDCRecheck bounds how long after its last sign-in an account whose role came from
	// the claims may use personal tokens (operators.Admin.ClaimsRecheck).
	OIDCRecheck time.Duration `env:"OTP_OIDC_RECHECK" envDefault:"24h"`
	// AdminPublicURL is where browsers reach the admin listener; the sign-in callback is
	// <it>/admin/oidc/callback.
	AdminPublicURL  string        `env:"OTP_ADMIN_PUBLIC_URL"`
	AdminSessionTTL time.Duration `env:"OTP_ADMIN_SESSION_TTL" envDefault:"12h"`

	// Derived by checkOperators.
	roles operators.RoleMap
	sso   *sso.Client
}

// checkOperators validates the single sign-on settings; with OTP_OIDC_ISSUER unset the
// console has none and the other OTP_OIDC_* variables must be unset too. The identity
// provider is not asked anything here: one that is down must not stop start-up, since
// the break-glass login must keep working.
func (c *config) checkOperators() error {
	if c.AdminSessionTTL < 5*time.Minute || c.AdminSessionTTL > 7*24*time.Hour {
		return fmt.Errorf("config: OTP_ADMIN_SESSION_TTL=%s: must be between 5m and 168h", c.AdminSessionTTL)
	}
	if c.AdminPublicURL != "" {
		u, err := url.Parse(c.AdminPublicURL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("config: OTP_ADMIN_PUBLIC_URL=%q: want an absolute http or https URL without query, such as https://otp-admin.example.com", c.AdminPublicURL)
		}
	}
	if c.OIDCIssuer == "" {
		for name, v := range map[string]string{"OTP_OIDC_CLIENT_ID": c.OIDCClientID, "OTP_OIDC_CLIENT_SECRET": c.OIDCClientSecret, "OTP_OIDC_ROLES": c.OIDCRoles} {
			if v != "" {
				return fmt.Errorf("config: %s is set but OTP_OIDC_ISSUER is not: set the issuer to use single sign-on", name)
			}
		}
		if c.OIDCTrustUnverifiedEmail {
			return errors.New("config: OTP_OIDC_TRUST_UNVERIFIED_EMAIL is set but OTP_OIDC_ISSUER is not: set the issuer to use single sign-on")
		}
		return nil
	}
	if c.OIDCRecheck < 5*time.Minute || c.OIDCRecheck > operators.MaxTokenTTL {
		return fmt.Errorf("config: OTP_OIDC_RECHECK=%s: must be between 5m and %s", c.OIDCRecheck, operators.MaxTokenTTL)
	}
	values, err := operators.ParseRoleMap(c.OIDCRoles)
	if err != nil {
		return fmt.Errorf("config: OTP_OIDC_ROLES: %w", err)
	}
	c.roles = operators.RoleMap{Values: values}
	if d := strings.ToLower(c.OIDCDefaultRole); d != "none" {
		r, ok := operators.ParseRole(d)
		if !ok {
			return fmt.Errorf("config: OTP_OIDC_DEFAULT_ROLE=%q: want none, viewer, operator or admin", c.OIDCDefaultRole)
		}
		c.roles.Default = r
	}
	redirect := ""
	if c.AdminPublicURL != "" {
		redirect = strings.TrimSuffix(c.AdminPublicURL, "/") + "/admin/oidc/callback"
	}
	c.sso, err = sso.New(sso.Config{
		Issuer: c.OIDCIssuer, ClientID: c.OIDCClientID, ClientSecret: c.OIDCClientSecret,
		RedirectURL: redirect, RoleClaim: c.OIDCRoleClaim, TrustUnverifiedEmail: c.OIDCTrustUnverifiedEmail,
	})
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// insecureAdminCookies reports whether the console is served over plain http, where a
// Secure cookie would never come back.
func (c *config) insecureAdminCookies() bool {
	return strings.HasPrefix(c.AdminPublicURL, "http://") || (c.AdminPublicURL == "" && c.dev)
}
