package otp

import (
	"strings"
	"testing"
	"time"

	"otpgate/internal/rate"
)

// TestBudgetExceeded holds the refusal a budget names to docs/spend.md: a fence's refusal
// names the country and its share, in the history's reason and the client's message; a
// refusal by the cap names neither, even when the fence would have refused the send too.
func TestBudgetExceeded(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	resets := time.Date(2030, 1, 3, 0, 0, 0, 0, time.UTC)
	policy := []rate.Limit{{Scope: ScopeBudget, Key: "cap:day:20300102",
		Budget: &rate.Budget{Mode: rate.BudgetEnforce, Cap: 20_000_000, Name: "cap", Period: "day", Resets: resets}}}
	state := func(over bool, fence rate.FenceState) rate.Decision {
		return rate.Decision{Budgets: []rate.BudgetState{{Scope: ScopeBudget, Key: "cap:day:20300102", Mode: rate.BudgetEnforce,
			Cap: 20_000_000, Spent: 19_990_000, Cost: 300_000, Over: over, Fence: fence}}}
	}
	young := rate.FenceState{Country: "UZ", Young: true, Share: 1_000_000, Spent: 1_000_000, Over: true, Refused: true}
	for _, tc := range []struct {
		name        string
		dec         rate.Decision
		wantReason  string
		wantCountry string
		wantShare   string
		wantError   string
	}{
		{"TheFenceNamesTheCountryAndItsShare", state(false, young),
			"budget cap day country UZ share 1.00 (young countries)", "UZ", "1.00", "UZ has spent its share 1.00 of this day"},
		{"AnEstablishedCountryIsNotYoung", state(false, rate.FenceState{Country: "JP", Share: 4_500_000, Spent: 4_400_000, Over: true, Refused: true}),
			"budget cap day country JP share 4.50", "JP", "4.50", "JP has spent its share 4.50 of this day"},
		{"TheCapSpeaksFirst", state(true, young), "budget cap day", "", "", "budget cap exceeded for this day"},
		{"ACapAloneNamesNoCountry", state(true, rate.FenceState{}), "budget cap day", "", "", "budget cap exceeded for this day"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := budgetExceeded(policy, tc.dec, now)
			if e == nil {
				t.Fatalf("got no refusal, want budget cap's")
			}
			if got := e.Reason(); got != tc.wantReason {
				t.Errorf("Reason: got %q, want %q", got, tc.wantReason)
			}
			if e.Country != tc.wantCountry || e.ShareText() != tc.wantShare {
				t.Errorf("got country %q share %q, want %q and %q", e.Country, e.ShareText(), tc.wantCountry, tc.wantShare)
			}
			if !strings.Contains(e.Error(), tc.wantError) || e.RetryAfter != resets.Sub(now) {
				t.Errorf("got %q retry after %v, want it to say %q and retry at the reset", e.Error(), e.RetryAfter, tc.wantError)
			}
		})
	}
	t.Run("AShadowFenceRefusesNothing", func(t *testing.T) {
		shadow := young
		shadow.Refused = false
		if e := budgetExceeded(policy, state(false, shadow), now); e != nil {
			t.Errorf("got %+v, want no refusal", e)
		}
	})
}
