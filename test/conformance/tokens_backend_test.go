package conformance

// This file holds the Go backend snippet of docs/browser.md, between the markers:
// TestBrowserDocSnippets holds the two equal.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// snippet: go

// verifyToken checks a verification token against otpgate's key set (the body of
// GET /.well-known/jwks.json, which may be cached for five minutes) and returns its claims.
func verifyToken(jwks []byte, raw, issuer, appID string, now time.Time) (map[string]any, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(jwks, &set); err != nil {
		return nil, err
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA})
	if err != nil {
		return nil, err
	}
	keys := set.Key(tok.Headers[0].KeyID)
	if len(keys) != 1 {
		return nil, errors.New("the token's key is not published (unknown or retired)")
	}
	var std jwt.Claims
	var claims map[string]any
	if err := tok.Claims(keys[0].Key, &std, &claims); err != nil {
		return nil, err
	}
	expected := jwt.Expected{Issuer: issuer, AnyAudience: jwt.Audience{appID}, Time: now}
	if err := std.ValidateWithLeeway(expected, 0); err != nil {
		return nil, err
	}
	return claims, nil
}

// redeemToken marks the token used, once: a second redeem is 409 token_redeemed.
func redeemToken(base, appID, key, raw string) error {
	body, _ := json.Marshal(map[string]string{"token": raw})
	req, err := http.NewRequest(http.MethodPost, base+"/v1/apps/"+appID+"/tokens/redeem", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		problem, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("redeem: %s: %s", resp.Status, problem)
	}
	return nil
}

// end snippet

// verifyGoJose verifies a token as the snippet does, now, and fails the test when it
// does not verify.
func verifyGoJose(t *testing.T, jwks []byte, raw, issuer, appID string) map[string]any {
	t.Helper()
	claims, err := verifyToken(jwks, raw, issuer, appID, time.Now())
	if err != nil {
		t.Fatalf("go-jose: %v", err)
	}
	return claims
}
