// Package sso signs operators in to the console with OpenID Connect: the authorization
// code flow with PKCE against any standard issuer, through coreos/go-oidc (discovery, ID
// token verification) and golang.org/x/oauth2 (the code exchange). It turns an ID token
// into an operators.Identity and knows nothing of sessions, accounts or HTTP routes.
package sso

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"otpgate/internal/operators"
)

// Config is the identity provider's settings.
type Config struct {
	// Issuer is the provider's issuer URL (OTP_OIDC_ISSUER); discovery reads
	// <Issuer>/.well-known/openid-configuration.
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL is the console's callback, <OTP_ADMIN_PUBLIC_URL>/admin/oidc/callback.
	RedirectURL string
	// RoleClaim names the ID token claim whose values map to roles, such as "groups".
	RoleClaim string
	// TrustUnverifiedEmail (OTP_OIDC_TRUST_UNVERIFIED_EMAIL) counts an address as
	// verified when the ID token has no email_verified claim at all, for a provider that
	// verifies every address and never says so. A claim that is present must still be
	// the JSON boolean true.
	TrustUnverifiedEmail bool
	// Timeout bounds each call to the provider; 0 means 10s.
	Timeout time.Duration
}

// Validate checks the settings, naming the variable of the first bad one.
func (c Config) Validate() error {
	u, err := url.Parse(c.Issuer)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("OTP_OIDC_ISSUER=%q: want the issuer's absolute http(s) URL, such as https://accounts.example.com", c.Issuer)
	case c.ClientID == "":
		return errors.New("OTP_OIDC_CLIENT_ID: required with OTP_OIDC_ISSUER")
	case c.ClientSecret == "":
		return errors.New("OTP_OIDC_CLIENT_SECRET: required with OTP_OIDC_ISSUER")
	case c.RoleClaim == "":
		return errors.New("OTP_OIDC_ROLE_CLAIM: required with OTP_OIDC_ISSUER")
	}
	r, err := url.Parse(c.RedirectURL)
	if err != nil || r.Host == "" || (r.Scheme != "https" && r.Scheme != "http") {
		return fmt.Errorf("OTP_ADMIN_PUBLIC_URL: required with OTP_OIDC_ISSUER: the absolute http(s) URL browsers reach the admin listener at (callback %q)", c.RedirectURL)
	}
	return nil
}

// Client runs the flow. It discovers the provider at its first use and again after a
// failed attempt, so a provider that is down at start-up stops nothing: the console's
// break-glass login keeps working, and single sign-on works once the provider answers.
type Client struct {
	cfg  Config
	http *http.Client

	mu       sync.Mutex
	oauth    *oauth2.Config
	verifier *oidc.IDTokenVerifier
}

// New returns a client for cfg. Errors name the bad variable.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	return &Client{cfg: cfg, http: &http.Client{Timeout: cfg.Timeout}}, nil
}

// discover returns the flow's settings, reading the provider's discovery document once.
func (c *Client) discover(ctx context.Context) (*oauth2.Config, *oidc.IDTokenVerifier, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.oauth != nil {
		return c.oauth, c.verifier, nil
	}
	// The key set fetches keys later, outside any request, so it gets a context that
	// carries only the HTTP client.
	pctx := oidc.ClientContext(context.WithoutCancel(ctx), c.http)
	p, err := oidc.NewProvider(pctx, c.cfg.Issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("sso: discover %s: %w", c.cfg.Issuer, err)
	}
	c.oauth = &oauth2.Config{
		ClientID: c.cfg.ClientID, ClientSecret: c.cfg.ClientSecret, RedirectURL: c.cfg.RedirectURL,
		Endpoint: p.Endpoint(), Scopes: []string{oidc.ScopeOpenID, "email", "profile"},
	}
	if c.cfg.RoleClaim == "groups" {
		c.oauth.Scopes = append(c.oauth.Scopes, "groups")
	}
	c.verifier = p.Verifier(&oidc.Config{ClientID: c.cfg.ClientID})
	return c.oauth, c.verifier, nil
}

// AuthCodeURL returns where to send the browser to sign in: state and nonce are bound
// to the browser by the caller, verifier is the PKCE code verifier (S256).
func (c *Client) AuthCodeURL(ctx context.Context, state, nonce, verifier string) (string, error) {
	o, _, err := c.discover(ctx)
	if err != nil {
		return "", err
	}
	return o.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), nil
}

// Exchange trades the callback's code for tokens, verifies the ID token (issuer,
// audience and authorized party, expiry, signature, nonce) and returns who it names.
func (c *Client) Exchange(ctx context.Context, code, verifier, nonce string) (operators.Identity, error) {
	o, v, err := c.discover(ctx)
	if err != nil {
		return operators.Identity{}, err
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, c.http), c.cfg.Timeout)
	defer cancel()
	tok, err := o.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return operators.Identity{}, fmt.Errorf("sso: exchange the code: %w", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok {
		return operators.Identity{}, errors.New("sso: the token response has no id_token")
	}
	idt, err := v.Verify(ctx, raw)
	if err != nil {
		return operators.Identity{}, fmt.Errorf("sso: verify the ID token: %w", err)
	}
	if idt.Nonce != nonce {
		return operators.Identity{}, errors.New("sso: the ID token's nonce is not this sign-in's")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return operators.Identity{}, fmt.Errorf("sso: read the ID token's claims: %w", err)
	}
	if err := authorizedParty(idt.Audience, claims, c.cfg.ClientID); err != nil {
		return operators.Identity{}, err
	}
	id := operators.Identity{Subject: idt.Subject, Claims: claimValues(claims[c.cfg.RoleClaim])}
	id.Email, _ = claims["email"].(string)
	id.EmailVerified = emailVerified(claims, c.cfg.TrustUnverifiedEmail)
	id.Name, _ = claims["name"].(string)
	if id.Name == "" {
		id.Name, _ = claims["preferred_username"].(string)
	}
	return id, nil
}

// authorizedParty checks the azp claim as OpenID Connect Core (3.1.3.7) says: an ID
// token for several audiences must name this client as the party it was issued to, and
// one that names a party must name this client. The verifier has already checked that
// this client is one of the audiences; without this check a token issued to another
// client, with this one merely among its audiences, would sign in here.
func authorizedParty(aud []string, claims map[string]any, clientID string) error {
	azp, present := claims["azp"]
	switch {
	case present && azp != clientID:
		return fmt.Errorf("sso: the ID token was issued to another party (azp %v)", azp)
	case !present && len(aud) > 1:
		return errors.New("sso: the ID token names several audiences and no authorized party (azp)")
	}
	return nil
}

// emailVerified reads the email_verified claim: only the JSON boolean true vouches for
// the address. A string such as "true", a number or null does not (a provider that sends
// those is not saying what OpenID Connect asks it to say), and a missing claim counts
// only when the operator chose to trust a provider that never sends one.
func emailVerified(claims map[string]any, trustMissing bool) bool {
	v, present := claims["email_verified"]
	if !present {
		return trustMissing
	}
	b, ok := v.(bool)
	return ok && b
}

// claimValues reads a claim that holds one string, a list of strings, or a
// space-separated string (as some providers send roles).
func claimValues(v any) []string {
	switch v := v.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
