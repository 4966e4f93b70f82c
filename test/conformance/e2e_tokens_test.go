package conformance

import (
	"net/http"
	"testing"

	"otpgate/internal/otp"
	"otpgate/internal/server/servertest"
)

func TestVerificationTokens(t *testing.T) {
	s := servertest.NewTokenSetup(t, nil)

	t.Run("AnApprovedCheckAnswersATokenTheJWKSVerifies", func(t *testing.T) {
		r := s.Verified(t, s.A)
		claims := verifyGoJose(t, s.JWKS(t), r.Str("token"), s.Issuer, s.A)
		if claims["address"] != r.Str("phone") || claims["channel"] != "sms" || claims["verification_id"] != r.Str("id") || claims["app"] != s.A {
			t.Fatalf("got claims %v; want app %s, address %s, channel sms, verification %s", claims, s.A, r.Str("phone"), r.Str("id"))
		}
	})

	t.Run("TheDefaultAppsCheckAnswersOneToo", func(t *testing.T) {
		r := s.Verified(t, "")
		verifyGoJose(t, s.JWKS(t), r.Str("token"), s.Issuer, otp.DefaultAppID)
		servertest.WantStatus(t, s.Redeem(t, "default", "", r.Str("token")), http.StatusUnauthorized, "unauthorized")
	})

	t.Run("RedeemedOnceWithTheAppsKey", func(t *testing.T) {
		r := s.Verified(t, s.A)
		token := r.Str("token")
		// Neither no key nor another app's key may redeem, and neither spends the token.
		servertest.WantStatus(t, s.Redeem(t, s.A, "", token), http.StatusUnauthorized, "unauthorized")
		servertest.WantStatus(t, s.Redeem(t, s.A, s.KeyB, token), http.StatusUnauthorized, "unauthorized")
		got := s.Redeem(t, s.A, s.KeyA, token)
		servertest.WantStatus(t, got, http.StatusOK, "")
		if got.Str("address") != r.Str("phone") || got.Str("verification_id") != r.Str("id") || got.Str("app_id") != s.A || got.Str("jti") == "" {
			t.Fatalf("redeem answered %s; want the verification's address, id and app", got.Raw)
		}
		servertest.WantStatus(t, s.Redeem(t, s.A, s.KeyA, token), http.StatusConflict, "token_redeemed")
	})

	t.Run("AnotherAppsTokenIsRefused", func(t *testing.T) {
		token := s.Verified(t, s.A).Str("token")
		servertest.WantStatus(t, s.Redeem(t, s.B, s.KeyB, token), http.StatusUnprocessableEntity, "invalid_token")
		servertest.WantStatus(t, s.Redeem(t, s.A, s.KeyA, token), http.StatusOK, "")
	})

	t.Run("AnIndexAppsTokenNamesTheIndex", func(t *testing.T) {
		app := servertest.CreateApp(t, s.In, map[string]any{"name": "Private", "token_address": "index", "token_ttl_seconds": 60})
		_, key := servertest.CreateKey(t, s.In, app, false)
		r := s.Verified(t, app)
		claims := verifyGoJose(t, s.JWKS(t), r.Str("token"), s.Issuer, app)
		if _, plain := claims["address"]; plain || claims["address_index"] != servertest.AddressIndex(t, r.Str("phone")) {
			t.Fatalf("got claims %v; want address_index alone", claims)
		}
		if exp, iat := claims["exp"].(float64), claims["iat"].(float64); exp-iat != 60 {
			t.Fatalf("got a token of %v seconds, want the app's 60", exp-iat)
		}
		if err := redeemToken(s.In.API, app, key, r.Str("token")); err != nil {
			t.Fatalf("first redeem: %v", err)
		}
		if err := redeemToken(s.In.API, app, key, r.Str("token")); err == nil {
			t.Fatal("second redeem succeeded")
		}
	})
}
