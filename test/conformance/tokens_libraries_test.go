package conformance

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"otpgate/internal/server/servertest"
)

// tokenCases are what the library scripts (test/tokens) are given in OTPGATE_CASES.
type tokenCases struct {
	Base        string `json:"base"`
	RetiredBase string `json:"retired_base"`
	Issuer      string `json:"issuer"`
	App         string `json:"app"`
	Key         string `json:"key"`
	// Token is signed with the current key (k2), OldToken with the previous one (k1).
	Token    string `json:"token"`
	OldToken string `json:"old_token"`
	Address  string `json:"address"`
	// Forged are tokens every library must refuse, by name.
	Forged map[string]string `json:"forged"`
}

// TestTokenLibraries verifies tokens with a standard JWT library of Go (go-jose), Node
// (jose) and Python (PyJWT) against the JWKS, unchanged, through the backend snippets of
// docs/browser.md: three servers share one database, as instances of one rotation would:
// one still signs with the previous key k1 alone, one signs with k2 and publishes both,
// and one publishes k2 alone, k1 retired.
func TestTokenLibraries(t *testing.T) {
	p := servertest.NewProvider(t)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	const issuer = "https://otp.example.com"
	env := servertest.ProdEnv(t, p, map[string]string{
		"OTP_PUBLIC_URL": issuer, "OTP_DUPLICATE_WINDOW": "0", "OTP_LIMIT_PHONE": "100/1h", "OTP_LIMIT_IP": "off",
		"OTP_LIMIT_CHECK_PHONE": "100/1h", "OTP_LIMIT_CHECK_IP": "1000/1h",
	})
	withKeys := func(keys string) map[string]string {
		e := maps.Clone(env)
		e["OTP_TOKEN_KEYS"] = keys
		return e
	}
	k1, k2 := "k1:"+pkcs8(t, ec), "k2:"+pkcs8(t, ed)
	current := servertest.Start(t, withKeys(k2+","+k1))
	app := servertest.CreateApp(t, current, map[string]any{"name": "Shop"})
	_, key := servertest.CreateKey(t, current, app, false)
	previous := servertest.Start(t, withKeys(k1))
	retired := servertest.Start(t, withKeys(k2))

	verify := func(in *servertest.Instance) (token, phone string) {
		phone = servertest.NewPhone()
		servertest.WantStatus(t, servertest.AppSend(t, in, app, phone), http.StatusCreated, "")
		r := servertest.Post(t, in.API+"/v1/apps/"+app+"/verifications/check", map[string]string{"phone": phone, "code": servertest.LastCode(t, p, phone)})
		servertest.WantStatus(t, r, http.StatusOK, "")
		return r.Str("token"), phone
	}
	newCases := func() tokenCases {
		c := tokenCases{Base: current.API, RetiredBase: retired.API, Issuer: issuer, App: app, Key: key}
		c.Token, c.Address = verify(current)
		c.OldToken, _ = verify(previous)
		c.Forged = forgedTokens(t, c.Token, ec, app)
		return c
	}

	t.Run("Go", func(t *testing.T) {
		c := newCases()
		goTokenCases(t, c, jwksOf(t, current), jwksOf(t, retired))
		// The server refuses what the libraries refuse.
		for name, forged := range c.Forged {
			r := servertest.Post(t, current.API+"/v1/apps/"+app+"/tokens/redeem", map[string]string{"token": forged}, "Authorization", "Bearer "+key)
			if r.Status != http.StatusUnprocessableEntity || r.Str("code") != "invalid_token" {
				t.Errorf("redeem of %s: got %d %s, want 422 invalid_token", name, r.Status, r.Str("code"))
			}
		}
		r := servertest.Post(t, retired.API+"/v1/apps/"+app+"/tokens/redeem", map[string]string{"token": c.OldToken}, "Authorization", "Bearer "+key)
		servertest.WantStatus(t, r, http.StatusUnprocessableEntity, "invalid_token")
	})

	t.Run("Node", func(t *testing.T) {
		dir := filepath.Join("..", "..", "test", "tokens")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "jose", "package.json")); err != nil {
			missing(t, "the Node library (npm package jose in test/tokens/node_modules: make tokens-node)")
		}
		if _, err := exec.LookPath("node"); err != nil {
			missing(t, "node")
		}
		runTokenScript(t, newCases(), "node", filepath.Join(dir, "check.mjs"))
	})

	t.Run("Python", func(t *testing.T) {
		// Debian's python3-jwt lives in the system interpreter.
		for _, py := range []string{"/usr/bin/python3", "python3"} {
			if exec.Command(py, "-c", "import jwt, cryptography").Run() == nil {
				runTokenScript(t, newCases(), py, filepath.Join("..", "..", "test", "tokens", "check.py"))
				return
			}
		}
		missing(t, "the Python library (Debian packages python3-jwt and python3-cryptography)")
	})
}

// goTokenCases runs the cases of the scripts with the Go snippet.
func goTokenCases(t *testing.T, c tokenCases, jwks, retiredJWKS []byte) {
	now := time.Now()
	claims, err := verifyToken(jwks, c.Token, c.Issuer, c.App, now)
	if err != nil || claims["address"] != c.Address || claims["app"] != c.App || claims["channel"] != "sms" {
		t.Fatalf("verify: got %v, %v; want the address %s of app %s by sms", claims, err, c.Address, c.App)
	}
	if _, err := verifyToken(jwks, c.OldToken, c.Issuer, c.App, now); err != nil {
		t.Errorf("a token of the previous key, still published: %v", err)
	}
	exp := time.Unix(int64(claims["exp"].(float64)), 0)
	if _, err := verifyToken(jwks, c.Token, c.Issuer, c.App, exp.Add(time.Second)); err == nil {
		t.Error("verified a second after its expiry")
	}
	if _, err := verifyToken(retiredJWKS, c.OldToken, c.Issuer, c.App, now); err == nil {
		t.Error("verified a token of a retired key")
	}
	if _, err := verifyToken(retiredJWKS, c.Token, c.Issuer, c.App, now); err != nil {
		t.Errorf("the current key's token after the retirement: %v", err)
	}
	for name, forged := range c.Forged {
		if _, err := verifyToken(jwks, forged, c.Issuer, c.App, now); err == nil {
			t.Errorf("forged %s: verified", name)
		}
	}
	if err := redeemToken(c.Base, c.App, c.Key, c.Token); err != nil {
		t.Fatalf("redeem: %v", err)
	}
	if err := redeemToken(c.Base, c.App, c.Key, c.Token); err == nil || !strings.Contains(err.Error(), "token_redeemed") {
		t.Errorf("second redeem: got %v, want 409 token_redeemed", err)
	}
}

// forgedTokens are tokens no library may take: no signature, another key under the kid
// of a published one, a claim changed after signing, the published key used as an HMAC
// secret, and a token of the real key for another app.
func forgedTokens(t *testing.T, genuine string, k1 *ecdsa.PrivateKey, app string) map[string]string {
	t.Helper()
	parts := strings.Split(genuine, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tampered := maps.Clone(claims)
	tampered["address"] = "+15005550006"
	tamperedJSON, _ := json.Marshal(tampered)
	otherApp := maps.Clone(claims)
	otherApp["aud"], otherApp["app"] = "0190a000-0000-7000-8000-0000000000ff", "0190a000-0000-7000-8000-0000000000ff"
	pub, err := x509.MarshalPKIXPublicKey(&k1.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	return map[string]string{
		"alg_none":       b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + ".",
		"other_key":      signClaims(t, jose.ES256, other, "k1", claims),
		"tampered_claim": parts[0] + "." + b64(tamperedJSON) + "." + parts[2],
		"hs256_with_jwk": signClaims(t, jose.HS256, pub, "k1", claims),
		"other_app":      signClaims(t, jose.ES256, k1, "k1", otherApp),
	}
}

func signClaims(t *testing.T, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pkcs8 is a key as OTP_TOKEN_KEYS takes it.
func pkcs8(t *testing.T, key any) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(der)
}

func jwksOf(t *testing.T, in *servertest.Instance) []byte {
	t.Helper()
	return (&servertest.TokenSetup{In: in}).JWKS(t)
}

// runTokenScript runs a library script with the cases and fails with its output.
func runTokenScript(t *testing.T, c tokenCases, name string, args ...string) {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "OTPGATE_CASES="+string(b))
	out, err := cmd.CombinedOutput()
	t.Logf("%s %s\n%s", name, strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
