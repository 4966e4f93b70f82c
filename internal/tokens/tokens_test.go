package tokens_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/tokens"
)

const (
	issuer = "https://otp.example.com"
	appA   = "0190a000-0000-7000-8000-00000000000a"
	appB   = "0190a000-0000-7000-8000-00000000000b"
)

// clock is a settable time for the ring and the service.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// env is a service over a generated, rotating ring in the dev store.
type env struct {
	clock *clock
	ring  *tokens.Ring
	svc   *tokens.Service
	store *inmem.Store
}

func newEnv(t *testing.T, alg string) *env {
	t.Helper()
	c := &clock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	store := inmem.New()
	sealer, err := tokens.NewSealer([]byte("test secret"))
	if err != nil {
		t.Fatal(err)
	}
	ring, err := tokens.NewRing(store, sealer, alg, 24*time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	ring.Now = c.Now
	if err := ring.Maintain(context.Background()); err != nil {
		t.Fatal(err)
	}
	svc := tokens.NewService(ring, store, issuer, func(a string) string { return "idx:" + a })
	svc.Now = c.Now
	return &env{clock: c, ring: ring, svc: svc, store: store}
}

func app(id string) otp.App {
	return otp.App{ID: id, TokenTTL: 10 * time.Minute, TokenAddress: otp.TokenAddressPlain}
}

func verification(appID string) otp.Verification {
	return otp.Verification{ID: "0190b000-0000-7000-8000-000000000001", AppID: appID, Address: "+819012345678", Channel: "sms"}
}

func (e *env) issue(t *testing.T, a otp.App) string {
	t.Helper()
	tok, err := e.svc.Issue(a, verification(a.ID))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// verifyWithJWKS is what a backend does with go-jose: parse, find the key by kid in the
// published set, check the signature and the registered claims at the given time.
func (e *env) verifyWithJWKS(t *testing.T, raw string, at time.Time) (jwt.Claims, map[string]any, error) {
	t.Helper()
	body, err := e.ring.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA})
	if err != nil {
		return jwt.Claims{}, nil, err
	}
	keys := set.Key(tok.Headers[0].KeyID)
	if len(keys) != 1 {
		return jwt.Claims{}, nil, errors.New("no published key of that id")
	}
	var std jwt.Claims
	var rest map[string]any
	if err := tok.Claims(keys[0].Key, &std, &rest); err != nil {
		return std, rest, err
	}
	return std, rest, std.ValidateWithLeeway(jwt.Expected{Issuer: issuer, AnyAudience: jwt.Audience{appA}, Time: at}, 0)
}

func TestTokens(t *testing.T) {
	ctx := context.Background()
	for _, alg := range []string{tokens.AlgES256, tokens.AlgEdDSA} {
		t.Run(alg, func(t *testing.T) {
			t.Run("ATokenVerifiesAgainstTheJWKSAndSaysWhatWasVerified", func(t *testing.T) {
				e := newEnv(t, alg)
				std, rest, err := e.verifyWithJWKS(t, e.issue(t, app(appA)), e.clock.now)
				if err != nil {
					t.Fatalf("verify: %v", err)
				}
				if std.ID == "" || std.IssuedAt == nil || !std.Expiry.Time().Equal(e.clock.now.Add(10*time.Minute)) ||
					rest["app"] != appA || rest["address"] != "+819012345678" || rest["channel"] != "sms" || rest["verification_id"] != verification(appA).ID {
					t.Fatalf("got %+v %v; want the app, address, channel, verification, a jti and a 10 minute expiry", std, rest)
				}
			})

			t.Run("AnIndexAppsTokenNamesTheIndexOnly", func(t *testing.T) {
				e := newEnv(t, alg)
				a := app(appA)
				a.TokenAddress = otp.TokenAddressIndex
				_, rest, err := e.verifyWithJWKS(t, e.issue(t, a), e.clock.now)
				if _, plain := rest["address"]; err != nil || plain || rest["address_index"] != "idx:+819012345678" {
					t.Fatalf("got %v, %v; want address_index alone", rest, err)
				}
			})

			t.Run("RedeemedOnceThenRefused", func(t *testing.T) {
				e := newEnv(t, alg)
				tok := e.issue(t, app(appA))
				r, err := e.svc.Redeem(ctx, app(appA), tok)
				if err != nil || r.Address != "+819012345678" || r.App != appA {
					t.Fatalf("first redeem: got %+v, %v", r, err)
				}
				if _, err := e.svc.Redeem(ctx, app(appA), tok); !errors.Is(err, tokens.ErrRedeemed) {
					t.Fatalf("second redeem: got %v, want ErrRedeemed", err)
				}
			})

			t.Run("AnotherAppsTokenIsRefused", func(t *testing.T) {
				e := newEnv(t, alg)
				if _, err := e.svc.Redeem(ctx, app(appB), e.issue(t, app(appA))); !errors.Is(err, tokens.ErrInvalid) {
					t.Fatalf("got %v, want ErrInvalid", err)
				}
			})

			t.Run("RefusedAfterExpiry", func(t *testing.T) {
				e := newEnv(t, alg)
				tok := e.issue(t, app(appA))
				e.clock.now = e.clock.now.Add(10 * time.Minute)
				if _, err := e.svc.Redeem(ctx, app(appA), tok); !errors.Is(err, tokens.ErrExpired) {
					t.Fatalf("redeem: got %v, want ErrExpired", err)
				}
				// go-jose takes a token at its very exp second as still valid; a second later not.
				if _, _, err := e.verifyWithJWKS(t, tok, e.clock.now.Add(time.Second)); !errors.Is(err, jwt.ErrExpired) {
					t.Fatalf("go-jose: got %v, want jwt.ErrExpired", err)
				}
			})

			t.Run("KeysRotateAndARetiredKeysTokensAreRefused", func(t *testing.T) {
				e := newEnv(t, alg)
				old := e.issue(t, app(appA))
				oldKid := kid(t, old)
				// The rotation makes the next key, published before it signs.
				e.clock.now = e.clock.now.Add(24 * time.Hour)
				if err := e.ring.Maintain(ctx); err != nil {
					t.Fatal(err)
				}
				if kids := jwksKids(t, e.ring); len(kids) != 2 || kid(t, e.issue(t, app(appA))) != oldKid {
					t.Fatalf("after the rotation: got keys %v; want two published, the old one still signing", kids)
				}
				e.clock.now = e.clock.now.Add(tokens.PublishLead)
				fresh := e.issue(t, app(appA))
				if kid(t, fresh) == oldKid {
					t.Fatal("the new key does not sign once its lead passed")
				}
				// The last token of the old key could have been signed just now: it stays
				// published until that one expired.
				e.clock.now = e.clock.now.Add(otp.MaxTokenTTL)
				if kids := jwksKids(t, e.ring); len(kids) != 2 {
					t.Fatalf("before retirement: got keys %v, want both", kids)
				}
				e.clock.now = e.clock.now.Add(tokens.RetireLeeway)
				if err := e.ring.Maintain(ctx); err != nil {
					t.Fatal(err)
				}
				if kids := jwksKids(t, e.ring); len(kids) != 1 || kids[0] == oldKid {
					t.Fatalf("after retirement: got keys %v, want the new one alone", kids)
				}
				if stored, _ := e.store.SigningKeys(ctx); len(stored) != 1 {
					t.Fatalf("got %d stored keys, want the retired one deleted", len(stored))
				}
				// A token of the retired key no longer verifies, whatever its expiry says.
				if _, _, err := e.verifyWithJWKS(t, old, e.clock.now.Add(-24*time.Hour)); err == nil {
					t.Fatal("go-jose verified a token of a retired key")
				}
			})

			t.Run("ForgedTokensAreRefused", func(t *testing.T) {
				e := newEnv(t, alg)
				tok := e.issue(t, app(appA))
				parts := strings.Split(tok, ".")
				claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
				tampered := strings.Replace(string(claims), "+819012345678", "+819099999999", 1)
				other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
				if err != nil {
					t.Fatal(err)
				}
				for name, forged := range map[string]string{
					"AlgNone":        b64(`{"alg":"none","typ":"JWT"}`) + "." + parts[1] + ".",
					"TamperedClaim":  parts[0] + "." + b64(tampered) + "." + parts[2],
					"OtherKey":       sign(t, other, kid(t, tok), string(claims)),
					"OtherKeyNoKid":  sign(t, other, "", string(claims)),
					"HS256WithJWKS":  hs256(t, e.ring, string(claims)),
					"TruncatedSig":   parts[0] + "." + parts[1] + "." + parts[2][:10],
					"NotAJWT":        "not.a.jwt",
					"OtherIssuer":    resign(t, e, strings.Replace(string(claims), issuer, "https://evil.example.com", 1)),
					"AudienceOfB":    resign(t, e, strings.Replace(string(claims), `"aud":"`+appA, `"aud":"`+appB, 1)),
					"AppClaimMissed": resign(t, e, strings.Replace(string(claims), `"app":"`+appA+`",`, "", 1)),
				} {
					if _, err := e.svc.Redeem(ctx, app(appA), forged); !errors.Is(err, tokens.ErrInvalid) {
						t.Errorf("%s: got %v, want ErrInvalid", name, err)
					}
				}
				// The genuine token still redeems: nothing above spent it.
				if _, err := e.svc.Redeem(ctx, app(appA), tok); err != nil {
					t.Fatalf("genuine token: %v", err)
				}
			})
		})
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func kid(t *testing.T, raw string) string {
	t.Helper()
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Headers[0].KeyID
}

func jwksKids(t *testing.T, r *tokens.Ring) []string {
	t.Helper()
	body, err := r.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range set.Keys {
		kids = append(kids, k.KeyID)
	}
	return kids
}

// sign signs payload with key under kid, as a forger with a key of its own would.
func sign(t *testing.T, key *ecdsa.PrivateKey, kid, payload string) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// hs256 is the old confusion attack: HMAC with the published public key as the secret.
func hs256(t *testing.T, r *tokens.Ring, payload string) string {
	t.Helper()
	body, _ := r.JWKS()
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(set.Keys[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: jose.JSONWebKey{Key: der, KeyID: set.Keys[0].KeyID}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := jws.CompactSerialize()
	return out
}

// resign signs changed claims with the service's own key, to show that the checks after
// the signature hold on their own.
func resign(t *testing.T, e *env, payload string) string {
	t.Helper()
	var claims map[string]any
	if err := json.Unmarshal([]byte(payload), &claims); err != nil {
		t.Fatal(err)
	}
	return e.svc.SignForTest(t, claims)
}
