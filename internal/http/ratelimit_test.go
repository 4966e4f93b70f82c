package http

import (
	"net/http"
	"testing"
	"time"

	"otpgate/internal/rate"
)

func TestSetRateLimitHeaders(t *testing.T) {
	tests := []struct {
		name       string
		rules      []rate.RuleState
		wantPolicy string
		wantState  string
	}{
		{
			name: "ClosestRuleIsShown",
			rules: []rate.RuleState{
				{Scope: "phone", Rule: rate.Rule{Limit: 1, Window: time.Minute}, Used: 1, Remaining: 0, ResetAfter: 41*time.Second + time.Millisecond},
				{Scope: "ip", Rule: rate.Rule{Limit: 10, Window: time.Hour}, Used: 1, Remaining: 9, ResetAfter: time.Hour},
			},
			wantPolicy: `"phone-1m";q=1;w=60`,
			wantState:  `"phone-1m";r=0;t=42`,
		},
		{
			name: "RefusedRuleResetsAtItsRetryAfter",
			rules: []rate.RuleState{
				{Scope: "ip", Rule: rate.Rule{Limit: 10, Window: time.Hour}, Used: 10, Remaining: 0, ResetAfter: time.Second, RetryAfter: 90 * time.Second, Violated: true},
			},
			wantPolicy: `"ip-1h";q=10;w=3600`,
			wantState:  `"ip-1h";r=0;t=90`,
		},
		{
			name:       "NothingCountedYet",
			rules:      []rate.RuleState{{Scope: "ip", Rule: rate.Rule{Limit: 100, Window: 24 * time.Hour}, Remaining: 100}},
			wantPolicy: `"ip-24h";q=100;w=86400`,
			wantState:  `"ip-24h";r=100;t=0`,
		},
		{
			name:       "SubSecondWindow",
			rules:      []rate.RuleState{{Scope: "duplicate", Rule: rate.Rule{Limit: 1, Window: 1500 * time.Millisecond}, Remaining: 0, ResetAfter: 10 * time.Millisecond}},
			wantPolicy: `"duplicate-1500ms";q=1;w=2`,
			wantState:  `"duplicate-1500ms";r=0;t=1`,
		},
		{
			name:       "ScopeIsEscaped",
			rules:      []rate.RuleState{{Scope: "a\"b\\c\u00e9", Rule: rate.Rule{Limit: 1, Window: time.Second}, Remaining: 1}},
			wantPolicy: `"a\"b\\c?-1s";q=1;w=1`,
			wantState:  `"a\"b\\c?-1s";r=1;t=0`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if !setRateLimitHeaders(h, rate.Decision{Rules: tt.rules}) {
				t.Fatal("got false, want headers set")
			}
			if got := h.Get("RateLimit-Policy"); got != tt.wantPolicy {
				t.Errorf("RateLimit-Policy: got %v, want %v", got, tt.wantPolicy)
			}
			if got := h.Get("RateLimit"); got != tt.wantState {
				t.Errorf("RateLimit: got %v, want %v", got, tt.wantState)
			}
		})
	}
	t.Run("NoRulesNoHeaders", func(t *testing.T) {
		h := http.Header{}
		if setRateLimitHeaders(h, rate.Decision{Allowed: true}) {
			t.Error("got true, want false")
		}
		if len(h) != 0 {
			t.Errorf("headers: got %v, want none", h)
		}
	})
}
