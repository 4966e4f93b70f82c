package tokens_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"testing"

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
