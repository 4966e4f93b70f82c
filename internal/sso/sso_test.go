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
