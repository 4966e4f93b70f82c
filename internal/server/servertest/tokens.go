package servertest

import (
	"io"
	"net/http"
	"testing"

	"otpgate/internal/apitest"
)

// TokenSetup is a server with two public apps, each with a key for its backend.
type TokenSetup struct {
	In         *Instance
	Provider   interface{ LastCode(string) string }
	Issuer     string
	A, B       string
	KeyA, KeyB string
}

// NewTokenSetup starts the server, with extra in its environment, and makes the two apps and their keys.
func NewTokenSetup(t *testing.T, extra map[string]string) *TokenSetup {
	t.Helper()
	p := NewProvider(t)
	addr := FreeAddr(t)
	env := map[string]string{
		"OTP_HTTP_ADDR": addr, "OTP_PUBLIC_URL": "http://" + addr,
		"OTP_DUPLICATE_WINDOW": "0", "OTP_LIMIT_PHONE": "100/1h", "OTP_LIMIT_IP": "off",
		"OTP_LIMIT_CHECK_PHONE": "100/1h", "OTP_LIMIT_CHECK_IP": "1000/1h",
	}
	for k, v := range extra {
		env[k] = v
	}
	in := Start(t, ProdEnv(t, p, env))
	s := &TokenSetup{In: in, Provider: p, Issuer: "http://" + addr}
	s.A = CreateApp(t, in, map[string]any{"name": "Shop"})
	s.B = CreateApp(t, in, map[string]any{"name": "Blog"})
	_, s.KeyA = CreateKey(t, in, s.A, false)
	_, s.KeyB = CreateKey(t, in, s.B, false)
	return s
}

// Verified verifies a new number with app (the default app for "") and returns the
// check's answer.
func (s *TokenSetup) Verified(t *testing.T, app string) Reply {
	t.Helper()
	phone := NewPhone()
	base := s.In.API + "/v1"
	if app != "" {
		base += "/apps/" + app
	}
	WantStatus(t, Post(t, base+"/verifications", map[string]string{"phone": phone}), http.StatusCreated, "")
	r := Post(t, base+"/verifications/check", map[string]string{"phone": phone, "code": s.Provider.LastCode(phone)})
	WantStatus(t, r, http.StatusOK, "")
	if r.Str("token") == "" {
		t.Fatalf("check answered %s, want a token", r.Raw)
	}
	return r
}

// Redeem redeems token for app, with key as the bearer credential when it is not "".
func (s *TokenSetup) Redeem(t *testing.T, app, key, token string) Reply {
	t.Helper()
	var headers []string
	if key != "" {
		headers = []string{"Authorization", "Bearer " + key}
	}
	return Post(t, s.In.API+"/v1/apps/"+app+"/tokens/redeem", map[string]string{"token": token}, headers...)
}

// JWKS fetches the key set, checked against the public document.
func (s *TokenSetup) JWKS(t *testing.T) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.In.API+"/.well-known/jwks.json", nil)
	resp, err := Client.Do(req)
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
