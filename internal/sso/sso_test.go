package sso

import (
	"encoding/json"
	"testing"
)

func TestEmailVerified(t *testing.T) {
	for _, c := range []struct {
		claims       string
		trustMissing bool
		want         bool
	}{
		{`{"email_verified":true}`, false, true},
		{`{}`, false, false},
		{`{"email_verified":false}`, false, false},
		{`{"email_verified":"true"}`, false, false},
		{`{"email_verified":"false"}`, false, false},
		{`{"email_verified":1}`, false, false},
		{`{"email_verified":null}`, false, false},
		{`{}`, true, true},
		{`{"email_verified":"false"}`, true, false},
		{`{"email_verified":false}`, true, false},
		{`{"email_verified":true}`, true, true},
	} {
		var claims map[string]any
		if err := json.Unmarshal([]byte(c.claims), &claims); err != nil {
			t.Fatal(err)
		}
		if got := emailVerified(claims, c.trustMissing); got != c.want {
			t.Errorf("emailVerified(%s, trust missing %v): got %v, want %v", c.claims, c.trustMissing, got, c.want)
		}
	}
}

func TestAuthorizedParty(t *testing.T) {
	const us = "otpgate-console"
	for _, c := range []struct {
		name   string
		aud    []string
		claims map[string]any
		ok     bool
	}{
		{"OneAudienceNoParty", []string{us}, map[string]any{}, true},
		{"OneAudienceUs", []string{us}, map[string]any{"azp": us}, true},
		{"OneAudienceAnotherParty", []string{us}, map[string]any{"azp": "other-app"}, false},
		{"SeveralAudiencesNoParty", []string{us, "other-app"}, map[string]any{}, false},
		{"SeveralAudiencesUs", []string{"other-app", us}, map[string]any{"azp": us}, true},
		{"SeveralAudiencesAnotherParty", []string{us, "other-app"}, map[string]any{"azp": "other-app"}, false},
		{"APartyThatIsNoString", []string{us, "other-app"}, map[string]any{"azp": []any{us}}, false},
	} {
		if err := authorizedParty(c.aud, c.claims, us); (err == nil) != c.ok {
			t.Errorf("%s: got %v, want ok %v", c.name, err, c.ok)
		}
	}
}
