package tokens_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/tokens"
)

// keyList is an OTP_TOKEN_KEYS entry of a fresh key.
func keyList(t *testing.T, id string, key any) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return id + ":" + base64.StdEncoding.EncodeToString(der)
}

func TestStaticKeys(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	old, next := keyList(t, "old", ec), keyList(t, "next", ed)

	t.Run("TheFirstSignsAndEveryOneVerifies", func(t *testing.T) {
		ctx := context.Background()
		store := inmem.New()
		service := func(list string) *tokens.Service {
			keys, err := tokens.ParseKeys(list)
			if err != nil {
				t.Fatal(err)
			}
			ring, err := tokens.NewStaticRing(keys)
			if err != nil {
				t.Fatal(err)
			}
			return tokens.NewService(ring, store, issuer, nil)
		}
		before, during, after := service(old), service(next+","+old), service(next)
		a := otp.App{ID: appA, TokenTTL: otp.DefaultTokenTTL}
		tokOld, err := before.Issue(a, verification(appA))
		if err != nil {
			t.Fatal(err)
		}
		tokNext, err := during.Issue(a, verification(appA))
		if err != nil {
			t.Fatal(err)
		}
		if kid(t, tokOld) != "old" || kid(t, tokNext) != "next" {
			t.Fatalf("got kids %s and %s, want old and next", kid(t, tokOld), kid(t, tokNext))
		}
		if _, err := after.Redeem(ctx, a, tokOld); !errors.Is(err, tokens.ErrInvalid) {
			t.Fatalf("a token of a removed key: got %v, want ErrInvalid", err)
		}
		if _, err := during.Redeem(ctx, a, tokOld); err != nil {
			t.Fatalf("a token of the previous key, still listed: %v", err)
		}
		if _, err := after.Redeem(ctx, a, tokNext); err != nil {
			t.Fatalf("a token of the current key: %v", err)
		}
	})

	t.Run("BadListsAreRefused", func(t *testing.T) {
		for name, list := range map[string]string{
			"NoID":       "bm90IGEga2V5",
			"BadID":      "a b:" + old[4:],
			"NotBase64":  "k1:***",
			"NotAKey":    "k1:bm90IGEga2V5",
			"OtherCurve": keyList(t, "p384", p384),
			"TwiceAnID":  old + "," + old,
			"EmptyEntry": old + ",",
		} {
			if _, err := tokens.ParseKeys(list); err == nil {
				t.Errorf("%s: ParseKeys took %q", name, list)
			}
		}
	})
}

// TestGeneratedKeysAreSealed reads what the store keeps of a generated key: nothing of
// the key in the clear, and, under another OTP_SECRET, nothing the ring can use, so it
// makes a new key, whose JWKS no longer verifies the old key's tokens.
func TestGeneratedKeysAreSealed(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, tokens.AlgES256)
	stored, err := e.store.SigningKeys(ctx)
	if err != nil || len(stored) != 1 {
		t.Fatalf("got %d stored keys (%v), want one", len(stored), err)
	}
	body, err := e.ring.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		t.Fatal(err)
	}
	pub, err := set.Keys[0].Key.(*ecdsa.PublicKey).ECDH()
	if err != nil {
		t.Fatal(err)
	}
	// A P-256 key's PKCS #8 form holds its public point: sealed, not even that shows.
	if point := pub.Bytes()[1:]; bytes.Contains(stored[0].Sealed, point[:32]) {
		t.Error("the stored key holds its public point in the clear")
	}
	if _, err := x509.ParsePKCS8PrivateKey(stored[0].Sealed); err == nil {
		t.Error("the stored key is a PKCS #8 key in the clear")
	}

	old := e.issue(t, app(appA))
	sealer, err := tokens.NewSealer([]byte("another secret"))
	if err != nil {
		t.Fatal(err)
	}
	ring, err := tokens.NewRing(e.store, sealer, tokens.AlgES256, 24*time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	ring.Now = e.clock.Now
	if err := ring.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := jwksKids(t, ring); len(kids) != 1 || kids[0] == stored[0].ID {
		t.Fatalf("under another secret: got keys %v, want a new one in place of %s", kids, stored[0].ID)
	}
	if now, _ := e.store.SigningKeys(ctx); len(now) != 1 || now[0].ID == stored[0].ID {
		t.Errorf("stored keys under another secret: got %v, want the unreadable one replaced", now)
	}
	e.ring = ring
	if _, _, err := e.verifyWithJWKS(t, old, e.clock.now); err == nil {
		t.Error("a token of the replaced key verified against the new key set")
	}
}
