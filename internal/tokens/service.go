package tokens

import (
	"context"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"otpgate/internal/otp"
)

// Service issues verification tokens and redeems them.
type Service struct {
	ring   *Ring
	store  Store
	issuer string
	index  func(address string) string

	// Now is the clock of issued and redeemed tokens; tests replace it.
	Now func() time.Time
	// NewID makes token ids (jti); tests replace it.
	NewID func() string
}

// NewService returns the service signing with ring's keys as issuer (iss: the service's
// public base URL), keeping redemptions in store; index is the keyed index of an address,
// for apps whose tokens name that instead of the address.
func NewService(ring *Ring, store Store, issuer string, index func(address string) string) *Service {
	return &Service{
		ring: ring, store: store, issuer: issuer, index: index,
		Now:   utcNow,
		NewID: func() string { return uuid.NewString() },
	}
}

// Issuer is the iss claim of every token.
func (s *Service) Issuer() string { return s.issuer }

// JWKS is the published keys as a JSON Web Key Set.
func (s *Service) JWKS() ([]byte, error) { return s.ring.JWKS() }

// Issue signs the token of v, a verification of app just approved.
func (s *Service) Issue(app otp.App, v otp.Verification) (string, error) {
	now := s.Now()
	k, ok := s.ring.signing(now)
	if !ok {
		return "", fmt.Errorf("tokens: no signing key")
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(k.Alg), Key: jose.JSONWebKey{Key: k.Private, KeyID: k.ID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("tokens: signer: %w", err)
	}
	ttl := app.TokenTTL
	if ttl <= 0 {
		ttl = otp.DefaultTokenTTL
	}
	std := jwt.Claims{
		Issuer: s.issuer, Audience: jwt.Audience{app.ID}, ID: s.NewID(),
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(ttl)),
	}
	c := Claims{App: app.ID, Channel: v.Channel, Verification: v.ID}
	if app.TokenAddress == otp.TokenAddressIndex && s.index != nil {
		c.AddressIndex = s.index(v.Address)
	} else {
		c.Address = v.Address
	}
	token, err := jwt.Signed(signer).Claims(std).Claims(c).Serialize()
	if err != nil {
		return "", fmt.Errorf("tokens: sign: %w", err)
	}
	return token, nil
}

// Redeemed is a token redeemed just now.
type Redeemed struct {
	Claims
	ID         string
	IssuedAt   time.Time
	ExpiresAt  time.Time
	RedeemedAt time.Time
}

// Redeem verifies raw as a token of app and marks its jti used. Errors: ErrInvalid (not
// a token this service signed with a key it still publishes, or one of another app),
// ErrExpired, ErrRedeemed, and the store's.
func (s *Service) Redeem(ctx context.Context, app otp.App, raw string) (Redeemed, error) {
	now := s.Now()
	c, err := s.verify(raw, app.ID, now)
	if err != nil {
		return Redeemed{}, err
	}
	if err := s.store.Redeem(ctx, Redemption{JTI: c.ID, AppID: app.ID, ExpiresAt: c.ExpiresAt, RedeemedAt: now}); err != nil {
		return Redeemed{}, err
	}
	c.RedeemedAt = now
	return c, nil
}

// verify checks raw's signature against the published keys, then its issuer, app and
// expiry, in that order: nothing of a token that fails the signature is believed.
func (s *Service) verify(raw, appID string, now time.Time) (Redeemed, error) {
	tok, err := jwt.ParseSigned(raw, algs)
	if err != nil || len(tok.Headers) != 1 {
		return Redeemed{}, ErrInvalid
	}
	h := tok.Headers[0]
	var key *Key
	for _, k := range s.ring.published(now) {
		if k.ID == h.KeyID && k.Alg == h.Algorithm {
			key = &k
			break
		}
	}
	if key == nil {
		return Redeemed{}, ErrInvalid
	}
	var std jwt.Claims
	var c Claims
	if err := tok.Claims(key.Private.Public(), &std, &c); err != nil {
		return Redeemed{}, ErrInvalid
	}
	if std.Issuer != s.issuer || len(std.Audience) != 1 || std.Audience[0] != appID || c.App != appID ||
		std.ID == "" || std.Expiry == nil || std.IssuedAt == nil {
		return Redeemed{}, ErrInvalid
	}
	r := Redeemed{Claims: c, ID: std.ID, IssuedAt: std.IssuedAt.Time().UTC(), ExpiresAt: std.Expiry.Time().UTC()}
	if !now.Before(r.ExpiresAt) {
		return Redeemed{}, ErrExpired
	}
	return r, nil
}
