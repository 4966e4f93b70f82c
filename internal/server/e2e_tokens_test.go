package server

import (
	"io"
	"net/http"
	"testing"

	"otpgate/internal/apitest"
	"otpgate/internal/otp"
)

// tokenSetup is a server with two public apps, each with a key for its backend.
type tokenSetup struct {
	in         *instance
	provider   interface{ LastCode(string) string }
	issuer     string
	a, b       string
	keyA, keyB string
}

func newTokenSetup(t *testing.T, extra map[string]string) *tokenSetup {
	t.Helper()
	p := newProvider(t)
	addr := freeAddr(t)
	env := map[string]string{
		"OTP_HTTP_ADDR": addr, "OTP_PUBLIC_URL": "http://" + addr,
		"OTP_DUPLICATE_WINDOW": "0", "OTP_LIMIT_PHONE": "100/1h", "OTP_LIMIT_IP": "off",
		"OTP_LIMIT_CHECK_PHONE": "100/1h", "OTP_LIMIT_CHECK_IP": "1000/1h",
	}
	for k, v := range extra {
		env[k] = v
	}
	in := startServer(t, prodEnv(t, p, env))
	s := &tokenSetup{in: in, provider: p, issuer: "http://" + addr}
	s.a = createApp(t, in, map[string]any{"name": "Shop"})
	s.b = createApp(t, in, map[string]any{"name": "Blog"})
	_, s.keyA = createKey(t, in, s.a, false)
	_, s.keyB = createKey(t, in, s.b, false)
	return s
}

// verified verifies a new number with app (the default app for "") and returns the
// check's answer.
func (s *tokenSetup) verified(t *testing.T, app string) reply {
	t.Helper()
	phone := newPhone()
	base := s.in.api + "/v1"
	if app != "" {
		base += "/apps/" + app
	}
	wantStatus(t, post(t, base+"/verifications", map[string]string{"phone": phone}), http.StatusCreated, "")
	r := post(t, base+"/verifications/check", map[string]string{"phone": phone, "code": s.provider.LastCode(phone)})
	wantStatus(t, r, http.StatusOK, "")
	if r.str("token") == "" {
		t.Fatalf("check answered %s, want a token", r.Raw)
	}
	return r
}

func (s *tokenSetup) redeem(t *testing.T, app, key, token string) reply {
	t.Helper()
	var headers []string
	if key != "" {
		headers = []string{"Authorization", "Bearer " + key}
	}
	return post(t, s.in.api+"/v1/apps/"+app+"/tokens/redeem", map[string]string{"token": token}, headers...)
}

// jwks fetches the key set, checked against the public document.
func (s *tokenSetup) jwks(t *testing.T) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.in.api+"/.well-known/jwks.json", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if _, err := apitest.Public().Check(apitest.Exchange{Request: req, Status: resp.StatusCode, Header: resp.Header, Body: body}); err != nil {
		t.Errorf("openapi: %v\nbody: %s", err, body)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "public, max-age=300" {
		t.Fatalf("JWKS: got %d, Cache-Control %q; want 200 cached for 5 minutes", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	return body
}

func TestVerificationTokens(t *testing.T) {
	s := newTokenSetup(t, nil)

	t.Run("AnApprovedCheckAnswersATokenTheJWKSVerifies", func(t *testing.T) {
		r := s.verified(t, s.a)
		claims := verifyGoJose(t, s.jwks(t), r.str("token"), s.issuer, s.a)
		if claims["address"] != r.str("phone") || claims["channel"] != "sms" || claims["verification_id"] != r.str("id") || claims["app"] != s.a {
			t.Fatalf("got claims %v; want app %s, address %s, channel sms, verification %s", claims, s.a, r.str("phone"), r.str("id"))
		}
	})

	t.Run("TheDefaultAppsCheckAnswersOneToo", func(t *testing.T) {
		r := s.verified(t, "")
		verifyGoJose(t, s.jwks(t), r.str("token"), s.issuer, otp.DefaultAppID)
		wantStatus(t, s.redeem(t, "default", "", r.str("token")), http.StatusUnauthorized, "unauthorized")
	})

	t.Run("RedeemedOnceWithTheAppsKey", func(t *testing.T) {
		r := s.verified(t, s.a)
		token := r.str("token")
		// Neither no key nor another app's key may redeem, and neither spends the token.
		wantStatus(t, s.redeem(t, s.a, "", token), http.StatusUnauthorized, "unauthorized")
		wantStatus(t, s.redeem(t, s.a, s.keyB, token), http.StatusUnauthorized, "unauthorized")
		got := s.redeem(t, s.a, s.keyA, token)
		wantStatus(t, got, http.StatusOK, "")
		if got.str("address") != r.str("phone") || got.str("verification_id") != r.str("id") || got.str("app_id") != s.a || got.str("jti") == "" {
			t.Fatalf("redeem answered %s; want the verification's address, id and app", got.Raw)
		}
		wantStatus(t, s.redeem(t, s.a, s.keyA, token), http.StatusConflict, "token_redeemed")
	})

	t.Run("AnotherAppsTokenIsRefused", func(t *testing.T) {
		token := s.verified(t, s.a).str("token")
		wantStatus(t, s.redeem(t, s.b, s.keyB, token), http.StatusUnprocessableEntity, "invalid_token")
		wantStatus(t, s.redeem(t, s.a, s.keyA, token), http.StatusOK, "")
	})

	t.Run("AnIndexAppsTokenNamesTheIndex", func(t *testing.T) {
		app := createApp(t, s.in, map[string]any{"name": "Private", "token_address": "index", "token_ttl_seconds": 60})
		_, key := createKey(t, s.in, app, false)
		r := s.verified(t, app)
		claims := verifyGoJose(t, s.jwks(t), r.str("token"), s.issuer, app)
		if _, plain := claims["address"]; plain || claims["address_index"] != addressIndex(t, r.str("phone")) {
			t.Fatalf("got claims %v; want address_index alone", claims)
		}
		if exp, iat := claims["exp"].(float64), claims["iat"].(float64); exp-iat != 60 {
			t.Fatalf("got a token of %v seconds, want the app's 60", exp-iat)
		}
		if err := redeemToken(s.in.api, app, key, r.str("token")); err != nil {
			t.Fatalf("first redeem: %v", err)
		}
		if err := redeemToken(s.in.api, app, key, r.str("token")); err == nil {
			t.Fatal("second redeem succeeded")
		}
	})
}
